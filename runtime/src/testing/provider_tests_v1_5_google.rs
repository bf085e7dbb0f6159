//! End-to-end tests of level 1.5 for google-generative-ai against the mock server: pending partials, the
//! finish reason kept raw, pi 1.5.2's error texts, thought tokens reported apart, and its request (the
//! model's whole output limit, pi's user agent).

use serde_json::{Value, json};

use super::MockLlmServer;
use super::provider_tests_v1_5::{collect, context, final_message, only_request, options, raw_server, sse, summary};
use crate::ai::{GoogleGenerativeAiProvider, Model, StreamOptions, ThinkingLevel};
use crate::protocol::PiCompat;

/// One chunk: `parts`, an optional finish reason and usage.
fn chunk(parts: Value, finish: Option<&str>, usage: Option<Value>) -> (Option<&'static str>, Value) {
    let mut candidate = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
    if let Some(reason) = finish {
        candidate["finishReason"] = json!(reason);
    }
    let mut chunk = json!({"candidates": [candidate], "responseId": "r1", "modelVersion": "gemini-2.5-flash"});
    if let Some(usage) = usage {
        chunk["usageMetadata"] = usage;
    }
    (None, chunk)
}

fn text(piece: &str) -> Value {
    json!([{"text": piece}])
}

fn call() -> Value {
    json!([{"functionCall": {"name": "bash", "args": {"command": "ls"}}}])
}

fn usage() -> Value {
    json!({"promptTokenCount": 100, "candidatesTokenCount": 50, "thoughtsTokenCount": 20,
        "cachedContentTokenCount": 30, "totalTokenCount": 170})
}

fn model(server: &MockLlmServer) -> Model {
    let base_url = format!("http://{}/v1beta", server.addr());
    let mut model = Model::new("mock", "gemini-2.5-flash", "google-generative-ai", base_url);
    (model.reasoning, model.max_tokens) = (true, 65_536);
    model
}

#[tokio::test]
async fn google_partials_pend_until_the_finish_reason() {
    let first_usage = json!({"promptTokenCount": 100, "candidatesTokenCount": 5, "totalTokenCount": 105});
    let body = sse(&[chunk(text("hi"), None, Some(first_usage)), chunk(text("there"), Some("STOP"), Some(usage()))]);
    let server = raw_server(vec![body.clone(), body]).await;
    let provider = GoogleGenerativeAiProvider::new();
    let events = collect(&provider, &model(&server), &context(), options(PiCompat::V1_5)).await;
    // Usage arrives with every chunk: reasoning (0 until thoughts are counted) and a computed cost from then on.
    assert_eq!(
        summary(&events),
        [
            "start pending raw=- reasoning=- fromProvider=-",
            "text_start pending raw=- reasoning=- fromProvider=-",
            "text_delta pending raw=- reasoning=- fromProvider=-",
            "text_delta pending raw=- reasoning=0 fromProvider=false",
            "text_end stop raw=STOP reasoning=20 fromProvider=false",
            "done stop raw=STOP reasoning=20 fromProvider=false",
        ]
    );
    let usage = final_message(&events).usage;
    assert_eq!((usage.input, usage.output, usage.cache_read, usage.total_tokens), (70, 70, 30, 170));

    let events = collect(&provider, &model(&server), &context(), options(PiCompat::V0_73)).await;
    assert_eq!(summary(&events)[0], "start stop raw=- reasoning=- fromProvider=-");
    assert_eq!(summary(&events)[5], "done stop raw=- reasoning=- fromProvider=-");
    server.shutdown().await;
}

#[tokio::test]
async fn google_endings_follow_pi_1_5() {
    let ended = |parts: Value, finish: Option<&str>| sse(&[chunk(parts, finish, Some(usage()))]);
    let cases: Vec<(String, &str, Option<&str>, Option<&str>)> = vec![
        (ended(text("hi"), Some("MAX_TOKENS")), "length", Some("MAX_TOKENS"), None),
        (ended(text("hi"), Some("SAFETY")), "error", Some("SAFETY"), Some("Provider stopped with: SAFETY")),
        (ended(text("hi"), Some("OTHER")), "error", Some("OTHER"), Some("Provider stopped with: OTHER")),
        (ended(text("hi"), Some("WEIRD")), "error", Some("WEIRD"), Some("Unhandled stop reason: WEIRD")),
        (ended(text("hi"), None), "error", None, Some("Google stream ended without a finish reason")),
        (ended(call(), Some("STOP")), "toolUse", Some("STOP"), None),
        // Tool calls turn only a plain stop into `toolUse` (pi 0.73 turned every reason).
        (ended(call(), Some("MAX_TOKENS")), "length", Some("MAX_TOKENS"), None),
        (ended(call(), Some("SAFETY")), "error", Some("SAFETY"), Some("Provider stopped with: SAFETY")),
    ];
    let server = raw_server(cases.iter().map(|(body, ..)| body.clone()).collect()).await;
    for (body, stop, raw, error) in &cases {
        let events =
            collect(&GoogleGenerativeAiProvider::new(), &model(&server), &context(), options(PiCompat::V1_5)).await;
        let message = final_message(&events);
        assert_eq!(serde_json::to_value(message).unwrap_or_default()["stopReason"], *stop, "{body}");
        assert_eq!((message.raw_stop_reason.as_deref(), message.error_message.as_deref()), (*raw, *error), "{body}");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn google_requests_follow_pi_1_5() {
    let body = sse(&[chunk(text("hi"), Some("STOP"), Some(usage()))]);
    let high =
        |compat, max_tokens| StreamOptions { reasoning: Some(ThinkingLevel::High), max_tokens, ..options(compat) };
    for (compat, max_tokens, expected_limit) in
        [(PiCompat::V1_5, None, 65_536), (PiCompat::V0_73, None, 32_000), (PiCompat::V1_5, Some(1000), 1000)]
    {
        let server = raw_server(vec![body.clone()]).await;
        collect(&GoogleGenerativeAiProvider::new(), &model(&server), &context(), high(compat, max_tokens)).await;
        let request = only_request(&server);
        assert_eq!(request.path, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
        // The body pi 1.5.2 (and 0.73.1) sent for this context, but for the output limit.
        let expected = json!({
            "contents": [{"parts": [{"text": "hi"}], "role": "user"}],
            "systemInstruction": {"parts": [{"text": "sys"}], "role": "user"},
            "tools": [{"functionDeclarations": [{"name": "bash", "description": "run", "parametersJsonSchema":
                {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"],
                 "additionalProperties": false}}]}],
            "generationConfig": {"maxOutputTokens": expected_limit,
                "thinkingConfig": {"includeThoughts": true, "thinkingBudget": 24576}}
        });
        assert_eq!(request.body.to_string(), expected.to_string(), "{compat}");
        let agent = request.header("user-agent").unwrap_or_default();
        if compat.is_v1_5() {
            assert_eq!(agent, "pi/1.5.2 (linux; node/v24.21.0; x64)");
        } else {
            assert!(agent.starts_with("pi-runtime/"), "{agent}");
        }
        server.shutdown().await;
    }
}
