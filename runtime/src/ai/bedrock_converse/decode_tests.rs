//! Tests of the ConverseStream event decoding.

use serde_json::{Value, json};

use super::*;
use crate::ai::provider::empty_assistant_message;
use crate::protocol::AssistantMessageEvent as E;

fn new_decoder() -> BedrockDecoder {
    let mut model =
        Model::new("amazon-bedrock", "us.anthropic.claude-sonnet-4-5", "bedrock-converse-stream", "http://x");
    model.cost = crate::ai::ModelCost { input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 3.75 };
    BedrockDecoder::new(empty_assistant_message(&model), &model)
}

fn feed(decoder: &mut BedrockDecoder, stream: &[(&str, Value)]) -> (Vec<String>, Result<(), DecodeError>) {
    let mut events = Vec::new();
    let mut outcome = Ok(());
    for (name, payload) in stream {
        let (kind, name) = match name.strip_prefix('!') {
            Some(exception) => ("exception", exception),
            None => ("event", *name),
        };
        outcome = decoder.on_message(kind, name, payload.to_string().as_bytes(), &mut events);
        if outcome.is_err() {
            break;
        }
    }
    let names = events
        .iter()
        .map(|event| match event {
            E::Start { .. } => "start".to_owned(),
            E::TextStart { content_index, .. } => format!("text_start {content_index}"),
            E::TextDelta { delta, .. } => format!("text_delta {delta}"),
            E::TextEnd { content, .. } => format!("text_end {content}"),
            E::ThinkingStart { .. } => "thinking_start".to_owned(),
            E::ThinkingDelta { delta, .. } => format!("thinking_delta {delta}"),
            E::ThinkingEnd { .. } => "thinking_end".to_owned(),
            E::ToolcallStart { .. } => "toolcall_start".to_owned(),
            E::ToolcallDelta { delta, .. } => format!("toolcall_delta {delta}"),
            E::ToolcallEnd { tool_call, .. } => format!("toolcall_end {}", tool_call.arguments),
            other => format!("{other:?}"),
        })
        .collect();
    (names, outcome)
}

#[test]
fn thinking_text_and_a_tool_call_decode_like_pi() {
    let mut decoder = new_decoder();
    let (events, outcome) = feed(
        &mut decoder,
        &[
            ("messageStart", json!({"role": "assistant", "p": "pad"})),
            ("contentBlockDelta", json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "Let me "}}})),
            ("contentBlockDelta", json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "look."}}})),
            (
                "contentBlockDelta",
                json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "sig-1"}}}),
            ),
            ("contentBlockStop", json!({"contentBlockIndex": 0})),
            ("contentBlockDelta", json!({"contentBlockIndex": 1, "delta": {"text": "Reading."}})),
            ("contentBlockStop", json!({"contentBlockIndex": 1})),
            (
                "contentBlockStart",
                json!({"contentBlockIndex": 2, "start": {"toolUse": {"toolUseId": "tooluse_1", "name": "read"}}}),
            ),
            ("contentBlockDelta", json!({"contentBlockIndex": 2, "delta": {"toolUse": {"input": "{\"path\": \"a"}}})),
            ("contentBlockDelta", json!({"contentBlockIndex": 2, "delta": {"toolUse": {"input": ".txt\"}"}}})),
            ("contentBlockStop", json!({"contentBlockIndex": 2})),
            ("messageStop", json!({"stopReason": "tool_use"})),
            (
                "metadata",
                json!({"usage": {"inputTokens": 100, "outputTokens": 30, "totalTokens": 130,
                "cacheReadInputTokens": 50, "cacheWriteInputTokens": 20}, "metrics": {"latencyMs": 5}}),
            ),
        ],
    );
    assert_eq!(outcome, Ok(()));
    assert_eq!(
        events,
        [
            "start",
            "thinking_start",
            "thinking_delta Let me ",
            "thinking_delta look.",
            "thinking_end",
            "text_start 1",
            "text_delta Reading.",
            "text_end Reading.",
            "toolcall_start",
            "toolcall_delta {\"path\": \"a",
            "toolcall_delta .txt\"}",
            "toolcall_end {\"path\":\"a.txt\"}",
        ]
    );
    let message = decoder.take_message();
    let json = serde_json::to_value(&message).expect("serializes");
    assert_eq!(
        json["content"][0],
        json!({"type": "thinking", "thinking": "Let me look.", "thinkingSignature": "sig-1"})
    );
    assert_eq!(
        json["content"][2],
        json!({"type": "toolCall", "id": "tooluse_1", "name": "read", "arguments": {"path": "a.txt"}})
    );
    assert_eq!(json["stopReason"], "toolUse");
    assert_eq!(
        json["usage"],
        json!({"input": 100, "output": 30, "cacheRead": 50, "cacheWrite": 20, "totalTokens": 130,
               "cost": {"input": 0.00030000000000000003, "output": 0.00045, "cacheRead": 0.000014999999999999999,
                        "cacheWrite": 0.00007500000000000001, "total": 0.00084}})
    );
}

#[test]
fn stop_reasons_and_missing_totals() {
    for (reason, expected) in [
        ("end_turn", StopReason::Stop),
        ("stop_sequence", StopReason::Stop),
        ("max_tokens", StopReason::Length),
        ("model_context_window_exceeded", StopReason::Length),
        ("tool_use", StopReason::ToolUse),
        ("guardrail_intervened", StopReason::Error),
    ] {
        let mut decoder = new_decoder();
        let (_, outcome) = feed(&mut decoder, &[("messageStop", json!({"stopReason": reason}))]);
        assert_eq!((outcome, decoder.message().stop_reason), (Ok(()), expected), "{reason}");
    }
    let mut decoder = new_decoder();
    let _ = feed(&mut decoder, &[("metadata", json!({"usage": {"inputTokens": 7, "outputTokens": 3}}))]);
    assert_eq!(decoder.message().usage.total_tokens, 10);
}

#[test]
fn exceptions_fail_with_pi_wording_and_kind() {
    let mut decoder = new_decoder();
    let (events, outcome) = feed(
        &mut decoder,
        &[
            ("messageStart", json!({"role": "assistant"})),
            ("contentBlockDelta", json!({"contentBlockIndex": 0, "delta": {"text": "partial"}})),
            ("!throttlingException", json!({"message": "Too many tokens, slow down."})),
        ],
    );
    assert_eq!(events, ["start", "text_start 0", "text_delta partial"]);
    let error = outcome.expect_err("fails");
    assert_eq!(error.message, "Throttling error: Too many tokens, slow down.");
    assert_eq!(error.kind, Some(crate::ai::ProviderErrorKind::RateLimit { retry_after: None }));
    let mut decoder = new_decoder();
    let (_, outcome) = feed(&mut decoder, &[("!internalServerException", json!({"message": "boom"}))]);
    assert_eq!(outcome.map_err(|e| e.message), Err("Internal server error: boom".to_owned()));
    let mut events = Vec::new();
    let plain = decoder.on_message("error", "the stream broke", b"", &mut events);
    assert_eq!(plain.map_err(|e| e.message), Err("the stream broke".to_owned()));
}

#[test]
fn odd_streams_are_handled_as_pi_handles_them() {
    let mut decoder = new_decoder();
    let (_, outcome) = feed(&mut decoder, &[("messageStart", json!({"role": "user"}))]);
    assert!(outcome.is_err());
    // Deltas for unknown blocks, stops of unknown blocks and unknown events are ignored; an empty
    // signature or text adds nothing.
    let mut decoder = new_decoder();
    let (events, outcome) = feed(
        &mut decoder,
        &[
            ("contentBlockDelta", json!({"contentBlockIndex": 4, "delta": {"toolUse": {"input": "{}"}}})),
            ("contentBlockStop", json!({"contentBlockIndex": 9})),
            ("somethingNew", json!({"x": 1})),
            (
                "contentBlockDelta",
                json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"redactedContent": "AAA="}}}),
            ),
            ("contentBlockStop", json!({"contentBlockIndex": 0})),
        ],
    );
    assert_eq!(outcome, Ok(()));
    assert_eq!(events, ["thinking_start", "thinking_end"]);
    let json = serde_json::to_value(decoder.take_message()).expect("serializes");
    assert_eq!(json["content"], json!([{"type": "thinking", "thinking": "", "thinkingSignature": ""}]));
    let mut decoder = new_decoder();
    let mut events = Vec::new();
    let broken = decoder.on_message("event", "metadata", b"{not json", &mut events);
    assert!(broken.is_err_and(|e| e.message.contains("metadata")));
}
