//! The session workflow's activities: one model call, one tool batch, the results of a batch a dead worker
//! left unfinished, the end of a run. Each opens the session from the store, carries out its step under the
//! entry ids the workflow named, and appends what it wrote; each is idempotent by those ids.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use pi_runtime::agent::{PromptInput, StepRequest, StepWork};
use pi_runtime::agent_session::{PromptOptions, TOOL_INTERRUPTED};
use pi_runtime::extension::InputSource;
use pi_runtime::protocol::{
    AgentMessage, CustomMessage, ImageContent, MessageContent, ToolResultMessage, UserContent, now_ms,
};
use pi_runtime::session::{EntryKind, PlannedIds, SessionEntry};
use serde::{Deserialize, Serialize};
use temporalio_macros::activities;
use temporalio_sdk::ApplicationFailure;
use temporalio_sdk::activities::{ActivityContext, ActivityError};

use super::commands::{self, CommandDone, CommandStep, ModelSettings};
use super::run_end;
use super::step_host::{OpenStep, StepError, StepHost};
use super::step_ids::{model_step_ids, planned, stored_step_entries};
use super::workflow::EVENTS_PER_STEP;
use crate::flow::{Announcements, ModelReport, RunFollowOn, ToolResultSlot, UserInput, is_zero};
use crate::store::StoreError;

/// What every step names: the session, the agent's flags for it, and where its events are numbered from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepTarget {
    pub session_id: String,
    pub argv: Vec<String>,
    pub event_base: u64,
    /// The run was aborted: the step starts cancelled (see [`StepRequest::aborted`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub aborted: bool,
    /// The fallback model serving the run (`provider/id[:level]`, one of the session's fallback chain).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
}

/// The model step's input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelStep {
    pub target: StepTarget,
    pub announce: Announcements,
    pub answer_entry_id: String,
    /// The run's system prompt, as its first call set it (a `before_agent_start` change); `None` on the
    /// first call, which works it out.
    pub system_prompt: Option<String>,
    /// The auto-retry under way (0: none): a retried run's first call leaves the failed answer out of the
    /// context, and the first answer that is no error ends the streak.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retry_attempt: u32,
}

/// What the model step reports: the flow's part, and the run's system prompt for its later calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelStepDone {
    pub report: ModelReport,
    pub system_prompt: Option<String>,
    /// The model and thinking level the step ran with (for the session's state).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<ModelSettings>,
}

/// The tool step's input (also the input of the step that marks unfinished results interrupted).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsStep {
    pub target: StepTarget,
    pub announce: Announcements,
    pub results: Vec<ToolResultSlot>,
}

/// The end of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FinishStep {
    pub target: StepTarget,
    pub announce: Announcements,
    pub run_entries: Vec<String>,
    /// The auto-retry under way (0: none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retry_attempt: u32,
    /// Whether the run's final answer is checked against the output schema (not a correction's).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub check_output: bool,
    /// The fallback models the run's chain used up.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub fallbacks_tried: u32,
}

/// The step that reports a retry whose wait an abort cut short.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelRetryStep {
    pub target: StepTarget,
    pub attempt: u32,
}

/// How often a running step tells Temporal it is alive (a killed worker's step is retried, or marked
/// interrupted, once its heartbeats stop).
pub const HEARTBEAT_EVERY: Duration = Duration::from_secs(1);

/// The activities, sharing the worker's [`StepHost`]. Their names are fixed (not the Rust paths), since
/// recorded histories name them.
pub struct SessionActivities {
    pub host: Arc<StepHost>,
}

#[activities]
impl SessionActivities {
    /// Emits and records the announcements, then streams one answer into the planned entry. An answer
    /// stored already (a retry after the step's work was saved) is reported without asking the model again.
    #[activity(name = "call_model")]
    pub async fn call_model(
        self: Arc<Self>,
        ctx: ActivityContext,
        step: ModelStep,
    ) -> Result<ModelStepDone, ActivityError> {
        let _alive = heartbeat(&ctx);
        let host = &self.host;
        let stored = host.stored(&step.target.session_id).await.map_err(failed)?;
        if let Some(answer) = stored_answer(&stored, &step.answer_entry_id) {
            let recorded = stored_step_entries(&stored, &step);
            let report = report_of(&answer, recorded);
            return Ok(ModelStepDone { report, system_prompt: step.system_prompt, settings: None });
        }
        let open = host.open_target(&step.target).await.map_err(failed)?;
        let outcome = until_done_or_aborted(host, &open, &step.target, model_step(&open, &step)).await;
        host.close(open).await.map_err(failed)?;
        outcome.map_err(failed)
    }

    /// Runs the tool calls of the answer, each result into its planned entry. Never retried: a bash command
    /// must not run twice, so a batch a dead worker left is finished by [`SessionActivities::interrupt_tools`].
    #[activity(name = "run_tools")]
    pub async fn run_tools(self: Arc<Self>, ctx: ActivityContext, step: ToolsStep) -> Result<(), ActivityError> {
        let _alive = heartbeat(&ctx);
        let host = &self.host;
        let open = host.open_target(&step.target).await.map_err(failed)?;
        let mut request = announced(&step.announce, StepWork::RunTools);
        request.aborted = step.target.aborted;
        let ids = planned(&step.announce, &step.results);
        let outcome = until_done_or_aborted(host, &open, &step.target, open.session.run_step(request, ids)).await;
        host.close(open).await.map_err(failed)?;
        outcome.map(drop).map_err(|error| failed(step_failed(&step.target, error)))
    }

    /// Gives every call of the batch that has no stored result a "tool interrupted" result.
    #[activity(name = "interrupt_tools")]
    pub async fn interrupt_tools(self: Arc<Self>, ctx: ActivityContext, step: ToolsStep) -> Result<(), ActivityError> {
        let _alive = heartbeat(&ctx);
        let host = &self.host;
        let open = host.open_target(&step.target).await.map_err(failed)?;
        let stored: Vec<String> = open.stored_ids().map(str::to_owned).collect();
        let missing: Vec<&ToolResultSlot> =
            step.results.iter().filter(|slot| !stored.contains(&slot.entry_id)).collect();
        let names = tool_names(&open);
        let messages = missing
            .iter()
            .map(|slot| {
                interrupted_result(&slot.tool_call_id, names.get(&slot.tool_call_id).cloned().unwrap_or_default())
            })
            .collect();
        let request = StepRequest { messages, ..StepRequest::default() };
        let ids = PlannedIds {
            tool_results: missing.iter().map(|slot| (slot.tool_call_id.clone(), slot.entry_id.clone())).collect(),
            ..PlannedIds::default()
        };
        let outcome = open.session.run_step(request, ids).await;
        host.close(open).await.map_err(failed)?;
        outcome.map(drop).map_err(|error| failed(step_failed(&step.target, error)))
    }

    /// Carries out a settings command (model, thinking level, name, compaction) between steps.
    #[activity(name = "run_command")]
    pub async fn run_command(
        self: Arc<Self>,
        ctx: ActivityContext,
        step: CommandStep,
    ) -> Result<CommandDone, ActivityError> {
        let _alive = heartbeat(&ctx);
        let host = &self.host;
        let open = host.open_target(&step.target).await.map_err(failed)?;
        let outcome = commands::run_command(host, &open, step).await;
        host.close(open).await.map_err(failed)?;
        outcome.map_err(failed)
    }

    /// Emits the pending `turn_end` and `agent_end` with the run's messages, then decides what follows as pi
    /// does after a run: a retry, a fallback model, an output correction, or nothing (the session settles).
    #[activity(name = "finish_run")]
    pub async fn finish_run(
        self: Arc<Self>,
        ctx: ActivityContext,
        step: FinishStep,
    ) -> Result<Option<RunFollowOn>, ActivityError> {
        let _alive = heartbeat(&ctx);
        let host = &self.host;
        let open = host.open_target(&step.target).await.map_err(failed)?;
        let outcome = run_end::finish(&open, &step).await;
        host.close(open).await.map_err(failed)?;
        outcome.map_err(|error| failed(step_failed(&step.target, error)))
    }

    /// Reports a retry whose wait an abort cut short (`auto_retry_end`), then settles the session.
    #[activity(name = "cancel_retry")]
    pub async fn cancel_retry(
        self: Arc<Self>,
        ctx: ActivityContext,
        step: CancelRetryStep,
    ) -> Result<(), ActivityError> {
        let _alive = heartbeat(&ctx);
        let host = &self.host;
        let open = host.open_target(&step.target).await.map_err(failed)?;
        let outcome = open.session.cancel_stepped_retry(step.attempt).await;
        host.close(open).await.map_err(failed)?;
        outcome.map(drop).map_err(|error| failed(step_failed(&step.target, error)))
    }
}

/// The model step on an opened session.
async fn model_step(open: &OpenStep, step: &ModelStep) -> Result<ModelStepDone, StepError> {
    let session = &open.session;
    let mut messages = Vec::new();
    let mut system_prompt = step.system_prompt.clone();
    for (index, input) in step.announce.messages.iter().enumerate() {
        let images = images_of(input);
        if index == 0 && step.announce.agent_start && input.custom_type.is_none() {
            // The run's prompt goes through the pipeline's stages before the run, as `prompt` does.
            let options = PromptOptions { images, source: InputSource::Rpc, ..PromptOptions::default() };
            let prepared = session
                .prepare_prompt(input.text.clone(), options)
                .await
                .map_err(|error| step_failed(&step.target, error))?;
            match prepared {
                Some(prepared) => {
                    system_prompt = Some(prepared.system_prompt);
                    messages.extend(prepared.messages);
                }
                // A command or an `input` handler took the prompt: no run starts, as in pi.
                None => return Ok(handled_prompt()),
            }
        } else {
            messages.extend(input_messages(input));
        }
    }
    if let Some(prompt) = &system_prompt {
        session.agent().set_system_prompt(prompt.clone());
    }
    if step.retry_attempt > 0 && step.announce.agent_start {
        // A retried run continues the agent without the failed answer, as the wait before it left it.
        session.drop_failed_answer();
    }
    let before: Vec<String> = open.stored_ids().map(str::to_owned).collect();
    let mut request = announced(&step.announce, StepWork::CallModel);
    request.messages = messages;
    request.aborted = step.target.aborted;
    let ids = model_step_ids(&request.messages, &step.announce.messages, &step.answer_entry_id);
    let report = session.run_step(request, ids).await.map_err(|error| step_failed(&step.target, error))?;
    let answer = report.answer.unwrap_or_default();
    session.report_retried_answer(step.retry_attempt, &answer);
    let recorded = session
        .manager()
        .entries()
        .iter()
        .filter(|entry| is_run_message(entry) && !before.contains(&entry.id))
        .map(|entry| entry.id.clone())
        .collect();
    // A fallback serving the run is not the session's model: the state keeps the one the user chose.
    let settings = step.target.fallback.is_none().then(|| ModelSettings::of(open));
    Ok(ModelStepDone { report: report_of(&answer, recorded), system_prompt, settings })
}

/// What a model step whose prompt a command or `input` handler took reports.
fn handled_prompt() -> ModelStepDone {
    let report = ModelReport {
        stop_reason: pi_runtime::protocol::StopReason::Stop,
        tool_call_ids: Vec::new(),
        step_entries: Vec::new(),
        handled: true,
    };
    ModelStepDone { report, system_prompt: None, settings: None }
}

/// Runs `step`; when an abort is asked for meanwhile (on the event bus), the session's agent is aborted and
/// the step is still awaited, so what it did (an `aborted` answer, aborted tool results) is recorded.
async fn until_done_or_aborted<T>(
    host: &StepHost,
    open: &OpenStep,
    target: &StepTarget,
    step: impl Future<Output = T>,
) -> T {
    let mut step = std::pin::pin!(step);
    let number = target.event_base / EVENTS_PER_STEP;
    let mut notices = match host.bus.abort_notices(&open.stored.header.id, number).await {
        Ok(notices) => notices,
        Err(error) => {
            eprintln!("Warning: session {} cannot be aborted during this step: {error}", open.stored.header.id);
            return step.await;
        }
    };
    tokio::select! {
        outcome = &mut step => outcome,
        () = notices.requested() => {
            eprintln!("Session {}: the step was aborted", open.stored.header.id);
            open.session.agent().abort();
            step.await
        }
    }
}

/// Whether an entry is one of a run's messages (`agent_end` lists hooks' custom messages too).
fn is_run_message(entry: &SessionEntry) -> bool {
    matches!(entry.kind, EntryKind::Message { .. } | EntryKind::CustomMessage { .. })
}

/// The step's announcements, before `work`.
pub(super) fn announced(announce: &Announcements, work: StepWork) -> StepRequest {
    let messages = announce.messages.iter().flat_map(input_messages).collect();
    StepRequest {
        end_turn: announce.turn_end.is_some(),
        start_run: announce.agent_start,
        start_turn: announce.turn_start,
        messages,
        work,
        aborted: false,
    }
}

/// The messages an announced input enters the context as: a user message (with its images), or the
/// session's own custom message.
fn input_messages(input: &UserInput) -> Vec<AgentMessage> {
    match &input.custom_type {
        Some(custom_type) => vec![AgentMessage::Custom(CustomMessage {
            custom_type: custom_type.clone(),
            content: MessageContent::Text(input.text.clone()),
            display: true,
            details: None,
            timestamp: now_ms(),
        })],
        None => PromptInput::Text { text: input.text.clone(), images: images_of(input) }.into_messages(),
    }
}

fn images_of(input: &UserInput) -> Vec<ImageContent> {
    input.images.iter().filter_map(|image| serde_json::from_value(image.clone()).ok()).collect()
}

/// The answer stored under `id`, if the step's work was saved already.
fn stored_answer(stored: &crate::store::SessionLines, id: &str) -> Option<pi_runtime::protocol::AssistantMessage> {
    let line = stored.entries.iter().find(|entry| entry.id == id)?;
    let entry: SessionEntry = SessionEntry::from_json(serde_json::from_str(&line.text).ok()?)?;
    entry.message()?.as_assistant().cloned()
}

fn report_of(answer: &pi_runtime::protocol::AssistantMessage, step_entries: Vec<String>) -> ModelReport {
    ModelReport {
        stop_reason: answer.stop_reason,
        tool_call_ids: answer.tool_calls().map(|call| call.id.clone()).collect(),
        step_entries,
        handled: false,
    }
}

/// The names of the tools the context's last answer calls, by call id.
fn tool_names(open: &OpenStep) -> HashMap<String, String> {
    open.session
        .agent()
        .find_last_message(|message| {
            message
                .as_assistant()
                .map(|answer| answer.tool_calls().map(|call| (call.id.clone(), call.name.clone())).collect())
        })
        .unwrap_or_default()
}

/// A "tool interrupted" result for a call whose worker died while it ran.
fn interrupted_result(tool_call_id: &str, tool_name: String) -> AgentMessage {
    AgentMessage::ToolResult(ToolResultMessage {
        tool_call_id: tool_call_id.to_owned(),
        tool_name,
        content: vec![UserContent::text(TOOL_INTERRUPTED)],
        details: None,
        is_error: true,
        duration_ms: None,
        timestamp: now_ms(),
    })
}

fn step_failed(target: &StepTarget, error: impl std::fmt::Display) -> StepError {
    StepError::Step { session: target.session_id.clone(), message: error.to_string() }
}

fn failed(error: StepError) -> ActivityError {
    match error {
        // The session is gone: trying again cannot help, and the workflow should end rather than wait.
        StepError::Store(StoreError::Deleted(_)) => {
            ActivityError::Application(Box::new(ApplicationFailure::non_retryable(error)))
        }
        error => ActivityError::from(error),
    }
}

/// Heartbeats every [`HEARTBEAT_EVERY`] until dropped.
fn heartbeat(ctx: &ActivityContext) -> HeartbeatGuard {
    let ctx = ctx.clone();
    let task = tokio::spawn(async move {
        loop {
            let _ = ctx.record_heartbeat(()).await;
            tokio::time::sleep(HEARTBEAT_EVERY).await;
        }
    });
    HeartbeatGuard(task)
}

struct HeartbeatGuard(tokio::task::JoinHandle<()>);

impl Drop for HeartbeatGuard {
    fn drop(&mut self) {
        self.0.abort();
    }
}
