//! Renders a scripted completion as a Bedrock ConverseStream answer: AWS event-stream messages
//! (`messageStart`, reasoning, text and tool-use content blocks, `messageStop`, `metadata`, or an exception
//! after the content), each a binary frame with its prelude, headers, JSON payload and CRC32 checksums.
//! The encoder is written here from the format's description, independent of the client's decoder.

use serde_json::{Value, json};

use super::{pieces, split, thinking_signature, usage_counts};
use crate::testing::MockCompletion;

/// The content type of an event-stream answer.
pub(crate) const CONTENT_TYPE: &str = "application/vnd.amazon.eventstream";

/// One event of the answer: `(:event-type, payload)`, or an exception when the name starts with `!`.
type Event = (String, Value);

/// The events of one answer. `number` counts answers served; `request_bytes` sizes estimated usage.
fn events(completion: &MockCompletion, number: usize, request_bytes: usize) -> Vec<Event> {
    let (input, output, cache_read) = usage_counts(completion, request_bytes);
    let event = |name: &str, payload: Value| (name.to_owned(), payload);
    let mut events = vec![event("messageStart", json!({"p": "abcdefghijklmnopq", "role": "assistant"}))];
    let mut index = 0;
    let delta = |events: &mut Vec<Event>, index: usize, delta: Value| {
        events.push(event("contentBlockDelta", json!({"contentBlockIndex": index, "delta": delta, "p": "abcd"})));
    };
    if let Some(thinking) = completion.thinking.as_deref() {
        for piece in pieces(completion, thinking, 3) {
            delta(&mut events, index, json!({"reasoningContent": {"text": piece}}));
        }
        delta(&mut events, index, json!({"reasoningContent": {"signature": thinking_signature(completion, number)}}));
        events.push(event("contentBlockStop", json!({"contentBlockIndex": index, "p": "ab"})));
        index += 1;
    }
    if let Some(text) = completion.text.as_deref() {
        for piece in pieces(completion, text, 3) {
            delta(&mut events, index, json!({"text": piece}));
        }
        events.push(event("contentBlockStop", json!({"contentBlockIndex": index, "p": "ab"})));
        index += 1;
    }
    for call in &completion.tool_calls {
        let start = json!({"toolUse": {"toolUseId": call.id.clone().unwrap_or_default(), "name": call.name}});
        events.push(event("contentBlockStart", json!({"contentBlockIndex": index, "start": start, "p": "abc"})));
        for piece in split(&call.arguments_text(), 2) {
            delta(&mut events, index, json!({"toolUse": {"input": piece}}));
        }
        events.push(event("contentBlockStop", json!({"contentBlockIndex": index, "p": "ab"})));
        index += 1;
    }
    if let Some(message) = &completion.stream_error {
        events.push(exception(message));
        return events;
    }
    events.push(event("messageStop", json!({"p": "abcdef", "stopReason": stop_reason(completion)})));
    let mut usage = json!({"inputTokens": input, "outputTokens": output, "totalTokens": input + output + cache_read});
    if cache_read > 0 {
        usage["cacheReadInputTokens"] = json!(cache_read);
    }
    events.push(event("metadata", json!({"metrics": {"latencyMs": 42}, "p": "abc", "usage": usage})));
    events
}

/// The exception a scripted `streamError` becomes: `<camelCaseName>Exception: message` names it, anything
/// else is an `internalServerException`.
fn exception(text: &str) -> Event {
    let named = text.split_once(": ").filter(|(name, _)| {
        name.ends_with("Exception") && name.starts_with(|c: char| c.is_ascii_lowercase()) && !name.contains(' ')
    });
    let (name, message) = named.unwrap_or(("internalServerException", text));
    (format!("!{name}"), json!({"message": message}))
}

/// The script's finish reason in Converse's words (OpenAI names are translated; others pass as is).
fn stop_reason(completion: &MockCompletion) -> String {
    match completion.finish_reason.as_deref() {
        None if completion.tool_calls.is_empty() => "end_turn".to_owned(),
        None | Some("tool_calls") => "tool_use".to_owned(),
        Some("stop") => "end_turn".to_owned(),
        Some("length") => "max_tokens".to_owned(),
        Some("content_filter") => "content_filtered".to_owned(),
        Some(other) => other.to_owned(),
    }
}

/// The binary frames of one answer, one event-stream message each.
pub(crate) fn binary_frames(completion: &MockCompletion, number: usize, request_bytes: usize) -> Vec<Vec<u8>> {
    events(completion, number, request_bytes).iter().map(|(name, payload)| encode_event(name, payload)).collect()
}

/// A readable transcript of the answer (`event: <type>` / `data: <payload>`), for [`super::rendered_body`].
pub(crate) fn text_frames(completion: &MockCompletion, number: usize, request_bytes: usize) -> Vec<String> {
    events(completion, number, request_bytes)
        .iter()
        .map(|(name, payload)| format!("event: {name}\ndata: {payload}\n\n"))
        .collect()
}

/// One event (or, for a name starting with `!`, exception) message.
pub(crate) fn encode_event(name: &str, payload: &Value) -> Vec<u8> {
    let payload = payload.to_string();
    let headers = match name.strip_prefix('!') {
        Some(exception) => {
            [(":exception-type", exception), (":content-type", "application/json"), (":message-type", "exception")]
        }
        None => [(":event-type", name), (":content-type", "application/json"), (":message-type", "event")],
    };
    encode_message(&headers, payload.as_bytes())
}

/// An event-stream message: total and header lengths with their CRC, string headers, the payload, and the
/// CRC of everything before it.
pub(crate) fn encode_message(headers: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    let mut encoded_headers = Vec::new();
    for (name, value) in headers {
        encoded_headers.push(name.len() as u8);
        encoded_headers.extend_from_slice(name.as_bytes());
        encoded_headers.push(7);
        encoded_headers.extend_from_slice(&(value.len() as u16).to_be_bytes());
        encoded_headers.extend_from_slice(value.as_bytes());
    }
    let total = 12 + encoded_headers.len() + payload.len() + 4;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&(total as u32).to_be_bytes());
    out.extend_from_slice(&(encoded_headers.len() as u32).to_be_bytes());
    let prelude_crc = crc32(&out);
    out.extend_from_slice(&prelude_crc.to_be_bytes());
    out.extend_from_slice(&encoded_headers);
    out.extend_from_slice(payload);
    let message_crc = crc32(&out);
    out.extend_from_slice(&message_crc.to_be_bytes());
    out
}

/// CRC-32 (IEEE, reflected), bit by bit.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for byte in bytes {
        crc ^= u32::from(*byte);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
        }
    }
    !crc
}

/// The `x-amzn-errortype` a scripted error status stands for.
pub(crate) fn error_type(status: u16) -> &'static str {
    match status {
        400 | 413 | 422 => "ValidationException",
        401 | 403 => "AccessDeniedException",
        404 => "ResourceNotFoundException",
        408 => "ModelTimeoutException",
        424 => "ModelErrorException",
        429 => "ThrottlingException",
        503 => "ServiceUnavailableException",
        _ => "InternalServerException",
    }
}

/// Bedrock's error body.
pub(crate) fn error_body(message: &str) -> String {
    json!({"message": message}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::bedrock_converse::next_message;
    use crate::testing::{MockToolCall, MockUsage};

    #[test]
    fn frames_decode_as_event_stream_messages() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        let completion = MockCompletion {
            thinking: Some("Let me think".into()),
            text: Some("Hi there".into()),
            tool_calls: vec![MockToolCall {
                id: Some("t1".into()),
                name: "read".into(),
                arguments: json!({"path": "a"}),
            }],
            usage: Some(MockUsage { input: 30, output: 9, cache_read: 4 }),
            ..MockCompletion::default()
        };
        let mut buffer = bytes::BytesMut::from(&binary_frames(&completion, 3, 0).concat()[..]);
        let mut names = Vec::new();
        let mut payloads = Vec::new();
        while let Some(message) = next_message(&mut buffer).expect("valid frames") {
            assert_eq!(message.message_type, "event");
            names.push(message.name);
            payloads.push(serde_json::from_slice::<Value>(&message.payload).expect("json"));
        }
        assert!(buffer.is_empty());
        assert_eq!(names.first().map(String::as_str), Some("messageStart"));
        assert_eq!(&names[names.len() - 2..], ["messageStop", "metadata"]);
        assert_eq!(payloads[payloads.len() - 2]["stopReason"], "tool_use");
        assert_eq!(
            payloads[payloads.len() - 1]["usage"],
            json!({"inputTokens": 30, "outputTokens": 9, "totalTokens": 43, "cacheReadInputTokens": 4})
        );
        let signature = payloads.iter().find_map(|p| p.pointer("/delta/reasoningContent/signature")?.as_str());
        assert_eq!(signature, Some("mocksig-3"));
        let starts: Vec<&Value> = payloads.iter().filter_map(|p| p.pointer("/start/toolUse")).collect();
        assert_eq!(starts, [&json!({"toolUseId": "t1", "name": "read"})]);
    }

    #[test]
    fn stream_errors_become_named_exceptions() {
        let failing = |text: &str| MockCompletion {
            text: Some("x".into()),
            stream_error: Some(text.into()),
            ..MockCompletion::default()
        };
        for (text, name, message) in [
            ("throttlingException: slow down", "throttlingException", "slow down"),
            ("busy: now", "internalServerException", "busy: now"),
        ] {
            let frames = binary_frames(&failing(text), 1, 0);
            let mut buffer = bytes::BytesMut::from(&frames[frames.len() - 1][..]);
            let last = next_message(&mut buffer).expect("valid").expect("a message");
            assert_eq!((last.message_type.as_str(), last.name.as_str()), ("exception", name));
            assert_eq!(serde_json::from_slice::<Value>(&last.payload).expect("json"), json!({"message": message}));
        }
        assert_eq!(error_type(429), "ThrottlingException");
        assert_eq!(error_body("m"), r#"{"message":"m"}"#);
        assert!(text_frames(&failing("x"), 1, 0)[0].starts_with("event: messageStart\ndata: "));
    }
}
