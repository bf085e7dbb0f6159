//! A run of the session flow: the loop's state, what the next activity announces, the entries the run
//! added, the activity it waits for, and how the chain of runs stands (the retry under way, the output
//! check, the fallback model serving it).

use pi_runtime::agent::LoopState;
use serde::{Deserialize, Serialize};

use super::{Action, Announcements, ToolResultSlot, UserInput, is_zero};

/// A run under way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Run {
    pub(super) state: LoopState,
    /// Taken from a queue; they enter the context when the next turn starts.
    pub(super) queued: Vec<UserInput>,
    /// Emitted and recorded by the next activity (kept until its outcome arrives, since it may be retried).
    pub(super) pending: Announcements,
    /// The current turn's answer, once the model call is handed out.
    pub(super) answer: Option<String>,
    /// The current answer's tool calls and the entries their results go to.
    pub(super) tool_calls: Vec<ToolResultSlot>,
    /// The current turn's tool results, once they ran.
    pub(super) tool_results: Vec<String>,
    /// Every entry the run added, for `agent_end`.
    pub(super) entries: Vec<String>,
    /// The activity under way.
    pub(super) waiting: Option<Waiting>,
    /// The auto-retry under way in this chain of runs (0: none); a run that retries carries it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(super) retry_attempt: u32,
    /// The run sends an answer that failed the output schema back: its own answer is not checked again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(super) correcting: bool,
    /// The wait before this retried run, while it lasts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) backoff_ms: Option<u64>,
    /// The fallback model serving this chain of runs, if one took over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) fallback: Option<String>,
    /// The fallback models this chain used up.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(super) fallbacks_tried: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Waiting {
    Model,
    Tools,
    Finish,
    /// A retried run waits for its delay.
    Backoff,
    /// The wait before a retry was aborted; the run ends without starting.
    CancelRetry,
}

impl Waiting {
    pub(super) fn describe(self) -> &'static str {
        match self {
            Self::Model => "the model's answer",
            Self::Tools => "the tool results",
            Self::Finish => "the end of the run",
            Self::Backoff => "the retry's delay",
            Self::CancelRetry => "the cancelled retry",
        }
    }
}

impl Run {
    /// A run about to start: `agent_start`, then `prompt` (a retry has none: it continues the agent).
    pub(super) fn starting(prompt: Option<UserInput>) -> Self {
        let entries = prompt.iter().map(|prompt| prompt.entry_id.clone()).collect();
        let pending =
            Announcements { agent_start: true, messages: prompt.into_iter().collect(), ..Announcements::default() };
        Self {
            state: LoopState::new(),
            queued: Vec::new(),
            pending,
            answer: None,
            tool_calls: Vec::new(),
            tool_results: Vec::new(),
            entries,
            waiting: None,
            retry_attempt: 0,
            correcting: false,
            backoff_ms: None,
            fallback: None,
            fallbacks_tried: 0,
        }
    }

    pub(super) fn action_for(&self, waiting: Waiting) -> Action {
        let announce = self.pending.clone();
        let answer_entry_id = self.answer.clone().unwrap_or_default();
        let attempt = self.retry_attempt;
        match waiting {
            Waiting::Model => Action::CallModel { announce, answer_entry_id, retry_attempt: attempt },
            Waiting::Tools => Action::RunTools { announce, answer_entry_id, results: self.tool_calls.clone() },
            Waiting::Finish => Action::FinishRun {
                announce,
                run_entries: self.entries.clone(),
                retry_attempt: attempt,
                check_output: !self.correcting,
                fallbacks_tried: self.fallbacks_tried,
            },
            Waiting::Backoff => Action::Backoff { delay_ms: self.backoff_ms.unwrap_or_default(), attempt },
            Waiting::CancelRetry => Action::CancelRetry { attempt },
        }
    }
}
