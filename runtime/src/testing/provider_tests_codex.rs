//! The openai-codex-responses provider against the mock server over real HTTP: `/codex/responses` with pi's
//! headers and the account id from the token, text, a tool round trip whose second request equals the one pi
//! 0.73.1 sent, thinking, Codex's failures, pi's retry loop (a 503 then success; a usage limit not retried),
//! abort and the idle timeout.

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::json;

use super::{MockLlmServer, MockScript};
use crate::ai::catalog::builtin_model;
use crate::ai::openai_codex_responses::{API, AUTH_CLAIM, PROVIDER};
use crate::ai::{ApiProvider, LlmContext, Model, OpenAiCodexResponsesProvider, StreamOptions, ThinkingLevel, ToolSpec};
use crate::protocol::{
    AssistantContent, AssistantMessage, AssistantMessageEvent, ErrorReason, Message, StopReason, ToolResultMessage,
    UserContent, UserMessage,
};

/// What pi 0.73.1 was served and sent (see the file's `about`).
const PI_FIXTURES: &str = include_str!("fixtures/pi073_codex.json");

/// A token shaped like ChatGPT's: a JWT whose payload names the account.
fn token(account: &str) -> String {
    let payload = json!({AUTH_CLAIM: {"chatgpt_account_id": account}, "exp": 4_102_444_800u64});
    format!("{}.{}.sig", URL_SAFE_NO_PAD.encode(r#"{"alg":"none"}"#), URL_SAFE_NO_PAD.encode(payload.to_string()))
}

async fn server(script: &str) -> MockLlmServer {
    let script = MockScript::from_json_str(script).map_err(|e| e.to_string());
    let Ok(script) = script else { panic!("bad script: {script:?}") };
    let server = MockLlmServer::start(script).await;
    let Ok(server) = server else { panic!("cannot start the mock server: {server:?}") };
    server
}

/// pi's gpt-5.5 for Codex, sent to the mock.
fn model(server: &MockLlmServer) -> Model {
    let mut model =
        builtin_model(PROVIDER, "gpt-5.5").cloned().unwrap_or_else(|| Model::new(PROVIDER, "gpt-5.5", API, ""));
    model.base_url = format!("http://127.0.0.1:{}", server.addr().port());
    model
}

fn options() -> StreamOptions {
    StreamOptions {
        api_key: Some(token("acct-42")),
        reasoning: Some(ThinkingLevel::Medium),
        session_id: Some("sess-1".into()),
        ..StreamOptions::default()
    }
}

fn context(messages: Vec<Message>) -> LlmContext {
    let parameters = json!({"type": "object", "properties": {"path": {"type": "string"}}});
    LlmContext {
        system_prompt: "<system prompt>".into(),
        messages,
        tools: vec![ToolSpec { name: "read".into(), description: "Read a file".into(), parameters }],
    }
}

fn ask(text: &str) -> Vec<Message> {
    vec![Message::User(UserMessage::text(text))]
}

async fn collect(model: &Model, context: &LlmContext, options: StreamOptions) -> Vec<AssistantMessageEvent> {
    let mut stream = OpenAiCodexResponsesProvider::new().stream(model, context, options);
    let run = async {
        let mut events = Vec::new();
        while let Some(event) = stream.next().await {
            events.push(event);
        }
        events
    };
    let events = tokio::time::timeout(Duration::from_secs(30), run).await;
    let Ok(events) = events else { panic!("the stream hung") };
    events
}

fn final_message(events: &[AssistantMessageEvent]) -> &AssistantMessage {
    match events.last() {
        Some(event) if event.is_terminal() => event.message(),
        other => panic!("no terminal event, last was {other:?}"),
    }
}

#[tokio::test]
async fn text_goes_to_codex_responses_with_pis_headers() {
    let server = server(r#"[{"text":"Hello from Codex.","usage":{"input":12,"output":4,"cacheRead":2}}]"#).await;
    let model = model(&server);
    let events = collect(&model, &context(ask("hi")), options()).await;
    let message = final_message(&events);
    assert_eq!((message.text(), message.stop_reason), ("Hello from Codex.".to_owned(), StopReason::Stop));
    assert_eq!((message.api.as_str(), message.provider.as_str()), (API, PROVIDER));
    assert_eq!((message.usage.input, message.usage.cache_read, message.usage.output), (12, 2, 4));
    assert!(message.usage.cost.total > 0.0, "priced from the catalog");
    let requests = server.requests();
    let request = &requests[0];
    assert_eq!(request.path, "/codex/responses");
    assert_eq!(request.header("authorization"), Some(format!("Bearer {}", token("acct-42")).as_str()));
    assert_eq!(request.header("chatgpt-account-id"), Some("acct-42"));
    assert_eq!(request.header("originator"), Some("pi"));
    assert_eq!(request.header("openai-beta"), Some("responses=experimental"));
    assert_eq!(request.header("accept"), Some("text/event-stream"));
    assert_eq!((request.header("session_id"), request.header("x-client-request-id")), (Some("sess-1"), Some("sess-1")));
    let body = &request.body;
    assert_eq!((body["instructions"].as_str(), body["store"].as_bool()), (Some("<system prompt>"), Some(false)));
    assert_eq!(body["reasoning"], json!({"effort": "medium", "summary": "auto"}));
}

#[tokio::test]
async fn a_read_round_trip_replays_the_call_and_its_result() {
    let script = r#"[{"thinking":"I should read.","toolCalls":[{"id":"call_1","name":"read","arguments":{"path":"hello.txt"}}]},
        {"text":"It says hello."}]"#;
    let server = server(script).await;
    let model = model(&server);
    let mut context = context(ask("Read hello.txt"));
    let first = final_message(&collect(&model, &context, options()).await).clone();
    assert_eq!(first.stop_reason, StopReason::ToolUse, "{:?}", first.error_message);
    let AssistantContent::Thinking(thinking) = &first.content[0] else { panic!("{:?}", first.content) };
    assert_eq!(thinking.thinking, "I should read.");
    let call_id = first.tool_calls().next().map(|c| c.id.clone()).unwrap_or_default();
    assert!(call_id.starts_with("call_1|fc_"), "{call_id}");
    context.messages.push(Message::Assistant(first));
    context.messages.push(Message::ToolResult(ToolResultMessage {
        tool_call_id: call_id,
        tool_name: "read".into(),
        content: vec![UserContent::text("hello\n")],
        details: None,
        is_error: false,
        duration_ms: None,
        timestamp: 0,
    }));
    let second = final_message(&collect(&model, &context, options()).await).clone();
    assert_eq!(second.text(), "It says hello.");
    let requests = server.requests();
    let input = requests[1].body["input"].as_array().cloned().unwrap_or_default();
    let kinds: Vec<&str> =
        input.iter().map(|item| item["type"].as_str().or(item["role"].as_str()).unwrap_or("?")).collect();
    assert_eq!(kinds, ["user", "reasoning", "function_call", "function_call_output"]);
    assert_eq!(input[3], json!({"type": "function_call_output", "call_id": "call_1", "output": "hello\n"}));
}

#[tokio::test]
async fn a_read_round_trip_sends_what_pi_sent() {
    let fixtures: serde_json::Value = serde_json::from_str(PI_FIXTURES).unwrap_or_default();
    let codex = &fixtures["codex"];
    let script = json!([{"raw": codex["streams"][0]}, {"raw": codex["streams"][1]}]).to_string();
    let server = server(&script).await;
    let model = model(&server);
    let pi_second = &codex["secondRequest"];
    let mut context = LlmContext {
        system_prompt: "<system prompt>".into(),
        messages: ask("Read hello.txt"),
        tools: vec![ToolSpec {
            name: "read".into(),
            description: "<description>".into(),
            parameters: pi_second["body"]["tools"][0]["parameters"].clone(),
        }],
    };
    let options =
        || StreamOptions { api_key: Some(token("acct-123")), session_id: Some("<session id>".into()), ..options() };
    let first = final_message(&collect(&model, &context, options()).await).clone();
    assert_eq!(first.stop_reason, StopReason::ToolUse, "{:?}", first.error_message);
    let call_id = first.tool_calls().next().map(|c| c.id.clone()).unwrap_or_default();
    assert_eq!(call_id, "call_1|fc_1");
    assert_eq!((first.usage.input, first.usage.output, first.usage.total_tokens), (10, 5, 15));
    context.messages.push(Message::Assistant(first));
    context.messages.push(Message::ToolResult(ToolResultMessage {
        tool_call_id: call_id,
        tool_name: "read".into(),
        content: vec![UserContent::text("Hello from the fixture file.\n")],
        details: None,
        is_error: false,
        duration_ms: None,
        timestamp: 0,
    }));
    let second = final_message(&collect(&model, &context, options()).await).clone();
    assert_eq!(second.text(), "It says hello.");
    let requests = server.requests();
    assert_eq!(requests[1].path, pi_second["path"].as_str().unwrap_or_default());
    assert_eq!(requests[1].body.to_string(), pi_second["body"].to_string());
    let pi_headers = pi_second["headers"].as_object().cloned().unwrap_or_default();
    for (name, value) in pi_headers {
        // pi's user agent names its OS (or "browser", before its OS probe finishes); ours names pi-runtime.
        if name == "user-agent" || name == "authorization" {
            continue;
        }
        assert_eq!(requests[1].header(&name), value.as_str(), "{name}");
    }
}

#[tokio::test]
async fn codex_failures_and_usage_limits_are_not_retried() {
    let usage_limit =
        json!({"error": {"status": 400, "body": {"error": {"code": "usage_limit_reached", "plan_type": "plus"}}}});
    let script = json!([{"text": "partial", "streamError": "the model broke"}, usage_limit]).to_string();
    let server = server(&script).await;
    let model = model(&server);
    let failed = collect(&model, &context(ask("hi")), options()).await;
    assert_eq!(final_message(&failed).error_message.as_deref(), Some("the model broke"));
    let limited = collect(&model, &context(ask("hi")), options()).await;
    let Some(AssistantMessageEvent::Error { reason: ErrorReason::Error, error }) = limited.last() else {
        panic!("{limited:?}")
    };
    assert_eq!(error.error_message.as_deref(), Some("ChatGPT usage limit reached (plus plan)."));
    assert_eq!(server.requests().len(), 2, "neither failure is sent again");
}

#[tokio::test]
async fn a_503_is_retried_by_pis_loop() {
    let unavailable = json!({"error": {"status": 503, "body": "Service Unavailable"}});
    let script = json!([unavailable, {"text": "recovered"}]).to_string();
    let server = server(&script).await;
    let model = model(&server);
    let events = collect(&model, &context(ask("hi")), options()).await;
    assert_eq!(final_message(&events).text(), "recovered");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].body, requests[1].body, "the same request is sent again");
}

#[tokio::test]
async fn abort_idle_timeout_and_bad_tokens_end_the_stream() {
    let server =
        server(r#"[{"text":"one two three four five six","delayMs":200},{"text":"stalls","stallAfter":3}]"#).await;
    let model = model(&server);
    let opts = options();
    let cancel = opts.cancel.clone();
    let mut stream = OpenAiCodexResponsesProvider::new().stream(&model, &context(ask("hi")), opts);
    let mut last = None;
    while let Some(event) = tokio::time::timeout(Duration::from_secs(10), stream.next()).await.ok().flatten() {
        if matches!(event, AssistantMessageEvent::TextDelta { .. }) {
            cancel.cancel();
        }
        last = Some(event);
    }
    let Some(AssistantMessageEvent::Error { reason: ErrorReason::Aborted, error }) = last else { panic!("{last:?}") };
    assert_eq!(error.error_message.as_deref(), Some("Request was aborted"));

    let opts = StreamOptions { idle_timeout: Some(Duration::from_millis(200)), ..options() };
    let events = collect(&model, &context(ask("hi")), opts).await;
    assert_eq!(final_message(&events).error_message.as_deref(), Some("Request timed out."));

    let plain_key = StreamOptions { api_key: Some("sk-not-a-jwt".into()), ..options() };
    let events = collect(&model, &context(ask("hi")), plain_key).await;
    let error = final_message(&events).error_message.clone().unwrap_or_default();
    assert!(error.contains("account id") && !error.contains("sk-not"), "{error}");
    assert_eq!(server.requests().len(), 2, "a token without an account is not sent");
}
