//! `AgentSession`: an [`Agent`] bound to a [`SessionManager`]. Every finished message is appended to the
//! session; prompts run with auto-retry; the context is compacted when it nears the window (before a prompt
//! and after a run) or overflows it (then the run is continued once).

use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::auto_retry::{RetrySettings, SessionEventSink, drop_last_assistant, run_with_auto_retry};
use crate::agent::{Agent, AgentError, Subscription};
use crate::ai::{Model, ProviderRegistry, is_context_overflow};
use crate::compaction::{CompactionSettings, compact, estimate_context_tokens, prepare_compaction, should_compact};
use crate::protocol::{AgentEvent, AgentMessage, CompactionReason, SessionOnlyEvent, StopReason};
use crate::session::{EntryKind, SessionEntry, SessionError, SessionManager, iso_to_ms};

/// Settings of the session layer.
#[derive(Debug, Clone, Copy, Default)]
pub struct SessionSettings {
    pub retry: RetrySettings,
    pub compaction: CompactionSettings,
}

/// The agent, its session file, and pi's retry and compaction rules around each prompt.
pub struct AgentSession {
    pub(super) agent: Agent,
    pub(super) manager: Arc<Mutex<SessionManager>>,
    pub(super) settings: SessionSettings,
    pub(super) registry: Arc<ProviderRegistry>,
    pub(super) api_key: Option<String>,
    emit: SessionEventSink,
    /// The first failure to write the session file (reported once, the run goes on).
    write_error: Arc<Mutex<Option<String>>>,
    /// Cancels the current retry wait or summary; replaced by a fresh token when a prompt starts.
    cancel: Mutex<CancellationToken>,
    /// A model (and its key) to write summaries with instead of the agent's (e.g. a cheaper one).
    summary_model: Mutex<Option<(Model, Option<String>)>>,
    _persistence: Subscription,
}

impl AgentSession {
    /// Binds `agent` to `manager`: the agent's messages become the session's context, and new ones are
    /// appended to it. A new session first records the model and thinking level, as pi does.
    pub fn new(
        agent: Agent,
        mut manager: SessionManager,
        settings: SessionSettings,
        registry: Arc<ProviderRegistry>,
        api_key: Option<String>,
        emit: SessionEventSink,
    ) -> Result<Self, SessionError> {
        let state = agent.state();
        let context = manager.context();
        let is_new = manager.entries().is_empty();
        if let Some(model) = &state.model {
            let known = context.model.as_ref().map(|(provider, id)| (provider.as_str(), id.as_str()));
            if known != Some((model.provider.as_str(), model.id.as_str())) {
                manager.append_model_change(&model.provider, &model.id)?;
            }
        }
        if is_new || context.thinking_level != state.thinking_level.as_str() {
            manager.append_thinking_level_change(state.thinking_level.as_str())?;
        }
        agent.replace_messages(manager.context().messages);
        let manager = Arc::new(Mutex::new(manager));
        let write_error = Arc::new(Mutex::new(None));
        let persistence = agent.subscribe({
            let (manager, write_error) = (manager.clone(), write_error.clone());
            move |event: &AgentEvent| {
                let AgentEvent::MessageEnd { message } = event else { return };
                if let Err(error) = append(&mut lock(&manager), message) {
                    let mut slot = lock(&write_error);
                    if slot.is_none() {
                        eprintln!("Warning: the session is no longer being saved: {error}");
                        *slot = Some(error.to_string());
                    }
                }
            }
        });
        Ok(Self {
            agent,
            manager,
            settings,
            registry,
            api_key,
            emit,
            write_error,
            cancel: Mutex::new(CancellationToken::new()),
            summary_model: Mutex::new(None),
            _persistence: persistence,
        })
    }

    /// Summaries (compaction and branch) are written with `model` (using `api_key`, else the session's key)
    /// instead of the agent's own; `None` goes back to the agent's model.
    pub fn set_summary_model(&self, model: Option<(Model, Option<String>)>) {
        *lock(&self.summary_model) = model;
    }

    /// The model summaries are written with.
    pub fn summary_model(&self) -> Option<Model> {
        lock(&self.summary_model).as_ref().map(|(model, _)| model.clone()).or_else(|| self.agent.state().model)
    }

    /// The key for [`AgentSession::summary_model`].
    pub(super) fn summary_api_key(&self) -> Option<String> {
        lock(&self.summary_model).as_ref().and_then(|(_, key)| key.clone()).or_else(|| self.api_key.clone())
    }

    /// Stops what is under way: the agent's run, a retry wait (ending with `"Retry cancelled"`) or a summary.
    pub fn abort(&self) {
        lock(&self.cancel).cancel();
        self.agent.abort();
    }

    /// A fresh token for a new piece of work (an earlier abort does not carry over).
    pub(super) fn reset_cancel(&self) {
        *lock(&self.cancel) = CancellationToken::new();
    }

    /// The token of the current prompt.
    pub(super) fn cancel_token(&self) -> CancellationToken {
        lock(&self.cancel).clone()
    }

    pub fn agent(&self) -> &Agent {
        &self.agent
    }

    /// The session manager (locked for the duration of the borrow).
    pub fn manager(&self) -> MutexGuard<'_, SessionManager> {
        lock(&self.manager)
    }

    /// The first error writing the session file, if any.
    pub fn write_error(&self) -> Option<String> {
        lock(&self.write_error).clone()
    }

    /// Runs one prompt: compaction first if the context is already near the window, then the prompt with
    /// auto-retry, then the after-run compaction check (continuing once after an overflow).
    pub async fn prompt(&self, text: String) -> Result<(), AgentError> {
        self.reset_cancel();
        if self.context_is_near_the_window() {
            self.compact(CompactionReason::Threshold, false).await;
        }
        self.run_with_retry(self.agent.prompt(text)).await?;
        self.check_compaction_after_run().await
    }

    async fn run_with_retry<F>(&self, start: F) -> Result<(), AgentError>
    where
        F: Future<Output = Result<(), AgentError>>,
    {
        let window = self.agent.state().model.map(|model| model.context_window);
        let cancel = self.cancel_token();
        run_with_auto_retry(&self.agent, self.settings.retry, window, self.emit.clone(), &cancel, start).await
    }

    async fn check_compaction_after_run(&self) -> Result<(), AgentError> {
        let Some(last) = self.agent.messages().last().and_then(AgentMessage::as_assistant).cloned() else {
            return Ok(());
        };
        let window = self.agent.state().model.map(|model| model.context_window);
        if last.stop_reason == StopReason::Error && is_context_overflow(&last, window) {
            // Drop the failed answer, compact, and try once more.
            drop_last_assistant(&self.agent);
            if self.compact(CompactionReason::Overflow, true).await {
                self.run_with_retry(self.agent.continue_()).await?;
            }
            return Ok(());
        }
        if last.stop_reason != StopReason::Aborted && self.context_is_near_the_window() {
            self.compact(CompactionReason::Threshold, false).await;
        }
        Ok(())
    }

    /// pi's threshold check: the context (by the last answer's usage) is past the window minus the reserve.
    /// Skipped when the last answer was aborted or is older than the latest compaction (its usage then
    /// describes the context before that compaction).
    fn context_is_near_the_window(&self) -> bool {
        let Some(model) = self.agent.state().model else { return false };
        let messages = self.agent.messages();
        let Some(last) = messages.iter().rev().find_map(|message| match message {
            AgentMessage::Assistant(answer) => Some(answer),
            _ => None,
        }) else {
            return false;
        };
        if last.stop_reason == StopReason::Aborted || last.timestamp <= self.latest_compaction_ms() {
            return false;
        }
        let tokens = estimate_context_tokens(&messages).tokens;
        should_compact(tokens, model.context_window, &self.settings.compaction)
    }

    /// When the latest compaction on the current branch happened (ms; 0 when there is none).
    fn latest_compaction_ms(&self) -> i64 {
        let manager = self.manager();
        let path = manager.tree().current_path();
        path.iter()
            .rev()
            .find(|entry| matches!(entry.kind, EntryKind::Compaction { .. }))
            .map_or(0, |entry| iso_to_ms(&entry.timestamp))
    }

    /// Summarizes the older part of the current branch, records the compaction entry and gives the agent
    /// the compacted context. Returns whether it succeeded.
    async fn compact(&self, reason: CompactionReason, will_retry: bool) -> bool {
        (self.emit)(&SessionOnlyEvent::AutoCompactionStart { reason });
        let outcome = self.summarize(None).await;
        let (result, error_message) = match outcome {
            Ok(Some(result)) => (Some(result), None),
            Ok(None) => (None, None),
            Err(message) => (None, Some(message)),
        };
        let succeeded = result.is_some();
        let aborted = self.cancel_token().is_cancelled();
        (self.emit)(&SessionOnlyEvent::AutoCompactionEnd {
            result,
            aborted,
            will_retry: will_retry && succeeded,
            error_message,
        });
        succeeded
    }

    /// pi's `/compact [instructions]`: compacts the current branch now, the instructions added to the
    /// summary request as its focus. Returns the compaction result (`None` when there is nothing to compact).
    pub async fn compact_now(&self, custom_instructions: Option<&str>) -> Result<Option<serde_json::Value>, String> {
        self.agent.abort();
        self.agent.wait_for_idle().await;
        self.reset_cancel();
        self.summarize(custom_instructions).await
    }

    async fn summarize(&self, custom_instructions: Option<&str>) -> Result<Option<serde_json::Value>, String> {
        let Some(model) = self.summary_model() else { return Ok(None) };
        let path: Vec<SessionEntry> = self.manager().tree().current_path().into_iter().cloned().collect();
        let Some(preparation) = prepare_compaction(&path, &self.settings.compaction) else { return Ok(None) };
        let api_key = self.summary_api_key();
        let result = compact(
            &preparation,
            &model,
            &self.registry,
            api_key.as_deref(),
            custom_instructions,
            &self.cancel_token(),
        )
        .await
        .map_err(|error| error.to_string())?;
        let mut manager = self.manager();
        manager
            .append_compaction(
                &result.summary,
                &result.first_kept_entry_id,
                result.tokens_before,
                result.details.clone(),
            )
            .map_err(|error| error.to_string())?;
        self.agent.replace_messages(manager.context().messages);
        Ok(Some(json!({
            "summary": result.summary,
            "firstKeptEntryId": result.first_kept_entry_id,
            "tokensBefore": result.tokens_before,
            "details": result.details,
        })))
    }
}

/// Appends a finished message to the session (pi persists these roles at `message_end`).
fn append(manager: &mut SessionManager, message: &AgentMessage) -> Result<(), SessionError> {
    match message {
        AgentMessage::User(_) | AgentMessage::Assistant(_) | AgentMessage::ToolResult(_) => {
            manager.append_message(message.clone()).map(drop)
        }
        AgentMessage::Custom(custom) => manager.append_custom_message(custom).map(drop),
        _ => Ok(()),
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
