//! The stateful agent's API: prompt/continue guards, wait_for_idle, subscriptions, the
//! transformContext and convertToLlm stages, key lookup, failures that become synthetic
//! messages, and the stream form of the loop.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::tests_support::{agent_with, label, seen_texts, test_model, user};
use super::{
    Agent, AgentContext, AgentError, AgentLoopConfig, AgentLoopError, AgentOptions, HookError, agent_loop,
    agent_loop_continue,
};
use crate::ai::{ScriptedProvider, ScriptedResponse};
use crate::definition::ToolExecutionMode;
use crate::protocol::{AgentMessage, CustomMessage, Message, MessageContent, StopReason, UserMessage};

#[tokio::test]
async fn a_second_prompt_while_running_is_refused_and_wait_for_idle_waits() {
    let slow = ScriptedResponse::text("slow answer").with_delay(Duration::from_millis(30));
    let (agent, _) = agent_with(vec![slow], vec![], ToolExecutionMode::Parallel);
    let runner = agent.clone();
    let run = tokio::spawn(async move { runner.prompt("first").await });
    while !agent.is_streaming() {
        tokio::task::yield_now().await;
    }
    assert_eq!(agent.prompt("second").await, Err(AgentError::AlreadyRunning));
    assert_eq!(agent.continue_().await, Err(AgentError::AlreadyRunning));
    agent.wait_for_idle().await;
    assert!(!agent.is_streaming());
    assert_eq!(agent.messages().len(), 2);
    assert_eq!(run.await.expect("joined"), Ok(()));
    // Idle already: returns at once.
    tokio::time::timeout(Duration::from_secs(1), agent.wait_for_idle()).await.expect("idle");
}

#[tokio::test]
async fn continue_follows_pi_rules() {
    let (agent, provider) = agent_with(
        vec![ScriptedResponse::text("a1"), ScriptedResponse::text("a2"), ScriptedResponse::text("a3")],
        vec![],
        ToolExecutionMode::Parallel,
    );
    assert_eq!(agent.continue_().await, Err(AgentError::NoMessages));
    agent.prompt("q").await.expect("prompt");
    assert_eq!(agent.continue_().await, Err(AgentError::ContinueFromAssistant));

    agent.follow_up(user("later"));
    agent.continue_().await.expect("continue with a follow-up");
    assert_eq!(seen_texts(&provider, 1), ["user:q", "assistant", "user:later"]);

    // A user tail is answered as it stands (the retry path).
    agent.append_message(user("retry me"));
    agent.continue_().await.expect("continue from a user message");
    assert_eq!(seen_texts(&provider, 2).last().map(String::as_str), Some("user:retry me"));
    assert_eq!(agent.messages().len(), 6);
}

#[tokio::test]
async fn no_model_is_an_error() {
    let agent = Agent::new(AgentOptions::new(Arc::new(ScriptedProvider::default())));
    assert_eq!(agent.prompt("hi").await, Err(AgentError::NoModel));
    assert!(agent.messages().is_empty());
}

#[tokio::test]
async fn transform_context_prunes_what_the_model_sees_but_not_the_transcript() {
    let (agent, provider) = agent_with(
        vec![ScriptedResponse::text("a1"), ScriptedResponse::text("a2")],
        vec![],
        ToolExecutionMode::Parallel,
    );
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    agent.set_transform_context(Some(Arc::new(move |messages: Vec<AgentMessage>, _| {
        counted.fetch_add(1, Ordering::SeqCst);
        // Keep only the last message.
        Box::pin(async move { Ok(messages.into_iter().last().into_iter().collect()) })
    })));
    agent.prompt("first").await.expect("prompt");
    agent.prompt("second").await.expect("prompt");
    assert_eq!(calls.load(Ordering::SeqCst), 2, "once per LLM call");
    assert_eq!(seen_texts(&provider, 1), ["user:second"]);
    assert_eq!(agent.messages().len(), 4);
}

#[tokio::test]
async fn convert_to_llm_maps_agent_only_messages_and_the_default_drops_them() {
    let custom = AgentMessage::Custom(CustomMessage {
        custom_type: "note".into(),
        content: MessageContent::Text("remember the milk".into()),
        display: true,
        details: None,
        timestamp: 1,
    });
    let (agent, provider) =
        agent_with(vec![ScriptedResponse::text("a"), ScriptedResponse::text("b")], vec![], ToolExecutionMode::Parallel);
    agent.prompt(vec![custom.clone(), user("q")]).await.expect("prompt");
    assert_eq!(seen_texts(&provider, 0), ["user:q"], "the default keeps only LLM roles");

    agent.set_convert_to_llm(Some(Arc::new(|messages: &[AgentMessage]| {
        messages
            .iter()
            .filter_map(|m| match m {
                AgentMessage::Custom(c) => {
                    Some(Message::User(UserMessage { content: c.content.clone(), timestamp: c.timestamp }))
                }
                other => other.as_llm_message(),
            })
            .collect()
    })));
    agent.prompt("again").await.expect("prompt");
    let seen = provider.requests()[1].context.messages.clone();
    let Some(Message::User(first)) = seen.first() else { panic!("{seen:?}") };
    assert_eq!(first.content, MessageContent::Text("remember the milk".into()));
}

#[tokio::test]
async fn a_failing_stage_ends_the_run_with_a_synthetic_error_message() {
    let (agent, provider) = agent_with(vec![ScriptedResponse::text("never")], vec![], ToolExecutionMode::Parallel);
    agent
        .set_transform_context(Some(Arc::new(|_, _| Box::pin(async { Err(HookError::new("context store offline")) }))));
    let events = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = events.clone();
    let _subscription = agent.subscribe(move |event| sink.lock().expect("lock").push(label(event)));
    agent.prompt("hi").await.expect("the prompt itself succeeds");
    let Some(AgentMessage::Assistant(failure)) = agent.messages().pop() else { panic!("no failure message") };
    assert_eq!(failure.stop_reason, StopReason::Error);
    assert_eq!(failure.error_message.as_deref(), Some("context store offline"));
    assert_eq!(failure.model, "test-model");
    assert_eq!(agent.state().error.as_deref(), Some("context store offline"));
    assert_eq!(provider.requests().len(), 0);
    assert_eq!(events.lock().expect("lock").last().map(String::as_str), Some("agent_end"));
}

#[tokio::test]
async fn a_provider_error_ends_the_turn_and_the_run() {
    let (agent, _) = agent_with(vec![ScriptedResponse::error("503 overloaded")], vec![], ToolExecutionMode::Parallel);
    agent.prompt("hi").await.expect("prompt");
    let Some(AgentMessage::Assistant(last)) = agent.messages().pop() else { panic!("no assistant") };
    assert_eq!(last.stop_reason, StopReason::Error);
    assert_eq!(agent.state().error.as_deref(), Some("503 overloaded"));
}

#[tokio::test]
async fn the_key_lookup_wins_over_the_static_key() {
    let (agent, provider) =
        agent_with(vec![ScriptedResponse::text("a"), ScriptedResponse::text("b")], vec![], ToolExecutionMode::Parallel);
    agent.prompt("one").await.expect("prompt");
    agent.set_get_api_key(Some(Arc::new(|provider: &str| {
        let key = format!("fresh-{provider}");
        Box::pin(async move { Ok(Some(key)) })
    })));
    agent.prompt("two").await.expect("prompt");
    let keys: Vec<Option<String>> = provider.requests().into_iter().map(|r| r.api_key).collect();
    assert_eq!(keys, [Some("test-key".to_owned()), Some("fresh-test".to_owned())]);
}

#[tokio::test]
async fn a_failed_key_lookup_ends_the_call_as_an_error_without_asking_the_model() {
    let (agent, provider) = agent_with(vec![ScriptedResponse::text("a")], vec![], ToolExecutionMode::Parallel);
    agent.set_get_api_key(Some(Arc::new(|_: &str| Box::pin(async { Err("the login expired".to_owned()) }))));
    agent.prompt("one").await.expect("prompt");
    assert!(provider.requests().is_empty());
    let messages = agent.state().messages;
    let Some(crate::protocol::AgentMessage::Assistant(last)) = messages.last() else { panic!("{messages:?}") };
    assert_eq!(last.stop_reason, crate::protocol::StopReason::Error);
    assert_eq!(last.error_message.as_deref(), Some("the login expired"));
}

#[tokio::test]
async fn dropping_a_subscription_unsubscribes() {
    let (agent, _) =
        agent_with(vec![ScriptedResponse::text("a"), ScriptedResponse::text("b")], vec![], ToolExecutionMode::Parallel);
    let count = Arc::new(AtomicUsize::new(0));
    let counter = count.clone();
    let subscription = agent.subscribe(move |_| {
        counter.fetch_add(1, Ordering::SeqCst);
    });
    agent.prompt("one").await.expect("prompt");
    let after_first = count.load(Ordering::SeqCst);
    assert!(after_first > 0);
    drop(subscription);
    agent.prompt("two").await.expect("prompt");
    assert_eq!(count.load(Ordering::SeqCst), after_first);
}

#[tokio::test]
async fn the_loop_as_a_stream_yields_events_then_the_new_messages() {
    let provider = ScriptedProvider::new([ScriptedResponse::text("streamed")]);
    let config = AgentLoopConfig::new(test_model(), Arc::new(provider));
    let context = AgentContext { system_prompt: "s".into(), ..AgentContext::default() };
    let mut stream = agent_loop(vec![user("hi")], context.clone(), config.clone(), Default::default());
    let mut kinds = Vec::new();
    while let Some(event) = stream.next().await {
        kinds.push(event.kind());
    }
    assert_eq!(kinds.first(), Some(&"agent_start"));
    assert_eq!(kinds.last(), Some(&"agent_end"));
    let messages = stream.result().await.expect("result");
    assert_eq!(messages.iter().map(AgentMessage::role).collect::<Vec<_>>(), ["user", "assistant"]);

    assert_eq!(
        agent_loop_continue(context.clone(), config.clone(), Default::default()).err(),
        Some(AgentLoopError::NoMessages)
    );
    let ended = AgentContext { messages: messages.clone(), ..context };
    assert_eq!(
        agent_loop_continue(ended, config, Default::default()).err(),
        Some(AgentLoopError::ContinueFromAssistant)
    );
}

#[tokio::test]
async fn reset_clears_transcript_and_queues() {
    let (agent, _) = agent_with(vec![ScriptedResponse::text("a")], vec![], ToolExecutionMode::Parallel);
    agent.prompt("one").await.expect("prompt");
    agent.steer(user("s"));
    agent.follow_up(user("f"));
    assert_eq!(agent.queued_counts(), (1, 1));
    agent.reset();
    assert!(agent.messages().is_empty());
    assert!(!agent.has_queued_messages());
}

#[tokio::test]
async fn state_mutators_shape_the_next_call() {
    let responses = vec![ScriptedResponse::text("a"), ScriptedResponse::text("b")];
    let (agent, provider) = agent_with(responses, vec![], ToolExecutionMode::Parallel);
    agent.prompt("one").await.expect("prompt");
    agent.set_system_prompt("New rules.");
    agent.set_thinking_level(crate::ai::ThinkingLevel::High);
    let mut other = test_model();
    other.id = "other-model".into();
    agent.set_model(other);
    agent.prompt("two").await.expect("prompt");
    let requests = provider.requests();
    assert_eq!(requests[0].context.system_prompt, "You are a test.");
    assert_eq!(requests[0].reasoning, None, "thinking off sends no reasoning level");
    assert_eq!(requests[1].context.system_prompt, "New rules.");
    assert_eq!(requests[1].reasoning, Some(crate::ai::ThinkingLevel::High));
    assert_eq!(requests[1].model_id, "other-model");
    let Some(AgentMessage::Assistant(last)) = agent.messages().pop() else { panic!("no answer") };
    assert_eq!(last.model, "other-model");

    agent.replace_messages(vec![user("only this")]);
    assert_eq!(agent.messages().len(), 1);
    agent.clear_messages();
    assert!(agent.messages().is_empty());
}

#[tokio::test]
async fn an_abort_during_a_stage_ends_the_run_with_a_synthetic_aborted_message() {
    let (agent, provider) = agent_with(vec![ScriptedResponse::text("never")], vec![], ToolExecutionMode::Parallel);
    agent.set_transform_context(Some(Arc::new(|_, cancel: tokio_util::sync::CancellationToken| {
        Box::pin(async move {
            cancel.cancelled().await;
            Err(HookError::new("transform interrupted"))
        })
    })));
    let runner = agent.clone();
    let run = tokio::spawn(async move { runner.prompt("hi").await });
    while !agent.is_streaming() {
        tokio::task::yield_now().await;
    }
    agent.abort();
    tokio::time::timeout(Duration::from_secs(5), run).await.expect("no hang").expect("joined").expect("prompt");
    let Some(AgentMessage::Assistant(failure)) = agent.messages().pop() else { panic!("no failure message") };
    assert_eq!(failure.stop_reason, StopReason::Aborted);
    assert_eq!(failure.error_message.as_deref(), Some("transform interrupted"));
    assert!(provider.requests().is_empty());
}
