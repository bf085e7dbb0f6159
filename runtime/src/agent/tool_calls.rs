//! Tool execution for one assistant message: preflight (lookup, argument preparation and schema
//! validation, `before_tool_call`), execution (sequential, or concurrent in parallel mode),
//! `after_tool_call`, and the skipping of calls once a steering message is queued.

use std::sync::Arc;

use futures_util::future::join_all;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::config::{AfterToolCallContext, AgentContext, AgentEventSink, AgentLoopConfig, BeforeToolCallContext};
use super::validation::validate_tool_arguments;
use crate::definition::ToolExecutionMode;
use crate::protocol::{
    AgentEvent, AgentMessage, AgentToolResult, AssistantMessage, ToolCall, ToolResultMessage, UserContent, now_ms,
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
}

/// A call that passed preflight and will run.
struct PreparedCall {
    tool_call: ToolCall,
    tool: Arc<dyn AgentTool>,
    args: Value,
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
    match config.tool_execution {
        ToolExecutionMode::Sequential => run_sequential(&calls, context, assistant, config, cancel, sink).await,
        _ => run_parallel(&calls, context, assistant, config, cancel, sink).await,
    }
}

async fn run_sequential(
    calls: &[ToolCall],
    context: &AgentContext,
    assistant: &AssistantMessage,
    config: &AgentLoopConfig,
    cancel: &CancellationToken,
    sink: &dyn AgentEventSink,
) -> ToolBatch {
    let mut results = Vec::with_capacity(calls.len());
    for (index, call) in calls.iter().enumerate() {
        emit_start(call, sink).await;
        let finalized = match prepare(call, context, assistant, config, cancel).await {
            Preparation::Immediate(finalized) => {
                emit_end(&finalized, sink).await;
                finalized
            }
            Preparation::Prepared(prepared) => {
                let mut done = run_prepared(vec![prepared], assistant, config, cancel, sink).await;
                match done.pop() {
                    Some(finalized) => finalized,
                    None => continue,
                }
            }
        };
        results.push(emit_result_message(finalized, sink).await);
        let steering = config.poll_steering();
        if !steering.is_empty() {
            for skipped in &calls[index + 1..] {
                emit_start(skipped, sink).await;
                let finalized = skipped_outcome(skipped);
                emit_end(&finalized, sink).await;
                results.push(emit_result_message(finalized, sink).await);
            }
            return ToolBatch { results, steering };
        }
    }
    ToolBatch { results, steering: Vec::new() }
}

/// A call's place in call order during parallel execution.
enum Slot {
    Done(Finalized),
    Pending(PreparedCall),
}

async fn run_parallel(
    calls: &[ToolCall],
    context: &AgentContext,
    assistant: &AssistantMessage,
    config: &AgentLoopConfig,
    cancel: &CancellationToken,
    sink: &dyn AgentEventSink,
) -> ToolBatch {
    let mut slots = Vec::with_capacity(calls.len());
    for (index, call) in calls.iter().enumerate() {
        emit_start(call, sink).await;
        match prepare(call, context, assistant, config, cancel).await {
            Preparation::Immediate(finalized) => {
                emit_end(&finalized, sink).await;
                slots.push(Slot::Done(finalized));
            }
            Preparation::Prepared(prepared) => slots.push(Slot::Pending(prepared)),
        }
        let steering = config.poll_steering();
        if !steering.is_empty() {
            // Prepared calls already had their start event; later calls get one now.
            let mut finalized_calls = Vec::with_capacity(calls.len());
            for slot in slots {
                let finalized = match slot {
                    Slot::Done(finalized) => finalized,
                    Slot::Pending(prepared) => {
                        let finalized = skipped_outcome(&prepared.tool_call);
                        emit_end(&finalized, sink).await;
                        finalized
                    }
                };
                finalized_calls.push(finalized);
            }
            for skipped in &calls[index + 1..] {
                emit_start(skipped, sink).await;
                let finalized = skipped_outcome(skipped);
                emit_end(&finalized, sink).await;
                finalized_calls.push(finalized);
            }
            let results = emit_result_messages(finalized_calls, sink).await;
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
    let mut executed = run_prepared(pending, assistant, config, cancel, sink).await.into_iter();
    let finalized_calls: Vec<Finalized> =
        order.into_iter().filter_map(|slot| slot.or_else(|| executed.next())).collect();
    let results = emit_result_messages(finalized_calls, sink).await;
    ToolBatch { results, steering: config.poll_steering() }
}

/// Lookup, argument preparation and validation, then `before_tool_call`.
async fn prepare(
    call: &ToolCall,
    context: &AgentContext,
    assistant: &AssistantMessage,
    config: &AgentLoopConfig,
    cancel: &CancellationToken,
) -> Preparation {
    let Some(tool) = context.tools.iter().find(|tool| tool.name() == call.name) else {
        return Preparation::Immediate(error_outcome(call, format!("Tool {} not found", call.name)));
    };
    let prepared_args = tool.prepare_arguments(call.arguments.clone());
    let args = match validate_tool_arguments(tool.parameters(), &call.name, prepared_args) {
        Ok(args) => args,
        Err(error) => return Preparation::Immediate(error_outcome(call, error.to_string())),
    };
    if let Some(before) = &config.before_tool_call {
        let hook_context =
            BeforeToolCallContext { assistant_message: assistant.clone(), tool_call: call.clone(), args: args.clone() };
        match before(hook_context, cancel.clone()).await {
            Ok(Some(verdict)) if verdict.block => {
                let reason = verdict.reason.filter(|r| !r.is_empty()).unwrap_or_else(|| BLOCKED_TEXT.to_owned());
                return Preparation::Immediate(error_outcome(call, reason));
            }
            Ok(_) => {}
            Err(error) => return Preparation::Immediate(error_outcome(call, error.message)),
        }
    }
    Preparation::Prepared(PreparedCall { tool_call: call.clone(), tool: tool.clone(), args })
}

/// Runs prepared calls concurrently. Each call's `tool_execution_update` and `tool_execution_end`
/// events are emitted as they happen (an end as soon as its call finishes); outcomes come back in
/// the order of `prepared`.
async fn run_prepared(
    prepared: Vec<PreparedCall>,
    assistant: &AssistantMessage,
    config: &AgentLoopConfig,
    cancel: &CancellationToken,
    sink: &dyn AgentEventSink,
) -> Vec<Finalized> {
    let (events_tx, mut events) = mpsc::unbounded_channel::<AgentEvent>();
    let runs = prepared.into_iter().map(|call| {
        let events_tx = events_tx.clone();
        async move {
            let (result, is_error) = execute(&call, cancel, &events_tx).await;
            let finalized = finalize(call, result, is_error, assistant, config, cancel).await;
            let _ = events_tx.send(end_event(&finalized));
            finalized
        }
    });
    let mut all = std::pin::pin!(join_all(runs));
    let finalized = loop {
        tokio::select! {
            biased;
            Some(event) = events.recv() => sink.emit(event).await,
            finalized = &mut all => break finalized,
        }
    };
    events.close();
    while let Ok(event) = events.try_recv() {
        sink.emit(event).await;
    }
    finalized
}

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
        Ok(result) => (result, false),
        Err(error) => (error_result(error.message), true),
    }
}

/// Applies `after_tool_call`: each field it returns replaces the tool's; a failing hook makes an error.
async fn finalize(
    call: PreparedCall,
    result: AgentToolResult,
    is_error: bool,
    assistant: &AssistantMessage,
    config: &AgentLoopConfig,
    cancel: &CancellationToken,
) -> Finalized {
    let Some(after) = &config.after_tool_call else {
        return Finalized { tool_call: call.tool_call, result, is_error };
    };
    let hook_context = AfterToolCallContext {
        assistant_message: assistant.clone(),
        tool_call: call.tool_call.clone(),
        args: call.args,
        result: result.clone(),
        is_error,
    };
    match after(hook_context, cancel.clone()).await {
        Ok(Some(overrides)) => Finalized {
            tool_call: call.tool_call,
            result: AgentToolResult {
                content: overrides.content.unwrap_or(result.content),
                details: overrides.details.or(result.details),
            },
            is_error: overrides.is_error.unwrap_or(is_error),
        },
        Ok(None) => Finalized { tool_call: call.tool_call, result, is_error },
        Err(error) => Finalized { tool_call: call.tool_call, result: error_result(error.message), is_error: true },
    }
}

/// An error result as pi builds it: one text block and empty details.
fn error_result(text: String) -> AgentToolResult {
    AgentToolResult { content: vec![UserContent::text(text)], details: Some(json!({})) }
}

fn error_outcome(call: &ToolCall, text: String) -> Finalized {
    Finalized { tool_call: call.clone(), result: error_result(text), is_error: true }
}

fn skipped_outcome(call: &ToolCall) -> Finalized {
    error_outcome(call, SKIPPED_TEXT.to_owned())
}

async fn emit_start(call: &ToolCall, sink: &dyn AgentEventSink) {
    sink.emit(AgentEvent::ToolExecutionStart {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        args: call.arguments.clone(),
    })
    .await;
}

fn end_event(finalized: &Finalized) -> AgentEvent {
    AgentEvent::ToolExecutionEnd {
        tool_call_id: finalized.tool_call.id.clone(),
        tool_name: finalized.tool_call.name.clone(),
        result: finalized.result.clone(),
        is_error: finalized.is_error,
    }
}

async fn emit_end(finalized: &Finalized, sink: &dyn AgentEventSink) {
    sink.emit(end_event(finalized)).await;
}

async fn emit_result_message(finalized: Finalized, sink: &dyn AgentEventSink) -> ToolResultMessage {
    let message = ToolResultMessage {
        tool_call_id: finalized.tool_call.id,
        tool_name: finalized.tool_call.name,
        content: finalized.result.content,
        details: finalized.result.details,
        is_error: finalized.is_error,
        timestamp: now_ms(),
    };
    sink.emit(AgentEvent::MessageStart { message: AgentMessage::ToolResult(message.clone()) }).await;
    sink.emit(AgentEvent::MessageEnd { message: AgentMessage::ToolResult(message.clone()) }).await;
    message
}

async fn emit_result_messages(finalized: Vec<Finalized>, sink: &dyn AgentEventSink) -> Vec<ToolResultMessage> {
    let mut results = Vec::with_capacity(finalized.len());
    for one in finalized {
        results.push(emit_result_message(one, sink).await);
    }
    results
}
