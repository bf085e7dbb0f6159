//! End-to-end tests: the anthropic-messages provider against the mock server over real HTTP, and the
//! bodies of a read-then-answer round trip compared with what pi 0.73.1 sent for the same turns.

use std::time::Duration;

use serde_json::{Value, json};

use super::{MockLlmServer, MockScript};
use crate::ai::{AnthropicMessagesProvider, ApiProvider, LlmContext, Model, StreamOptions, ThinkingLevel, ToolSpec};
use crate::protocol::{
    AssistantContent, AssistantMessage, AssistantMessageEvent, DoneReason, ErrorReason, Message, StopReason,
    ToolResultMessage, UserContent, UserMessage,
};

const API: &str = "anthropic-messages";

async fn server(script: &str) -> MockLlmServer {
    let script = MockScript::from_json_str(script).map_err(|e| e.to_string());
    let Ok(script) = script else { panic!("bad script: {script:?}") };
    let server = MockLlmServer::start(script).await;
    let Ok(server) = server else { panic!("cannot start the mock server: {server:?}") };
    server
}

/// A model at the mock; Anthropic base URLs carry no `/v1`.
fn model(server: &MockLlmServer, id: &str) -> Model {
    Model::new("mock", id, API, format!("http://{}", server.addr()))
}

fn tool(name: &str, properties: &[&str], required: &[&str]) -> ToolSpec {
    let properties: serde_json::Map<String, Value> =
        properties.iter().map(|p| ((*p).to_owned(), json!({"type": "string"}))).collect();
    ToolSpec {
        name: name.into(),
        description: format!("The {name} tool."),
        parameters: json!({"type": "object", "required": required, "properties": properties}),
    }
}

/// pi's four default tools, with their parameter names.
fn pi_tools() -> Vec<ToolSpec> {
    vec![
        tool("read", &["path", "offset", "limit"], &["path"]),
        tool("bash", &["command", "timeout"], &["command"]),
        tool("edit", &["path", "edits"], &["path", "edits"]),
        tool("write", &["path", "content"], &["path", "content"]),
    ]
}

fn context(prompt: &str) -> LlmContext {
    LlmContext {
        system_prompt: "You are a test.".into(),
        messages: vec![Message::User(UserMessage::text(prompt))],
        tools: pi_tools(),
    }
}

fn options() -> StreamOptions {
    StreamOptions { api_key: Some("mock-key".into()), ..StreamOptions::default() }
}

async fn collect(
    provider: &AnthropicMessagesProvider,
    model: &Model,
    context: &LlmContext,
    options: StreamOptions,
) -> Vec<AssistantMessageEvent> {
    let mut stream = provider.stream(model, context, options);
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        events.push(event);
    }
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

fn tool_result(id: &str, text: &str) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: "read".into(),
        content: vec![UserContent::text(text)],
        details: None,
        is_error: false,
        timestamp: 0,
        duration_ms: None,
    })
}

#[tokio::test]
async fn streams_text_and_sends_pi_headers() {
    let server = server(r#"[{"text":"Hello there, world!"}]"#).await;
    let events =
        collect(&AnthropicMessagesProvider::new(), &model(&server, "m"), &context("Say hello"), options()).await;
    assert_eq!(types(&events), ["start", "text_start", "text_delta", "text_delta", "text_delta", "text_end", "done"]);
    let Some(AssistantMessageEvent::Done { reason: DoneReason::Stop, message }) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(message.text(), "Hello there, world!");
    assert_eq!(message.response_id.as_deref(), Some("msg_mock_1"));
    assert_eq!((message.api.as_str(), message.provider.as_str(), message.model.as_str()), (API, "mock", "m"));

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!((request.method.as_str(), request.path.as_str()), ("POST", "/v1/messages"));
    assert_eq!(request.header("x-api-key"), Some("mock-key"));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.header("anthropic-beta"), Some("interleaved-thinking-2025-05-14"));
    assert_eq!(request.header("anthropic-dangerous-direct-browser-access"), Some("true"));
    assert_eq!(request.header("accept"), Some("application/json"));
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(request.header("authorization"), None);
    server.shutdown().await;
}

#[tokio::test]
async fn streams_one_tool_call() {
    let server =
        server(r#"[{"toolCalls":[{"id":"toolu_01A","name":"read","arguments":{"path":"some/longer/file.txt"}}]}]"#)
            .await;
    let events = collect(&AnthropicMessagesProvider::new(), &model(&server, "m"), &context("Read"), options()).await;
    assert_eq!(
        types(&events),
        ["start", "toolcall_start", "toolcall_delta", "toolcall_delta", "toolcall_delta", "toolcall_end", "done"]
    );
    let Some(AssistantMessageEvent::Done { reason: DoneReason::ToolUse, message }) = events.last() else {
        panic!("{events:?}")
    };
    let calls: Vec<_> = message.tool_calls().map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.clone())).collect();
    assert_eq!(calls, [("toolu_01A", "read", json!({"path": "some/longer/file.txt"}))]);
}

#[tokio::test]
async fn thinking_and_two_tool_calls_round_trip_into_the_next_request() {
    let server = server(
        r#"[{"thinking":"I should read both.","thinkingSignature":"sig-abc","text":"Reading.","toolCalls":[
              {"id":"toolu_01A","name":"read","arguments":{"path":"hello.txt"}},
              {"id":"toolu_01B","name":"bash","arguments":{"command":"echo hi"}}]},
            {"text":"Done."}]"#,
    )
    .await;
    let mut model = model(&server, "m");
    model.reasoning = true;
    model.max_tokens = 32_000;
    let provider = AnthropicMessagesProvider::new();
    let thinking = StreamOptions { reasoning: Some(ThinkingLevel::Medium), ..options() };
    let mut context = context("Read hello.txt and run echo hi");
    let events = collect(&provider, &model, &context, thinking.clone()).await;
    let first = final_message(&events).clone();
    assert_eq!(first.stop_reason, StopReason::ToolUse);
    let AssistantContent::Thinking(block) = &first.content[0] else { panic!("{:?}", first.content) };
    assert_eq!(
        (block.thinking.as_str(), block.thinking_signature.as_deref()),
        ("I should read both.", Some("sig-abc"))
    );
    assert_eq!(first.tool_calls().count(), 2);
    let ends: Vec<_> = types(&events).into_iter().filter(|t| t.ends_with("_end")).collect();
    assert_eq!(ends, ["thinking_end", "text_end", "toolcall_end", "toolcall_end"]);

    context.messages.push(Message::Assistant(first));
    context.messages.push(tool_result("toolu_01A", "Hello from the fixture file.\nSecond line.\n"));
    context.messages.push(tool_result("toolu_01B", "hi\n"));
    let events = collect(&provider, &model, &context, thinking).await;
    assert_eq!(final_message(&events).text(), "Done.");

    // What pi 0.73.1 sent for the same second turn (reasoning model, --thinking medium).
    let requests = server.requests();
    let body = &requests[1].body;
    assert_eq!(body["max_tokens"], 32000);
    assert_eq!(body["thinking"], json!({"type": "enabled", "budget_tokens": 8192, "display": "summarized"}));
    let expected_messages = json!([
        {"role": "user", "content": [{"type": "text", "text": "Read hello.txt and run echo hi"}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "I should read both.", "signature": "sig-abc"},
            {"type": "text", "text": "Reading."},
            {"type": "tool_use", "id": "toolu_01A", "name": "read", "input": {"path": "hello.txt"}},
            {"type": "tool_use", "id": "toolu_01B", "name": "bash", "input": {"command": "echo hi"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01A", "content": "Hello from the fixture file.\nSecond line.\n", "is_error": false},
            {"type": "tool_result", "tool_use_id": "toolu_01B", "content": "hi\n", "is_error": false, "cache_control": {"type": "ephemeral"}}]}
    ]);
    assert_eq!(body["messages"].to_string(), expected_messages.to_string(), "same values and key order");
}

#[tokio::test]
async fn usage_and_cost_come_from_the_stream() {
    let server = server(r#"[{"text":"ok","usage":{"input":100,"output":7,"cacheRead":20}}]"#).await;
    let mut model = model(&server, "m");
    model.cost.input = 3.0;
    model.cost.output = 15.0;
    model.cost.cache_read = 0.3;
    let events = collect(&AnthropicMessagesProvider::new(), &model, &context("hi"), options()).await;
    let usage = final_message(&events).usage;
    assert_eq!(
        (usage.input, usage.output, usage.cache_read, usage.cache_write, usage.total_tokens),
        (100, 7, 20, 0, 127)
    );
    let expected = (100.0 * 3.0 + 7.0 * 15.0 + 20.0 * 0.3) / 1e6;
    assert!((usage.cost.total - expected).abs() < 1e-12, "{:?}", usage.cost);
}

#[tokio::test]
async fn http_errors_read_like_the_sdk() {
    let body = r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 999999 > 64000"}}"#;
    let server = server(&format!(r#"[{{"error":{{"status":400,"body":{body}}}}}]"#)).await;
    let events = collect(&AnthropicMessagesProvider::new(), &model(&server, "m"), &context("hi"), options()).await;
    assert_eq!(types(&events), ["error"]);
    let Some(AssistantMessageEvent::Error { reason: ErrorReason::Error, error }) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(error.error_message.as_deref(), Some(format!("400 {body}").as_str()));
    assert_eq!(error.error_kind, Some(crate::ai::ProviderErrorKind::InvalidRequest));
    assert_eq!(server.requests().len(), 1, "400 is not retried");
}

#[tokio::test]
async fn overloaded_and_unavailable_are_retried_then_fail() {
    let overloaded = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    let script = format!(
        r#"[{{"error":{{"status":529,"body":{overloaded},"headers":{{"retry-after-ms":"5"}}}}}},
            {{"error":{{"status":503,"body":"unavailable","headers":{{"retry-after-ms":"5"}}}}}},
            {{"error":{{"status":529,"body":{overloaded},"headers":{{"retry-after-ms":"5"}}}}}},
            {{"text":"never reached"}}]"#
    );
    let server = server(&script).await;
    let events = collect(&AnthropicMessagesProvider::new(), &model(&server, "m"), &context("hi"), options()).await;
    let message = final_message(&events);
    assert_eq!(message.error_message.as_deref(), Some(format!("529 {overloaded}").as_str()));
    assert_eq!(message.error_kind, Some(crate::ai::ProviderErrorKind::Server));
    assert_eq!(server.requests().len(), 3, "the first try and two retries");
    assert_eq!(server.remaining_responses(), 1);

    let server = self::server(&script).await;
    let provider = AnthropicMessagesProvider::new().with_max_retries(5);
    let events = collect(&provider, &model(&server, "m"), &context("hi"), options()).await;
    assert_eq!(final_message(&events).text(), "never reached");
}

#[tokio::test]
async fn stream_faults_end_with_clear_errors() {
    let server = server(
        r#"[{"text":"partial","streamError":"Overloaded"},
            {"text":"abcdef","disconnectAfter":4},
            {"text":"filtered","finishReason":"content_filter"}]"#,
    )
    .await;
    let provider = AnthropicMessagesProvider::new().with_max_retries(0);
    let mut errors = Vec::new();
    for _ in 0..3 {
        let events = collect(&provider, &model(&server, "m"), &context("hi"), options()).await;
        let message = final_message(&events);
        assert_eq!(message.stop_reason, StopReason::Error);
        errors.push(message.error_message.clone().unwrap_or_default());
    }
    // pi reports an `error` event's data as it came.
    assert_eq!(errors[0], r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#);
    assert!(errors[1].starts_with("terminated (reading the answer to POST "), "{}", errors[1]);
    assert_eq!(errors[2], "An unknown error occurred");
}

#[tokio::test]
async fn a_stalled_stream_times_out() {
    let server = server(r#"[{"text":"slow text here","stallAfter":4}]"#).await;
    let opts = StreamOptions { idle_timeout: Some(Duration::from_millis(200)), ..options() };
    let (provider, model, context) = (AnthropicMessagesProvider::new(), model(&server, "m"), context("hi"));
    let run = collect(&provider, &model, &context, opts);
    let Ok(events) = tokio::time::timeout(Duration::from_secs(10), run).await else { panic!("the stream hung") };
    let message = final_message(&events);
    assert_eq!(
        (message.stop_reason, message.error_message.as_deref()),
        (StopReason::Error, Some("Request timed out."))
    );
    assert!(message.text().starts_with("slow"), "text before the stall is kept: {:?}", message.content);
}

#[tokio::test]
async fn cancelling_mid_stream_aborts() {
    let server = server(r#"[{"text":"one two three four five six","delayMs":300}]"#).await;
    let opts = options();
    let cancel = opts.cancel.clone();
    let mut stream = AnthropicMessagesProvider::new().stream(&model(&server, "m"), &context("hi"), opts);
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        if matches!(event, AssistantMessageEvent::TextDelta { .. }) {
            cancel.cancel();
        }
        events.push(event);
    }
    let Some(AssistantMessageEvent::Error { reason: ErrorReason::Aborted, error }) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!((error.stop_reason, error.error_message.as_deref()), (StopReason::Aborted, Some("Request was aborted")));
    assert!(error.text().starts_with("one"), "partial text is kept: {:?}", error.content);
    // As in pi, an open Anthropic block gets no end event when the call is aborted.
    assert!(!types(&events).contains(&"text_end".to_owned()), "{:?}", types(&events));
}

/// `body` with the parts that legitimately differ from pi's run reduced: the system prompt text,
/// tool descriptions, and parameter schemas (only their property names are kept, sorted).
fn comparable(body: &Value) -> String {
    let mut body = body.clone();
    if let Some(system) = body.pointer_mut("/system/0/text") {
        *system = json!("<system prompt>");
    }
    for tool in body["tools"].as_array_mut().into_iter().flatten() {
        tool["description"] = json!("<description>");
        let mut names: Vec<String> =
            tool["input_schema"]["properties"].as_object().map(|p| p.keys().cloned().collect()).unwrap_or_default();
        names.sort();
        tool["input_schema"]["properties"] = json!(names);
    }
    body.to_string()
}

/// The two request bodies pi 0.73.1 sent (recorded against the mock, same reduction as [`comparable`]).
const PI_ROUND_TRIP: [&str; 2] = [
    r#"{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"Read hello.txt and tell me what it says","cache_control":{"type":"ephemeral"}}]}],"max_tokens":16384,"stream":true,"system":[{"type":"text","text":"<system prompt>","cache_control":{"type":"ephemeral"}}],"tools":[{"name":"read","description":"<description>","eager_input_streaming":true,"input_schema":{"type":"object","properties":["limit","offset","path"],"required":["path"]}},{"name":"bash","description":"<description>","eager_input_streaming":true,"input_schema":{"type":"object","properties":["command","timeout"],"required":["command"]}},{"name":"edit","description":"<description>","eager_input_streaming":true,"input_schema":{"type":"object","properties":["edits","path"],"required":["path","edits"]}},{"name":"write","description":"<description>","eager_input_streaming":true,"input_schema":{"type":"object","properties":["content","path"],"required":["path","content"]},"cache_control":{"type":"ephemeral"}}]}"#,
    r#"{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"Read hello.txt and tell me what it says"}]},{"role":"assistant","content":[{"type":"text","text":"Let me read it."},{"type":"tool_use","id":"toolu_01A","name":"read","input":{"path":"hello.txt"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01A","content":"Hello from the fixture file.\nSecond line.\n","is_error":false,"cache_control":{"type":"ephemeral"}}]}],"max_tokens":16384,"stream":true,"system":[{"type":"text","text":"<system prompt>","cache_control":{"type":"ephemeral"}}],"tools":[{"name":"read","description":"<description>","eager_input_streaming":true,"input_schema":{"type":"object","properties":["limit","offset","path"],"required":["path"]}},{"name":"bash","description":"<description>","eager_input_streaming":true,"input_schema":{"type":"object","properties":["command","timeout"],"required":["command"]}},{"name":"edit","description":"<description>","eager_input_streaming":true,"input_schema":{"type":"object","properties":["edits","path"],"required":["path","edits"]}},{"name":"write","description":"<description>","eager_input_streaming":true,"input_schema":{"type":"object","properties":["content","path"],"required":["path","content"]},"cache_control":{"type":"ephemeral"}}]}"#,
];

#[tokio::test]
async fn a_read_then_answer_round_trip_sends_what_pi_sent() {
    let server = server(
        r#"[{"text":"Let me read it.","toolCalls":[{"id":"toolu_01A","name":"read","arguments":{"path":"hello.txt"}}]},
            {"text":"The file says hello."}]"#,
    )
    .await;
    let model = model(&server, "m");
    let provider = AnthropicMessagesProvider::new();
    let mut context = context("Read hello.txt and tell me what it says");
    let events = collect(&provider, &model, &context, options()).await;
    context.messages.push(Message::Assistant(final_message(&events).clone()));
    context.messages.push(tool_result("toolu_01A", "Hello from the fixture file.\nSecond line.\n"));
    let events = collect(&provider, &model, &context, options()).await;
    assert_eq!(final_message(&events).text(), "The file says hello.");

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for (request, pi) in requests.iter().zip(PI_ROUND_TRIP) {
        assert_eq!(comparable(&request.body), pi);
    }
}
