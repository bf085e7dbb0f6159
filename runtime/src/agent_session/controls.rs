//! What a client changes or reads while a session runs (pi's RPC and interactive controls): thinking level,
//! auto-compaction and auto-retry switches, the session's name, the last answer and the session's counts.

use serde::Serialize;

use super::link::lock;
use super::{AgentSession, Preference};
use crate::agent::QueueMode;
use crate::ai::catalog::{
    ThinkingLevelMap, builtin_thinking_level_map, clamp_thinking_level, supported_thinking_levels,
};
use crate::ai::{Model, ThinkingLevel};
use crate::compaction::estimate_context_tokens;
use crate::extension::{EventKind, ModelRef, ModelSelectEvent, ModelSelectSource};
use crate::protocol::{AgentMessage, AssistantContent, AssistantMessage};
use crate::session::SessionError;

/// Message counts, token totals and context use of a session (pi's `SessionStats`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStats {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_file: Option<String>,
    pub session_id: String,
    pub user_messages: u64,
    pub assistant_messages: u64,
    pub tool_calls: u64,
    pub tool_results: u64,
    pub total_messages: u64,
    pub tokens: TokenTotals,
    #[serde(with = "crate::protocol::js_number")]
    pub cost: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_usage: Option<ContextUsage>,
    /// Under the panels strategy: what the latest request held (a pi-gen addition).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_panels: Option<crate::panels::ContextReport>,
}

/// Tokens of every answer of the session, summed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenTotals {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub total: u64,
}

/// How much of the model's window the current context takes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextUsage {
    pub tokens: u64,
    pub context_window: u64,
    #[serde(with = "crate::protocol::js_number")]
    pub percent: f64,
}

impl AgentSession {
    /// Sets the thinking level, clamped to what the model supports among the levels of the run's pi release
    /// (`max` only at level 1.5); a change is recorded in the session. Returns the level in effect.
    pub fn set_thinking_level(&self, level: ThinkingLevel) -> Result<ThinkingLevel, SessionError> {
        let model = self.agent.model();
        // A model that cannot reason ignores the request; the level chosen before comes back with the next
        // model that can, as in pi.
        if model.as_ref().is_none_or(|model| model.reasoning) {
            *lock(&self.thinking_preference) = level;
        }
        let map = model.as_ref().and_then(|model| builtin_thinking_level_map(&model.provider, &model.id));
        self.apply_thinking_level(level, map)
    }

    /// How steering messages are delivered from now on (remembered for later runs).
    pub fn set_steering_mode(&self, mode: QueueMode) {
        self.agent.set_steering_mode(mode);
        self.remember(Preference::SteeringMode(mode));
    }

    /// How follow-up messages are delivered from now on (remembered for later runs).
    pub fn set_follow_up_mode(&self, mode: QueueMode) {
        self.agent.set_follow_up_mode(mode);
        self.remember(Preference::FollowUpMode(mode));
    }

    /// `level` clamped to the current model (with its thinking map), applied and recorded when it changes; as
    /// in pi, a change is remembered unless it is only a model that cannot think falling back to `off`.
    fn apply_thinking_level(
        &self,
        level: ThinkingLevel,
        map: Option<&ThinkingLevelMap>,
    ) -> Result<ThinkingLevel, SessionError> {
        let state = self.agent.state();
        let pi_compat = self.agent.pi_compat();
        let level = match &state.model {
            Some(model) => clamp_thinking_level(model, map, level, pi_compat),
            // Without a model nothing clamps; a level the release does not know becomes its highest.
            None if !ThinkingLevel::levels(pi_compat).contains(&level) => ThinkingLevel::Xhigh,
            None => level,
        };
        if level != state.thinking_level {
            self.agent.set_thinking_level(level);
            self.manager().append_thinking_level_change(level.as_str())?;
            if state.model.as_ref().is_none_or(|model| model.reasoning) || level != ThinkingLevel::Off {
                self.remember(Preference::ThinkingLevel(level));
            }
        }
        Ok(level)
    }

    /// Switches to `model` (its key and thinking map given): recorded as a `model_change`, the thinking level
    /// the user last chose clamped to it, extensions told (`model_select`). Returns the thinking level now in
    /// effect.
    pub async fn set_model(
        &self,
        model: Model,
        api_key: Option<String>,
        map: Option<&ThinkingLevelMap>,
        source: ModelSelectSource,
    ) -> Result<ThinkingLevel, SessionError> {
        let previous = self.agent.model();
        self.agent.set_model(model.clone());
        self.agent.set_api_key(api_key.clone());
        *lock(&self.api_key) = api_key;
        self.manager().append_model_change(&model.provider, &model.id)?;
        // A model restored from a session is not a new choice.
        if source != ModelSelectSource::Restore {
            self.remember(Preference::Model { provider: model.provider.clone(), id: model.id.clone() });
        }
        let preferred = *lock(&self.thinking_preference);
        let level = self.apply_thinking_level(preferred, map)?;
        if self.runner.has_handlers(EventKind::ModelSelect) {
            let event = ModelSelectEvent {
                model: ModelRef::from(&model),
                previous_model: previous.as_ref().map(ModelRef::from),
                source,
            };
            self.runner.emit_model_select(&event).await;
        }
        Ok(level)
    }

    /// Moves to the model's next thinking level (after the highest comes `off`; pi 1.5's `max` is among them
    /// at level 1.5 when the model supports it); `None` when the model does not reason.
    pub fn cycle_thinking_level(&self) -> Result<Option<ThinkingLevel>, SessionError> {
        let state = self.agent.state();
        let Some(model) = state.model.as_ref().filter(|model| model.reasoning) else { return Ok(None) };
        let map = builtin_thinking_level_map(&model.provider, &model.id);
        let levels = supported_thinking_levels(model, map, self.agent.pi_compat());
        let next = match levels.iter().position(|level| *level == state.thinking_level) {
            Some(index) => levels[(index + 1) % levels.len()],
            None => levels.first().copied().unwrap_or(ThinkingLevel::Off),
        };
        self.set_thinking_level(next).map(Some)
    }

    /// Adds a message to the conversation and the session file (e.g. the user's own command and its output).
    pub fn record_message(&self, message: AgentMessage) -> Result<(), SessionError> {
        self.agent.append_message(message.clone());
        self.manager().append_message(message).map(|_| ())
    }

    /// Turns automatic compaction (threshold and overflow) on or off for this session.
    pub fn set_auto_compaction(&self, enabled: bool) {
        self.settings_mut().compaction.enabled = enabled;
        self.remember(Preference::AutoCompaction(enabled));
    }

    pub fn auto_compaction_enabled(&self) -> bool {
        self.settings().compaction.enabled
    }

    /// Turns automatic retries of failed requests on or off for this session.
    pub fn set_auto_retry(&self, enabled: bool) {
        self.settings_mut().retry.enabled = enabled;
        self.remember(Preference::AutoRetry(enabled));
    }

    pub fn auto_retry_enabled(&self) -> bool {
        self.settings().retry.enabled
    }

    /// Ends a retry wait now (the retry reports `Retry cancelled`); a running request is left alone.
    pub fn abort_retry(&self) {
        self.cancel_token().cancel();
    }

    /// Whether a compaction (automatic or requested) is being written right now.
    pub fn is_compacting(&self) -> bool {
        self.compacting.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Names the session (a `session_info` entry). The name is trimmed; an empty one is refused.
    pub fn set_session_name(&self, name: &str) -> Result<(), SessionNameError> {
        let name = name.trim();
        if name.is_empty() {
            return Err(SessionNameError::Empty);
        }
        self.manager().append_session_info(name).map(|_| ()).map_err(SessionNameError::Write)
    }

    /// The session's name, if it was given one.
    pub fn session_name(&self) -> Option<String> {
        self.manager().tree().session_name().map(str::to_owned)
    }

    /// The text blocks of the last answer, joined; `None` when there is no answer yet or it has no text.
    pub fn last_assistant_text(&self) -> Option<String> {
        let text = self.agent.find_last_message(|message| message.as_assistant().map(AssistantMessage::text))?;
        (!text.trim().is_empty()).then_some(text)
    }

    /// Message counts and token totals of the current context (what the agent holds, as pi counts them),
    /// and how much of the model's window it takes.
    pub fn stats(&self) -> SessionStats {
        let (session_file, session_id) = {
            let manager = self.manager();
            (manager.path().map(|path| path.to_string_lossy().into_owned()), manager.session_id().to_owned())
        };
        let messages = self.agent.messages();
        let mut stats = SessionStats {
            session_file,
            session_id,
            user_messages: 0,
            assistant_messages: 0,
            tool_calls: 0,
            tool_results: 0,
            total_messages: 0,
            tokens: TokenTotals::default(),
            cost: 0.0,
            context_usage: None,
            context_panels: super::link::lock(&self.link.context_report).clone(),
        };
        for message in &messages {
            count_message(&mut stats, message);
        }
        if let Some(model) = self.agent.model() {
            let tokens = estimate_context_tokens(&messages).tokens;
            let window = model.context_window;
            let percent = if window == 0 { 0.0 } else { tokens as f64 / window as f64 * 100.0 };
            stats.context_usage = Some(ContextUsage { tokens, context_window: window, percent });
        }
        stats
    }
}

fn count_message(stats: &mut SessionStats, message: &AgentMessage) {
    stats.total_messages += 1;
    match message {
        AgentMessage::User(_) => stats.user_messages += 1,
        AgentMessage::Assistant(answer) => {
            stats.assistant_messages += 1;
            stats.tool_calls +=
                answer.content.iter().filter(|content| matches!(content, AssistantContent::ToolCall(_))).count() as u64;
            let usage = &answer.usage;
            stats.tokens.input += usage.input;
            stats.tokens.output += usage.output;
            stats.tokens.cache_read += usage.cache_read;
            stats.tokens.cache_write += usage.cache_write;
            stats.tokens.total += usage.input + usage.output + usage.cache_read + usage.cache_write;
            stats.cost += usage.cost.total;
        }
        AgentMessage::ToolResult(result) => {
            stats.tool_results += 1;
            // A sub-agent's answers are in its own session; its tool result carries what they used.
            if let Some(usage) = SubagentUsage::from_details(result.details.as_ref()) {
                stats.tokens.input += usage.input;
                stats.tokens.output += usage.output;
                stats.tokens.cache_read += usage.cache_read;
                stats.tokens.cache_write += usage.cache_write;
                stats.tokens.total += usage.total_tokens;
                stats.cost += usage.cost;
            }
        }
        _ => {}
    }
}

/// What a sub-agent run used (its answers and its own sub-agents'), carried in its tool result's `details`
/// under [`SubagentUsage::DETAILS_KEY`] so the parent's statistics include it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubagentUsage {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub total_tokens: u64,
    #[serde(with = "crate::protocol::js_number")]
    pub cost: f64,
}

impl SubagentUsage {
    /// The key of a tool result's `details` that holds a sub-agent's usage.
    pub const DETAILS_KEY: &'static str = "subagentUsage";

    /// The totals of `stats` (a sub-agent session's).
    pub fn from_stats(stats: &SessionStats) -> Self {
        Self {
            input: stats.tokens.input,
            output: stats.tokens.output,
            cache_read: stats.tokens.cache_read,
            cache_write: stats.tokens.cache_write,
            total_tokens: stats.tokens.total,
            cost: stats.cost,
        }
    }

    /// The usage a tool result's details carry, if they are a sub-agent's.
    pub fn from_details(details: Option<&serde_json::Value>) -> Option<Self> {
        let usage = details?.get(Self::DETAILS_KEY)?;
        serde_json::from_value(usage.clone()).ok()
    }
}

/// Why a session could not be named.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionNameError {
    #[error("Session name cannot be empty")]
    Empty,
    #[error(transparent)]
    Write(SessionError),
}

#[cfg(test)]
mod subagent_usage_tests {
    use super::*;

    #[test]
    fn a_sub_agents_usage_is_read_from_its_tool_result_details() {
        let details = serde_json::json!({"agent": "scout", "subagentUsage": {"input": 3, "output": 4, "cacheRead": 5,
            "cacheWrite": 6, "totalTokens": 18, "cost": 0.25}});
        let usage = SubagentUsage::from_details(Some(&details)).expect("usage");
        assert_eq!((usage.input, usage.output, usage.cache_read, usage.cache_write), (3, 4, 5, 6));
        assert_eq!((usage.total_tokens, usage.cost), (18, 0.25));
        assert_eq!(SubagentUsage::from_details(Some(&serde_json::json!({"truncation": {}}))), None);
        assert_eq!(SubagentUsage::from_details(None), None);
        let written = serde_json::to_value(usage).expect("json");
        assert_eq!(written["totalTokens"], 18);
    }
}
