//! End-to-end tests: the openai-completions provider against the mock server over real HTTP.

use std::time::Duration;

use serde_json::json;

use super::{MockLlmServer, MockScript};
use crate::ai::{ApiProvider, LlmContext, Model, OpenAiCompletionsProvider, StreamOptions, ToolSpec};
use crate::protocol::{
    AssistantContent, AssistantMessage, AssistantMessageEvent, DoneReason, ErrorReason, Message, StopReason,
    UserMessage,
};

async fn server(script: &str) -> MockLlmServer {
    let script = MockScript::from_json_str(script).map_err(|e| e.to_string());
    let Ok(script) = script else { panic!("bad script: {script:?}") };
    let server = MockLlmServer::start(script).await;
    let Ok(server) = server else { panic!("cannot start the mock server: {server:?}") };
    server
}

fn model(server: &MockLlmServer) -> Model {
    Model::new("mock", "mock-model", "openai-completions", server.base_url())
}

fn context() -> LlmContext {
    LlmContext {
        system_prompt: "You are a test.".into(),
        messages: vec![Message::User(UserMessage::text("Say hello"))],
        tools: vec![ToolSpec {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }],
    }
}

fn options() -> StreamOptions {
    StreamOptions { api_key: Some("mock-key".into()), ..StreamOptions::default() }
}

async fn collect(
    provider: &OpenAiCompletionsProvider,
    model: &Model,
    options: StreamOptions,
) -> Vec<AssistantMessageEvent> {
    let mut stream = provider.stream(model, &context(), options);
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

#[tokio::test]
async fn streams_text_with_usage_and_records_the_request() {
    let server = server(r#"[{"text":"Hello there, world!","usage":{"input":100,"output":7,"cacheRead":20}}]"#).await;
    let mut model = model(&server);
    model.cost.input = 1.0;
    let events = collect(&OpenAiCompletionsProvider::new(), &model, options()).await;
    assert_eq!(types(&events), ["start", "text_start", "text_delta", "text_delta", "text_delta", "text_end", "done"]);
    let Some(AssistantMessageEvent::Done { reason: DoneReason::Stop, message }) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(message.text(), "Hello there, world!");
    assert_eq!(message.response_id.as_deref(), Some("chatcmpl-mock-1"));
    assert_eq!(
        (message.api.as_str(), message.provider.as_str(), message.model.as_str()),
        ("openai-completions", "mock", "mock-model")
    );
    let usage = message.usage;
    assert_eq!((usage.input, usage.output, usage.cache_read, usage.total_tokens), (100, 7, 20, 127));
    assert!((usage.cost.input - 100.0 / 1e6).abs() < 1e-12);

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!((requests[0].method.as_str(), requests[0].path.as_str()), ("POST", "/v1/chat/completions"));
    assert_eq!(requests[0].header("authorization"), Some("Bearer mock-key"));
    assert_eq!(requests[0].header("content-type"), Some("application/json"));
    assert_eq!(requests[0].body["messages"][1]["content"], json!([{"type": "text", "text": "Say hello"}]));
    assert_eq!(requests[0].body["tools"][0]["function"]["name"], "read");
    server.shutdown().await;
}

#[tokio::test]
async fn streams_tool_calls_with_partial_arguments() {
    let server = server(
        r#"{"responses":[{"thinking":"Need the file.","text":"Reading.","toolCalls":[
            {"name":"read","arguments":{"path":"some/longer/file.txt"}},
            {"id":"call_x","name":"read","arguments":{"path":"b.txt"}}]}]}"#,
    )
    .await;
    let events = collect(&OpenAiCompletionsProvider::new(), &model(&server), options()).await;
    let deltas_of = |index: usize| {
        events
            .iter()
            .filter_map(|e| match e {
                AssistantMessageEvent::ToolcallDelta { content_index, partial, .. } if *content_index == index => {
                    match &partial.content[index] {
                        AssistantContent::ToolCall(call) => Some(call.arguments.clone()),
                        _ => None,
                    }
                }
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    // Thinking is block 0, text block 1, the calls blocks 2 and 3; the arguments arrive in two pieces.
    assert_eq!(deltas_of(2), [json!({}), json!({"path": "some/l"}), json!({"path": "some/longer/file.txt"})]);
    assert_eq!(deltas_of(3).len(), 3);
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    let calls: Vec<_> = message.tool_calls().map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.clone())).collect();
    assert_eq!(
        calls,
        [("call_1", "read", json!({"path": "some/longer/file.txt"})), ("call_x", "read", json!({"path": "b.txt"}))]
    );
    let AssistantContent::Thinking(thinking) = &message.content[0] else { panic!("{:?}", message.content) };
    assert_eq!(
        (thinking.thinking.as_str(), thinking.thinking_signature.as_deref()),
        ("Need the file.", Some("reasoning_content"))
    );
    assert!(message.usage.input > 0 && message.usage.output > 0, "estimated usage: {:?}", message.usage);
    let ends: Vec<_> = types(&events).into_iter().filter(|t| t.ends_with("_end")).collect();
    assert_eq!(ends, ["thinking_end", "text_end", "toolcall_end", "toolcall_end"]);
}

#[tokio::test]
async fn http_errors_name_status_and_body() {
    let server = server(r#"[{"error":{"status":500,"body":"boom","headers":{"x-should-retry":"false"}}}]"#).await;
    let events = collect(&OpenAiCompletionsProvider::new(), &model(&server), options()).await;
    assert_eq!(types(&events), ["error"]);
    let Some(AssistantMessageEvent::Error { reason: ErrorReason::Error, error }) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(error.stop_reason, StopReason::Error);
    assert_eq!(error.error_message.as_deref(), Some("500 boom"));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn retryable_errors_are_retried_like_the_sdk() {
    let script = r#"[
        {"error":{"status":503,"body":{"error":{"message":"overloaded"}},"headers":{"retry-after-ms":"5"}}},
        {"error":{"status":429,"body":"slow down","headers":{"retry-after-ms":"5"}}},
        {"text":"ok"}
    ]"#;
    let server = server(script).await;
    let events = collect(&OpenAiCompletionsProvider::new(), &model(&server), options()).await;
    assert_eq!(final_message(&events).text(), "ok");
    assert_eq!(server.requests().len(), 3);

    let server = self::server(script).await;
    let events = collect(&OpenAiCompletionsProvider::new().with_max_retries(0), &model(&server), options()).await;
    assert_eq!(final_message(&events).error_message.as_deref(), Some("503 overloaded"));
}

#[tokio::test]
async fn an_exhausted_script_answers_500_without_retries() {
    let server = server("[]").await;
    let events = collect(&OpenAiCompletionsProvider::new(), &model(&server), options()).await;
    let message = final_message(&events).error_message.clone().unwrap_or_default();
    assert!(message.starts_with("500 mock LLM server: the script has no more responses"), "{message}");
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn cancelling_mid_stream_aborts() {
    let server = server(r#"[{"text":"one two three four five six","delayMs":300}]"#).await;
    let opts = options();
    let cancel = opts.cancel.clone();
    let mut stream = OpenAiCompletionsProvider::new().stream(&model(&server), &context(), opts);
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
    assert_eq!(error.stop_reason, StopReason::Aborted);
    assert_eq!(error.error_message.as_deref(), Some("Request was aborted"));
    assert!(error.text().starts_with("one"), "partial text is kept: {:?}", error.content);
    // As in pi, the open text block is still closed before the error.
    let tail = types(&events).split_off(events.len() - 2);
    assert_eq!(tail, ["text_end", "error"]);
}

#[tokio::test]
async fn cancelling_before_the_response_aborts() {
    let server = server(r#"[{"text":"never"}]"#).await;
    let opts = options();
    opts.cancel.cancel();
    let events = collect(&OpenAiCompletionsProvider::new(), &model(&server), opts).await;
    assert_eq!(types(&events), ["error"]);
    let message = final_message(&events);
    assert_eq!(
        (message.stop_reason, message.error_message.as_deref()),
        (StopReason::Aborted, Some("Request was aborted."))
    );
}

#[tokio::test]
async fn a_silent_server_times_out() {
    let server = server(r#"[{"text":"slow text here","delayMs":5000}]"#).await;
    let opts = StreamOptions { idle_timeout: Some(Duration::from_millis(200)), ..options() };
    let events = collect(&OpenAiCompletionsProvider::new(), &model(&server), opts).await;
    let message = final_message(&events);
    assert_eq!(
        (message.stop_reason, message.error_message.as_deref()),
        (StopReason::Error, Some("Request timed out."))
    );
}

#[tokio::test]
async fn stream_faults_become_errors() {
    let server = server(
        r#"[{"text":"partial","streamError":"model crashed"},
            {"text":"abcdef","disconnectAfter":2},
            {"raw":"data: {not json}\n\n"},
            {"text":"filtered","finishReason":"content_filter"}]"#,
    )
    .await;
    let provider = OpenAiCompletionsProvider::new().with_max_retries(0);
    let mut messages = Vec::new();
    for _ in 0..4 {
        let events = collect(&provider, &model(&server), options()).await;
        let message = final_message(&events);
        assert_eq!(message.stop_reason, StopReason::Error);
        messages.push(message.error_message.clone().unwrap_or_default());
    }
    assert_eq!(messages[0], "model crashed");
    assert!(messages[1].starts_with("terminated (reading the answer to POST http://127.0.0.1:"), "{}", messages[1]);
    assert!(messages[2].starts_with("could not parse stream chunk as JSON"), "{}", messages[2]);
    assert_eq!(messages[3], "An unknown error occurred");
}

#[tokio::test]
async fn unreachable_servers_give_connection_errors() {
    let server = server("[]").await;
    let model = model(&server);
    let base_url = server.base_url();
    server.shutdown().await;
    let events = collect(&OpenAiCompletionsProvider::new().with_max_retries(0), &model, options()).await;
    let message = final_message(&events).error_message.clone().unwrap_or_default();
    // pi's words, then the URL and the cause.
    let expected = format!("Connection error. (POST {base_url}/chat/completions: ");
    assert!(message.starts_with(&expected) && message.ends_with(')'), "{message}");
    assert!(message.to_lowercase().contains("refused"), "the cause is named: {message}");
}

#[tokio::test]
async fn paths_without_v1_and_log_files_work() {
    let server = server(r#"[{"text":"a"},{"text":"b"}]"#).await;
    let dir = tempfile::tempdir().map_err(|e| e.to_string());
    let Ok(dir) = dir else { panic!("{dir:?}") };
    let log = dir.path().join("requests.jsonl");
    server.set_log_file(log.clone());
    let plain = Model::new("mock", "mock-model", "openai-completions", format!("http://{}/", server.addr()));
    let provider = OpenAiCompletionsProvider::new();
    assert_eq!(final_message(&collect(&provider, &plain, options()).await).text(), "a");
    assert_eq!(final_message(&collect(&provider, &model(&server), options()).await).text(), "b");
    assert_eq!(server.remaining_responses(), 0);
    let paths: Vec<_> = server.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, ["/chat/completions", "/v1/chat/completions"]);
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let lines: Vec<serde_json::Value> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["path"], "/chat/completions");
    assert_eq!(lines[1]["body"]["model"], "mock-model");
    assert!(!text.contains("mock-key"), "the API key must not be logged");
    server.shutdown().await;
}

#[tokio::test]
async fn an_answer_can_wait_until_later_requests_arrive() {
    // The first answer waits for a second request: only two requests in flight at once both get answers.
    let server = server(r#"[{"text":"first","waitForRequests":2},{"text":"second"}]"#).await;
    let provider = OpenAiCompletionsProvider::new();
    let model = model(&server);
    let (one, two) = tokio::join!(collect(&provider, &model, options()), collect(&provider, &model, options()));
    let mut texts = vec![final_message(&one).text(), final_message(&two).text()];
    texts.sort();
    assert_eq!(texts, ["first", "second"]);
    server.shutdown().await;
}
