//! Event order of the loop: plain answers, two tool calls in both execution modes, steering that
//! skips calls, follow-ups in both queue modes, and aborts during a stream and during a tool.

use std::time::Duration;

use serde_json::json;

use super::tests_support::{Behaviour, Recorder, TestTool, agent_with, seen_texts, user};
use super::{QueueMode, SKIPPED_TEXT};
use crate::ai::ScriptedResponse;
use crate::definition::ToolExecutionMode;
use crate::protocol::{AgentEvent, AgentMessage, StopReason};

fn two_calls() -> ScriptedResponse {
    ScriptedResponse::default().with_tool_call_id("c1", "slow", json!({"n": 1})).with_tool_call_id(
        "c2",
        "fast",
        json!({"n": 2}),
    )
}

fn tool_result_ids(messages: &[AgentMessage]) -> Vec<String> {
    messages
        .iter()
        .filter_map(|m| match m {
            AgentMessage::ToolResult(r) => Some(r.tool_call_id.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_text_answer_has_pi_event_order() {
    let (agent, _) = agent_with(vec![ScriptedResponse::text("Hello there")], vec![], ToolExecutionMode::Parallel);
    let recorder = Recorder::attach(&agent);
    agent.prompt("hi").await.expect("prompt");
    assert_eq!(
        recorder.labels(),
        [
            "agent_start",
            "turn_start",
            "message_start user",
            "message_end user",
            "message_start assistant",
            "message_update text_start",
            "message_update text_end",
            "message_end assistant",
            "turn_end 0",
            "agent_end"
        ]
    );
    let Some(AgentEvent::AgentEnd { messages, .. }) = recorder.events().pop() else { panic!("no agent_end") };
    let roles: Vec<&str> = messages.iter().map(AgentMessage::role).collect();
    assert_eq!(roles, ["user", "assistant"]);
    assert_eq!(agent.messages().len(), 2);
    assert!(!agent.is_streaming());
}

#[tokio::test]
async fn parallel_mode_runs_tools_concurrently_and_keeps_call_order() {
    let slow = TestTool::echo("slow", 150);
    let fast = TestTool::echo("fast", 0);
    let (agent, provider) =
        agent_with(vec![two_calls(), ScriptedResponse::text("done")], vec![slow, fast], ToolExecutionMode::Parallel);
    let recorder = Recorder::attach(&agent);
    agent.prompt("go").await.expect("prompt");
    assert_eq!(
        recorder.labels(),
        [
            "agent_start",
            "turn_start",
            "message_start user",
            "message_end user",
            "message_start assistant",
            "message_update toolcall_start",
            "message_update toolcall_end",
            "message_update toolcall_start",
            "message_update toolcall_end",
            "message_end assistant",
            "tool_execution_start c1",
            "tool_execution_start c2",
            // The fast tool finishes first; its end event says so...
            "tool_execution_end c2",
            "tool_execution_end c1",
            // ...but the results keep call order.
            "message_start toolResult",
            "message_end toolResult",
            "message_start toolResult",
            "message_end toolResult",
            "turn_end 2",
            "turn_start",
            "message_start assistant",
            "message_update text_start",
            "message_update text_end",
            "message_end assistant",
            "turn_end 0",
            "agent_end"
        ]
    );
    assert_eq!(tool_result_ids(&agent.messages()), ["c1", "c2"]);
    assert_eq!(seen_texts(&provider, 1), ["user:go", "assistant", "toolResult:c1", "toolResult:c2"]);
    let updates = recorder.events().iter().filter(|e| matches!(e, AgentEvent::ToolExecutionUpdate { .. })).count();
    assert_eq!(updates, 2, "each tool sent one partial result");
}

#[tokio::test]
async fn sequential_mode_finishes_each_call_before_the_next() {
    let slow = TestTool::echo("slow", 50);
    let fast = TestTool::echo("fast", 0);
    let (agent, _) =
        agent_with(vec![two_calls(), ScriptedResponse::text("done")], vec![slow, fast], ToolExecutionMode::Sequential);
    let recorder = Recorder::attach(&agent);
    agent.prompt("go").await.expect("prompt");
    let labels = recorder.labels();
    let tools: Vec<&str> = labels
        .iter()
        .map(String::as_str)
        .skip_while(|l| *l != "message_end assistant")
        .skip(1)
        .take_while(|l| !l.starts_with("turn_end"))
        .collect();
    assert_eq!(
        tools,
        [
            "tool_execution_start c1",
            "tool_execution_end c1",
            "message_start toolResult",
            "message_end toolResult",
            "tool_execution_start c2",
            "tool_execution_end c2",
            "message_start toolResult",
            "message_end toolResult"
        ]
    );
    assert_eq!(tool_result_ids(&agent.messages()), ["c1", "c2"]);
}

#[tokio::test]
async fn steering_in_sequential_mode_skips_the_remaining_calls() {
    let (agent, provider) = agent_with(vec![], vec![], ToolExecutionMode::Sequential);
    let steerer = agent.clone();
    let first = TestTool::echo("slow", 0).on_start(move || steerer.steer(user("stop, do this instead")));
    let second = TestTool::echo("fast", 0);
    let second_runs = second.counter();
    agent.set_tools(vec![std::sync::Arc::new(first), std::sync::Arc::new(second)]);
    provider.push(two_calls());
    provider.push(ScriptedResponse::text("ok"));
    let recorder = Recorder::attach(&agent);
    agent.prompt("go").await.expect("prompt");

    assert_eq!(second_runs.load(std::sync::atomic::Ordering::SeqCst), 0, "the skipped tool never ran");
    let messages = agent.messages();
    let Some(AgentMessage::ToolResult(skipped)) = messages.get(3) else { panic!("no second result: {messages:?}") };
    assert_eq!(skipped.tool_call_id, "c2");
    assert!(skipped.is_error);
    assert_eq!(skipped.content[0].as_text(), Some(SKIPPED_TEXT));
    // The steering message enters the context before the next LLM call.
    assert_eq!(
        seen_texts(&provider, 1),
        ["user:go", "assistant", "toolResult:c1", "toolResult:c2", "user:stop, do this instead"]
    );
    let labels = recorder.labels();
    let after_turn: Vec<&str> = labels.iter().map(String::as_str).skip_while(|l| *l != "turn_end 2").take(4).collect();
    assert_eq!(after_turn, ["turn_end 2", "turn_start", "message_start user", "message_end user"]);
    assert!(labels.contains(&"tool_execution_start c2".to_owned()), "a skipped call still gets its start event");
}

#[tokio::test]
async fn steering_during_parallel_preflight_skips_prepared_calls_without_a_second_start() {
    let (agent, provider) =
        agent_with(vec![two_calls(), ScriptedResponse::text("ok")], vec![], ToolExecutionMode::Parallel);
    let slow = TestTool::echo("slow", 0);
    let fast = TestTool::echo("fast", 0);
    let (slow_runs, fast_runs) = (slow.counter(), fast.counter());
    agent.set_tools(vec![std::sync::Arc::new(slow), std::sync::Arc::new(fast)]);
    let steerer = agent.clone();
    agent.set_before_tool_call(Some(std::sync::Arc::new(move |_ctx, _cancel| {
        steerer.steer(user("change of plan"));
        Box::pin(async { Ok(None) })
    })));
    let recorder = Recorder::attach(&agent);
    agent.prompt("go").await.expect("prompt");

    assert_eq!(
        slow_runs.load(std::sync::atomic::Ordering::SeqCst) + fast_runs.load(std::sync::atomic::Ordering::SeqCst),
        0
    );
    let labels = recorder.labels();
    let starts = labels.iter().filter(|l| l.starts_with("tool_execution_start")).count();
    assert_eq!(starts, 2, "one start per call: {labels:?}");
    assert!(labels.contains(&"tool_execution_end c1 error".to_owned()));
    assert!(labels.contains(&"tool_execution_end c2 error".to_owned()));
    assert_eq!(tool_result_ids(&agent.messages()), ["c1", "c2"]);
    assert_eq!(seen_texts(&provider, 1).last().map(String::as_str), Some("user:change of plan"));
}

#[tokio::test]
async fn steering_once_parallel_execution_began_skips_nothing() {
    let (agent, provider) =
        agent_with(vec![two_calls(), ScriptedResponse::text("ok")], vec![], ToolExecutionMode::Parallel);
    let steerer = agent.clone();
    let slow = TestTool::echo("slow", 20).on_start(move || steerer.steer(user("after this")));
    let fast = TestTool::echo("fast", 0);
    let fast_runs = fast.counter();
    agent.set_tools(vec![std::sync::Arc::new(slow), std::sync::Arc::new(fast)]);
    agent.prompt("go").await.expect("prompt");
    assert_eq!(fast_runs.load(std::sync::atomic::Ordering::SeqCst), 1);
    let errors = agent.messages().iter().filter(|m| matches!(m, AgentMessage::ToolResult(r) if r.is_error)).count();
    assert_eq!(errors, 0);
    assert_eq!(seen_texts(&provider, 1).last().map(String::as_str), Some("user:after this"));
}

async fn run_with_queued(mode: QueueMode, follow_up: bool) -> (Vec<Vec<String>>, usize) {
    let responses = (0..4).map(|i| ScriptedResponse::text(format!("answer {i}"))).collect();
    let (agent, provider) = agent_with(responses, vec![], ToolExecutionMode::Parallel);
    if follow_up {
        agent.set_follow_up_mode(mode);
        agent.follow_up(user("q1"));
        agent.follow_up(user("q2"));
    } else {
        agent.set_steering_mode(mode);
        agent.steer(user("q1"));
        agent.steer(user("q2"));
    }
    agent.prompt("start").await.expect("prompt");
    let calls = provider.requests().len();
    let seen = (0..calls).map(|i| seen_texts(&provider, i)).collect();
    (seen, calls)
}

#[tokio::test]
async fn follow_ups_run_when_the_agent_would_stop_one_at_a_time_or_all() {
    let (seen, calls) = run_with_queued(QueueMode::OneAtATime, true).await;
    assert_eq!(calls, 3);
    assert_eq!(seen[0], ["user:start"]);
    assert_eq!(seen[1], ["user:start", "assistant", "user:q1"]);
    assert_eq!(seen[2], ["user:start", "assistant", "user:q1", "assistant", "user:q2"]);

    let (seen, calls) = run_with_queued(QueueMode::All, true).await;
    assert_eq!(calls, 2);
    assert_eq!(seen[1], ["user:start", "assistant", "user:q1", "user:q2"]);
}

#[tokio::test]
async fn steering_queued_before_the_run_is_delivered_before_the_first_call() {
    let (seen, calls) = run_with_queued(QueueMode::OneAtATime, false).await;
    assert_eq!(calls, 2);
    assert_eq!(seen[0], ["user:start", "user:q1"]);
    assert_eq!(seen[1], ["user:start", "user:q1", "assistant", "user:q2"]);

    let (seen, calls) = run_with_queued(QueueMode::All, false).await;
    assert_eq!(calls, 1);
    assert_eq!(seen[0], ["user:start", "user:q1", "user:q2"]);
}

#[tokio::test]
async fn abort_in_the_middle_of_a_stream_ends_the_run_as_aborted() {
    let hanging = ScriptedResponse::text("partial answer that never ends").hanging_after(3);
    let (agent, _) = agent_with(vec![hanging], vec![], ToolExecutionMode::Parallel);
    let recorder = Recorder::attach(&agent);
    let aborter = agent.clone();
    let _watch = agent.subscribe(move |event| {
        if matches!(event, AgentEvent::MessageUpdate { .. }) {
            aborter.abort();
        }
    });
    tokio::time::timeout(Duration::from_secs(5), agent.prompt("hi")).await.expect("no hang").expect("prompt");
    let labels = recorder.labels();
    assert_eq!(&labels[labels.len() - 3..], ["message_end assistant", "turn_end 0", "agent_end"]);
    let Some(AgentMessage::Assistant(last)) = agent.messages().pop() else { panic!("no assistant message") };
    assert_eq!(last.stop_reason, StopReason::Aborted);
    assert_eq!(last.text(), "partial answer ", "the text streamed before the abort is kept");
    assert_eq!(agent.state().error.as_deref(), Some("Request was aborted"));
}

#[tokio::test]
async fn abort_in_the_middle_of_a_tool_fails_the_tool_and_ends_the_run() {
    let waiting = TestTool::echo("slow", 0).with(Behaviour::WaitForCancel);
    let response = ScriptedResponse::default().with_tool_call_id("c1", "slow", json!({}));
    let (agent, provider) =
        agent_with(vec![response, ScriptedResponse::text("never")], vec![waiting], ToolExecutionMode::Sequential);
    let recorder = Recorder::attach(&agent);
    let aborter = agent.clone();
    let _watch = agent.subscribe(move |event| {
        if matches!(event, AgentEvent::ToolExecutionStart { .. }) {
            aborter.abort();
        }
    });
    tokio::time::timeout(Duration::from_secs(5), agent.prompt("go")).await.expect("no hang").expect("prompt");
    let labels = recorder.labels();
    let tail: Vec<&str> =
        labels.iter().map(String::as_str).skip_while(|l| !l.starts_with("tool_execution_start")).collect();
    assert_eq!(
        tail,
        [
            "tool_execution_start c1",
            "tool_execution_end c1 error",
            "message_start toolResult",
            "message_end toolResult",
            "turn_end 1",
            "turn_start",
            "message_start assistant",
            "message_end assistant",
            "turn_end 0",
            "agent_end"
        ]
    );
    let Some(AgentMessage::Assistant(last)) = agent.messages().pop() else { panic!("no assistant message") };
    assert_eq!(last.stop_reason, StopReason::Aborted);
    assert_eq!(provider.requests().len(), 2, "the second call was made and aborted at once");
}
