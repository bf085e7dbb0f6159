//! Decoder tests on recorded-style Anthropic streams: block order and indexes, signatures, redacted
//! thinking, partial tool input, usage and cost, stop reasons, error events, truncation, byte splits.

use serde_json::json;

use super::*;
use crate::ai::transport::decode_recorded;
use crate::ai::{ModelCost, empty_assistant_message};

fn model() -> Model {
    let mut model = Model::new("anthropic", "claude-sonnet-4-5", "anthropic-messages", "http://127.0.0.1:9");
    model.cost = ModelCost { input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 3.75 };
    model
}

/// A stream shaped like the API's: ping with spaces, thinking with a signature, redacted thinking,
/// text with a multi-byte character, and a tool use whose input arrives in pieces.
const RECORDED: &str = concat!(
    "event: message_start\n",
    "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01XYZ\",\"type\":\"message\",\"role\":\"assistant\",",
    "\"model\":\"claude-sonnet-4-5\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,",
    "\"usage\":{\"input_tokens\":120,\"cache_creation_input_tokens\":50,\"cache_read_input_tokens\":30,\"output_tokens\":1}}}\n\n",
    "event: ping\ndata: {\"type\": \"ping\"}\n\n",
    "event: content_block_start\n",
    "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"Need the \"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"file.\"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"EqQB\"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"Ckg=\"}}\n\n",
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
    "event: content_block_start\n",
    "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"redacted_thinking\",\"data\":\"opaque==\"}}\n\n",
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
    "event: content_block_start\n",
    "data: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"text_delta\",\"text\":\"Lisons le fichier é\"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"text_delta\",\"text\":\"tranger.\"}}\n\n",
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":2}\n\n",
    "event: content_block_start\n",
    "data: {\"type\":\"content_block_start\",\"index\":3,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_01A\",\"name\":\"read\",\"input\":{}}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"path\\\": \\\"sr\"}}\n\n",
    "event: content_block_delta\n",
    "data: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"c/a.rs\\\"}\"}}\n\n",
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":3}\n\n",
    "event: message_delta\n",
    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},",
    "\"usage\":{\"input_tokens\":null,\"output_tokens\":77}}\n\n",
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
);

async fn decode(body: &str, chunk: usize) -> (Vec<AssistantMessageEvent>, Result<AssistantMessage, DecodeError>) {
    let chunks = body.as_bytes().chunks(chunk.max(1)).map(<[u8]>::to_vec).collect();
    decode_recorded(AnthropicDecoder::new(empty_assistant_message(&model()), &model()), chunks).await
}

fn tags(events: &[AssistantMessageEvent]) -> Vec<String> {
    events
        .iter()
        .map(|event| {
            let value = serde_json::to_value(event).unwrap_or_default();
            format!("{}:{}", value["type"].as_str().unwrap_or("?"), value["contentIndex"])
        })
        .collect()
}

fn message_of(result: Result<AssistantMessage, DecodeError>) -> AssistantMessage {
    match result {
        Ok(message) => message,
        Err(error) => panic!("decoding failed: {error:?}"),
    }
}

fn error_of(result: Result<AssistantMessage, DecodeError>) -> DecodeError {
    match result {
        Ok(message) => panic!("expected a failure, got {message:?}"),
        Err(error) => error,
    }
}

#[tokio::test]
async fn a_recorded_stream_becomes_blocks_in_order() {
    let (events, result) = decode(RECORDED, usize::MAX).await;
    assert_eq!(
        tags(&events),
        [
            "thinking_start:0",
            "thinking_delta:0",
            "thinking_delta:0",
            "thinking_end:0",
            "thinking_start:1",
            "thinking_end:1",
            "text_start:2",
            "text_delta:2",
            "text_delta:2",
            "text_end:2",
            "toolcall_start:3",
            "toolcall_delta:3",
            "toolcall_delta:3",
            "toolcall_delta:3",
            "toolcall_end:3",
        ]
    );
    let message = message_of(result);
    assert_eq!(message.response_id.as_deref(), Some("msg_01XYZ"));
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    assert_eq!(
        message.content[0],
        AssistantContent::Thinking(ThinkingContent {
            thinking: "Need the file.".into(),
            thinking_signature: Some("EqQBCkg=".into()),
            redacted: None,
        })
    );
    assert_eq!(
        message.content[1],
        AssistantContent::Thinking(ThinkingContent {
            thinking: "[Reasoning redacted]".into(),
            thinking_signature: Some("opaque==".into()),
            redacted: Some(true),
        })
    );
    assert_eq!(message.content[2], AssistantContent::text("Lisons le fichier étranger."));
    let calls: Vec<_> = message.tool_calls().map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.clone())).collect();
    assert_eq!(calls, [("toolu_01A", "read", json!({"path": "src/a.rs"}))]);
    // A null in message_delta keeps message_start's count.
    let usage = message.usage;
    assert_eq!((usage.input, usage.output, usage.cache_read, usage.cache_write), (120, 77, 30, 50));
    assert_eq!(usage.total_tokens, 277);
    let expected = (120.0 * 3.0 + 77.0 * 15.0 + 30.0 * 0.3 + 50.0 * 3.75) / 1e6;
    assert!((usage.cost.total - expected).abs() < 1e-12, "{:?}", usage.cost);

    // Partial tool input is parsed as it grows.
    let args: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            AssistantMessageEvent::ToolcallDelta { partial, .. } => match &partial.content[3] {
                AssistantContent::ToolCall(call) => Some(call.arguments.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(args, [json!({}), json!({"path": "sr"}), json!({"path": "src/a.rs"})]);
}

#[tokio::test]
async fn any_byte_split_decodes_the_same() {
    let (whole_events, whole) = decode(RECORDED, usize::MAX).await;
    let whole = message_of(whole);
    for chunk in [1, 2, 3, 5, 7, 64] {
        let (events, result) = decode(RECORDED, chunk).await;
        assert_eq!(tags(&events), tags(&whole_events), "chunk size {chunk}");
        let message = message_of(result);
        assert_eq!((&message.content, message.usage), (&whole.content, whole.usage), "chunk size {chunk}");
    }
}

#[tokio::test]
async fn a_leading_byte_order_mark_is_skipped_and_invalid_utf8_is_replaced_as_textdecoder_does() {
    let (whole_events, whole) = decode(RECORDED, usize::MAX).await;
    let whole = message_of(whole);
    let with_mark = format!("\u{feff}{RECORDED}");
    for chunk in [1, 2, usize::MAX] {
        let (events, result) = decode(&with_mark, chunk).await;
        assert_eq!(tags(&events), tags(&whole_events), "chunk size {chunk}");
        assert_eq!(message_of(result).content, whole.content, "chunk size {chunk}");
    }
    // A byte that is not UTF-8 in a text delta: the stream goes on, the byte reads as U+FFFD.
    let mut body = RECORDED.as_bytes().to_vec();
    let at = RECORDED.find("tranger.").unwrap_or_default();
    body[at] = 0xFF;
    for chunk in [1, 3, usize::MAX] {
        let chunks = body.chunks(chunk).map(<[u8]>::to_vec).collect();
        let (_, result) =
            decode_recorded(AnthropicDecoder::new(empty_assistant_message(&model()), &model()), chunks).await;
        assert_eq!(message_of(result).text(), "Lisons le fichier é\u{fffd}ranger.", "chunk size {chunk}");
    }
}

#[tokio::test]
async fn stop_reasons_map_like_pi() {
    let ending = |reason: &str| {
        format!(
            "event: message_start\ndata: {{\"type\":\"message_start\",\"message\":{{\"id\":\"m\",\"usage\":{{\"input_tokens\":1}}}}}}\n\n\
             event: message_delta\ndata: {{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":\"{reason}\"}},\"usage\":{{\"output_tokens\":2}}}}\n\n\
             event: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n"
        )
    };
    for (reason, expected) in [
        ("end_turn", StopReason::Stop),
        ("pause_turn", StopReason::Stop),
        ("stop_sequence", StopReason::Stop),
        ("max_tokens", StopReason::Length),
        ("tool_use", StopReason::ToolUse),
    ] {
        let (_, result) = decode(&ending(reason), usize::MAX).await;
        assert_eq!(message_of(result).stop_reason, expected, "{reason}");
    }
    let (_, refused) = decode(&ending("refusal"), usize::MAX).await;
    assert_eq!(error_of(refused).message, "An unknown error occurred");
    let (_, unknown) = decode(&ending("model_context_window_exceeded"), usize::MAX).await;
    assert_eq!(error_of(unknown).message, "Unhandled stop reason: model_context_window_exceeded");
}

#[tokio::test]
async fn error_events_and_truncation_fail_the_stream() {
    let error = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{}}}\n\n\
                 event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    let (_, result) = decode(error, usize::MAX).await;
    let failure = error_of(result);
    assert_eq!(failure.message, r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#);
    assert_eq!(failure.kind, Some(ProviderErrorKind::Server));

    let cut = RECORDED.split("event: message_delta").next().unwrap_or_default();
    let (events, result) = decode(cut, 9).await;
    assert!(error_of(result).message.contains("message_stop"));
    assert_eq!(tags(&events).last().map(String::as_str), Some("toolcall_end:3"), "closed blocks stay closed");

    let (_, result) = decode("event: message_start\ndata: {not json}\n\n", usize::MAX).await;
    assert!(error_of(result).message.starts_with("could not parse the Anthropic message_start event"));

    // An empty body is an empty answer, as in pi; a body of foreign events is an error.
    let (events, result) = decode(": keep-alive\n\nevent: ping\ndata: {}\n\n", usize::MAX).await;
    assert!(events.is_empty());
    assert_eq!(message_of(result).stop_reason, StopReason::Stop);
    let (_, result) = decode("data: {\"choices\":[]}\n\ndata: [DONE]\n\n", usize::MAX).await;
    assert_eq!(error_of(result).message, NOT_ANTHROPIC);
}

#[tokio::test]
async fn raw_control_characters_in_events_are_repaired() {
    let body = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{}}}\n\n\
                event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
                event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a\tb \\q\"}}\n\n\
                event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n\
                event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    let (_, result) = decode(body, usize::MAX).await;
    assert_eq!(message_of(result).text(), "a\tb \\q");
    assert_eq!(repair_json("{\"a\":\"\\u00e9\\x\u{1}\"}"), "{\"a\":\"\\u00e9\\\\x\\u0001\"}");
}

#[test]
fn http_errors_read_like_the_sdk() {
    let body = r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: too large"}}"#;
    assert_eq!(http_error_message(400, body), format!("400 {body}"));
    assert_eq!(http_error_message(500, r#"{"message":"flat"}"#), "500 flat");
    assert_eq!(http_error_message(502, "<html>bad gateway</html>"), "502 <html>bad gateway</html>");
    assert_eq!(http_error_message(503, ""), "503 status code (no body)");
    assert_eq!(http_error_message(400, "null"), "400 null");
}

#[test]
fn oauth_tool_names_map_back_to_the_callers() {
    let start = json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t", "name": "Read", "input": {}}});
    let mut decoder =
        AnthropicDecoder::new(empty_assistant_message(&model()), &model()).with_tool_names(vec!["read".into()]);
    let mut events = Vec::new();
    assert!(decoder.apply(&start, &mut events).is_ok());
    let call = decoder.message().tool_calls().next().map(|c| c.name.clone());
    assert_eq!(call.as_deref(), Some("read"));
}
