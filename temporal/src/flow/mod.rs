//! The session workflow's logic, apart from Temporal: what the workflow holds (plain, serializable data,
//! carried across continue-as-new), how the inputs of prompts, steering, follow-ups and abort change it,
//! and which activity runs next. The agent loop's own decision core ([`LoopState`]) decides the steps; the
//! flow carries out those that need no I/O (polling its queues, starting and ending turns) and hands the
//! rest out as activities: a model call, a batch of tool calls, the end of a run.
//!
//! Activities are idempotent by entry id: the flow names every entry an activity will write before the
//! activity starts (ids come from the workflow's deterministic random source), so a retried model call
//! finds its answer already stored instead of asking the model twice, and payloads carry ids, not messages.

mod announce;
mod run;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;

use pi_runtime::agent::{Outcome, Step};
use pi_runtime::protocol::StopReason;
use serde::{Deserialize, Serialize};

pub use announce::{Announcements, TurnEnd, UserInput};
use run::{Run, Waiting};

/// What the end step of a run decided comes next, apart from settling (the end step's result; `None`
/// when the session settled).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunFollowOn {
    /// pi's auto-retry: after `delay_ms`, a run with no new message continues the agent (retry `attempt`).
    #[serde(rename_all = "camelCase")]
    Retry { attempt: u32, delay_ms: u64 },
    /// The answer failed the output schema: a run whose prompt is this custom message sends it back.
    #[serde(rename_all = "camelCase")]
    Correct { custom_type: String, text: String },
    /// The answer failed and a fallback model takes over at once: a run with no new message continues the
    /// agent on `model` (as the fallback chain names it); `tried` of the chain are used up.
    #[serde(rename_all = "camelCase")]
    Fallback { model: String, tried: u32 },
}

/// What a signal or update brings the workflow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum SessionInput {
    /// Starts a run when none is under way; waits behind the run otherwise (its disposition is `queued`).
    Prompt {
        text: String,
        images: Vec<serde_json::Value>,
        /// A prompt sent again under a key the session has seen is dropped (a client's retry).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        idempotency_key: Option<String>,
    },
    Steer {
        text: String,
        images: Vec<serde_json::Value>,
    },
    FollowUp {
        text: String,
        images: Vec<serde_json::Value>,
    },
    Abort,
}

/// How the steering and follow-up queues are drained (pi's `steeringMode` / `followUpMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Drain {
    #[default]
    OneAtATime,
    All,
}

/// The activity the workflow runs next.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Action {
    /// Nothing to do until an input arrives.
    Wait,
    /// Emit and record `announce`, then stream the model's answer into entry `answer_entry_id` (during retry
    /// `retry_attempt` of a streak, 0 when none).
    CallModel { announce: Announcements, answer_entry_id: String, retry_attempt: u32 },
    /// Emit and record `announce`, then run the tool calls of entry `answer_entry_id`, each result into the
    /// entry named beside its call id.
    RunTools { announce: Announcements, answer_entry_id: String, results: Vec<ToolResultSlot> },
    /// Emit `announce`, then end the run (`agent_end` with the run's entries) and decide what follows (the
    /// retry under way, whether the answer is checked against the output schema, the fallbacks tried).
    FinishRun {
        announce: Announcements,
        run_entries: Vec<String>,
        retry_attempt: u32,
        check_output: bool,
        fallbacks_tried: u32,
    },
    /// Wait `delay_ms` before retry `attempt` (a timer; an abort cancels it).
    Backoff { delay_ms: u64, attempt: u32 },
    /// The wait before retry `attempt` was aborted: say so, and settle the session.
    CancelRetry { attempt: u32 },
}

/// A tool call of the answer and the entry its result goes to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultSlot {
    pub tool_call_id: String,
    pub entry_id: String,
}

/// What the model call reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelReport {
    pub stop_reason: StopReason,
    /// The ids of the answer's tool calls, in order.
    pub tool_call_ids: Vec<String>,
    /// The message entries the step recorded, in the order it recorded them: the announced ones, those the
    /// session added itself (pi 1.5's opening system message, a hook's), the answer. They stand for the
    /// step's part of the run's entries; empty means the named ones, as named.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub step_entries: Vec<String>,
    /// The run's prompt was taken by a command or an `input` handler: nothing was announced and the model
    /// was not called, so the run never started.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub handled: bool,
}

/// The flow and the outcome an activity reported disagree (a bug, or a history from another version).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the session workflow got {got} while it waited for {waited}")]
pub struct FlowMismatch {
    pub waited: String,
    pub got: &'static str,
}

/// The session workflow's state between activations.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionFlow {
    prompts: VecDeque<UserInput>,
    steering: VecDeque<UserInput>,
    follow_ups: VecDeque<UserInput>,
    steering_mode: Drain,
    follow_up_mode: Drain,
    run: Option<Run>,
    /// Turns completed since this workflow run began (for continue-as-new).
    turns: u32,
    /// The idempotency keys of the latest prompts (the oldest are forgotten first).
    #[serde(default, skip_serializing_if = "VecDeque::is_empty")]
    keys: VecDeque<String>,
}

/// Idempotency keys a session remembers.
const REMEMBERED_KEYS: usize = 1024;

impl SessionFlow {
    pub fn new(steering_mode: Drain, follow_up_mode: Drain) -> Self {
        Self { steering_mode, follow_up_mode, ..Self::default() }
    }

    /// Whether a run is under way.
    pub fn is_running(&self) -> bool {
        self.run.is_some()
    }

    /// Whether the agent is streaming, as pi's `isStreaming` says: a run is under way and has not reached
    /// its end (once `agent_end` is being emitted, a new prompt waits only for the end step to finish).
    pub fn is_streaming(&self) -> bool {
        self.run.as_ref().is_some_and(|run| run.waiting != Some(Waiting::Finish))
    }

    /// The fallback model serving the run under way, if one took over (every step of the run uses it).
    pub fn fallback_model(&self) -> Option<&str> {
        self.run.as_ref().and_then(|run| run.fallback.as_deref())
    }

    /// Turns completed since this workflow run began.
    pub fn turns(&self) -> u32 {
        self.turns
    }

    /// Starts the count of turns again (the workflow continued as new).
    pub fn reset_turns(&mut self) {
        self.turns = 0;
    }

    /// Messages waiting: (prompts, steering, follow-ups).
    pub fn queued_counts(&self) -> (usize, usize, usize) {
        (self.prompts.len(), self.steering.len(), self.follow_ups.len())
    }

    /// Takes in an input; `new_id` names the entry a message becomes. Abort is the caller's to carry out
    /// (it cancels the activity under way, whose answer then reports `aborted`); here it drops what waits
    /// to steer or follow up.
    pub fn receive(&mut self, input: SessionInput, new_id: &mut dyn FnMut() -> String) {
        let mut user = |text: String, images: Vec<serde_json::Value>| UserInput::user(new_id(), text, images);
        match input {
            SessionInput::Prompt { text, images, idempotency_key } => {
                if let Some(key) = idempotency_key {
                    if self.keys.contains(&key) {
                        return;
                    }
                    if self.keys.len() == REMEMBERED_KEYS {
                        self.keys.pop_front();
                    }
                    self.keys.push_back(key);
                }
                self.prompts.push_back(user(text, images));
            }
            SessionInput::Steer { text, images } => self.steering.push_back(user(text, images)),
            SessionInput::FollowUp { text, images } => self.follow_ups.push_back(user(text, images)),
            SessionInput::Abort => {
                self.steering.clear();
                self.follow_ups.clear();
            }
        }
    }

    /// The next activity. Steps that need no I/O are carried out on the way; asking again before the
    /// activity's outcome is reported gives the same action.
    pub fn next_action(&mut self, new_id: &mut dyn FnMut() -> String) -> Action {
        if self.run.is_none() {
            let Some(prompt) = self.prompts.pop_front() else { return Action::Wait };
            self.run = Some(Run::starting(Some(prompt)));
        }
        let (steering_mode, follow_up_mode) = (self.steering_mode, self.follow_up_mode);
        let Some(run) = self.run.as_mut() else { return Action::Wait };
        loop {
            if let Some(waiting) = run.waiting {
                return run.action_for(waiting);
            }
            let outcome = match run.state.decide() {
                Step::PollSteering => {
                    run.queued = drain(&mut self.steering, steering_mode);
                    Outcome::SteeringPolled { queued: !run.queued.is_empty() }
                }
                Step::StartTurn { announce } => {
                    run.pending.turn_start |= announce;
                    for message in std::mem::take(&mut run.queued) {
                        run.entries.push(message.entry_id.clone());
                        run.pending.messages.push(message);
                    }
                    Outcome::TurnStarted
                }
                Step::CallModel => {
                    let id = new_id();
                    run.entries.push(id.clone());
                    run.answer = Some(id);
                    run.waiting = Some(Waiting::Model);
                    continue;
                }
                Step::RunTools => {
                    run.waiting = Some(Waiting::Tools);
                    continue;
                }
                Step::EndTurn => {
                    let answer_entry_id = run.answer.take().unwrap_or_default();
                    let tool_result_entry_ids = std::mem::take(&mut run.tool_results);
                    run.pending.turn_end = Some(TurnEnd { answer_entry_id, tool_result_entry_ids });
                    self.turns += 1;
                    Outcome::TurnEnded
                }
                Step::PollFollowUps => {
                    run.queued = drain(&mut self.follow_ups, follow_up_mode);
                    Outcome::FollowUpsPolled { queued: !run.queued.is_empty() }
                }
                // Finish, or a step a newer decision core added: the run ends.
                _ => {
                    run.waiting = Some(Waiting::Finish);
                    continue;
                }
            };
            if run.state.observe(outcome).is_err() {
                run.waiting = Some(Waiting::Finish);
            }
        }
    }

    /// The model call's outcome; the entries of the tool results are named now (`new_id`).
    pub fn model_answered(
        &mut self,
        report: &ModelReport,
        new_id: &mut dyn FnMut() -> String,
    ) -> Result<(), FlowMismatch> {
        let run = self.waiting_run(Waiting::Model, "a model answer")?;
        if report.handled {
            // No run after all: steering that was to enter its first turn waits for the next one.
            let prompt = run.entries.first().cloned();
            let waiting = std::mem::take(&mut run.pending.messages);
            for message in waiting.into_iter().rev().filter(|message| Some(&message.entry_id) != prompt.as_ref()) {
                self.steering.push_front(message);
            }
            self.run = None;
            return Ok(());
        }
        if report.stop_reason != StopReason::Error {
            // An answer after a retry ends the streak (the step said so with `auto_retry_end`).
            run.retry_attempt = 0;
        }
        let tool_calls = !report.tool_call_ids.is_empty();
        run.state
            .observe(Outcome::Answered { stop_reason: report.stop_reason, tool_calls })
            .map_err(|error| FlowMismatch { waited: error.to_string(), got: "a model answer" })?;
        if !report.step_entries.is_empty() {
            let named: Vec<&String> = run.pending.messages.iter().map(|input| &input.entry_id).collect();
            run.entries.retain(|id| !named.contains(&id) && Some(id) != run.answer.as_ref());
            run.entries.extend(report.step_entries.iter().cloned());
        }
        run.tool_calls = report
            .tool_call_ids
            .iter()
            .map(|call| ToolResultSlot { tool_call_id: call.clone(), entry_id: new_id() })
            .collect();
        run.pending = Announcements::default();
        run.waiting = None;
        Ok(())
    }

    /// The tool batch's outcome. Steering that arrived while the tools ran skips the poll after the turn.
    pub fn tools_ran(&mut self) -> Result<(), FlowMismatch> {
        self.waiting_run(Waiting::Tools, "tool results")?;
        let steered = drain(&mut self.steering, self.steering_mode);
        let steering = !steered.is_empty();
        let run = self.waiting_run(Waiting::Tools, "tool results")?;
        let slots = std::mem::take(&mut run.tool_calls);
        run.tool_results = slots.into_iter().map(|slot| slot.entry_id).collect();
        run.entries.extend(run.tool_results.iter().cloned());
        run.state
            .observe(Outcome::ToolsRan { steering })
            .map_err(|error| FlowMismatch { waited: error.to_string(), got: "tool results" })?;
        run.queued = steered;
        run.pending = Announcements::default();
        run.waiting = None;
        Ok(())
    }

    /// The run's end was emitted and `follow_on` decided: a retry waits for its delay, a correction starts
    /// at once (its message's entry named by `new_id`); otherwise the next prompt (if any) starts the next
    /// run.
    pub fn run_finished(
        &mut self,
        follow_on: Option<&RunFollowOn>,
        new_id: &mut dyn FnMut() -> String,
    ) -> Result<(), FlowMismatch> {
        let ended = self.waiting_run(Waiting::Finish, "the end of the run")?;
        // A retry goes on as the chain stood: the output check, the fallback serving it.
        let mut continued = Run::starting(None);
        continued.correcting = ended.correcting;
        continued.fallback = ended.fallback.clone();
        continued.fallbacks_tried = ended.fallbacks_tried;
        self.run = match follow_on {
            None => None,
            Some(RunFollowOn::Retry { attempt, delay_ms }) => {
                let mut run = continued;
                run.retry_attempt = *attempt;
                run.backoff_ms = Some(*delay_ms);
                run.waiting = Some(Waiting::Backoff);
                Some(run)
            }
            Some(RunFollowOn::Fallback { model, tried }) => {
                let mut run = continued;
                run.fallback = Some(model.clone());
                run.fallbacks_tried = *tried;
                Some(run)
            }
            Some(RunFollowOn::Correct { custom_type, text }) => {
                let message = UserInput {
                    entry_id: new_id(),
                    text: text.clone(),
                    images: Vec::new(),
                    custom_type: Some(custom_type.clone()),
                };
                let mut run = Run::starting(Some(message));
                run.correcting = true;
                Some(run)
            }
        };
        Ok(())
    }

    /// The delay before a retry is over (`aborted`: an abort cut it short, and the retry does not start).
    pub fn backoff_over(&mut self, aborted: bool) -> Result<(), FlowMismatch> {
        let run = self.waiting_run(Waiting::Backoff, "the end of the retry's delay")?;
        run.backoff_ms = None;
        run.waiting = if aborted { Some(Waiting::CancelRetry) } else { None };
        Ok(())
    }

    /// The cancelled retry was reported; the next prompt (if any) starts the next run.
    pub fn retry_cancelled(&mut self) -> Result<(), FlowMismatch> {
        self.waiting_run(Waiting::CancelRetry, "the cancelled retry")?;
        self.run = None;
        Ok(())
    }

    fn waiting_run(&mut self, expected: Waiting, got: &'static str) -> Result<&mut Run, FlowMismatch> {
        match self.run.as_mut() {
            Some(run) if run.waiting == Some(expected) => Ok(run),
            Some(run) => {
                Err(FlowMismatch { waited: run.waiting.map_or("no activity", Waiting::describe).to_owned(), got })
            }
            None => Err(FlowMismatch { waited: "no run".to_owned(), got }),
        }
    }
}

/// For serde: a count left out of a payload when it is zero.
pub(crate) fn is_zero(value: &u32) -> bool {
    *value == 0
}

/// Takes the messages a poll of `queue` gives.
fn drain(queue: &mut VecDeque<UserInput>, mode: Drain) -> Vec<UserInput> {
    match mode {
        Drain::OneAtATime => queue.pop_front().into_iter().collect(),
        Drain::All => queue.drain(..).collect(),
    }
}
