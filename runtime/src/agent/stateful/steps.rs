//! One step of the agent loop carried out on its own, for a driver that keeps the loop's decisions
//! somewhere else (a durable workflow runs [`crate::agent::LoopState`] and asks a worker for each step).
//! A step emits what the in-process loop would emit at that point, in the same order, so listeners (the
//! session file, extensions, an event stream) cannot tell the two apart.

use super::{Agent, FinishRun, StateSink, lock};
use crate::agent::AgentError;
use crate::agent::config::AgentEventSink;
use crate::agent::stream_response::stream_assistant_response;
use crate::agent::tool_calls::execute_tool_calls;
use crate::ai::Model;
use crate::protocol::{
    AgentEvent, AgentMessage, AssistantContent, AssistantMessage, StopReason, ToolResultMessage, now_ms,
};

/// What a step announces before its work, in this order, and the work itself.
#[derive(Debug, Clone, Default)]
pub struct StepRequest {
    /// Emit `turn_end` for the previous turn: the context's last answer and the tool results after it.
    pub end_turn: bool,
    /// Emit `agent_start` and the first turn's `turn_start` (the run's first step).
    pub start_run: bool,
    /// Emit `turn_start` (a later turn).
    pub start_turn: bool,
    /// Messages that enter the context now (`message_start` / `message_end` each).
    pub messages: Vec<AgentMessage>,
    pub work: StepWork,
    /// The run was aborted: the step starts cancelled, as the loop's later steps do after an abort (a
    /// model call answers `aborted` without a request; tools end as aborted).
    pub aborted: bool,
}

/// The work of a step.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub enum StepWork {
    /// Only the announcements.
    #[default]
    Nothing,
    /// Stream the model's answer to the context.
    CallModel,
    /// Run the tool calls of the context's last answer.
    RunTools,
    /// End the run: `agent_end` with the messages the run added.
    FinishRun { run_messages: Vec<AgentMessage> },
}

/// What a step produced.
#[derive(Debug, Clone, Default)]
pub struct StepReport {
    /// The model's answer (a failed call gives an answer with stop reason `error` or `aborted`).
    pub answer: Option<AssistantMessage>,
    /// The tool results, in call order.
    pub tool_results: Vec<ToolResultMessage>,
}

impl Agent {
    /// Carries out one step (see [`StepRequest`]); refused while a run is under way.
    pub async fn run_step(&self, request: StepRequest) -> Result<StepReport, AgentError> {
        let (cancel, mut context, config) = self.begin_run(true)?;
        if request.aborted {
            cancel.cancel();
        }
        let _finish = FinishRun(&self.inner);
        let sink = StateSink(&self.inner);
        if request.end_turn
            && let Some((message, tool_results)) = last_turn(&context.messages)
        {
            sink.emit(AgentEvent::TurnEnd { message, tool_results }).await;
        }
        if request.start_run {
            sink.emit(AgentEvent::AgentStart).await;
        }
        if request.start_run || request.start_turn {
            sink.emit(AgentEvent::TurnStart).await;
        }
        for message in request.messages {
            sink.emit(AgentEvent::MessageStart { message: message.clone() }).await;
            let message = sink.emit_message_end(message).await;
            context.messages.push(message);
        }
        let mut report = StepReport::default();
        match request.work {
            StepWork::Nothing => {}
            StepWork::CallModel => {
                let answer = match stream_assistant_response(&context, &config, &cancel, &sink).await {
                    Ok(answer) => answer,
                    Err(error) => {
                        // The in-process loop ends the run here; a step records the failure as the answer,
                        // so the driver ends the turn and the run as the loop would.
                        let failure = failure_message(&error.to_string(), cancel.is_cancelled(), &config.model);
                        let message = AgentMessage::Assistant(failure.clone());
                        sink.emit(AgentEvent::MessageStart { message: message.clone() }).await;
                        sink.emit_message_end(message).await;
                        failure
                    }
                };
                report.answer = Some(answer);
            }
            StepWork::RunTools => {
                let Some(answer) = context.messages.iter().rev().find_map(AgentMessage::as_assistant).cloned() else {
                    return Err(AgentError::NoAnswer);
                };
                let batch = execute_tool_calls(&context, &answer, &config, &cancel, &sink).await;
                // Steering the batch saw stays queued for the driver's next poll.
                for message in batch.steering {
                    self.steer(message);
                }
                report.tool_results = batch.results;
            }
            StepWork::FinishRun { run_messages } => {
                sink.emit(AgentEvent::AgentEnd { messages: run_messages, will_retry: None }).await;
            }
        }
        if let Some(error) = report.answer.as_ref().and_then(|answer| answer.error_message.clone()) {
            lock(&self.inner.state).error = Some(error);
        }
        Ok(report)
    }
}

/// The context's last answer and the tool results that follow it (a turn's `turn_end`).
fn last_turn(messages: &[AgentMessage]) -> Option<(AgentMessage, Vec<ToolResultMessage>)> {
    let at = messages.iter().rposition(|message| matches!(message, AgentMessage::Assistant(_)))?;
    let results = messages[at + 1..]
        .iter()
        .filter_map(|message| match message {
            AgentMessage::ToolResult(result) => Some(result.clone()),
            _ => None,
        })
        .collect();
    Some((messages[at].clone(), results))
}

/// The assistant message that stands for a run that failed outside the model's answer.
pub(super) fn failure_message(error: &str, aborted: bool, model: &Model) -> AssistantMessage {
    AssistantMessage {
        content: vec![AssistantContent::text("")],
        api: model.api.as_str().into(),
        provider: model.provider.as_str().into(),
        model: model.id.as_str().into(),
        stop_reason: if aborted { StopReason::Aborted } else { StopReason::Error },
        error_message: Some(error.to_owned()),
        timestamp: now_ms(),
        ..AssistantMessage::default()
    }
}
