//! End-to-end tests of level 1.5 against the mock server over real HTTP: what pi 1.5.2 was observed to do
//! (pending partials, the raw stop reason, reasoning tokens and the cost's origin, the requests it sends),
//! next to level 0.73 for the same stream. Shared helpers, then the openai-completions cases.

use serde_json::{Value, json};

use super::{MockLlmServer, MockResponse, MockScript, RecordedRequest};
use crate::ai::{ApiProvider, LlmContext, Model, OpenAiCompletionsProvider, StreamOptions, ToolSpec};
use crate::protocol::{AssistantMessage, AssistantMessageEvent, Message, MessageContent, PiCompat, UserMessage};

/// Serves `bodies` in order, each a raw SSE body.
pub(super) async fn raw_server(bodies: Vec<String>) -> MockLlmServer {
    let script = MockScript { responses: bodies.into_iter().map(MockResponse::RawSse).collect() };
    let server = MockLlmServer::start(script).await;
    let Ok(server) = server else { panic!("cannot start the mock server: {server:?}") };
    server
}

/// An SSE body of `(event name, data)` frames; a JSON string is written as its text (`[DONE]`).
pub(super) fn sse(frames: &[(Option<&str>, Value)]) -> String {
    frames
        .iter()
        .map(|(name, data)| {
            let data = match data {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            match name {
                Some(name) => format!("event: {name}\ndata: {data}\n\n"),
                None => format!("data: {data}\n\n"),
            }
        })
        .collect()
}

/// The observed context: system prompt `sys`, the user's `hi`, one `bash` tool.
pub(super) fn context() -> LlmContext {
    LlmContext {
        system_prompt: "sys".into(),
        messages: vec![Message::User(UserMessage { content: MessageContent::Text("hi".into()), timestamp: 1 })],
        tools: vec![ToolSpec {
            name: "bash".into(),
            description: "run".into(),
            parameters: json!({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"],
                "additionalProperties": false}),
        }],
    }
}

/// Options at `compat` with a key and, at 1.5, pi 1.5.2's user agent.
pub(super) fn options(compat: PiCompat) -> StreamOptions {
    let user_agent = compat.is_v1_5().then(|| "pi/1.5.2 (linux; node/v24.21.0; x64)".to_owned());
    StreamOptions { api_key: Some("mock-key".into()), pi_compat: compat, user_agent, ..StreamOptions::default() }
}

pub(super) async fn collect(
    provider: &dyn ApiProvider,
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

/// One line per event: its type, the partial's stop reason and raw stop reason, reasoning tokens and whether
/// the cost total came from the provider (`-` for absent fields), as the message serializes.
pub(super) fn summary(events: &[AssistantMessageEvent]) -> Vec<String> {
    events
        .iter()
        .map(|event| {
            let kind = serde_json::to_value(event).ok().and_then(|v| v["type"].as_str().map(str::to_owned));
            let message = serde_json::to_value(event.message()).unwrap_or_default();
            let shown = |value: &Value| match value {
                Value::Null => "-".to_owned(),
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            format!(
                "{} {} raw={} reasoning={} fromProvider={}",
                kind.unwrap_or_default(),
                shown(&message["stopReason"]),
                shown(&message["rawStopReason"]),
                shown(&message["usage"]["reasoning"]),
                shown(&message["usage"]["cost"]["totalFromProvider"]),
            )
        })
        .collect()
}

pub(super) fn final_message(events: &[AssistantMessageEvent]) -> &AssistantMessage {
    match events.last() {
        Some(event) if event.is_terminal() => event.message(),
        other => panic!("no terminal event, last was {other:?}"),
    }
}

/// The only request the server received.
pub(super) fn only_request(server: &MockLlmServer) -> RecordedRequest {
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    requests[0].clone()
}

fn chunk(choices: Value, usage: Option<Value>) -> (Option<&'static str>, Value) {
    let mut chunk = json!({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "mock-model",
        "choices": choices});
    if let Some(usage) = usage {
        chunk["usage"] = usage;
    }
    (None, chunk)
}

fn text(piece: &str) -> (Option<&'static str>, Value) {
    chunk(json!([{"index": 0, "delta": {"content": piece}, "finish_reason": null}]), None)
}

fn finish(reason: &str) -> (Option<&'static str>, Value) {
    chunk(json!([{"index": 0, "delta": {}, "finish_reason": reason}]), None)
}

const DONE: (Option<&str>, Value) = (None, Value::Null);

/// A completions body; `DONE` stands for `[DONE]`.
fn body(frames: &[(Option<&str>, Value)]) -> String {
    let frames: Vec<(Option<&str>, Value)> = frames
        .iter()
        .map(|(name, data)| (*name, if data.is_null() { json!("[DONE]") } else { data.clone() }))
        .collect();
    sse(&frames)
}

fn completions_model(server: &MockLlmServer) -> Model {
    let mut model = Model::new("mock", "mock-model", "openai-completions", server.base_url());
    (model.reasoning, model.max_tokens) = (true, 65_536);
    model.cost.input = 1.0;
    model
}

#[tokio::test]
async fn completions_partials_pend_until_the_finish_reason_and_usage_reports_reasoning() {
    let usage = json!({"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150,
        "prompt_tokens_details": {"cached_tokens": 20}, "completion_tokens_details": {"reasoning_tokens": 30}});
    let stream = body(&[text("hi"), finish("stop"), chunk(json!([]), Some(usage)), DONE]);
    let server = raw_server(vec![stream.clone(), stream]).await;
    let model = completions_model(&server);
    let provider = OpenAiCompletionsProvider::new();

    // pi 1.5.2: `pending` until the finish chunk; then the raw reason, and usage with its reasoning tokens
    // (output as reported, reasoning included) and a computed cost.
    let events = collect(&provider, &model, &context(), options(PiCompat::V1_5)).await;
    assert_eq!(
        summary(&events),
        [
            "start pending raw=- reasoning=- fromProvider=-",
            "text_start pending raw=- reasoning=- fromProvider=-",
            "text_delta pending raw=- reasoning=- fromProvider=-",
            "text_end stop raw=stop reasoning=30 fromProvider=false",
            "done stop raw=stop reasoning=30 fromProvider=false",
        ]
    );
    let usage = final_message(&events).usage;
    assert_eq!((usage.input, usage.output, usage.cache_read, usage.total_tokens), (80, 50, 20, 150));
    let wire = serde_json::to_value(final_message(&events)).unwrap_or_default();
    let keys: Vec<&str> = wire["usage"].as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
    assert_eq!(keys, ["input", "output", "cacheRead", "cacheWrite", "reasoning", "totalTokens", "cost"]);

    // Level 0.73 keeps its own reading of the same stream.
    let events = collect(&provider, &model, &context(), options(PiCompat::V0_73)).await;
    assert_eq!(summary(&events)[0], "start stop raw=- reasoning=- fromProvider=-");
    assert_eq!(summary(&events)[4], "done stop raw=- reasoning=- fromProvider=-");
    assert_eq!(final_message(&events).usage.output, 80);
    server.shutdown().await;
}

#[tokio::test]
async fn completions_endings_follow_pi_1_5() {
    type Case<'a> = (&'a [(Option<&'a str>, Value)], &'a str, Option<&'a str>, Option<&'a str>);
    let cases: [Case; 5] = [
        (
            &[text("hi"), finish("content_filter"), DONE],
            "error",
            Some("content_filter"),
            Some("Provider finish_reason: content_filter"),
        ),
        (&[text("hi"), finish("weird"), DONE], "error", Some("weird"), Some("Provider finish_reason: weird")),
        (&[text("hi"), DONE], "error", None, Some("Stream ended without finish_reason")),
        (&[text("hi"), finish("length"), DONE], "length", Some("length"), None),
        (&[text("hi"), finish("function_call")], "toolUse", Some("function_call"), None),
    ];
    let bodies = cases.iter().map(|(frames, ..)| body(frames)).collect();
    let server = raw_server(bodies).await;
    let model = completions_model(&server);
    for (frames, stop, raw, error) in cases {
        let events = collect(&OpenAiCompletionsProvider::new(), &model, &context(), options(PiCompat::V1_5)).await;
        let message = final_message(&events);
        let wire = serde_json::to_value(message).unwrap_or_default();
        assert_eq!(wire["stopReason"], stop, "{frames:?}");
        assert_eq!((message.raw_stop_reason.as_deref(), message.error_message.as_deref()), (raw, error));
        // The text block still closes before the failure is reported.
        assert!(summary(&events).iter().any(|line| line.starts_with("text_end")), "{frames:?}");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn completions_requests_and_named_errors_follow_pi_1_5() {
    let error_frames = [text("hi"), (Some("error"), json!({"code": "x"}))];
    let server = raw_server(vec![body(&[text("hi"), finish("stop")]), sse(&error_frames), body(&[text("hi")])]).await;
    let model = completions_model(&server);
    let provider = OpenAiCompletionsProvider::new();
    collect(&provider, &model, &context(), options(PiCompat::V1_5)).await;
    // pi 1.5.2's SDK words an `error` event without a message as its JSON.
    let events = collect(&provider, &model, &context(), options(PiCompat::V1_5)).await;
    assert_eq!(final_message(&events).error_message.as_deref(), Some(r#"{"code":"x"}"#));
    collect(&provider, &model, &context(), options(PiCompat::V0_73)).await;
    let requests = server.requests();
    let (v1_5, v0_73) = (&requests[0], &requests[2]);

    // The body pi 1.5.2 sent for this context: the model's whole limit, no `strict`.
    let expected = json!({
        "model": "mock-model",
        "messages": [{"role": "developer", "content": "sys"}, {"role": "user", "content": "hi"}],
        "stream": true,
        "stream_options": {"include_usage": true},
        "store": false,
        "max_completion_tokens": 65536,
        "tools": [{"type": "function", "function": {"name": "bash", "description": "run", "parameters":
            {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"],
             "additionalProperties": false}}}]
    });
    assert_eq!(v1_5.body.to_string(), expected.to_string());
    assert_eq!(v1_5.header("user-agent"), Some("pi/1.5.2 (linux; node/v24.21.0; x64)"));
    assert_eq!(v1_5.path, "/v1/chat/completions");
    assert_eq!(v0_73.body["max_completion_tokens"], 32000);
    assert_eq!(v0_73.body["tools"][0]["function"]["strict"], false);
    assert!(v0_73.header("user-agent").is_some_and(|agent| agent.starts_with("pi-runtime/")));
    server.shutdown().await;
}

#[tokio::test]
async fn openrouter_reports_its_billed_total() {
    let usage = json!({"prompt_tokens": 100, "completion_tokens": 50, "cost": 0.123, "is_byok": false});
    let server = raw_server(vec![body(&[text("hi"), finish("stop"), chunk(json!([]), Some(usage)), DONE])]).await;
    let mut model = completions_model(&server);
    model.provider = "openrouter".into();
    let events = collect(&OpenAiCompletionsProvider::new(), &model, &context(), options(PiCompat::V1_5)).await;
    let cost = final_message(&events).usage.cost;
    assert_eq!((cost.total, cost.total_from_provider), (0.123, Some(true)));
    assert_eq!(summary(&events).last().map(String::as_str), Some("done stop raw=stop reasoning=0 fromProvider=true"));
    server.shutdown().await;
}
