//! Tool outcomes in the loop: not found, invalid arguments (and coercion), the tool's own error,
//! blocked calls, after-call overrides and failing hooks all become tool results.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::{Value, json};

use super::tests_support::{Behaviour, TestTool, agent_with};
use super::{AfterToolCallResult, BLOCKED_TEXT, BeforeToolCallResult, HookError};
use crate::ai::ScriptedResponse;
use crate::definition::ToolExecutionMode;
use crate::protocol::{AgentMessage, ToolResultMessage, UserContent};

/// Runs one tool call of `name` with `args` against `tool` and returns the tool result message.
async fn outcome_of(tool: TestTool, name: &str, args: Value, setup: impl FnOnce(&super::Agent)) -> ToolResultMessage {
    let call = ScriptedResponse::default().with_tool_call_id("c1", name, args);
    let (agent, _) = agent_with(vec![call, ScriptedResponse::text("ok")], vec![tool], ToolExecutionMode::Parallel);
    setup(&agent);
    agent.prompt("go").await.expect("prompt");
    match agent.messages().get(2) {
        Some(AgentMessage::ToolResult(result)) => result.clone(),
        other => panic!("no tool result: {other:?}"),
    }
}

fn text(result: &ToolResultMessage) -> &str {
    result.content.first().and_then(UserContent::as_text).unwrap_or("")
}

#[tokio::test]
async fn an_unknown_tool_becomes_an_error_result() {
    let result = outcome_of(TestTool::echo("echo", 0), "nope", json!({}), |_| {}).await;
    assert!(result.is_error);
    assert_eq!(text(&result), "Tool nope not found");
    assert_eq!(result.details, Some(json!({})));
}

#[tokio::test]
async fn arguments_are_coerced_to_the_schema_before_the_tool_runs() {
    let result = outcome_of(TestTool::echo("echo", 0), "echo", json!({"n": "3", "text": 5}), |_| {}).await;
    assert!(!result.is_error, "{}", text(&result));
    assert_eq!(result.details, Some(json!({"n": 3, "text": "5"})));
}

#[tokio::test]
async fn invalid_arguments_fail_with_path_message_and_the_arguments_received() {
    let tool = TestTool::echo("echo", 0);
    let runs = tool.counter();
    let result = outcome_of(tool, "echo", json!({"n": "three"}), |_| {}).await;
    assert!(result.is_error);
    let message = text(&result);
    assert!(message.starts_with("Validation failed for tool \"echo\":\n  - n: "), "{message}");
    assert!(message.ends_with("Received arguments:\n{\n  \"n\": \"three\"\n}"), "{message}");
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_tool_error_becomes_an_error_result_with_its_message() {
    let tool = TestTool::echo("echo", 0).with(Behaviour::Fail("disk on fire".into()));
    let result = outcome_of(tool, "echo", json!({}), |_| {}).await;
    assert!(result.is_error);
    assert_eq!(text(&result), "disk on fire");
}

#[tokio::test]
async fn a_blocked_call_never_runs_and_reports_the_reason() {
    let tool = TestTool::echo("echo", 0);
    let runs = tool.counter();
    let result = outcome_of(tool, "echo", json!({"text": "rm -rf /"}), |agent| {
        agent.set_before_tool_call(Some(Arc::new(|ctx, _| {
            let dangerous = ctx.args["text"].as_str().is_some_and(|t| t.contains("rm -rf"));
            Box::pin(async move { Ok(dangerous.then(|| BeforeToolCallResult::block("destructive command refused"))) })
        })));
    })
    .await;
    assert!(result.is_error);
    assert_eq!(text(&result), "destructive command refused");
    assert_eq!(runs.load(Ordering::SeqCst), 0);

    let result = outcome_of(TestTool::echo("echo", 0), "echo", json!({}), |agent| {
        agent.set_before_tool_call(Some(Arc::new(|_, _| {
            Box::pin(async { Ok(Some(BeforeToolCallResult { block: true, reason: None })) })
        })));
    })
    .await;
    assert_eq!(text(&result), BLOCKED_TEXT);

    let result = outcome_of(TestTool::echo("echo", 0), "echo", json!({}), |agent| {
        agent.set_before_tool_call(Some(Arc::new(|_, _| Box::pin(async { Err(HookError::new("hook crashed")) }))));
    })
    .await;
    assert!(result.is_error);
    assert_eq!(text(&result), "hook crashed");
}

#[tokio::test]
async fn after_tool_call_overrides_field_by_field() {
    let result = outcome_of(TestTool::echo("echo", 0), "echo", json!({"n": 1}), |agent| {
        agent.set_after_tool_call(Some(Arc::new(|ctx, _| {
            assert!(!ctx.is_error);
            Box::pin(async {
                Ok(Some(AfterToolCallResult {
                    content: Some(vec![UserContent::text("rewritten")]),
                    ..AfterToolCallResult::default()
                }))
            })
        })));
    })
    .await;
    assert_eq!(text(&result), "rewritten");
    assert_eq!(result.details, Some(json!({"n": 1})), "details kept from the tool");
    assert!(!result.is_error);

    let failing = TestTool::echo("echo", 0).with(Behaviour::Fail("boom".into()));
    let result = outcome_of(failing, "echo", json!({}), |agent| {
        agent.set_after_tool_call(Some(Arc::new(|ctx, _| {
            assert!(ctx.is_error, "the hook sees the failure");
            Box::pin(async {
                Ok(Some(AfterToolCallResult { is_error: Some(false), ..AfterToolCallResult::default() }))
            })
        })));
    })
    .await;
    assert!(!result.is_error);
    assert_eq!(text(&result), "boom");

    let result = outcome_of(TestTool::echo("echo", 0), "echo", json!({}), |agent| {
        agent.set_after_tool_call(Some(Arc::new(|_, _| Box::pin(async { Err(HookError::new("after failed")) }))));
    })
    .await;
    assert!(result.is_error);
    assert_eq!(text(&result), "after failed");
}

#[tokio::test]
async fn tool_results_carry_ids_names_and_are_sent_back_to_the_model() {
    let call = ScriptedResponse::default().with_tool_call_id("c9", "echo", json!({"n": 2}));
    let (agent, provider) = agent_with(
        vec![call, ScriptedResponse::text("ok")],
        vec![TestTool::echo("echo", 0)],
        ToolExecutionMode::Sequential,
    );
    agent.prompt("go").await.expect("prompt");
    let requests = provider.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].context.tools.len(), 1);
    assert_eq!(requests[0].context.tools[0].name, "echo");
    let Some(crate::protocol::Message::ToolResult(sent)) = requests[1].context.messages.get(2) else {
        panic!("no tool result sent: {:?}", requests[1].context.messages)
    };
    assert_eq!((sent.tool_call_id.as_str(), sent.tool_name.as_str()), ("c9", "echo"));
    assert_eq!(sent.content[0].as_text(), Some("{\"n\":2}"));
}
