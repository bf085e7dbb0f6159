//! The session workflow's activities: one model call, one tool batch, the results of a batch a dead worker
//! left unfinished, the end of a run. Each opens the session from the store, carries out its step under the
//! entry ids the workflow named, and appends what it wrote; each is idempotent by those ids.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use pi_runtime::agent::{PromptInput, StepRequest, StepWork};
use pi_runtime::agent_session::{PromptOptions, TOOL_INTERRUPTED};
use pi_runtime::extension::InputSource;
use pi_runtime::protocol::{AgentMessage, ImageContent, ToolResultMessage, UserContent, now_ms};
use pi_runtime::session::{PlannedIds, SessionEntry};
use serde::{Deserialize, Serialize};
use temporalio_macros::activities;
use temporalio_sdk::activities::{ActivityContext, ActivityError};

use super::step_host::{OpenStep, StepError, StepHost};
use crate::flow::{Announcements, ModelReport, ToolResultSlot, UserInput};

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
}

/// What the model step reports: the flow's part, and the run's system prompt for its later calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelStepDone {
    pub report: ModelReport,
    pub system_prompt: Option<String>,
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
            return Ok(ModelStepDone { report: report_of(&answer, Vec::new()), system_prompt: step.system_prompt });
        }
        let open =
            host.open(&step.target.session_id, &step.target.argv, step.target.event_base).await.map_err(failed)?;
        let outcome = until_done_or_aborted(host, &open, model_step(&open, &step)).await;
        host.close(open).await.map_err(failed)?;
        outcome.map_err(failed)
    }

    /// Runs the tool calls of the answer, each result into its planned entry. Never retried: a bash command
    /// must not run twice, so a batch a dead worker left is finished by [`SessionActivities::interrupt_tools`].
    #[activity(name = "run_tools")]
    pub async fn run_tools(self: Arc<Self>, ctx: ActivityContext, step: ToolsStep) -> Result<(), ActivityError> {
        let _alive = heartbeat(&ctx);
        let host = &self.host;
        let open =
            host.open(&step.target.session_id, &step.target.argv, step.target.event_base).await.map_err(failed)?;
        let mut request = announced(&step.announce, StepWork::RunTools);
        request.aborted = step.target.aborted;
        let ids = planned(&step.announce, &step.results, &[]);
        let outcome = until_done_or_aborted(host, &open, open.session.run_step(request, ids)).await;
        host.close(open).await.map_err(failed)?;
        outcome.map(drop).map_err(|error| failed(step_failed(&step.target, error)))
    }

    /// Gives every call of the batch that has no stored result a "tool interrupted" result.
    #[activity(name = "interrupt_tools")]
    pub async fn interrupt_tools(self: Arc<Self>, ctx: ActivityContext, step: ToolsStep) -> Result<(), ActivityError> {
        let _alive = heartbeat(&ctx);
        let host = &self.host;
        let open =
            host.open(&step.target.session_id, &step.target.argv, step.target.event_base).await.map_err(failed)?;
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

    /// Emits the pending `turn_end` and `agent_end` with the run's messages, then the after-run checks.
    #[activity(name = "finish_run")]
    pub async fn finish_run(self: Arc<Self>, ctx: ActivityContext, step: FinishStep) -> Result<(), ActivityError> {
        let _alive = heartbeat(&ctx);
        let host = &self.host;
        let open =
            host.open(&step.target.session_id, &step.target.argv, step.target.event_base).await.map_err(failed)?;
        let run_messages = {
            let manager = open.session.manager();
            let by_id: HashMap<&str, &SessionEntry> =
                manager.entries().iter().map(|entry| (entry.id.as_str(), entry)).collect();
            step.run_entries.iter().filter_map(|id| by_id.get(id.as_str()).and_then(|e| e.message().cloned())).collect()
        };
        let request = announced(&step.announce, StepWork::FinishRun { run_messages });
        let mut outcome = open.session.run_step(request, PlannedIds::default()).await.map(drop);
        if outcome.is_ok() {
            outcome = open.session.finish_stepped_run().await;
        }
        host.close(open).await.map_err(failed)?;
        outcome.map_err(|error| failed(step_failed(&step.target, error)))
    }
}

/// The model step on an opened session.
async fn model_step(open: &OpenStep, step: &ModelStep) -> Result<ModelStepDone, StepError> {
    let session = &open.session;
    let mut messages = Vec::new();
    let mut system_prompt = step.system_prompt.clone();
    for (index, input) in step.announce.messages.iter().enumerate() {
        let images = images_of(input);
        if index == 0 && step.announce.agent_start {
            // The run's prompt goes through the pipeline's stages before the run, as `prompt` does.
            let options = PromptOptions { images, source: InputSource::Rpc, ..PromptOptions::default() };
            let prepared = session
                .prepare_prompt(input.text.clone(), options)
                .await
                .map_err(|error| step_failed(&step.target, error))?;
            if let Some(prepared) = prepared {
                system_prompt = Some(prepared.system_prompt);
                messages.extend(prepared.messages);
            }
        } else {
            messages.extend(PromptInput::Text { text: input.text.clone(), images }.into_messages());
        }
    }
    if let Some(prompt) = &system_prompt {
        session.agent().set_system_prompt(prompt.clone());
    }
    let before: Vec<String> = open.stored_ids().map(str::to_owned).collect();
    let mut request = announced(&step.announce, StepWork::CallModel);
    request.messages = messages;
    request.aborted = step.target.aborted;
    let ids = planned(&step.announce, &[], std::slice::from_ref(&step.answer_entry_id));
    let report = session.run_step(request, ids).await.map_err(|error| step_failed(&step.target, error))?;
    let answer = report.answer.unwrap_or_default();
    let named: Vec<&str> = step.announce.messages.iter().map(|input| input.entry_id.as_str()).collect();
    let added = session
        .manager()
        .entries()
        .iter()
        .filter(|entry| entry.message().is_some())
        .map(|entry| entry.id.clone())
        .filter(|id| !before.contains(id) && !named.contains(&id.as_str()) && *id != step.answer_entry_id)
        .collect();
    Ok(ModelStepDone { report: report_of(&answer, added), system_prompt })
}

/// Runs `step`; when an abort is asked for meanwhile (on the event bus), the session's agent is aborted and
/// the step is still awaited, so what it did (an `aborted` answer, aborted tool results) is recorded.
async fn until_done_or_aborted<T>(host: &StepHost, open: &OpenStep, step: impl Future<Output = T>) -> T {
    let mut step = std::pin::pin!(step);
    let mut notices = match host.bus.abort_notices(&open.stored.header.id).await {
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

/// The step's announcements, before `work`.
fn announced(announce: &Announcements, work: StepWork) -> StepRequest {
    let messages = announce
        .messages
        .iter()
        .flat_map(|input| PromptInput::Text { text: input.text.clone(), images: images_of(input) }.into_messages())
        .collect();
    StepRequest {
        end_turn: announce.turn_end.is_some(),
        start_run: announce.agent_start,
        start_turn: announce.turn_start,
        messages,
        work,
        aborted: false,
    }
}

/// The ids of the step's entries: the announced messages', then `after` (the answer), tool results by call.
fn planned(announce: &Announcements, results: &[ToolResultSlot], after: &[String]) -> PlannedIds {
    let mut in_order: VecDeque<String> = announce.messages.iter().map(|input| input.entry_id.clone()).collect();
    in_order.extend(after.iter().cloned());
    let tool_results = results.iter().map(|slot| (slot.tool_call_id.clone(), slot.entry_id.clone())).collect();
    PlannedIds { in_order, tool_results }
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

fn report_of(answer: &pi_runtime::protocol::AssistantMessage, added_entries: Vec<String>) -> ModelReport {
    ModelReport {
        stop_reason: answer.stop_reason,
        tool_call_ids: answer.tool_calls().map(|call| call.id.clone()).collect(),
        added_entries,
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
    ActivityError::from(error)
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
