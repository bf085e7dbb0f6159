//! End-to-end tests of level 1.5 for anthropic-messages against the mock server: pending partials, the raw
//! stop reason, pi 1.5.2's refusal and missing-reason errors, thinking tokens, and its requests
//! (`?beta=true`, the interleaved-thinking beta only on a thinking budget, the whole output limit).

use serde_json::{Value, json};

use super::MockLlmServer;
use super::provider_tests_v1_5::{collect, context, final_message, only_request, options, raw_server, sse, summary};
use crate::ai::{AnthropicMessagesProvider, Model, StreamOptions, ThinkingLevel};
use crate::protocol::PiCompat;

type Frame = (Option<&'static str>, Value);

fn event(kind: &'static str, data: Value) -> Frame {
    let mut data = data;
    data["type"] = json!(kind);
    (Some(kind), data)
}

/// `message_start` and a text block, then `delta` (a `message_delta` when not null) and `message_stop`.
fn stream(delta: Value, stop: bool) -> String {
    let usage = json!({"input_tokens": 100, "cache_creation_input_tokens": 5, "cache_read_input_tokens": 30,
        "output_tokens": 1});
    let message = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [], "stop_reason": null, "usage": usage});
    let mut frames = vec![
        event("message_start", json!({"message": message})),
        event("content_block_start", json!({"index": 0, "content_block": {"type": "text", "text": ""}})),
        event("content_block_delta", json!({"index": 0, "delta": {"type": "text_delta", "text": "hi"}})),
        event("content_block_stop", json!({"index": 0})),
    ];
    if !delta.is_null() {
        frames.push(event("message_delta", delta));
    }
    if stop {
        frames.push(event("message_stop", json!({})));
    }
    sse(&frames)
}

fn ending(stop_reason: Value, details: Option<Value>) -> String {
    let mut delta = json!({"stop_reason": stop_reason, "stop_sequence": null});
    if let Some(details) = details {
        delta["stop_details"] = details;
    }
    stream(json!({"delta": delta, "usage": {"output_tokens": 50}}), true)
}

fn model(server: &MockLlmServer, id: &str) -> Model {
    let mut model = Model::new("mock", id, "anthropic-messages", format!("http://{}", server.addr()));
    (model.reasoning, model.max_tokens) = (true, 65_536);
    model
}

#[tokio::test]
async fn anthropic_partials_pend_until_the_message_delta() {
    let delta = json!({"delta": {"stop_reason": "end_turn", "stop_sequence": null},
        "usage": {"output_tokens": 50, "output_tokens_details": {"thinking_tokens": 20}}});
    let body = stream(delta, true);
    let server = raw_server(vec![body.clone(), body]).await;
    let provider = AnthropicMessagesProvider::new();
    let events = collect(&provider, &model(&server, "claude-sonnet-4-5"), &context(), options(PiCompat::V1_5)).await;
    // The cost is marked computed from `message_start` on; thinking tokens come with the delta only.
    assert_eq!(
        summary(&events),
        [
            "start pending raw=- reasoning=- fromProvider=-",
            "text_start pending raw=- reasoning=- fromProvider=false",
            "text_delta pending raw=- reasoning=- fromProvider=false",
            "text_end pending raw=- reasoning=- fromProvider=false",
            "done stop raw=end_turn reasoning=20 fromProvider=false",
        ]
    );
    let usage = final_message(&events).usage;
    assert_eq!(
        (usage.input, usage.output, usage.cache_read, usage.cache_write, usage.total_tokens),
        (100, 50, 30, 5, 185)
    );

    let events = collect(&provider, &model(&server, "claude-sonnet-4-5"), &context(), options(PiCompat::V0_73)).await;
    assert_eq!(summary(&events)[1], "text_start stop raw=- reasoning=- fromProvider=-");
    assert_eq!(summary(&events)[4], "done stop raw=- reasoning=- fromProvider=-");
    server.shutdown().await;
}

#[tokio::test]
async fn anthropic_endings_follow_pi_1_5() {
    let cases: Vec<(String, &str, Option<&str>, Option<&str>)> = vec![
        (ending(json!("max_tokens"), None), "length", Some("max_tokens"), None),
        (ending(json!("pause_turn"), None), "stop", Some("pause_turn"), None),
        (ending(json!("refusal"), None), "error", Some("refusal"), Some("The model refused to complete the request")),
        (
            ending(json!("refusal"), Some(json!({"type": "refusal", "explanation": "nope"}))),
            "error",
            Some("refusal"),
            Some("nope"),
        ),
        (ending(json!("sensitive"), None), "error", Some("sensitive"), Some("Provider stopped with: sensitive")),
        (ending(json!("weird"), None), "error", Some("weird"), Some("Unhandled stop reason: weird")),
        (ending(Value::Null, None), "error", None, Some("Anthropic stream ended without a stop reason")),
        (String::new(), "error", None, Some("Anthropic stream ended without a stop reason")),
        (
            stream(json!({"delta": {"stop_reason": "end_turn"}}), false),
            "error",
            Some("end_turn"),
            Some("Anthropic stream ended before message_stop"),
        ),
    ];
    let server = raw_server(cases.iter().map(|(body, ..)| body.clone()).collect()).await;
    for (body, stop, raw, error) in &cases {
        let model = model(&server, "claude-sonnet-4-5");
        let events = collect(&AnthropicMessagesProvider::new(), &model, &context(), options(PiCompat::V1_5)).await;
        let message = final_message(&events);
        assert_eq!(serde_json::to_value(message).unwrap_or_default()["stopReason"], *stop, "{body}");
        assert_eq!((message.raw_stop_reason.as_deref(), message.error_message.as_deref()), (*raw, *error), "{body}");
    }
    server.shutdown().await;
}

/// The request `options` send for a model `id` of `provider` (a built-in `anthropic` one has its real limits).
async fn request_for(id: &str, provider: &str, options: StreamOptions) -> super::RecordedRequest {
    let server = raw_server(vec![ending(json!("end_turn"), None)]).await;
    let mut model = model(&server, id);
    model.provider = provider.into();
    if provider == "anthropic" {
        (model.max_tokens, model.context_window) = (128_000, 1_000_000);
    }
    collect(&AnthropicMessagesProvider::new(), &model, &context(), options).await;
    let request = only_request(&server);
    server.shutdown().await;
    request
}

#[tokio::test]
async fn anthropic_requests_follow_pi_1_5() {
    let thinking = |compat, level: Option<ThinkingLevel>, max_tokens: Option<u64>| StreamOptions {
        reasoning: level,
        max_tokens,
        ..options(compat)
    };
    // Observed from pi 1.5.2: the body for thinking `high` on a budget, the beta client's URL.
    let request =
        request_for("claude-sonnet-4-5", "mock", thinking(PiCompat::V1_5, Some(ThinkingLevel::High), None)).await;
    let expected = json!({
        "model": "claude-sonnet-4-5",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}],
        "max_tokens": 65536,
        "stream": true,
        "system": [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
        "tools": [{"name": "bash", "description": "run", "eager_input_streaming": true, "input_schema": {"type": "object",
            "properties": {"command": {"type": "string"}}, "required": ["command"]}, "cache_control": {"type": "ephemeral"}}],
        "thinking": {"type": "enabled", "budget_tokens": 16384, "display": "summarized"}
    });
    assert_eq!(request.body.to_string(), expected.to_string());
    assert_eq!(request.path, "/v1/messages?beta=true");
    assert_eq!(request.header("anthropic-beta"), Some("interleaved-thinking-2025-05-14"));
    assert_eq!(request.header("user-agent"), Some("pi/1.5.2 (linux; node/v24.21.0; x64)"));

    // A caller's limit gets the budget added; the budget stays 1024 below the limit (pi 1.5.2: 17384, 16360).
    let request =
        request_for("claude-sonnet-4-5", "mock", thinking(PiCompat::V1_5, Some(ThinkingLevel::High), Some(1000))).await;
    assert_eq!(request.body["max_tokens"], 17384);
    assert_eq!(request.body["thinking"], json!({"type": "enabled", "budget_tokens": 16360, "display": "summarized"}));
    let request =
        request_for("claude-sonnet-4-5", "mock", thinking(PiCompat::V0_73, Some(ThinkingLevel::High), Some(1000)))
            .await;
    assert_eq!(
        (request.body["max_tokens"].clone(), request.body["thinking"]["budget_tokens"].clone()),
        (json!(17384), json!(16384))
    );

    // Thinking off: no interleaved-thinking beta any more (0.73 asked for it), the model's whole limit.
    let request = request_for("claude-sonnet-4-5", "mock", thinking(PiCompat::V1_5, None, None)).await;
    assert_eq!((request.header("anthropic-beta"), request.body["max_tokens"].clone()), (None, json!(65536)));
    let request = request_for("claude-sonnet-4-5", "mock", thinking(PiCompat::V0_73, None, None)).await;
    assert_eq!(request.header("anthropic-beta"), Some("interleaved-thinking-2025-05-14"));
    assert_eq!((request.path.as_str(), request.body["max_tokens"].clone()), ("/v1/messages", json!(32000)));

    // Adaptive thinking: pi 1.5 goes by the built-in model (or `compat.forceAdaptiveThinking`), not the id.
    let high = || thinking(PiCompat::V1_5, Some(ThinkingLevel::High), None);
    let custom = request_for("claude-opus-4-6", "mock", high()).await;
    assert_eq!(custom.body["thinking"]["type"], "enabled");
    assert_eq!(custom.header("anthropic-beta"), Some("interleaved-thinking-2025-05-14"));
    let builtin = request_for("claude-opus-4-6", "anthropic", high()).await;
    assert_eq!(
        (builtin.body["thinking"].clone(), builtin.body["output_config"].clone()),
        (json!({"type": "adaptive", "display": "summarized"}), json!({"effort": "high"}))
    );
    assert_eq!((builtin.header("anthropic-beta"), builtin.body["max_tokens"].clone()), (None, json!(128000)));
    let custom =
        request_for("claude-opus-4-6", "mock", thinking(PiCompat::V0_73, Some(ThinkingLevel::High), None)).await;
    assert_eq!(custom.body["thinking"]["type"], "adaptive");

    // An OAuth token keeps Claude Code's identity, in pi 1.5's version.
    let oauth = StreamOptions { api_key: Some("sk-ant-oat01-xyz".into()), ..high() };
    let request = request_for("claude-sonnet-4-5", "mock", oauth).await;
    assert_eq!(request.header("user-agent"), Some("claude-cli/2.1.322"));
    assert_eq!(
        request.header("anthropic-beta"),
        Some("claude-code-20250219,oauth-2025-04-20,interleaved-thinking-2025-05-14")
    );
}
