//! End-to-end tests: the google-generative-ai provider against the mock server over real HTTP.

use std::time::Duration;

use serde_json::{Value, json};

use super::{MockLlmServer, MockScript};
use crate::ai::{
    ApiProvider, GoogleGenerativeAiProvider, LlmContext, Model, ModelCost, ProviderErrorKind, StreamOptions,
    ThinkingLevel, ToolSpec,
};
use crate::protocol::{
    AssistantContent, AssistantMessage, AssistantMessageEvent, DoneReason, ErrorReason, Message, StopReason,
    ToolResultMessage, UserContent, UserMessage,
};

/// The second request pi 0.73.1 sent for "read two files, then answer" (gemini-2.5-flash, thinking
/// medium), recorded from the mock server; the system text and tool list were shortened.
const PI_SECOND_REQUEST: &str = r#"{"contents":[{"parts":[{"text":"hi"}],"role":"user"},{"parts":[{"text":"Need the file.","thought":true,"thoughtSignature":"bW9ja3NpZy0x"},{"text":"I will read it."},{"functionCall":{"args":{"path":"notes.txt"},"name":"read"}},{"functionCall":{"args":{"path":"missing.txt"},"name":"read"}}],"role":"model"},{"parts":[{"functionResponse":{"name":"read","response":{"output":"hello file content\n"}}},{"functionResponse":{"name":"read","response":{"error":"ENOENT: no such file or directory, access '/tmp/gg/work/missing.txt'"}}}],"role":"user"}],"systemInstruction":{"parts":[{"text":"SYS"}],"role":"user"},"tools":[{"functionDeclarations":[{"name":"read","description":"D","parametersJsonSchema":{"type":"object","required":["path"],"properties":{"path":{"type":"string","description":"Path to the file to read (relative or absolute)"},"offset":{"type":"number","description":"Line number to start reading from (1-indexed)"},"limit":{"type":"number","description":"Maximum number of lines to read"}}}}]}],"generationConfig":{"maxOutputTokens":16384,"thinkingConfig":{"includeThoughts":true,"thinkingBudget":8192}}}"#;

async fn server(script: Value) -> MockLlmServer {
    let script = MockScript::from_json_str(&script.to_string()).map_err(|e| e.to_string());
    let Ok(script) = script else { panic!("bad script: {script:?}") };
    let server = MockLlmServer::start(script).await;
    let Ok(server) = server else { panic!("cannot start the mock server: {server:?}") };
    server
}

fn model(server: &MockLlmServer) -> Model {
    let base_url = format!("http://{}/v1beta", server.addr());
    let mut model = Model::new("mock", "gemini-2.5-flash", "google-generative-ai", base_url);
    model.reasoning = true;
    model
}

fn read_tool() -> ToolSpec {
    ToolSpec {
        name: "read".into(),
        description: "Read a file".into(),
        parameters: json!({
            "type": "object",
            "required": ["path"],
            "properties": {
                "path": {"type": "string", "description": "The file"},
                "offset": {"type": "number", "description": "First line"},
                "limit": {"type": "number", "description": "Line count"},
            },
        }),
    }
}

fn context(messages: Vec<Message>) -> LlmContext {
    LlmContext { system_prompt: "You are a test.".into(), messages, tools: vec![read_tool()] }
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

async fn collect(
    provider: &GoogleGenerativeAiProvider,
    model: &Model,
    messages: Vec<Message>,
    options: StreamOptions,
) -> Vec<AssistantMessageEvent> {
    let mut stream = provider.stream(model, &context(messages), options);
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

fn tool_result(id: &str, text: &str, is_error: bool) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: "read".into(),
        content: vec![UserContent::text(text)],
        details: None,
        is_error,
        timestamp: 0,
        duration_ms: None,
    })
}

/// The shape of a JSON value: object keys in order (recursively), arrays element by element, and
/// only the kind of each scalar.
fn skeleton(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Array(map.iter().map(|(key, value)| json!([key, skeleton(value)])).collect()),
        Value::Array(items) => Value::Array(items.iter().map(skeleton).collect()),
        Value::String(_) => json!("string"),
        Value::Number(_) => json!("number"),
        Value::Bool(_) => json!("bool"),
        Value::Null => Value::Null,
    }
}

#[tokio::test]
async fn streams_text_and_sends_pi_request() {
    let server = server(json!([{"text": "Hello there, wörld ✓"}])).await;
    let events = collect(&GoogleGenerativeAiProvider::new(), &model(&server), ask("Say hello"), options()).await;
    assert_eq!(types(&events), ["start", "text_start", "text_delta", "text_delta", "text_delta", "text_end", "done"]);
    let Some(AssistantMessageEvent::Done { reason: DoneReason::Stop, message }) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(message.text(), "Hello there, wörld ✓");
    assert_eq!(message.response_id.as_deref(), Some("mock-response-1"));
    assert_eq!(
        (message.api.as_str(), message.provider.as_str(), message.model.as_str()),
        ("google-generative-ai", "mock", "gemini-2.5-flash")
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        (requests[0].method.as_str(), requests[0].path.as_str()),
        ("POST", "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse")
    );
    assert_eq!(requests[0].header("x-goog-api-key"), Some("mock-key"));
    assert_eq!(requests[0].header("content-type"), Some("application/json"));
    assert_eq!(requests[0].header("authorization"), None);
    let body = &requests[0].body;
    assert_eq!(body["contents"], json!([{"parts": [{"text": "Say hello"}], "role": "user"}]));
    assert_eq!(body["systemInstruction"], json!({"parts": [{"text": "You are a test."}], "role": "user"}));
    assert_eq!(body["tools"][0]["functionDeclarations"][0]["name"], "read");
    assert_eq!(
        body["generationConfig"],
        json!({"maxOutputTokens": 16384, "thinkingConfig": {"includeThoughts": true, "thinkingBudget": 8192}})
    );
    server.shutdown().await;
}

#[tokio::test]
async fn one_tool_call_arrives_whole() {
    let server =
        server(json!([{"toolCalls": [{"id": "call_a", "name": "read", "arguments": {"path": "a.txt"}}]}])).await;
    let events = collect(&GoogleGenerativeAiProvider::new(), &model(&server), ask("read a"), options()).await;
    assert_eq!(types(&events), ["start", "toolcall_start", "toolcall_delta", "toolcall_end", "done"]);
    let Some(AssistantMessageEvent::ToolcallDelta { delta, .. }) = events.get(2) else { panic!("{events:?}") };
    assert_eq!(delta, r#"{"path":"a.txt"}"#);
    let Some(AssistantMessageEvent::Done { reason: DoneReason::ToolUse, message }) = events.last() else {
        panic!("{events:?}")
    };
    let calls: Vec<_> = message.tool_calls().map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.clone())).collect();
    assert_eq!(calls, [("call_a", "read", json!({"path": "a.txt"}))]);
}

#[tokio::test]
async fn two_tool_calls_follow_text() {
    let server = server(json!([{"text": "Let me look.", "toolCalls": [
        {"name": "read", "arguments": {"path": "b.txt"}},
        {"name": "read", "arguments": {"path": "c/ü.txt"}}
    ]}]))
    .await;
    let events = collect(&GoogleGenerativeAiProvider::new(), &model(&server), ask("read b and c"), options()).await;
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    assert_eq!(message.text(), "Let me look.");
    let calls: Vec<_> = message.tool_calls().map(|c| (c.id.as_str(), c.arguments.clone())).collect();
    assert_eq!(calls, [("call_1", json!({"path": "b.txt"})), ("call_2", json!({"path": "c/ü.txt"}))]);
    let ends: Vec<_> = types(&events).into_iter().filter(|t| t.ends_with("_end")).collect();
    assert_eq!(ends, ["text_end", "toolcall_end", "toolcall_end"]);
}

#[tokio::test]
async fn a_read_round_trip_sends_what_pi_sends() {
    let server = server(json!([
        {"thinking": "Need the file.", "text": "I will read it.", "toolCalls": [
            {"name": "read", "arguments": {"path": "notes.txt"}},
            {"name": "read", "arguments": {"path": "missing.txt"}}
        ]},
        {"text": "It says hello."}
    ]))
    .await;
    let provider = GoogleGenerativeAiProvider::new();
    let model = model(&server);
    let events = collect(&provider, &model, ask("hi"), options()).await;
    let first = final_message(&events).clone();
    assert_eq!(first.stop_reason, StopReason::ToolUse, "{:?}", first.error_message);
    let AssistantContent::Thinking(thinking) = &first.content[0] else { panic!("{:?}", first.content) };
    assert_eq!(thinking.thinking_signature.as_deref(), Some("bW9ja3NpZy0x"), "the mock signs in base64");
    let history = vec![
        Message::User(UserMessage::text("hi")),
        Message::Assistant(first),
        tool_result("call_1", "hello file content\n", false),
        tool_result("call_2", "ENOENT: no such file or directory", true),
    ];
    let events = collect(&provider, &model, history, options()).await;
    assert_eq!(final_message(&events).text(), "It says hello.");
    let ours = server.requests()[1].body.clone();
    let pi: Value = serde_json::from_str(PI_SECOND_REQUEST).unwrap_or_default();
    assert_eq!(skeleton(&ours), skeleton(&pi), "same keys in the same order as pi 0.73.1\nours: {ours}\npi:   {pi}");
    assert_eq!(ours["contents"][1], pi["contents"][1], "the model turn is replayed exactly");
    assert_eq!(ours["generationConfig"], pi["generationConfig"]);
}

#[tokio::test]
async fn a_signed_thought_is_replayed_to_the_same_model_only() {
    let signature = "c2lnbmF0dXJlLW9mLXRoZS10aG91Z2h0";
    let server = server(json!([
        {"thinking": "Considering carefully.", "thinkingSignature": signature, "text": "Answer one."},
        {"text": "Answer two."},
        {"text": "Answer three."}
    ]))
    .await;
    let provider = GoogleGenerativeAiProvider::new();
    let first = final_message(&collect(&provider, &model(&server), ask("think"), options()).await).clone();
    let history = vec![
        Message::User(UserMessage::text("think")),
        Message::Assistant(first),
        Message::User(UserMessage::text("again")),
    ];
    collect(&provider, &model(&server), history.clone(), options()).await;
    let mut other = model(&server);
    other.id = "gemini-2.5-pro".into();
    collect(&provider, &other, history, options()).await;
    let requests = server.requests();
    assert_eq!(
        requests[1].body["contents"][1]["parts"],
        json!([
            {"text": "Considering carefully.", "thought": true, "thoughtSignature": signature},
            {"text": "Answer one."}
        ])
    );
    assert_eq!(
        requests[2].body["contents"][1]["parts"],
        json!([{"text": "Considering carefully."}, {"text": "Answer one."}]),
        "another model gets the thought as text, unsigned"
    );
    assert_eq!(requests[2].path, "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse");
}

#[tokio::test]
async fn usage_and_cost_come_from_usage_metadata() {
    let server = server(json!([{"text": "ok", "usage": {"input": 1000, "output": 200, "cacheRead": 400}}])).await;
    let mut model = model(&server);
    model.cost = ModelCost { input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 3.75 };
    let events = collect(&GoogleGenerativeAiProvider::new(), &model, ask("count"), options()).await;
    let usage = final_message(&events).usage;
    // promptTokenCount 1400 holds the 400 cached tokens; pi 0.73.1 takes them out of input.
    assert_eq!((usage.input, usage.output, usage.cache_read, usage.cache_write), (1000, 200, 400, 0));
    assert_eq!(usage.total_tokens, 1600);
    assert!((usage.cost.input - 1000.0 * 3.0 / 1e6).abs() < 1e-12, "{:?}", usage.cost);
    assert!((usage.cost.output - 200.0 * 15.0 / 1e6).abs() < 1e-12);
    assert!((usage.cost.cache_read - 400.0 * 0.3 / 1e6).abs() < 1e-12);
    assert!((usage.cost.total - (0.003 + 0.003 + 0.00012)).abs() < 1e-12);
}

#[tokio::test]
async fn http_400_reports_the_error_body_like_the_sdk() {
    let body = json!({"error": {"code": 400, "message": "API key not valid.", "status": "INVALID_ARGUMENT"}});
    let server =
        server(json!([{"error": {"status": 400, "body": body}}, {"error": {"status": 400, "body": "nope"}}])).await;
    let provider = GoogleGenerativeAiProvider::new();
    let events = collect(&provider, &model(&server), ask("hi"), options()).await;
    assert_eq!(types(&events), ["error"]);
    let Some(AssistantMessageEvent::Error { reason: ErrorReason::Error, error }) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(error.stop_reason, StopReason::Error);
    assert_eq!(
        error.error_message.as_deref(),
        Some(r#"{"error":{"code":400,"message":"API key not valid.","status":"INVALID_ARGUMENT"}}"#)
    );
    assert_eq!(error.error_kind, Some(ProviderErrorKind::InvalidRequest));
    let events = collect(&provider, &model(&server), ask("hi"), options()).await;
    assert_eq!(
        final_message(&events).error_message.as_deref(),
        Some(r#"{"error":{"message":"nope","code":400,"status":"Bad Request"}}"#)
    );
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_503_is_not_retried_unless_asked() {
    let overloaded = json!({"error": {"status": 503, "body": {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}, "headers": {"retry-after-ms": "5"}}});
    let server = server(json!([overloaded, {"text": "late"}])).await;
    let events = collect(&GoogleGenerativeAiProvider::new(), &model(&server), ask("hi"), options()).await;
    let message = final_message(&events);
    assert_eq!(
        message.error_message.as_deref(),
        Some(r#"{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}"#)
    );
    assert_eq!(message.error_kind, Some(ProviderErrorKind::Server));
    assert_eq!(server.requests().len(), 1, "the genai SDK under pi does not retry");

    let server = self::server(json!([overloaded, {"text": "late"}])).await;
    let provider = GoogleGenerativeAiProvider::new().with_max_retries(1);
    let events = collect(&provider, &model(&server), ask("hi"), options()).await;
    assert_eq!(final_message(&events).text(), "late");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn stream_faults_become_errors() {
    let server = server(json!([
        {"text": "This answer will be cut off somewhere.", "disconnectAfter": 2},
        {"text": "partial", "streamError": "model crashed"},
        {"text": "blocked", "finishReason": "SAFETY"},
        {"raw": "data: {\"this is\": not json\n\n"}
    ]))
    .await;
    let provider = GoogleGenerativeAiProvider::new();
    let mut outcomes = Vec::new();
    for _ in 0..4 {
        let events = collect(&provider, &model(&server), ask("hi"), options()).await;
        let message = final_message(&events);
        assert_eq!(message.stop_reason, StopReason::Error);
        outcomes.push((message.error_message.clone().unwrap_or_default(), message.error_kind, message.text()));
    }
    assert!(outcomes[0].0.starts_with("terminated (reading the answer to POST "), "{}", outcomes[0].0);
    assert_eq!(outcomes[0].1, Some(ProviderErrorKind::Network));
    assert!(outcomes[0].2.starts_with("This answer"), "the partial text is kept: {:?}", outcomes[0].2);
    assert_eq!(
        outcomes[1].0,
        r#"got status: INTERNAL. {"error":{"code":500,"message":"model crashed","status":"INTERNAL"}}"#
    );
    assert_eq!(outcomes[2].0, "An unknown error occurred");
    assert_eq!(outcomes[2].2, "blocked");
    assert!(outcomes[3].0.starts_with("could not parse stream chunk as JSON"), "{}", outcomes[3].0);
}

#[tokio::test]
async fn a_stalled_stream_times_out() {
    let server = server(json!([{"text": "This answer stalls.", "stallAfter": 1}])).await;
    let opts = StreamOptions { idle_timeout: Some(Duration::from_millis(200)), ..options() };
    let started = std::time::Instant::now();
    let events = collect(&GoogleGenerativeAiProvider::new(), &model(&server), ask("hi"), opts).await;
    let message = final_message(&events);
    assert_eq!(
        (message.stop_reason, message.error_message.as_deref()),
        (StopReason::Error, Some("Request timed out."))
    );
    assert!(message.text().starts_with("This"), "the first piece arrived: {:?}", message.text());
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
}

#[tokio::test]
async fn cancelling_mid_stream_aborts() {
    let server = server(json!([{"text": "one two three four five six", "delayMs": 300}])).await;
    let opts = options();
    let cancel = opts.cancel.clone();
    let mut stream = GoogleGenerativeAiProvider::new().stream(&model(&server), &context(ask("hi")), opts);
    let mut events = Vec::new();
    let run = async {
        while let Some(event) = stream.next().await {
            if matches!(event, AssistantMessageEvent::TextDelta { .. }) {
                cancel.cancel();
            }
            events.push(event);
        }
    };
    let finished = tokio::time::timeout(Duration::from_secs(10), run).await;
    assert!(finished.is_ok(), "cancelling must end the stream");
    let Some(AssistantMessageEvent::Error { reason: ErrorReason::Aborted, error }) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(error.stop_reason, StopReason::Aborted);
    assert_eq!(error.error_message.as_deref(), Some("Request was aborted"));
    assert!(error.text().starts_with("one"), "partial text is kept: {:?}", error.content);
}

#[tokio::test]
async fn any_split_of_the_body_gives_the_same_message() {
    let completion = json!({
        "thinking": "Splitting ✓ thoughts.",
        "thinkingSignature": "c2lnbmF0dXJl",
        "text": "Ünïcödé text that spans chunks — 日本語.",
        "toolCalls": [{"id": "call_s", "name": "read", "arguments": {"path": "dir/fïle.txt"}}],
        "usage": {"input": 10, "output": 20, "cacheRead": 0}
    });
    let mut script = vec![completion.clone()];
    for seed in 1..=8u64 {
        let mut split = completion.clone();
        split["splitSeed"] = json!(seed);
        script.push(split);
    }
    let server = server(Value::Array(script)).await;
    let provider = GoogleGenerativeAiProvider::new();
    let reference = final_message(&collect(&provider, &model(&server), ask("split"), options()).await).clone();
    assert_eq!(reference.stop_reason, StopReason::ToolUse, "{:?}", reference.error_message);
    assert_eq!(reference.content.len(), 3);
    for seed in 1..=8u64 {
        let message = final_message(&collect(&provider, &model(&server), ask("split"), options()).await).clone();
        assert_eq!(message.content, reference.content, "seed {seed}");
        assert_eq!(message.usage, reference.usage, "seed {seed}");
    }
}
