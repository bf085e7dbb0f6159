//! A run carried out step by step ([`Agent::run_step`], as a durable workflow drives it) emits what the
//! in-process loop emits for the same script, in the same order, and leaves the same transcript.

use serde_json::json;

use super::tests_support::{Recorder, TestTool, agent_with, user};
use super::{AgentError, StepRequest, StepWork};
use crate::ai::ScriptedResponse;
use crate::definition::ToolExecutionMode;
use crate::protocol::{AgentMessage, StopReason};

fn script() -> Vec<ScriptedResponse> {
    let calls = ScriptedResponse::default().with_tool_call_id("c1", "echo", json!({"n": 1})).with_tool_call_id(
        "c2",
        "echo",
        json!({"n": 2}),
    );
    vec![calls, ScriptedResponse::text("done")]
}

#[tokio::test]
async fn a_stepped_run_emits_what_the_loop_emits() {
    let (looped, _) = agent_with(script(), vec![TestTool::echo("echo", 0)], ToolExecutionMode::Parallel);
    let loop_events = Recorder::attach(&looped);
    looped.prompt("go").await.expect("the loop runs");

    let (stepped, _) = agent_with(script(), vec![TestTool::echo("echo", 0)], ToolExecutionMode::Parallel);
    let step_events = Recorder::attach(&stepped);
    let first = StepRequest {
        start_run: true,
        messages: vec![user("go")],
        work: StepWork::CallModel,
        ..StepRequest::default()
    };
    let answer = stepped.run_step(first).await.expect("model step").answer.expect("an answer");
    assert_eq!(answer.stop_reason, StopReason::ToolUse);
    let tools = stepped.run_step(StepRequest { work: StepWork::RunTools, ..StepRequest::default() }).await;
    assert_eq!(tools.expect("tool step").tool_results.len(), 2);
    let second = StepRequest { end_turn: true, start_turn: true, work: StepWork::CallModel, ..StepRequest::default() };
    let answer = stepped.run_step(second).await.expect("model step").answer.expect("an answer");
    assert_eq!(answer.stop_reason, StopReason::Stop);
    let run_messages = stepped.messages();
    let finish = StepRequest { end_turn: true, work: StepWork::FinishRun { run_messages }, ..StepRequest::default() };
    stepped.run_step(finish).await.expect("finish step");

    assert_eq!(step_events.labels(), loop_events.labels());
    let roles = |messages: Vec<AgentMessage>| messages.iter().map(|m| m.role().to_owned()).collect::<Vec<_>>();
    assert_eq!(roles(stepped.messages()), roles(looped.messages()));
    assert!(!stepped.is_streaming(), "a step leaves the agent idle");
}

#[tokio::test]
async fn tools_without_an_answer_are_refused() {
    let (agent, _) = agent_with(script(), vec![], ToolExecutionMode::Parallel);
    let refused = agent.run_step(StepRequest { work: StepWork::RunTools, ..StepRequest::default() }).await;
    assert_eq!(refused.err(), Some(AgentError::NoAnswer));
}
