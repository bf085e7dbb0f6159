//! Tool execution for one assistant message: preflight (lookup, argument preparation and schema
//! validation, `before_tool_call`), execution (sequential, or concurrent in parallel mode),
//! `after_tool_call`, and the skipping of calls once a steering message is queued.

use std::sync::Arc;
use std::time::Instant;

use futures_util::future::join_all;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::config::{AfterToolCallContext, AgentContext, AgentEventSink, AgentLoopConfig, BeforeToolCallContext};
use super::validation::validate_tool_arguments;
use crate::definition::ToolExecutionMode;
use crate::protocol::{
    AgentEvent, AgentMessage, AgentToolResult, AssistantMessage, PiCompat, ToolCall, ToolResultMessage, UserContent,
    now_ms,
};
use crate::tools::{AgentTool, ToolContext};

/// The result text of a call skipped because the user steered.
pub const SKIPPED_TEXT: &str = "Skipped due to queued user message.";
/// The result text of a call a hook blocked without giving a reason.
pub const BLOCKED_TEXT: &str = "Tool execution was blocked";

/// What executing the tool calls of one assistant message produced.
pub(crate) struct ToolBatch {
    /// One result per call, in call order.
    pub results: Vec<ToolResultMessage>,
    /// Steering messages that arrived during execution (they skip the poll after `turn_end`).
    pub steering: Vec<AgentMessage>,
}

/// A call's outcome, ready to become a tool result message.
struct Finalized {
    tool_call: ToolCall,
    result: AgentToolResult,
    is_error: bool,
    /// When the call's preparation began (its `tool_execution_start`).
    started: Instant,
    /// How long the call took, stamped at its `tool_execution_end` from level 1.5 on.
    duration_ms: Option<u64>,
}

/// A call that passed preflight and will run.
struct PreparedCall {
    tool_call: ToolCall,
    tool: Arc<dyn AgentTool>,
    args: Value,
    started: Instant,
}

enum Preparation {
    /// Decided without running the tool (not found, invalid arguments, blocked).
    Immediate(Finalized),
    Prepared(PreparedCall),
}

/// Runs every tool call of `assistant` in the configured mode.
pub(crate) async fn execute_tool_calls(
    context: &AgentContext,
    assistant: &AssistantMessage,
    config: &AgentLoopConfig,
    cancel: &CancellationToken,
    sink: &dyn AgentEventSink,
) -> ToolBatch {
    let calls: Vec<ToolCall> = assistant.tool_calls().cloned().collect();
    let batch = Batch { context, assistant, config, cancel, sink };
    match config.tool_execution {
        ToolExecutionMode::Sequential => batch.run_sequential(&calls).await,
        _ => batch.run_parallel(&calls).await,
    }
}

/// A call's place in call order during parallel execution.
enum Slot {
    Done(Finalized),
    Pending(PreparedCall),
}

/// What every step of one assistant message's tool execution works with.
struct Batch<'a> {
    context: &'a AgentContext,
    assistant: &'a AssistantMessage,
    config: &'a AgentLoopConfig,
    cancel: &'a CancellationToken,
    sink: &'a dyn AgentEventSink,
}

impl Batch<'_> {
    /// Start, prepare, execute, end and result message, one call at a time; steering skips the rest.
    async fn run_sequential(&self, calls: &[ToolCall]) -> ToolBatch {
        let mut results = Vec::with_capacity(calls.len());
        for (index, call) in calls.iter().enumerate() {
            self.emit(start_event(call)).await;
            let finalized = match self.prepare(call).await {
                Preparation::Immediate(mut finalized) => {
                    self.emit(self.end_event(&mut finalized)).await;
                    finalized
                }
                Preparation::Prepared(prepared) => match self.run_prepared(vec![prepared]).await.pop() {
                    Some(finalized) => finalized,
                    None => continue,
                },
            };
            results.push(self.emit_result_message(finalized).await);
            let steering = self.config.poll_steering();
            if !steering.is_empty() {
                for skipped in &calls[index + 1..] {
                    let finalized = self.skip_unstarted(skipped).await;
                    results.push(self.emit_result_message(finalized).await);
                }
                return ToolBatch { results, steering };
            }
        }
        ToolBatch { results, steering: Vec::new() }
    }

    /// Sequential preflight (steering may skip everything), then concurrent execution; result
    /// messages in call order.
    async fn run_parallel(&self, calls: &[ToolCall]) -> ToolBatch {
        let mut slots = Vec::with_capacity(calls.len());
        for (index, call) in calls.iter().enumerate() {
            self.emit(start_event(call)).await;
            match self.prepare(call).await {
                Preparation::Immediate(mut finalized) => {
                    self.emit(self.end_event(&mut finalized)).await;
                    slots.push(Slot::Done(finalized));
                }
                Preparation::Prepared(prepared) => slots.push(Slot::Pending(prepared)),
            }
            let steering = self.config.poll_steering();
            if !steering.is_empty() {
                // Prepared calls already had their start event; later calls get one now.
                let mut finalized_calls = Vec::with_capacity(calls.len());
                for slot in slots {
                    finalized_calls.push(match slot {
                        Slot::Done(finalized) => finalized,
                        Slot::Pending(prepared) => {
                            let mut finalized = skipped_outcome(&prepared.tool_call);
                            finalized.started = prepared.started;
                            self.emit(self.end_event(&mut finalized)).await;
                            finalized
                        }
                    });
                }
                for skipped in &calls[index + 1..] {
                    finalized_calls.push(self.skip_unstarted(skipped).await);
                }
                let results = self.emit_result_messages(finalized_calls).await;
                return ToolBatch { results, steering };
            }
        }

        let mut pending = Vec::new();
        let mut order = Vec::with_capacity(slots.len());
        for slot in slots {
            match slot {
                Slot::Done(finalized) => order.push(Some(finalized)),
                Slot::Pending(prepared) => {
                    pending.push(prepared);
                    order.push(None);
                }
            }
        }
        let mut executed = self.run_prepared(pending).await.into_iter();
        let finalized_calls: Vec<Finalized> =
            order.into_iter().filter_map(|slot| slot.or_else(|| executed.next())).collect();
        let results = self.emit_result_messages(finalized_calls).await;
        ToolBatch { results, steering: self.config.poll_steering() }
    }

    async fn emit(&self, event: AgentEvent) {
        self.sink.emit(event).await;
    }

    /// A call that never started: its start and end events, with the skipped outcome.
    async fn skip_unstarted(&self, call: &ToolCall) -> Finalized {
        self.emit(start_event(call)).await;
        let mut finalized = skipped_outcome(call);
        self.emit(self.end_event(&mut finalized)).await;
        finalized
    }

    /// The call's `tool_execution_end`; from level 1.5 on it also stamps the call's duration.
    fn end_event(&self, finalized: &mut Finalized) -> AgentEvent {
        if self.config.pi_compat.is_v1_5() {
            finalized.duration_ms = Some(u64::try_from(finalized.started.elapsed().as_millis()).unwrap_or(u64::MAX));
        }
        AgentEvent::ToolExecutionEnd {
            tool_call_id: finalized.tool_call.id.clone(),
            tool_name: finalized.tool_call.name.clone(),
            result: finalized.result.clone(),
            is_error: finalized.is_error,
            duration_ms: finalized.duration_ms,
        }
    }

    /// Lookup, argument preparation and validation, then `before_tool_call`.
    async fn prepare(&self, call: &ToolCall) -> Preparation {
        let started = Instant::now();
        let Some(tool) = self.context.tools.iter().find(|tool| tool.name() == call.name) else {
            return Preparation::Immediate(error_outcome(call, format!("Tool {} not found", call.name)));
        };
        let prepared_args = tool.prepare_arguments(call.arguments.clone());
        let args = match validate_tool_arguments(tool.parameters(), &call.name, prepared_args) {
            Ok(args) => args,
            Err(error) => return Preparation::Immediate(error_outcome(call, error.to_string())),
        };
        if let Some(before) = &self.config.before_tool_call {
            let hook_context = BeforeToolCallContext {
                assistant_message: self.assistant.clone(),
                tool_call: call.clone(),
                args: args.clone(),
            };
            match before(hook_context, self.cancel.clone()).await {
                Ok(Some(verdict)) if verdict.block => {
                    let reason = verdict.reason.filter(|r| !r.is_empty()).unwrap_or_else(|| BLOCKED_TEXT.to_owned());
                    return Preparation::Immediate(error_outcome(call, reason));
                }
                Ok(_) => {}
                Err(error) => return Preparation::Immediate(error_outcome(call, error.message)),
            }
        }
        Preparation::Prepared(PreparedCall { tool_call: call.clone(), tool: tool.clone(), args, started })
    }

    /// Runs prepared calls concurrently. Each call's `tool_execution_update` and `tool_execution_end`
    /// events are emitted as they happen (an end as soon as its call finishes); outcomes come back
    /// in the order of `prepared`.
    async fn run_prepared(&self, prepared: Vec<PreparedCall>) -> Vec<Finalized> {
        let (events_tx, mut events) = mpsc::unbounded_channel::<AgentEvent>();
        let runs = prepared.into_iter().map(|call| {
            let events_tx = events_tx.clone();
            async move {
                let (result, is_error) = execute(&call, self.cancel, &events_tx).await;
                let (result, is_error) = at_level(result, is_error, self.config.pi_compat);
                let mut finalized = self.finalize(call, result, is_error).await;
                let _ = events_tx.send(self.end_event(&mut finalized));
                finalized
            }
        });
        let mut all = std::pin::pin!(join_all(runs));
        let finalized = loop {
            tokio::select! {
                biased;
                Some(event) = events.recv() => self.emit(event).await,
                finalized = &mut all => break finalized,
            }
        };
        events.close();
        while let Ok(event) = events.try_recv() {
            self.emit(event).await;
        }
        finalized
    }

    /// Applies `after_tool_call`: each field it returns replaces the tool's; a failing hook makes an error.
    async fn finalize(&self, call: PreparedCall, result: AgentToolResult, is_error: bool) -> Finalized {
        let started = call.started;
        let Some(after) = &self.config.after_tool_call else {
            return Finalized { tool_call: call.tool_call, result, is_error, started, duration_ms: None };
        };
        let hook_context = AfterToolCallContext {
            assistant_message: self.assistant.clone(),
            tool_call: call.tool_call.clone(),
            args: call.args,
            result: result.clone(),
            is_error,
        };
        match after(hook_context, self.cancel.clone()).await {
            Ok(Some(overrides)) => Finalized {
                tool_call: call.tool_call,
                result: AgentToolResult {
                    content: overrides.content.unwrap_or(result.content),
                    details: overrides.details.or(result.details),
                    ..AgentToolResult::default()
                },
                is_error: overrides.is_error.unwrap_or(is_error),
                started,
                duration_ms: None,
            },
            Ok(None) => Finalized { tool_call: call.tool_call, result, is_error, started, duration_ms: None },
            Err(error) => Finalized {
                tool_call: call.tool_call,
                result: error_result(error.message),
                is_error: true,
                started,
                duration_ms: None,
            },
        }
    }

    async fn emit_result_message(&self, finalized: Finalized) -> ToolResultMessage {
        let message = ToolResultMessage {
            tool_call_id: finalized.tool_call.id,
            tool_name: finalized.tool_call.name,
            content: finalized.result.content,
            details: finalized.result.details,
            is_error: finalized.is_error,
            timestamp: now_ms(),
            duration_ms: finalized.duration_ms,
        };
        self.emit(AgentEvent::MessageStart { message: AgentMessage::ToolResult(message.clone()) }).await;
        match self.sink.emit_message_end(AgentMessage::ToolResult(message.clone())).await {
            AgentMessage::ToolResult(replaced) => replaced,
            _ => message,
        }
    }

    async fn emit_result_messages(&self, finalized: Vec<Finalized>) -> Vec<ToolResultMessage> {
        let mut results = Vec::with_capacity(finalized.len());
        for one in finalized {
            results.push(self.emit_result_message(one).await);
        }
        results
    }
}

/// Runs the tool; its partial results go out as `tool_execution_update` events.
async fn execute(
    call: &PreparedCall,
    cancel: &CancellationToken,
    events: &mpsc::UnboundedSender<AgentEvent>,
) -> (AgentToolResult, bool) {
    let updates = events.clone();
    let (id, name, raw_args) =
        (call.tool_call.id.clone(), call.tool_call.name.clone(), call.tool_call.arguments.clone());
    let context = ToolContext {
        tool_call_id: id.clone(),
        cancel: cancel.clone(),
        on_update: Some(Arc::new(move |partial_result: AgentToolResult| {
            let _ = updates.send(AgentEvent::ToolExecutionUpdate {
                tool_call_id: id.clone(),
                tool_name: name.clone(),
                args: raw_args.clone(),
                partial_result,
            });
        })),
    };
    match call.tool.execute(call.args.clone(), context).await {
        Ok(result) => {
            let failed = result.is_error == Some(true);
            (result, failed)
        }
        Err(error) => (error_result(error.message), true),
    }
}

/// A tool's result in the shape of `level`. pi 0.73 has no `structuredContent` and no failing results: a
/// result flagged `isError` (pi 1.5's bash on a non-zero exit) becomes the plain error 0.73 reports.
fn at_level(mut result: AgentToolResult, is_error: bool, level: PiCompat) -> (AgentToolResult, bool) {
    if level.is_v1_5() {
        return (result, is_error);
    }
    if result.is_error.take() == Some(true) {
        let text = result
            .content
            .iter()
            .filter_map(|block| match block {
                UserContent::Text(text) => Some(text.text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        // A sub-agent's details stay: they name its session file and what it used.
        let mut failed = error_result(text);
        if crate::agent_session::SubagentUsage::from_details(result.details.as_ref()).is_some() {
            failed.details = result.details;
        }
        return (failed, true);
    }
    result.structured_content = None;
    (result, is_error)
}

/// An error result as pi builds it: one text block and empty details.
fn error_result(text: String) -> AgentToolResult {
    AgentToolResult { content: vec![UserContent::text(text)], details: Some(json!({})), ..AgentToolResult::default() }
}

fn error_outcome(call: &ToolCall, text: String) -> Finalized {
    Finalized {
        tool_call: call.clone(),
        result: error_result(text),
        is_error: true,
        started: Instant::now(),
        duration_ms: None,
    }
}

fn skipped_outcome(call: &ToolCall) -> Finalized {
    error_outcome(call, SKIPPED_TEXT.to_owned())
}

fn start_event(call: &ToolCall) -> AgentEvent {
    AgentEvent::ToolExecutionStart {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        args: call.arguments.clone(),
    }
}
