//! Renders a scripted completion as an Anthropic Messages event stream: `message_start`, `ping`,
//! thinking, text and `tool_use` content blocks with their deltas, `message_delta` with the stop
//! reason and usage, `message_stop`; or a mid-stream `error` event.

use serde_json::{Value, json};

use super::{pieces, split, sse_frame, thinking_signature, usage_counts};
use crate::testing::MockCompletion;

/// The named SSE frames of one streamed message, each terminated by a blank line. `number` counts
/// answers served (it makes the message id); `request_bytes` sizes estimated usage.
pub(crate) fn frames(completion: &MockCompletion, number: usize, model: &str, request_bytes: usize) -> Vec<String> {
    let (input, output, cache_read) = usage_counts(completion, request_bytes);
    let message = json!({
        "id": format!("msg_mock_{number}"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": null,
        "stop_sequence": null,
        "usage": {
            "input_tokens": input,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": cache_read,
            "output_tokens": 1,
        },
    });
    let mut frames = vec![
        sse_frame(Some("message_start"), &json!({"type": "message_start", "message": message})),
        sse_frame(Some("ping"), &json!({"type": "ping"})),
    ];
    let mut blocks = Blocks { frames: &mut frames, next_index: 0 };
    if let Some(thinking) = completion.thinking.as_deref() {
        let deltas = pieces(completion, thinking, 3)
            .into_iter()
            .map(|piece| json!({"type": "thinking_delta", "thinking": piece}))
            .chain([json!({"type": "signature_delta", "signature": thinking_signature(completion, number)})])
            .collect();
        blocks.push(json!({"type": "thinking", "thinking": "", "signature": ""}), deltas);
    }
    if let Some(text) = completion.text.as_deref() {
        let deltas =
            pieces(completion, text, 3).into_iter().map(|piece| json!({"type": "text_delta", "text": piece})).collect();
        blocks.push(json!({"type": "text", "text": ""}), deltas);
    }
    for call in &completion.tool_calls {
        let start =
            json!({"type": "tool_use", "id": call.id.clone().unwrap_or_default(), "name": call.name, "input": {}});
        let arguments = call.arguments_text();
        let deltas = std::iter::once("")
            .chain(split(&arguments, 2))
            .map(|piece| json!({"type": "input_json_delta", "partial_json": piece}))
            .collect();
        blocks.push(start, deltas);
    }
    if let Some(message) = &completion.stream_error {
        let error = json!({"type": "error", "error": {"type": "overloaded_error", "message": message}});
        frames.push(sse_frame(Some("error"), &error));
        return frames;
    }
    let delta = json!({
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason(completion), "stop_sequence": null},
        "usage": {"output_tokens": output},
    });
    frames.push(sse_frame(Some("message_delta"), &delta));
    frames.push(sse_frame(Some("message_stop"), &json!({"type": "message_stop"})));
    frames
}

/// Anthropic's error body: `{"type":"error","error":{"type":…,"message":…}}` with the type the
/// status stands for.
pub(crate) fn error_body(status: u16, message: &str) -> String {
    let kind = match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    };
    json!({"type": "error", "error": {"type": kind, "message": message}}).to_string()
}

/// Content blocks appended as start, deltas and stop frames, numbered from 0.
struct Blocks<'a> {
    frames: &'a mut Vec<String>,
    next_index: usize,
}

impl Blocks<'_> {
    fn push(&mut self, content_block: Value, deltas: Vec<Value>) {
        let index = self.next_index;
        self.next_index += 1;
        let start = json!({"type": "content_block_start", "index": index, "content_block": content_block});
        self.frames.push(sse_frame(Some("content_block_start"), &start));
        for delta in deltas {
            let event = json!({"type": "content_block_delta", "index": index, "delta": delta});
            self.frames.push(sse_frame(Some("content_block_delta"), &event));
        }
        let stop = json!({"type": "content_block_stop", "index": index});
        self.frames.push(sse_frame(Some("content_block_stop"), &stop));
    }
}

/// The script's finish reason in Anthropic's words (OpenAI names are translated; others pass as is).
fn stop_reason(completion: &MockCompletion) -> String {
    match completion.finish_reason.as_deref() {
        None if completion.tool_calls.is_empty() => "end_turn".to_owned(),
        None | Some("tool_calls") => "tool_use".to_owned(),
        Some("stop") => "end_turn".to_owned(),
        Some("length") => "max_tokens".to_owned(),
        Some("content_filter") => "refusal".to_owned(),
        Some(other) => other.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{MockToolCall, MockUsage};

    /// `(event name, data)` of each frame.
    fn parse(frames: &[String]) -> Vec<(String, Value)> {
        frames
            .iter()
            .filter_map(|frame| {
                let (head, data) = frame.strip_prefix("event: ")?.split_once("\ndata: ")?;
                Some((head.to_owned(), serde_json::from_str(data.trim_end()).ok()?))
            })
            .collect()
    }

    #[test]
    fn frames_look_like_anthropic() {
        let completion = MockCompletion {
            thinking: Some("Let me think".into()),
            text: Some("Hi there".into()),
            tool_calls: vec![MockToolCall {
                id: Some("toolu_1".into()),
                name: "read".into(),
                arguments: json!({"path": "a"}),
            }],
            usage: Some(MockUsage { input: 30, output: 9, cache_read: 4 }),
            ..MockCompletion::default()
        };
        let frames = frames(&completion, 3, "claude-x", 0);
        assert!(frames.iter().all(|f| f.ends_with("\n\n")));
        let events = parse(&frames);
        assert_eq!(events.len(), frames.len(), "every frame is a named JSON event");
        let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(&names[..2], ["message_start", "ping"]);
        assert_eq!(&names[names.len() - 2..], ["message_delta", "message_stop"]);
        assert!(events.iter().all(|(name, data)| data["type"] == name.as_str()));
        let start = &events[0].1["message"];
        assert_eq!((start["id"].as_str(), start["model"].as_str()), (Some("msg_mock_3"), Some("claude-x")));
        assert_eq!(start["usage"]["input_tokens"], 30);
        assert_eq!(start["usage"]["cache_read_input_tokens"], 4);
        let collect = |kind: &str, field: &str| -> String {
            events
                .iter()
                .filter(|(_, d)| d["delta"]["type"] == kind)
                .filter_map(|(_, d)| d["delta"][field].as_str())
                .collect()
        };
        assert_eq!(collect("thinking_delta", "thinking"), "Let me think");
        assert_eq!(collect("signature_delta", "signature"), "mocksig-3");
        assert_eq!(collect("text_delta", "text"), "Hi there");
        assert_eq!(collect("input_json_delta", "partial_json"), r#"{"path":"a"}"#);
        let starts: Vec<(u64, &str)> = events
            .iter()
            .filter(|(name, _)| name == "content_block_start")
            .filter_map(|(_, d)| Some((d["index"].as_u64()?, d["content_block"]["type"].as_str()?)))
            .collect();
        assert_eq!(starts, [(0, "thinking"), (1, "text"), (2, "tool_use")]);
        let stops = events.iter().filter(|(name, _)| name == "content_block_stop").count();
        assert_eq!(stops, 3);
        let delta = &events[events.len() - 2].1;
        assert_eq!(delta["delta"]["stop_reason"], "tool_use");
        assert_eq!(delta["usage"]["output_tokens"], 9);
    }

    #[test]
    fn finish_reasons_and_errors_use_anthropic_words() {
        let reason = |finish: Option<&str>| {
            let completion = MockCompletion { finish_reason: finish.map(str::to_owned), ..MockCompletion::default() };
            stop_reason(&completion)
        };
        assert_eq!(reason(None), "end_turn");
        assert_eq!(reason(Some("length")), "max_tokens");
        assert_eq!(reason(Some("content_filter")), "refusal");
        assert_eq!(reason(Some("pause_turn")), "pause_turn");

        let failing =
            MockCompletion { text: Some("x".into()), stream_error: Some("busy".into()), ..MockCompletion::default() };
        let frames = frames(&failing, 1, "m", 0);
        assert_eq!(
            frames.last().map(String::as_str),
            Some(
                "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"busy\"}}\n\n"
            )
        );
        assert!(!frames.iter().any(|f| f.starts_with("event: message_stop")));
        assert_eq!(
            error_body(529, "slow down"),
            r#"{"type":"error","error":{"type":"overloaded_error","message":"slow down"}}"#
        );
        assert!(error_body(400, "bad").contains("invalid_request_error"));
    }
}
