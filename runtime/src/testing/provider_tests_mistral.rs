//! The mistral-conversations provider against the mock server over real HTTP: text, thinking, a tool round
//! trip whose second request equals the one pi 0.73.1 sent, usage and cost, errors (not retried by the SDK,
//! classified for the session's retry), a mid-stream error, abort and the idle timeout.

use std::time::Duration;

use serde_json::{Value, json};

use super::{MockLlmServer, MockScript};
use crate::ai::mistral_conversations::API;
use crate::ai::{
    ApiProvider, LlmContext, MistralConversationsProvider, Model, ProviderErrorKind, StreamOptions, ThinkingLevel,
    ToolSpec, is_retryable_error,
};
use crate::protocol::{
    AssistantContent, AssistantMessage, AssistantMessageEvent, DoneReason, ErrorReason, Message, StopReason,
    ToolResultMessage, UserContent, UserMessage,
};

/// What pi 0.73.1 was served and sent (see the file's `about`).
const PI_FIXTURES: &str = include_str!("fixtures/pi073_azure_mistral.json");

async fn server(script: &str) -> MockLlmServer {
    let script = MockScript::from_json_str(script).map_err(|e| e.to_string());
    let Ok(script) = script else { panic!("bad script: {script:?}") };
    let server = MockLlmServer::start(script).await;
    let Ok(server) = server else { panic!("cannot start the mock server: {server:?}") };
    server
}

/// magistral-medium-latest as the catalog has it, at the mock's address (the SDK adds `/v1/chat/completions`).
fn model(server: &MockLlmServer) -> Model {
    let mut model =
        Model::new("mistral", "magistral-medium-latest", API, format!("http://127.0.0.1:{}", server.addr().port()));
    model.reasoning = true;
    model.max_tokens = 16_384;
    model.cost.input = 2.0;
    model.cost.output = 5.0;
    model
}

fn options() -> StreamOptions {
    StreamOptions {
        api_key: Some("mi-key".into()),
        reasoning: Some(ThinkingLevel::Medium),
        session_id: Some("sess-7".into()),
        ..StreamOptions::default()
    }
}

fn read_tool(parameters: Value) -> ToolSpec {
    ToolSpec { name: "read".into(), description: "<description>".into(), parameters }
}

fn context(messages: Vec<Message>) -> LlmContext {
    LlmContext { system_prompt: "<system prompt>".into(), messages, tools: vec![read_tool(json!({"type": "object"}))] }
}

fn ask(text: &str) -> Vec<Message> {
    vec![Message::User(UserMessage::text(text))]
}

async fn collect(model: &Model, context: &LlmContext, options: StreamOptions) -> Vec<AssistantMessageEvent> {
    let mut stream = MistralConversationsProvider::new().stream(model, context, options);
    let run = async {
        let mut events = Vec::new();
        while let Some(event) = stream.next().await {
            events.push(event);
        }
        events
    };
    let events = tokio::time::timeout(Duration::from_secs(20), run).await;
    let Ok(events) = events else { panic!("the stream hung") };
    events
}

fn types(events: &[AssistantMessageEvent]) -> Vec<String> {
    events
        .iter()
        .map(|e| serde_json::to_value(e).ok().and_then(|v| v["type"].as_str().map(str::to_owned)).unwrap_or_default())
        .collect()
}

fn final_message(events: &[AssistantMessageEvent]) -> &AssistantMessage {
    match events.last() {
        Some(event) if event.is_terminal() => event.message(),
        other => panic!("no terminal event, last was {other:?}"),
    }
}

#[tokio::test]
async fn thinking_and_text_stream_with_usage_and_the_sdks_headers() {
    let server =
        server(r#"[{"thinking":"Think first.","text":"Hello there, world!","usage":{"input":1000,"output":200}}]"#)
            .await;
    let events = collect(&model(&server), &context(ask("hi")), options()).await;
    assert_eq!(
        types(&events),
        [
            "start",
            "text_start",
            "text_delta",
            "text_end",
            "thinking_start",
            "thinking_delta",
            "thinking_delta",
            "thinking_delta",
            "thinking_end",
            "text_start",
            "text_delta",
            "text_delta",
            "text_delta",
            "text_end",
            "done"
        ]
    );
    let message = final_message(&events);
    assert_eq!(message.text(), "Hello there, world!");
    assert_eq!((message.response_id.as_deref(), message.api.as_str()), (Some("cmpl-mock-1"), API));
    let usage = message.usage;
    assert_eq!((usage.input, usage.output, usage.total_tokens), (1000, 200, 1200));
    assert!((usage.cost.total - (1000.0 * 2.0 + 200.0 * 5.0) / 1e6).abs() < 1e-12);

    let request = &server.requests()[0];
    assert_eq!((request.method.as_str(), request.path.as_str()), ("POST", "/v1/chat/completions"));
    assert_eq!(request.header("authorization"), Some("Bearer mi-key"));
    assert_eq!((request.header("accept"), request.header("x-affinity")), (Some("text/event-stream"), Some("sess-7")));
    let body = &request.body;
    let keys: Vec<&str> = body.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
    assert_eq!(keys, ["model", "max_tokens", "stream", "messages", "tools", "prompt_mode"]);
    assert_eq!(body["messages"][0], json!({"role": "system", "content": "<system prompt>"}));
}

#[tokio::test]
async fn a_read_round_trip_sends_what_pi_sent() {
    let fixtures: Value = serde_json::from_str(PI_FIXTURES).unwrap_or_default();
    let mistral = &fixtures["mistral"];
    let script = json!([{"raw": mistral["streams"][0]}, {"raw": mistral["streams"][1]}]).to_string();
    let server = server(&script).await;
    let pi_second: Value =
        serde_json::from_str(mistral["secondRequest"].as_str().unwrap_or("null")).unwrap_or_default();
    let model = model(&server);
    let mut context = LlmContext {
        system_prompt: "<system prompt>".into(),
        messages: ask("Read hello.txt"),
        tools: vec![read_tool(pi_second["tools"][0]["function"]["parameters"].clone())],
    };
    let first = final_message(&collect(&model, &context, options()).await).clone();
    assert_eq!(first.stop_reason, StopReason::ToolUse, "{:?}", first.error_message);
    let kinds: Vec<&str> = first
        .content
        .iter()
        .map(|block| match block {
            AssistantContent::Text(_) => "text",
            AssistantContent::Thinking(_) => "thinking",
            AssistantContent::ToolCall(_) => "toolCall",
        })
        .collect();
    assert_eq!(kinds, ["text", "thinking", "text", "toolCall"], "pi's blocks, the empty first text included");
    let call_id = first.tool_calls().next().map(|c| c.id.clone()).unwrap_or_default();
    assert_eq!(call_id, "abcDEF123");
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
    let events = collect(&model, &context, options()).await;
    let Some(AssistantMessageEvent::Done { reason: DoneReason::Stop, message }) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(message.text(), "It says hello.");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].body.to_string(), pi_second.to_string());
}

#[tokio::test]
async fn scripted_tool_calls_round_trip() {
    let server = server(
        r#"[{"toolCalls":[{"id":"abcDEF123","name":"read","arguments":{"path":"a.txt"}},{"id":"xyzXYZ789","name":"read","arguments":{"path":"b.txt"}}]}]"#,
    )
    .await;
    let events = collect(&model(&server), &context(ask("read both")), options()).await;
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    let calls: Vec<(String, Value)> = message.tool_calls().map(|c| (c.id.clone(), c.arguments.clone())).collect();
    assert_eq!(
        calls,
        [("abcDEF123".to_owned(), json!({"path": "a.txt"})), ("xyzXYZ789".to_owned(), json!({"path": "b.txt"}))]
    );
}

#[tokio::test]
async fn http_errors_are_not_retried_but_classified() {
    let rate_limited = r#"{"object":"error","message":"Requests rate limit exceeded","type":"rate_limited","param":null,"code":"1300"}"#;
    let script = format!(
        r#"[{{"error":{{"status":429,"body":{rate_limited}}}}},
            {{"error":{{"status":400,"body":{{"object":"error","message":"Invalid model: x","type":"invalid_model","param":null,"code":"1001"}}}}}},
            {{"error":{{"status":401,"body":{{"detail":"Unauthorized"}}}}}},
            {{"error":{{"status":503,"body":"upstream connect error"}}}}]"#
    );
    let server = server(&script).await;
    let mut failures = Vec::new();
    for _ in 0..4 {
        let events = collect(&model(&server), &context(ask("hi")), options()).await;
        assert_eq!(types(&events), ["error"]);
        let error = final_message(&events);
        failures.push((
            error.error_message.clone().unwrap_or_default(),
            error.error_kind,
            is_retryable_error(error, Some(128_000)),
        ));
    }
    assert_eq!(
        failures,
        [
            (format!("Mistral API error (429): {rate_limited}"), Some(ProviderErrorKind::RateLimit { retry_after: None }), true),
            (
                r#"Mistral API error (400): {"object":"error","message":"Invalid model: x","type":"invalid_model","param":null,"code":"1001"}"#.to_owned(),
                Some(ProviderErrorKind::InvalidRequest),
                false
            ),
            (r#"Mistral API error (401): {"detail":"Unauthorized"}"#.to_owned(), Some(ProviderErrorKind::Authentication), false),
            ("Mistral API error (503): upstream connect error".to_owned(), Some(ProviderErrorKind::Server), true),
        ]
    );
    assert_eq!(server.requests().len(), 4, "the SDK under pi never retries");
}

#[tokio::test]
async fn a_mid_stream_error_and_an_error_finish_fail_the_stream() {
    let server =
        server(r#"[{"text":"partial","streamError":"model crashed"},{"text":"x","finishReason":"error"}]"#).await;
    let events = collect(&model(&server), &context(ask("hi")), options()).await;
    let error = final_message(&events);
    assert_eq!(error.stop_reason, StopReason::Error);
    let text = error.error_message.clone().unwrap_or_default();
    assert!(text.starts_with("[\n  {\n    \"expected\": \"string\",") && text.contains("\"id\""), "{text}");
    assert_eq!(error.text(), "partial", "the text so far is kept");
    let events = collect(&model(&server), &context(ask("hi")), options()).await;
    assert_eq!(final_message(&events).error_message.as_deref(), Some("An unknown error occurred"));
}

#[tokio::test]
async fn abort_idle_timeout_and_refused_connections() {
    let server =
        server(r#"[{"text":"one two three four five six","delayMs":200},{"text":"stalls","stallAfter":3}]"#).await;
    let model = model(&server);
    let opts = options();
    let cancel = opts.cancel.clone();
    let mut stream = MistralConversationsProvider::new().stream(&model, &context(ask("hi")), opts);
    let mut seen = Vec::new();
    while let Some(event) = tokio::time::timeout(Duration::from_secs(10), stream.next()).await.ok().flatten() {
        if matches!(event, AssistantMessageEvent::TextDelta { ref delta, .. } if !delta.is_empty()) {
            cancel.cancel();
        }
        seen.push(event);
    }
    let Some(AssistantMessageEvent::Error { reason: ErrorReason::Aborted, error }) = seen.last() else {
        panic!("{seen:?}")
    };
    assert_eq!(error.error_message.as_deref(), Some("This operation was aborted"));
    assert!(!types(&seen).contains(&"text_end".to_owned()), "an abort closes no block, as in pi");

    let opts = StreamOptions { idle_timeout: Some(Duration::from_millis(200)), ..options() };
    let events = collect(&model, &context(ask("hi")), opts).await;
    assert_eq!(final_message(&events).error_message.as_deref(), Some("Request timed out."));

    let closed = Model { base_url: "http://127.0.0.1:9".into(), ..model.clone() };
    let events = collect(&closed, &context(ask("hi")), options()).await;
    let error = final_message(&events);
    let text = error.error_message.clone().unwrap_or_default();
    let expected = "Unable to make request: TypeError: fetch failed (POST http://127.0.0.1:9/v1/chat/completions: ";
    assert!(text.starts_with(expected), "{text}");
    assert!(is_retryable_error(error, None), "a failed connection is retried by the session");

    let cancel = tokio_util::sync::CancellationToken::new();
    cancel.cancel();
    let events = collect(&model, &context(ask("hi")), StreamOptions { cancel, ..options() }).await;
    let aborted = final_message(&events).error_message.clone();
    assert_eq!(aborted.as_deref(), Some("Request aborted by client: AbortError: This operation was aborted"));
}
