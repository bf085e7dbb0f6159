//! End-to-end tests: the openai-responses provider against the mock server over real HTTP, including
//! a read-then-answer round trip whose second request must equal the one pi 0.73.1 sent.

use std::time::Duration;

use serde_json::{Value, json};

use super::{MockLlmServer, MockScript};
use crate::ai::{ApiProvider, LlmContext, Model, OpenAiResponsesProvider, StreamOptions, ThinkingLevel, ToolSpec};
use crate::protocol::{
    AssistantContent, AssistantMessage, AssistantMessageEvent, DoneReason, ErrorReason, Message, StopReason,
    ToolResultMessage, UserContent, UserMessage,
};

/// The second request pi 0.73.1 sent for the round trip of [`a_read_then_answer_round_trip_matches_pi`]
/// (recorded against this mock; the system prompt, tool description and session id replaced by the
/// placeholders the test uses, the tool list cut to `read`).
const PI_SECOND_REQUEST: &str = r#"{"model":"m","input":[{"role":"developer","content":"<system prompt>"},{"role":"user","content":[{"type":"input_text","text":"Read hello.txt and tell me what it says."}]},{"id":"rs_mock_57078927","type":"reasoning","encrypted_content":"ENCRYPTED-1","summary":[{"type":"summary_text","text":"I should read the file."}]},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Reading it.","annotations":[]}],"status":"completed","id":"msg_mock_57078927"},{"type":"function_call","id":"fc_mock_57078927_0","call_id":"call_abc","name":"read","arguments":"{\"path\":\"hello.txt\"}"},{"type":"function_call_output","call_id":"call_abc","output":"Hello from the fixture file.\n"}],"stream":true,"prompt_cache_key":"<session id>","store":false,"max_output_tokens":16384,"tools":[{"type":"function","name":"read","description":"<description>","parameters":{"type":"object","required":["path"],"properties":{"path":{"type":"string"}}},"strict":false}],"reasoning":{"effort":"medium","summary":"auto"},"include":["reasoning.encrypted_content"]}"#;

async fn server(script: &str) -> MockLlmServer {
    let script = MockScript::from_json_str(script).map_err(|e| e.to_string());
    let Ok(script) = script else { panic!("bad script: {script:?}") };
    let server = MockLlmServer::start(script).await;
    let Ok(server) = server else { panic!("cannot start the mock server: {server:?}") };
    server
}

fn model(server: &MockLlmServer) -> Model {
    let mut model = Model::new("mock", "m", "openai-responses", server.base_url());
    model.reasoning = true;
    model
}

fn read_tool(description: &str) -> ToolSpec {
    ToolSpec {
        name: "read".into(),
        description: description.into(),
        parameters: json!({"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}}),
    }
}

fn context(messages: Vec<Message>) -> LlmContext {
    LlmContext { system_prompt: "You are a test.".into(), messages, tools: vec![read_tool("Read a file")] }
}

fn ask(text: &str) -> Vec<Message> {
    vec![Message::User(UserMessage::text(text))]
}

fn options() -> StreamOptions {
    StreamOptions {
        api_key: Some("mock-key".into()),
        reasoning: Some(ThinkingLevel::Medium),
        ..StreamOptions::default()
    }
}

/// Streams one answer (never hangs: 20 s cap) and returns all its events.
async fn collect(
    provider: &OpenAiResponsesProvider,
    model: &Model,
    context: &LlmContext,
    options: StreamOptions,
) -> Vec<AssistantMessageEvent> {
    let mut stream = provider.stream(model, context, options);
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
async fn streams_text_and_records_the_request() {
    let server = server(r#"[{"text":"Hello there, world!"}]"#).await;
    let opts = StreamOptions { session_id: Some("sess-9".into()), ..options() };
    let events = collect(&OpenAiResponsesProvider::new(), &model(&server), &context(ask("Say hello")), opts).await;
    assert_eq!(types(&events), ["start", "text_start", "text_delta", "text_delta", "text_delta", "text_end", "done"]);
    let Some(AssistantMessageEvent::Done { reason: DoneReason::Stop, message }) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(message.text(), "Hello there, world!");
    assert_eq!(message.response_id.as_deref(), Some("resp_mock_1"));
    let AssistantContent::Text(text) = &message.content[0] else { panic!("{:?}", message.content) };
    let signature = text.text_signature.as_deref().unwrap_or_default();
    assert!(signature.starts_with(r#"{"v":1,"id":"msg_mock_"#) && signature.ends_with("\"}"), "{signature}");
    assert_eq!((message.api.as_str(), message.model.as_str()), ("openai-responses", "m"));

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!((requests[0].method.as_str(), requests[0].path.as_str()), ("POST", "/v1/responses"));
    assert_eq!(requests[0].header("authorization"), Some("Bearer mock-key"));
    assert_eq!(requests[0].header("session_id"), Some("sess-9"));
    assert_eq!(requests[0].header("x-client-request-id"), Some("sess-9"));
    let body = &requests[0].body;
    assert_eq!(body["input"][1], json!({"role": "user", "content": [{"type": "input_text", "text": "Say hello"}]}));
    assert_eq!((body["prompt_cache_key"].as_str(), body["stream"].as_bool()), (Some("sess-9"), Some(true)));
    server.shutdown().await;
}

#[tokio::test]
async fn one_tool_call_streams_its_arguments() {
    let server =
        server(r#"[{"toolCalls":[{"id":"call_1","name":"read","arguments":{"path":"some/longer/file.txt"}}]}]"#).await;
    let events = collect(&OpenAiResponsesProvider::new(), &model(&server), &context(ask("read")), options()).await;
    assert_eq!(types(&events), ["start", "toolcall_start", "toolcall_delta", "toolcall_delta", "toolcall_end", "done"]);
    let partial_arguments: Vec<Value> = events
        .iter()
        .filter_map(|e| match e {
            AssistantMessageEvent::ToolcallDelta { partial, .. } => match &partial.content[0] {
                AssistantContent::ToolCall(call) => Some(call.arguments.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(partial_arguments, [json!({"path": "some/l"}), json!({"path": "some/longer/file.txt"})]);
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    let calls: Vec<_> = message.tool_calls().map(|c| (c.id.split_once("|fc_mock_"), c.name.as_str())).collect();
    assert!(matches!(calls[..], [(Some(("call_1", item)), "read")] if item.ends_with("_0")), "{calls:?}");
}

#[tokio::test]
async fn two_tool_calls_after_text_close_in_order() {
    let server = server(
        r#"[{"text":"Reading both.","toolCalls":[
            {"id":"call_a","name":"read","arguments":{"path":"a.txt"}},
            {"id":"call_b","name":"read","arguments":{"path":"b/ü.txt"}}]}]"#,
    )
    .await;
    let events = collect(&OpenAiResponsesProvider::new(), &model(&server), &context(ask("read")), options()).await;
    let ends: Vec<_> = types(&events).into_iter().filter(|t| t.ends_with("_end")).collect();
    assert_eq!(ends, ["text_end", "toolcall_end", "toolcall_end"]);
    let message = final_message(&events);
    assert_eq!((message.stop_reason, message.text().as_str()), (StopReason::ToolUse, "Reading both."));
    let calls: Vec<_> = message.tool_calls().collect();
    assert_eq!(calls.len(), 2);
    assert!(calls[0].id.starts_with("call_a|fc_mock_") && calls[0].id.ends_with("_0"), "{}", calls[0].id);
    assert!(calls[1].id.starts_with("call_b|fc_mock_") && calls[1].id.ends_with("_1"), "{}", calls[1].id);
    assert_eq!((&calls[0].arguments, &calls[1].arguments), (&json!({"path": "a.txt"}), &json!({"path": "b/ü.txt"})));
}

#[tokio::test]
async fn signed_thinking_is_replayed_in_the_next_request() {
    let server = server(
        r#"[{"thinking":"Considering it.","thinkingSignature":"gAAAA-secret","text":"Answer one."},
            {"text":"Answer two."}]"#,
    )
    .await;
    let provider = OpenAiResponsesProvider::new();
    let events = collect(&provider, &model(&server), &context(ask("think")), options()).await;
    assert_eq!(types(&events)[..5], ["start", "thinking_start", "thinking_delta", "thinking_delta", "thinking_delta"]);
    let first = final_message(&events).clone();
    let AssistantContent::Thinking(thinking) = &first.content[0] else { panic!("{:?}", first.content) };
    assert_eq!(thinking.thinking, "Considering it.");
    let signature: Value =
        serde_json::from_str(thinking.thinking_signature.as_deref().unwrap_or("null")).unwrap_or_default();
    assert_eq!(signature["encrypted_content"], "gAAAA-secret");

    let history = vec![
        Message::User(UserMessage::text("think")),
        Message::Assistant(first),
        Message::User(UserMessage::text("again")),
    ];
    let events = collect(&provider, &model(&server), &context(history), options()).await;
    assert_eq!(final_message(&events).text(), "Answer two.");
    let input = &server.requests()[1].body["input"];
    assert_eq!(input[2], signature, "the reasoning item goes back as it came");
    assert!(input[3]["id"].as_str().is_some_and(|id| id.starts_with("msg_mock_")), "{}", input[3]);
    assert_eq!(input[4], json!({"role": "user", "content": [{"type": "input_text", "text": "again"}]}));
}

#[tokio::test]
async fn usage_and_cost_come_from_the_completed_event() {
    let server = server(r#"[{"text":"ok","usage":{"input":1000,"output":200,"cacheRead":400}}]"#).await;
    let mut model = model(&server);
    model.cost.input = 3.0;
    model.cost.output = 15.0;
    model.cost.cache_read = 0.3;
    let events = collect(&OpenAiResponsesProvider::new(), &model, &context(ask("count")), options()).await;
    let usage = final_message(&events).usage;
    assert_eq!((usage.input, usage.output, usage.cache_read, usage.total_tokens), (1000, 200, 400, 1600));
    assert!((usage.cost.input - 1000.0 * 3.0 / 1e6).abs() < 1e-12);
    assert!((usage.cost.output - 200.0 * 15.0 / 1e6).abs() < 1e-12);
    assert!((usage.cost.cache_read - 400.0 * 0.3 / 1e6).abs() < 1e-12);
    assert!((usage.cost.total - (usage.cost.input + usage.cost.output + usage.cost.cache_read)).abs() < 1e-15);
}

#[tokio::test]
async fn http_400_names_status_and_message() {
    let server = server(
        r#"[{"error":{"status":400,"body":{"error":{"message":"Invalid model","type":"invalid_request_error"}}}}]"#,
    )
    .await;
    let events = collect(&OpenAiResponsesProvider::new(), &model(&server), &context(ask("hi")), options()).await;
    assert_eq!(types(&events), ["error"]);
    let Some(AssistantMessageEvent::Error { reason: ErrorReason::Error, error }) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!((error.stop_reason, error.error_message.as_deref()), (StopReason::Error, Some("400 Invalid model")));
    assert_eq!(server.requests().len(), 1, "a 400 is not retried");
}

#[tokio::test]
async fn a_503_is_retried_then_fails() {
    let overloaded =
        r#"{"error":{"status":503,"body":{"error":{"message":"overloaded"}},"headers":{"retry-after-ms":"5"}}}"#;
    let server = server(&format!("[{overloaded},{overloaded},{overloaded},{{\"text\":\"late\"}}]")).await;
    let events = collect(&OpenAiResponsesProvider::new(), &model(&server), &context(ask("hi")), options()).await;
    let message = final_message(&events);
    assert_eq!((message.stop_reason, message.error_message.as_deref()), (StopReason::Error, Some("503 overloaded")));
    assert_eq!(server.requests().len(), 3, "one call and two retries");
    let events = collect(&OpenAiResponsesProvider::new(), &model(&server), &context(ask("hi")), options()).await;
    assert_eq!(final_message(&events).text(), "late");
}

#[tokio::test]
async fn a_mid_stream_disconnect_is_terminated() {
    let server = server(r#"[{"text":"This answer will be cut off.","disconnectAfter":6}]"#).await;
    let provider = OpenAiResponsesProvider::new().with_max_retries(0);
    let events = collect(&provider, &model(&server), &context(ask("hi")), options()).await;
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::Error);
    assert!(message.error_message.as_deref().is_some_and(|text| text.starts_with("terminated (")), "{message:?}");
    assert!(message.text().starts_with("This"), "the partial text is kept: {:?}", message.content);
    assert!(!types(&events).contains(&"text_end".to_owned()), "as in pi, the cut block stays open");
}

#[tokio::test]
async fn a_stalled_stream_times_out() {
    let server = server(r#"[{"text":"This answer stalls.","stallAfter":4}]"#).await;
    let opts = StreamOptions { idle_timeout: Some(Duration::from_millis(200)), ..options() };
    let started = std::time::Instant::now();
    let events = collect(&OpenAiResponsesProvider::new(), &model(&server), &context(ask("hi")), opts).await;
    let message = final_message(&events);
    assert_eq!(
        (message.stop_reason, message.error_message.as_deref()),
        (StopReason::Error, Some("Request timed out."))
    );
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
}

#[tokio::test]
async fn cancelling_mid_stream_aborts() {
    let server = server(r#"[{"text":"one two three four five six","delayMs":200}]"#).await;
    let opts = options();
    let cancel = opts.cancel.clone();
    let mut stream = OpenAiResponsesProvider::new().stream(&model(&server), &context(ask("hi")), opts);
    let mut events = Vec::new();
    let run = async {
        while let Some(event) = stream.next().await {
            if matches!(event, AssistantMessageEvent::TextDelta { .. }) {
                cancel.cancel();
            }
            events.push(event);
        }
    };
    assert!(tokio::time::timeout(Duration::from_secs(10), run).await.is_ok(), "hung");
    let Some(AssistantMessageEvent::Error { reason: ErrorReason::Aborted, error }) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!((error.stop_reason, error.error_message.as_deref()), (StopReason::Aborted, Some("Request was aborted")));
    assert!(error.text().starts_with("one"), "partial text is kept: {:?}", error.content);
}

#[tokio::test]
async fn failure_events_become_errors() {
    let server = server(
        r#"[{"text":"partial","streamError":"model crashed"},
            {"raw":"event: error\ndata: {\"type\":\"error\",\"code\":\"rate_limit_exceeded\",\"message\":\"Slow down\",\"param\":null}\n\n"},
            {"raw":"event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"status\":\"failed\",\"error\":null,\"incomplete_details\":{\"reason\":\"content_filter\"}}}\n\n"},
            {"text":"cut","finishReason":"cancelled"},
            {"raw":"data: {\"error\":{\"message\":\"sdk-level failure\"}}\n\n"}]"#,
    )
    .await;
    let provider = OpenAiResponsesProvider::new().with_max_retries(0);
    let mut messages = Vec::new();
    for _ in 0..5 {
        let events = collect(&provider, &model(&server), &context(ask("hi")), options()).await;
        let message = final_message(&events);
        assert_eq!(message.stop_reason, StopReason::Error);
        messages.push(message.error_message.clone().unwrap_or_default());
    }
    assert_eq!(
        messages,
        [
            "server_error: model crashed",
            "Error Code rate_limit_exceeded: Slow down",
            "incomplete: content_filter",
            "An unknown error occurred",
            "sdk-level failure",
        ]
    );
}

#[tokio::test]
async fn a_length_cut_ends_with_length() {
    let server = server(r#"[{"text":"truncated","finishReason":"length"}]"#).await;
    let events = collect(&OpenAiResponsesProvider::new(), &model(&server), &context(ask("hi")), options()).await;
    let Some(AssistantMessageEvent::Done { reason: DoneReason::Length, message }) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(message.stop_reason, StopReason::Length);
}

#[tokio::test]
async fn a_read_then_answer_round_trip_matches_pi() {
    let server = server(
        r#"[{"thinking":"I should read the file.","thinkingSignature":"ENCRYPTED-1","text":"Reading it.",
             "toolCalls":[{"id":"call_abc","name":"read","arguments":{"path":"hello.txt"}}],
             "usage":{"input":100,"output":20,"cacheRead":30}},
            {"text":"The file says hello.","usage":{"input":200,"output":10}}]"#,
    )
    .await;
    let provider = OpenAiResponsesProvider::new();
    let model = model(&server);
    let opts = || StreamOptions { session_id: Some("<session id>".into()), ..options() };
    let question = Message::User(UserMessage::text("Read hello.txt and tell me what it says."));
    let mut context = LlmContext {
        system_prompt: "<system prompt>".into(),
        messages: vec![question],
        tools: vec![read_tool("<description>")],
    };
    let events = collect(&provider, &model, &context, opts()).await;
    let first = final_message(&events).clone();
    assert_eq!(first.stop_reason, StopReason::ToolUse, "{:?}", first.error_message);
    let call_id = first.tool_calls().next().map(|c| c.id.clone()).unwrap_or_default();
    assert_eq!(call_id, "call_abc|fc_mock_57078927_0");
    let usage = first.usage;
    assert_eq!((usage.input, usage.output, usage.cache_read, usage.total_tokens), (100, 20, 30, 150));
    context.messages.push(Message::Assistant(first));
    context.messages.push(Message::ToolResult(ToolResultMessage {
        tool_call_id: call_id,
        tool_name: "read".into(),
        content: vec![UserContent::text("Hello from the fixture file.\n")],
        details: None,
        is_error: false,
        timestamp: 0,
        duration_ms: None,
    }));
    let events = collect(&provider, &model, &context, opts()).await;
    assert_eq!(final_message(&events).text(), "The file says hello.");

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    // Same keys, same order, same values: compared as serialized text.
    assert_eq!(requests[1].body.to_string(), PI_SECOND_REQUEST);
}
