//! Auto-retry tests: pi's backoff sequence, exhaustion, cancellation, what is and is not retried, and the
//! failed answers leaving the context.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::*;
use crate::agent::{Agent, AgentOptions};
use crate::ai::{Model, ScriptedProvider, ScriptedResponse};
use crate::protocol::{AgentMessage, SessionOnlyEvent};

fn agent(responses: Vec<ScriptedResponse>) -> (Agent, ScriptedProvider) {
    let provider = ScriptedProvider::new(responses);
    let agent = Agent::new(AgentOptions {
        model: Some(Model::new("test", "test-model", "scripted", "http://127.0.0.1:9")),
        system_prompt: "You are a test.".into(),
        api_key: Some("test-key".into()),
        ..AgentOptions::new(Arc::new(provider.clone()))
    });
    (agent, provider)
}

fn recorder() -> (SessionEventSink, Arc<Mutex<Vec<SessionOnlyEvent>>>) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink: SessionEventSink = {
        let events = events.clone();
        Arc::new(move |event: &SessionOnlyEvent| events.lock().unwrap().push(event.clone()))
    };
    (sink, events)
}

fn start(attempt: u32, delay_ms: u64, error: &str) -> SessionOnlyEvent {
    SessionOnlyEvent::AutoRetryStart { attempt, max_attempts: 3, delay_ms, error_message: error.into() }
}

#[tokio::test(start_paused = true)]
async fn three_overloaded_errors_then_success_back_off_two_four_eight_seconds() {
    let overloaded = "529 overloaded_error: Overloaded";
    let (agent, provider) = agent(vec![
        ScriptedResponse::error(overloaded),
        ScriptedResponse::error(overloaded),
        ScriptedResponse::error(overloaded),
        ScriptedResponse::text("finally"),
    ]);
    let (sink, events) = recorder();
    let began = tokio::time::Instant::now();
    let cancel = CancellationToken::new();
    run_with_auto_retry(&agent, RetrySettings::default(), None, sink, &cancel, agent.prompt("hi")).await.unwrap();
    assert_eq!(began.elapsed(), Duration::from_millis(2000 + 4000 + 8000));
    assert_eq!(
        *events.lock().unwrap(),
        vec![
            start(1, 2000, overloaded),
            start(2, 4000, overloaded),
            start(3, 8000, overloaded),
            SessionOnlyEvent::AutoRetryEnd { success: true, attempt: 3, final_error: None },
        ]
    );
    // The failed answers left the context: the fourth request saw only the prompt.
    let requests = provider.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(requests[3].context.messages.len(), 1);
    let roles: Vec<&str> = agent.messages().iter().map(AgentMessage::role).collect();
    assert_eq!(roles, ["user", "assistant"]);
}

#[tokio::test(start_paused = true)]
async fn exhausted_retries_end_with_the_last_error() {
    let (agent, provider) = agent((0..4).map(|_| ScriptedResponse::error("503 Service Unavailable")).collect());
    let (sink, events) = recorder();
    let settings = RetrySettings { max_retries: 2, ..RetrySettings::default() };
    let cancel = CancellationToken::new();
    run_with_auto_retry(&agent, settings, None, sink, &cancel, agent.prompt("hi")).await.unwrap();
    let events = events.lock().unwrap().clone();
    assert_eq!(events.len(), 3, "{events:?}");
    assert_eq!(
        events[2],
        SessionOnlyEvent::AutoRetryEnd {
            success: false,
            attempt: 2,
            final_error: Some("503 Service Unavailable".into())
        }
    );
    assert_eq!(provider.requests().len(), 3);
}

#[tokio::test(start_paused = true)]
async fn cancelling_the_wait_ends_the_retry() {
    let (agent, provider) = agent(vec![ScriptedResponse::error("429 rate limit"), ScriptedResponse::text("no")]);
    let (sink, events) = recorder();
    let cancel = CancellationToken::new();
    let canceller = {
        let cancel = cancel.clone();
        async move {
            tokio::time::sleep(Duration::from_millis(500)).await;
            cancel.cancel();
        }
    };
    let run = run_with_auto_retry(&agent, RetrySettings::default(), None, sink, &cancel, agent.prompt("hi"));
    let (result, ()) = tokio::join!(run, canceller);
    result.unwrap();
    let events = events.lock().unwrap().clone();
    assert_eq!(
        events.last(),
        Some(&SessionOnlyEvent::AutoRetryEnd {
            success: false,
            attempt: 1,
            final_error: Some("Retry cancelled".into())
        })
    );
    assert_eq!(provider.requests().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn overflow_authentication_and_disabled_settings_are_not_retried() {
    for (error, settings) in [
        ("prompt is too long: 213462 tokens > 200000 maximum", RetrySettings::default()),
        ("401 invalid x-api-key", RetrySettings::default()),
        ("503 Service Unavailable", RetrySettings { enabled: false, ..RetrySettings::default() }),
    ] {
        let (agent, provider) = agent(vec![ScriptedResponse::error(error), ScriptedResponse::text("no")]);
        let (sink, events) = recorder();
        let cancel = CancellationToken::new();
        run_with_auto_retry(&agent, settings, None, sink, &cancel, agent.prompt("hi")).await.unwrap();
        assert!(events.lock().unwrap().is_empty(), "{error}");
        assert_eq!(provider.requests().len(), 1, "{error}");
    }
}

#[test]
fn delays_double_honour_the_server_and_stay_under_the_cap() {
    let settings = RetrySettings::default();
    assert_eq!(settings.delay(1, None), Duration::from_secs(2));
    assert_eq!(settings.delay(3, None), Duration::from_secs(8));
    assert_eq!(settings.delay(1, Some(Duration::from_secs(5))), Duration::from_secs(5));
    assert_eq!(settings.delay(2, Some(Duration::from_secs(1))), Duration::from_secs(4));
    assert_eq!(settings.delay(40, None), Duration::from_secs(60));
}

#[test]
fn settings_fields_override_the_defaults_one_by_one() {
    let value = serde_json::json!({"maxRetries": 5, "baseDelayMs": "fast", "enabled": true});
    let settings = RetrySettings::from_settings(Some(&value));
    assert_eq!(settings, RetrySettings { max_retries: 5, ..RetrySettings::default() });
    assert_eq!(RetrySettings::from_settings(None), RetrySettings::default());
}
