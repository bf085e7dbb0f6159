//! Wires the extension runner into the agent loop: the `context` event as transformContext, `tool_call` and
//! `tool_result` around each tool, `before_provider_request` on each request body. Only events some
//! extension handles are wired, so a session without extensions runs the bare loop.

use std::sync::Arc;

use crate::agent::{AfterToolCallResult, Agent, BeforeToolCallResult};
use crate::ai::PayloadHook;
use crate::extension::{EventKind, ExtensionRunner, ToolCallDecision, ToolCallEvent, ToolResultEvent};

pub(super) fn install_agent_hooks(agent: &Agent, runner: &Arc<ExtensionRunner>) {
    if runner.has_handlers(EventKind::Context) {
        let runner = runner.clone();
        agent.set_transform_context(Some(Arc::new(move |messages, _cancel| {
            let runner = runner.clone();
            Box::pin(async move { Ok(runner.emit_context(messages).await) })
        })));
    }
    if runner.has_handlers(EventKind::ToolCall) {
        let runner = runner.clone();
        agent.set_before_tool_call(Some(Arc::new(move |call, _cancel| {
            let runner = runner.clone();
            Box::pin(async move {
                let event = ToolCallEvent {
                    tool_name: call.tool_call.name.clone(),
                    tool_call_id: call.tool_call.id.clone(),
                    input: call.args,
                };
                Ok(match runner.emit_tool_call(&event).await {
                    ToolCallDecision::Block { reason } => Some(BeforeToolCallResult { block: true, reason }),
                    _ => None,
                })
            })
        })));
    }
    if runner.has_handlers(EventKind::ToolResult) {
        let runner = runner.clone();
        agent.set_after_tool_call(Some(Arc::new(move |finished, _cancel| {
            let runner = runner.clone();
            Box::pin(async move {
                let event = ToolResultEvent {
                    tool_name: finished.tool_call.name.clone(),
                    tool_call_id: finished.tool_call.id.clone(),
                    input: finished.args,
                    content: finished.result.content,
                    details: finished.result.details,
                    is_error: finished.is_error,
                };
                Ok(runner.emit_tool_result(event).await.map(|patch| AfterToolCallResult {
                    content: patch.content,
                    details: patch.details,
                    is_error: patch.is_error,
                }))
            })
        })));
    }
    if runner.has_handlers(EventKind::BeforeProviderRequest) {
        let runner = runner.clone();
        let hook: PayloadHook = Arc::new(move |payload| {
            let runner = runner.clone();
            Box::pin(async move { runner.emit_before_provider_request(payload).await })
        });
        agent.set_on_payload(Some(hook));
    }
}
