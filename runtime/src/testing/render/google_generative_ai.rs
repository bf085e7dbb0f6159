//! Renders a scripted completion as the SSE frames a Gemini `streamGenerateContent?alt=sse` stream
//! carries: `data:` chunks only (no event names) holding thought parts with a base64
//! `thoughtSignature`, text parts, whole `functionCall` parts, and on the last chunk the finish
//! reason and `usageMetadata`. A mid-stream failure is a chunk holding an `error` object.

use serde_json::{Value, json};

use super::{pieces, thinking_signature, usage_counts};
use crate::testing::MockCompletion;

/// The `data:` frames of one streamed answer, each already terminated by a blank line.
/// `number` counts answers served (it makes the response id); `request_bytes` sizes estimated usage.
pub(crate) fn frames(completion: &MockCompletion, number: usize, model: &str, request_bytes: usize) -> Vec<String> {
    let response_id = format!("mock-response-{number}");
    let mut chunks: Vec<Vec<Value>> = Vec::new();
    if let Some(thinking) = completion.thinking.as_deref() {
        let thought_pieces: Vec<&str> = pieces(completion, thinking, 3);
        let signature = signature(completion, number);
        for (k, piece) in thought_pieces.iter().enumerate() {
            let mut part = json!({"text": piece, "thought": true});
            // Gemini signs the end of the thought.
            if k + 1 == thought_pieces.len() {
                part["thoughtSignature"] = json!(signature);
            }
            chunks.push(vec![part]);
        }
    }
    if let Some(text) = completion.text.as_deref() {
        chunks.extend(pieces(completion, text, 3).into_iter().map(|piece| vec![json!({"text": piece})]));
    }
    if !completion.tool_calls.is_empty() {
        let calls = completion
            .tool_calls
            .iter()
            .map(|call| {
                let mut function_call = json!({"name": call.name, "args": call_arguments(&call.arguments)});
                if let Some(id) = &call.id {
                    function_call["id"] = json!(id);
                }
                json!({"functionCall": function_call})
            })
            .collect();
        chunks.push(calls);
    }
    let chunk = |parts: Vec<Value>| {
        let content =
            if parts.is_empty() { json!({"role": "model"}) } else { json!({"parts": parts, "role": "model"}) };
        json!({
            "candidates": [{"content": content, "index": 0}],
            "modelVersion": model,
            "responseId": response_id,
        })
    };
    if let Some(message) = &completion.stream_error {
        let mut frames: Vec<String> = chunks.into_iter().map(|parts| frame(&chunk(parts))).collect();
        frames.push(frame(&json!({"error": {"code": 500, "message": message, "status": "INTERNAL"}})));
        return frames;
    }
    let last_parts = chunks.pop().unwrap_or_default();
    let mut frames: Vec<String> = chunks.into_iter().map(|parts| frame(&chunk(parts))).collect();
    let mut last = chunk(last_parts);
    last["candidates"][0]["finishReason"] = json!(finish_reason(completion));
    last["usageMetadata"] = usage_metadata(completion, request_bytes);
    frames.push(frame(&last));
    frames
}

/// Google's error body: `{"error":{"code","message","status"}}` with the RPC status name.
pub(crate) fn error_body(status: u16, message: &str) -> String {
    json!({"error": {"code": status, "message": message, "status": rpc_status(status)}}).to_string()
}

fn frame(value: &Value) -> String {
    format!("data: {value}\r\n\r\n")
}

/// The RPC status name Google gives an HTTP status.
fn rpc_status(status: u16) -> &'static str {
    match status {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        409 => "ABORTED",
        429 => "RESOURCE_EXHAUSTED",
        499 => "CANCELLED",
        500 => "INTERNAL",
        501 => "NOT_IMPLEMENTED",
        503 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ => "UNKNOWN",
    }
}

/// Gemini sends arguments as a JSON object; a scripted string is parsed when it is JSON, else sent
/// as the string itself.
fn call_arguments(arguments: &Value) -> Value {
    match arguments {
        Value::String(raw) => serde_json::from_str(raw).unwrap_or_else(|_| arguments.clone()),
        other => other.clone(),
    }
}

/// The scripted finish reason in Gemini's words (OpenAI-style names are translated); `STOP` by default,
/// also for tool calls.
fn finish_reason(completion: &MockCompletion) -> String {
    match completion.finish_reason.as_deref() {
        None | Some("stop" | "tool_calls" | "end_turn" | "tool_use") => "STOP".to_owned(),
        Some("length" | "max_tokens") => "MAX_TOKENS".to_owned(),
        Some("content_filter") => "SAFETY".to_owned(),
        Some(other) => other.to_owned(),
    }
}

/// Google counts cached tokens inside `promptTokenCount`; the total is prompt plus candidates.
fn usage_metadata(completion: &MockCompletion, request_bytes: usize) -> Value {
    let (input, output, cached) = usage_counts(completion, request_bytes);
    let prompt = input + cached;
    let mut usage = json!({
        "promptTokenCount": prompt,
        "candidatesTokenCount": output,
        "totalTokenCount": prompt + output,
    });
    if cached > 0 {
        usage["cachedContentTokenCount"] = json!(cached);
    }
    usage
}

/// The scripted signature as given, else the mock's default one base64-encoded (Google signatures
/// are base64, and pi drops any that are not).
fn signature(completion: &MockCompletion, number: usize) -> String {
    match &completion.thinking_signature {
        Some(scripted) => scripted.clone(),
        None => base64_encode(thinking_signature(completion, number).as_bytes()),
    }
}

/// Standard base64 with padding.
fn base64_encode(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let b = [group[0], group.get(1).copied().unwrap_or(0), group.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= group.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * k)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{MockToolCall, MockUsage};

    fn parse(frames: &[String]) -> Vec<Value> {
        frames
            .iter()
            .filter_map(|f| f.strip_prefix("data: "))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect()
    }

    #[test]
    fn base64_matches_known_values() {
        assert_eq!(base64_encode(b""), "");
        assert_eq!(base64_encode(b"f"), "Zg==");
        assert_eq!(base64_encode(b"fo"), "Zm8=");
        assert_eq!(base64_encode(b"foo"), "Zm9v");
        assert_eq!(base64_encode(b"mocksig-1"), "bW9ja3NpZy0x");
    }

    #[test]
    fn frames_look_like_gemini() {
        let completion = MockCompletion {
            thinking: Some("Plan it".into()),
            text: Some("Hi there".into()),
            tool_calls: vec![
                MockToolCall { id: Some("call_1".into()), name: "read".into(), arguments: json!({"path": "a"}) },
                MockToolCall { id: None, name: "ls".into(), arguments: json!("{\"dir\":\".\"}") },
            ],
            usage: Some(MockUsage { input: 10, output: 4, cache_read: 6 }),
            ..MockCompletion::default()
        };
        let frames = frames(&completion, 3, "gemini-x", 0);
        assert!(frames.iter().all(|f| f.starts_with("data: {") && f.ends_with("\r\n\r\n")));
        let chunks = parse(&frames);
        assert_eq!(chunks.len(), frames.len());
        let parts: Vec<&Value> =
            chunks.iter().filter_map(|c| c["candidates"][0]["content"]["parts"].as_array()).flatten().collect();
        let thought: String =
            parts.iter().filter(|p| p["thought"] == json!(true)).filter_map(|p| p["text"].as_str()).collect();
        assert_eq!(thought, "Plan it");
        let signatures: Vec<&str> = parts.iter().filter_map(|p| p["thoughtSignature"].as_str()).collect();
        assert_eq!(signatures, ["bW9ja3NpZy0z"], "base64 of mocksig-3, once");
        let text: String =
            parts.iter().filter(|p| p.get("thought").is_none()).filter_map(|p| p["text"].as_str()).collect();
        assert_eq!(text, "Hi there");
        let calls: Vec<&Value> = parts.iter().filter_map(|p| p.get("functionCall")).collect();
        assert_eq!(
            calls,
            [
                &json!({"name": "read", "args": {"path": "a"}, "id": "call_1"}),
                &json!({
                    "name": "ls",
                    "args": {"dir": "."}
                })
            ]
        );
        let last = &chunks[chunks.len() - 1];
        assert_eq!(last["candidates"][0]["finishReason"], "STOP");
        assert_eq!(
            last["usageMetadata"],
            json!({"promptTokenCount": 16, "candidatesTokenCount": 4, "totalTokenCount": 20, "cachedContentTokenCount": 6})
        );
        assert!(chunks[..chunks.len() - 1].iter().all(|c| c.get("usageMetadata").is_none()));
        assert!(chunks.iter().all(|c| c["responseId"] == "mock-response-3" && c["modelVersion"] == "gemini-x"));
    }

    #[test]
    fn endings_errors_and_empty_answers() {
        let errored =
            MockCompletion { text: Some("x".into()), stream_error: Some("boom".into()), ..MockCompletion::default() };
        let frames_out = frames(&errored, 1, "m", 0);
        assert_eq!(
            frames_out.last().map(String::as_str),
            Some("data: {\"error\":{\"code\":500,\"message\":\"boom\",\"status\":\"INTERNAL\"}}\r\n\r\n")
        );
        let cut = MockCompletion {
            thinking: Some("t".into()),
            thinking_signature: Some("not base64!".into()),
            text: Some("x".into()),
            finish_reason: Some("length".into()),
            ..MockCompletion::default()
        };
        let chunks = parse(&frames(&cut, 1, "m", 0));
        assert_eq!(chunks[0]["candidates"][0]["content"]["parts"][0]["thoughtSignature"], "not base64!");
        assert_eq!(chunks[1]["candidates"][0]["finishReason"], "MAX_TOKENS");
        let empty = parse(&frames(&MockCompletion::default(), 1, "m", 8));
        assert_eq!(empty.len(), 1);
        assert_eq!(empty[0]["candidates"][0]["content"], json!({"role": "model"}));
        assert_eq!(empty[0]["usageMetadata"]["promptTokenCount"], 2);
        assert_eq!(error_body(429, "slow"), r#"{"error":{"code":429,"message":"slow","status":"RESOURCE_EXHAUSTED"}}"#);
    }
}
