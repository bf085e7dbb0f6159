//! Auto-retry as pi's agent session does it: a run that ends in a retryable error (rate limit, overload,
//! server or connection failure; never a context overflow) is retried after an exponential backoff, the
//! failed answer leaving the agent's context (the session file keeps it), with `auto_retry_start` /
//! `auto_retry_end` events around it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::agent::{Agent, AgentError};
use crate::ai::{ProviderErrorKind, is_retryable_error};
use crate::protocol::{AgentEvent, AgentMessage, AssistantMessage, SessionOnlyEvent, StopReason};

/// settings.json's `retry` object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RetrySettings {
    pub enabled: bool,
    /// Retries after the first failure (attempts are numbered from 1).
    pub max_retries: u32,
    /// The first delay; each later one doubles it.
    pub base_delay_ms: u64,
    /// No delay is longer than this, even when the server asks for more.
    pub max_delay_ms: u64,
}

impl Default for RetrySettings {
    fn default() -> Self {
        Self { enabled: true, max_retries: 3, base_delay_ms: 2000, max_delay_ms: 60_000 }
    }
}

impl RetrySettings {
    /// The defaults with each well-formed field of a settings `retry` object applied (others are ignored).
    pub fn from_settings(value: Option<&Value>) -> Self {
        Self::default().with_settings(value)
    }

    /// These settings with each well-formed field of a settings `retry` object applied over them.
    pub fn with_settings(self, value: Option<&Value>) -> Self {
        let mut settings = self;
        let Some(Value::Object(object)) = value else { return settings };
        if let Some(enabled) = object.get("enabled").and_then(Value::as_bool) {
            settings.enabled = enabled;
        }
        let whole = |key: &str| object.get(key).and_then(Value::as_u64);
        if let Some(n) = whole("maxRetries") {
            settings.max_retries = u32::try_from(n).unwrap_or(u32::MAX);
        }
        if let Some(ms) = whole("baseDelayMs") {
            settings.base_delay_ms = ms;
        }
        if let Some(ms) = whole("maxDelayMs") {
            settings.max_delay_ms = ms;
        }
        settings
    }

    /// The wait before retry `attempt` (1-based): `base × 2^(attempt−1)`, or longer if the server asked
    /// for longer, never over `max_delay_ms`.
    pub fn delay(&self, attempt: u32, server_delay: Option<Duration>) -> Duration {
        let factor = 1u64.checked_shl(attempt.saturating_sub(1)).unwrap_or(u64::MAX);
        let backoff = self.base_delay_ms.saturating_mul(factor);
        let asked = server_delay.map_or(0, |delay| u64::try_from(delay.as_millis()).unwrap_or(u64::MAX));
        Duration::from_millis(backoff.max(asked).min(self.max_delay_ms))
    }
}

/// What to do after a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum RetryDecision {
    /// Nothing to retry.
    Done,
    /// Emit the event, wait, then continue the agent.
    Retry { event: SessionOnlyEvent, delay: Duration },
    /// Retries are used up: emit the event and stop.
    GiveUp(SessionOnlyEvent),
}

/// The retry counter of one session.
#[derive(Debug, Clone, Default)]
pub struct RetryState {
    attempt: u32,
}

impl RetryState {
    /// The counter of a streak already at `attempt` (a driver that keeps it between steps).
    pub fn resumed(attempt: u32) -> Self {
        Self { attempt }
    }

    /// The current attempt (0 when no retry is under way).
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// Called at every assistant `message_end`: a successful answer after retries ends the streak with
    /// `auto_retry_end{success: true}` (emitted right after that message, as pi does).
    pub fn on_assistant_message(&mut self, message: &AssistantMessage) -> Option<SessionOnlyEvent> {
        if message.stop_reason == StopReason::Error || self.attempt == 0 {
            return None;
        }
        let attempt = std::mem::take(&mut self.attempt);
        Some(SessionOnlyEvent::AutoRetryEnd { success: true, attempt, final_error: None })
    }

    /// Called when a run has ended with `last` as its final answer.
    pub fn after_run(
        &mut self,
        settings: &RetrySettings,
        last: Option<&AssistantMessage>,
        context_window: Option<u64>,
    ) -> RetryDecision {
        let Some(message) = last.filter(|message| is_retryable_error(message, context_window)) else {
            self.attempt = 0;
            return RetryDecision::Done;
        };
        if !settings.enabled {
            return RetryDecision::Done;
        }
        self.attempt += 1;
        let error_message = message.error_message.clone().unwrap_or_else(|| "Unknown error".to_owned());
        if self.attempt > settings.max_retries {
            let attempt = std::mem::take(&mut self.attempt) - 1;
            let event = SessionOnlyEvent::AutoRetryEnd { success: false, attempt, final_error: Some(error_message) };
            return RetryDecision::GiveUp(event);
        }
        let server_delay = match message.error_kind {
            Some(ProviderErrorKind::RateLimit { retry_after }) => retry_after,
            _ => None,
        };
        let delay = settings.delay(self.attempt, server_delay);
        let event = SessionOnlyEvent::AutoRetryStart {
            attempt: self.attempt,
            max_attempts: settings.max_retries,
            delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
            error_message,
        };
        RetryDecision::Retry { event, delay }
    }

    /// Whether [`RetryState::after_run`] would retry after a run that ended with `last` (pi 1.5 says so in
    /// `agent_end.willRetry`).
    pub fn will_retry(
        &self,
        settings: &RetrySettings,
        last: Option<&AssistantMessage>,
        context_window: Option<u64>,
    ) -> bool {
        settings.enabled
            && self.attempt < settings.max_retries
            && last.is_some_and(|message| is_retryable_error(message, context_window))
    }

    /// The wait was cancelled: the streak ends with `"Retry cancelled"`.
    pub fn cancelled(&mut self) -> SessionOnlyEvent {
        let attempt = std::mem::take(&mut self.attempt);
        SessionOnlyEvent::AutoRetryEnd { success: false, attempt, final_error: Some("Retry cancelled".to_owned()) }
    }
}

/// What a run's auto-retry will do next, for whoever reports a run's end before the retry decision.
#[derive(Clone)]
pub struct RetryProbe {
    pub settings: RetrySettings,
    pub context_window: Option<u64>,
    pub state: Arc<Mutex<RetryState>>,
    /// Called when a failed answer is dropped from the context for a retry (pi 1.5 records it in the session).
    pub on_drop: Option<Arc<dyn Fn() + Send + Sync>>,
}

impl RetryProbe {
    /// Whether a run that ended with `last` will be retried.
    pub fn will_retry(&self, last: Option<&AssistantMessage>) -> bool {
        lock(&self.state).will_retry(&self.settings, last, self.context_window)
    }
}

/// Where session events go (json mode prints them between the agent's events).
pub type SessionEventSink = Arc<dyn Fn(&SessionOnlyEvent) + Send + Sync>;

/// Runs `start` (a prompt or continue of `agent`), then retries while the answer is a retryable error.
/// `cancel` stops a retry wait. Events go to `emit`; the success event is emitted from an agent listener
/// so it follows the successful answer's `message_end` directly.
pub async fn run_with_auto_retry<F>(
    agent: &Agent,
    settings: RetrySettings,
    context_window: Option<u64>,
    emit: SessionEventSink,
    cancel: &CancellationToken,
    start: F,
) -> Result<(), AgentError>
where
    F: Future<Output = Result<(), AgentError>>,
{
    let probe = RetryProbe { settings, context_window, state: Arc::default(), on_drop: None };
    run_with_auto_retry_probed(agent, &probe, emit, cancel, start).await
}

/// [`run_with_auto_retry`] keeping its retry counter in `probe`, so others can ask what comes next.
pub async fn run_with_auto_retry_probed<F>(
    agent: &Agent,
    probe: &RetryProbe,
    emit: SessionEventSink,
    cancel: &CancellationToken,
    start: F,
) -> Result<(), AgentError>
where
    F: Future<Output = Result<(), AgentError>>,
{
    let (settings, context_window) = (probe.settings, probe.context_window);
    let state = probe.state.clone();
    *lock(&state) = RetryState::default();
    let _listener = agent.subscribe({
        let (state, emit) = (state.clone(), emit.clone());
        move |event: &AgentEvent| {
            if let AgentEvent::MessageEnd { message: AgentMessage::Assistant(message) } = event
                && let Some(end) = lock(&state).on_assistant_message(message)
            {
                emit(&end);
            }
        }
    });
    start.await?;
    loop {
        let last = agent.with_messages(|messages| messages.last().and_then(AgentMessage::as_assistant).cloned());
        let decision = lock(&state).after_run(&settings, last.as_ref(), context_window);
        match decision {
            RetryDecision::Done => return Ok(()),
            RetryDecision::GiveUp(event) => {
                emit(&event);
                return Ok(());
            }
            RetryDecision::Retry { event, delay } => {
                emit(&event);
                if let Some(on_drop) = &probe.on_drop {
                    on_drop();
                }
                drop_last_assistant(agent);
                tokio::select! {
                    _ = cancel.cancelled() => {
                        let end = lock(&state).cancelled();
                        emit(&end);
                        return Ok(());
                    }
                    () = tokio::time::sleep(delay) => {}
                }
                agent.continue_().await?;
            }
        }
    }
}

fn lock(state: &Mutex<RetryState>) -> std::sync::MutexGuard<'_, RetryState> {
    state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Removes the failed answer from the agent's context (the session file keeps it).
pub(super) fn drop_last_assistant(agent: &Agent) {
    let mut messages = agent.messages();
    if matches!(messages.last(), Some(AgentMessage::Assistant(_))) {
        messages.pop();
        agent.replace_messages(messages);
    }
}
