//! One conformance suite, run against every provider over the mock server: text, tool calls,
//! thinking with a signature that survives the round trip, usage and cost, HTTP errors, overflow,
//! retries, mid-stream disconnects, malformed data, stalls, and byte streams split anywhere.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::{MockLlmServer, MockScript};
use crate::ai::{
    AnthropicMessagesProvider, ApiProvider, GoogleGenerativeAiProvider, GoogleVertexProvider, LlmContext, Model,
    ModelCost, OpenAiCompletionsProvider, OpenAiResponsesProvider, ProviderErrorKind, StreamOptions, ThinkingLevel,
    ToolSpec, is_context_overflow,
};
use crate::protocol::{
    AssistantContent, AssistantMessage, AssistantMessageEvent, Message, StopReason, ToolCall, UserMessage,
};

/// Every API under test, by name.
const APIS: [&str; 5] =
    ["openai-completions", "anthropic-messages", "openai-responses", "google-generative-ai", "google-vertex"];

fn provider(api: &str) -> Arc<dyn ApiProvider> {
    match api {
        "anthropic-messages" => Arc::new(AnthropicMessagesProvider::new()),
        "openai-responses" => Arc::new(OpenAiResponsesProvider::new()),
        "google-generative-ai" => Arc::new(GoogleGenerativeAiProvider::new()),
        // Express mode (the call's key) at `{base}/v1/publishers/google/models/…`, blind to the developer's env.
        "google-vertex" => Arc::new(GoogleVertexProvider::new().with_env(|_| None)),
        _ => Arc::new(OpenAiCompletionsProvider::new()),
    }
}

/// The base URL each API's model uses for the mock (as a user would write it in models.json).
fn base_url(api: &str, server: &MockLlmServer) -> String {
    let port = server.addr().port();
    match api {
        // The Anthropic SDK appends /v1/messages itself.
        "anthropic-messages" => format!("http://127.0.0.1:{port}"),
        "google-generative-ai" => format!("http://127.0.0.1:{port}/v1beta"),
        _ => server.base_url(),
    }
}

fn model(api: &str, server: &MockLlmServer) -> Model {
    let mut model = Model::new("mock", "mock-model", api, base_url(api, server));
    model.reasoning = true;
    model.input = vec!["text".into(), "image".into()];
    model.cost = ModelCost { input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 3.75 };
    model
}

fn context(messages: Vec<Message>) -> LlmContext {
    LlmContext {
        system_prompt: "You are a conformance test.".into(),
        messages,
        tools: vec![ToolSpec {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}}),
        }],
    }
}

fn ask(text: &str) -> Vec<Message> {
    vec![Message::User(UserMessage::text(text))]
}

async fn server(script: serde_json::Value) -> MockLlmServer {
    let script = MockScript::from_json_str(&script.to_string()).expect("valid script");
    MockLlmServer::start(script).await.expect("mock server starts")
}

fn options(idle_timeout: Option<Duration>) -> StreamOptions {
    StreamOptions {
        api_key: Some("mock-key".into()),
        reasoning: Some(ThinkingLevel::Medium),
        idle_timeout,
        ..StreamOptions::default()
    }
}

/// Streams one answer and returns its events and final message (never hangs: 20 s cap).
async fn call(
    api: &str,
    server: &MockLlmServer,
    messages: Vec<Message>,
    options: StreamOptions,
) -> (Vec<AssistantMessageEvent>, AssistantMessage) {
    let mut stream = provider(api).stream(&model(api, server), &context(messages), options);
    let collect = async {
        let mut events = Vec::new();
        while let Some(event) = stream.next().await {
            events.push(event);
        }
        events
    };
    let events = tokio::time::timeout(Duration::from_secs(20), collect).await.unwrap_or_else(|_| panic!("{api}: hung"));
    let last = events.last().unwrap_or_else(|| panic!("{api}: no events")).message().clone();
    (events, last)
}

fn tool_calls(message: &AssistantMessage) -> Vec<ToolCall> {
    message.tool_calls().cloned().collect()
}

#[tokio::test]
async fn text_answers_stream_on_every_api() {
    for api in APIS {
        let mock = server(json!([{"text": "Hello there, wörld ✓"}])).await;
        let (events, message) = call(api, &mock, ask("hi"), options(None)).await;
        assert_eq!(message.stop_reason, StopReason::Stop, "{api}: {:?}", message.error_message);
        assert_eq!(message.text(), "Hello there, wörld ✓", "{api}");
        assert!(matches!(events.first(), Some(AssistantMessageEvent::Start { .. })), "{api}: starts with start");
        assert!(matches!(events.last(), Some(AssistantMessageEvent::Done { .. })), "{api}: ends with done");
        let deltas: String = events
            .iter()
            .filter_map(|e| match e {
                AssistantMessageEvent::TextDelta { delta, .. } => Some(delta.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(deltas, "Hello there, wörld ✓", "{api}: deltas add up to the text");
        assert_eq!((message.api.as_str(), message.model.as_str()), (api, "mock-model"));
        assert_eq!(mock.requests().len(), 1, "{api}");
    }
}

#[tokio::test]
async fn tool_calls_one_and_two_per_message_on_every_api() {
    for api in APIS {
        let mock = server(json!([
            {"toolCalls": [{"id": "call_a", "name": "read", "arguments": {"path": "a.txt"}}]},
            {"text": "Let me look.", "toolCalls": [
                {"id": "call_b", "name": "read", "arguments": {"path": "b.txt"}},
                {"id": "call_c", "name": "read", "arguments": {"path": "c/ü.txt"}}
            ]}
        ]))
        .await;
        let (_, one) = call(api, &mock, ask("read a"), options(None)).await;
        assert_eq!(one.stop_reason, StopReason::ToolUse, "{api}: {:?}", one.error_message);
        let calls = tool_calls(&one);
        assert_eq!(calls.len(), 1, "{api}");
        assert_eq!((calls[0].name.as_str(), &calls[0].arguments), ("read", &json!({"path": "a.txt"})), "{api}");

        let (events, two) = call(api, &mock, ask("read b and c"), options(None)).await;
        assert_eq!(two.stop_reason, StopReason::ToolUse, "{api}: {:?}", two.error_message);
        let calls = tool_calls(&two);
        let paths: Vec<&serde_json::Value> = calls.iter().map(|c| &c.arguments["path"]).collect();
        assert_eq!(paths, [&json!("b.txt"), &json!("c/ü.txt")], "{api}");
        assert_ne!(calls[0].id, calls[1].id, "{api}: distinct ids");
        assert_eq!(two.text(), "Let me look.", "{api}");
        let ends = events.iter().filter(|e| matches!(e, AssistantMessageEvent::ToolcallEnd { .. })).count();
        assert_eq!(ends, 2, "{api}: one toolcall_end per call");
    }
}

#[tokio::test]
async fn thinking_and_its_signature_survive_the_round_trip_on_every_api() {
    for api in APIS {
        // Valid base64, since Google keeps only base64 signatures.
        let signature = "c2lnbmF0dXJlLW9mLXRoZS10aG91Z2h0";
        let mock = server(json!([
            {"thinking": "Considering the request carefully.", "thinkingSignature": signature, "text": "Answer one."},
            {"text": "Answer two."}
        ]))
        .await;
        let (_, first) = call(api, &mock, ask("think"), options(None)).await;
        assert_eq!(first.stop_reason, StopReason::Stop, "{api}: {:?}", first.error_message);
        let thinking: String = first
            .content
            .iter()
            .filter_map(|c| match c {
                AssistantContent::Thinking(t) => Some(t.thinking.as_str()),
                _ => None,
            })
            .collect();
        assert!(thinking.contains("Considering the request carefully."), "{api}: thinking {thinking:?}");
        let history = vec![
            Message::User(UserMessage::text("think")),
            Message::Assistant(first.clone()),
            Message::User(UserMessage::text("again")),
        ];
        let (_, second) = call(api, &mock, history, options(None)).await;
        assert_eq!(second.stop_reason, StopReason::Stop, "{api}: {:?}", second.error_message);
        let body = mock.requests()[1].body.to_string();
        let replayed = if api == "openai-completions" {
            // Chat completions replays the reasoning text itself, under the field it came in.
            body.contains("Considering the request carefully.") && body.contains("reasoning_content")
        } else {
            body.contains(signature)
        };
        assert!(replayed, "{api}: the second request does not replay the signed thinking: {body}");
    }
}

#[tokio::test]
async fn usage_and_cost_come_from_the_stream_on_every_api() {
    for api in APIS {
        let mock = server(json!([{"text": "ok", "usage": {"input": 1000, "output": 200, "cacheRead": 400}}])).await;
        let (_, message) = call(api, &mock, ask("count"), options(None)).await;
        let usage = message.usage;
        let input = 1000;
        assert_eq!((usage.input, usage.output, usage.cache_read), (input, 200, 400), "{api}");
        assert_eq!(usage.total_tokens, usage.input + usage.output + usage.cache_read + usage.cache_write, "{api}");
        let expected_input_cost = input as f64 * 3.0 / 1e6;
        assert!((usage.cost.input - expected_input_cost).abs() < 1e-12, "{api}: {:?}", usage.cost);
        assert!((usage.cost.output - 200.0 * 15.0 / 1e6).abs() < 1e-12, "{api}");
        assert!((usage.cost.cache_read - 400.0 * 0.3 / 1e6).abs() < 1e-12, "{api}");
        let sum = usage.cost.input + usage.cost.output + usage.cost.cache_read + usage.cost.cache_write;
        assert!((usage.cost.total - sum).abs() < 1e-12, "{api}");
    }
}

/// A 400 body in the shape each vendor sends.
fn bad_request_body(api: &str, message: &str) -> serde_json::Value {
    match api {
        "anthropic-messages" => {
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}})
        }
        "google-generative-ai" | "google-vertex" => {
            json!({"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}})
        }
        _ => json!({"error": {"message": message, "type": "invalid_request_error"}}),
    }
}

#[tokio::test]
async fn http_errors_name_the_status_and_the_server_text_on_every_api() {
    for api in APIS {
        let body = bad_request_body(api, "the model does not exist");
        let mock = server(json!([{"error": {"status": 400, "body": body}}])).await;
        let (events, message) = call(api, &mock, ask("hi"), options(None)).await;
        assert_eq!(message.stop_reason, StopReason::Error, "{api}");
        let text = message.error_message.clone().unwrap_or_default();
        assert!(text.contains("400"), "{api}: {text}");
        assert!(text.contains("the model does not exist"), "{api}: {text}");
        assert_eq!(message.error_kind, Some(ProviderErrorKind::InvalidRequest), "{api}");
        assert!(matches!(events.last(), Some(AssistantMessageEvent::Error { .. })), "{api}");
        assert_eq!(mock.requests().len(), 1, "{api}: a 400 is not retried");
    }
}

#[tokio::test]
async fn context_overflow_is_recognised_on_every_api() {
    for api in APIS {
        let body = bad_request_body(api, "prompt is too long: 213462 tokens > 200000 maximum");
        let mock = server(json!([{"error": {"status": 400, "body": body}}])).await;
        let (_, message) = call(api, &mock, ask("huge"), options(None)).await;
        assert!(is_context_overflow(&message, Some(200_000)), "{api}: {:?}", message.error_message);
    }
}

#[tokio::test]
async fn a_mid_stream_disconnect_ends_in_a_clear_error_on_every_api() {
    for api in APIS {
        let mock = server(json!([{"text": "This answer will be cut off somewhere.", "disconnectAfter": 3}])).await;
        let (_, message) = call(api, &mock, ask("hi"), options(None)).await;
        assert_eq!(message.stop_reason, StopReason::Error, "{api}: {:?}", message.text());
        let text = message.error_message.clone().unwrap_or_default();
        assert!(!text.is_empty(), "{api}");
        assert_eq!(crate::ai::classify(&message, None), Some(ProviderErrorKind::Network), "{api}: {text}");
    }
}

#[tokio::test]
async fn a_stalled_stream_times_out_instead_of_hanging_on_every_api() {
    for api in APIS {
        let mock = server(json!([{"text": "This answer stalls.", "stallAfter": 2}])).await;
        let started = std::time::Instant::now();
        let (_, message) = call(api, &mock, ask("hi"), options(Some(Duration::from_millis(300)))).await;
        assert_eq!(message.stop_reason, StopReason::Error, "{api}");
        assert_eq!(message.error_message.as_deref(), Some("Request timed out."), "{api}");
        assert!(started.elapsed() < Duration::from_secs(10), "{api}: took {:?}", started.elapsed());
    }
}

#[tokio::test]
async fn malformed_stream_data_is_an_error_not_a_panic_on_every_api() {
    for api in APIS {
        let mock = server(json!([{"raw": "data: {\"this is\": not json\n\n"}])).await;
        let (_, message) = call(api, &mock, ask("hi"), options(None)).await;
        assert_eq!(message.stop_reason, StopReason::Error, "{api}: {:?}", message.content);
        assert!(message.error_message.as_deref().is_some_and(|t| !t.is_empty()), "{api}");
    }
}

#[tokio::test]
async fn cancelling_mid_stream_ends_aborted_on_every_api() {
    for api in APIS {
        let mock = server(json!([{"text": "A slow answer in many pieces.", "delayMs": 200}])).await;
        let opts = options(None);
        let cancel = opts.cancel.clone();
        let mut stream = provider(api).stream(&model(api, &mock), &context(ask("hi")), opts);
        let mut last = None;
        let run = async {
            while let Some(event) = stream.next().await {
                if matches!(event, AssistantMessageEvent::TextDelta { .. }) {
                    cancel.cancel();
                }
                last = Some(event);
            }
        };
        tokio::time::timeout(Duration::from_secs(10), run).await.unwrap_or_else(|_| panic!("{api}: hung"));
        let Some(AssistantMessageEvent::Error { error, .. }) = last else { panic!("{api}: not an error end") };
        assert_eq!(error.stop_reason, StopReason::Aborted, "{api}");
    }
}

#[tokio::test]
async fn any_split_of_the_byte_stream_yields_the_same_message_on_every_api() {
    for api in APIS {
        let completion = json!({
            "thinking": "Splitting ✓ thoughts.",
            "thinkingSignature": "c2lnbmF0dXJl",
            "text": "Ünïcödé text that spans chunks — 日本語.",
            "toolCalls": [{"id": "call_s", "name": "read", "arguments": {"path": "dir/fïle.txt"}}],
            "usage": {"input": 10, "output": 20, "cacheRead": 0}
        });
        let mut script = vec![completion.clone()];
        for seed in 1..=12u64 {
            let mut split = completion.clone();
            split["splitSeed"] = json!(seed);
            script.push(split);
        }
        let mock = server(json!(script)).await;
        let (_, reference) = call(api, &mock, ask("split"), options(None)).await;
        assert_eq!(reference.stop_reason, StopReason::ToolUse, "{api}: {:?}", reference.error_message);
        for seed in 1..=12u64 {
            let (_, message) = call(api, &mock, ask("split"), options(None)).await;
            assert_eq!(message.content, reference.content, "{api}: seed {seed}");
            assert_eq!(message.usage, reference.usage, "{api}: seed {seed}");
            assert_eq!(message.stop_reason, reference.stop_reason, "{api}: seed {seed}");
        }
    }
}

#[tokio::test]
async fn a_503_with_retry_after_follows_each_sdk_retry_rule() {
    for api in APIS {
        let overloaded = json!({"error": {"status": 503, "body": bad_request_body(api, "overloaded"),
            "headers": {"retry-after-ms": "20"}}});
        let mock = server(json!([overloaded, {"text": "after the retry"}])).await;
        let (_, message) = call(api, &mock, ask("hi"), options(None)).await;
        if api.starts_with("google-") {
            // The genai SDK pi uses does not retry.
            assert_eq!(message.stop_reason, StopReason::Error, "{api}");
            assert_eq!(message.error_kind, Some(ProviderErrorKind::Server), "{api}");
            assert_eq!(mock.requests().len(), 1, "{api}");
        } else {
            assert_eq!(message.text(), "after the retry", "{api}: {:?}", message.error_message);
            assert_eq!(mock.requests().len(), 2, "{api}: retried once after the server's delay");
        }
    }
}
