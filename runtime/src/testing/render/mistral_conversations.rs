//! Renders a scripted completion as the `data:` chunks Mistral's chat stream carries: a role chunk with empty
//! content, thinking as `thinking` content parts, text as string deltas, each tool call whole in one chunk,
//! a finish chunk with usage, `[DONE]`.

use serde_json::{Value, json};

use super::{pieces, usage_counts};
use crate::testing::MockCompletion;

/// The frames of one streamed completion, each terminated by a blank line.
pub(crate) fn frames(completion: &MockCompletion, number: usize, model: &str, request_bytes: usize) -> Vec<String> {
    let chunk = |delta: Value, finish: Option<&str>, usage: Option<Value>| {
        let mut chunk = json!({
            "id": format!("cmpl-mock-{number}"),
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        });
        if let (Some(usage), Some(object)) = (usage, chunk.as_object_mut()) {
            object.insert("usage".into(), usage);
        }
        format!("data: {chunk}\n\n")
    };
    let mut frames = vec![chunk(json!({"role": "assistant", "content": ""}), None, None)];
    if let Some(thinking) = completion.thinking.as_deref() {
        frames.extend(pieces(completion, thinking, 3).into_iter().map(|piece| {
            chunk(json!({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": piece}]}]}), None, None)
        }));
    }
    if let Some(text) = completion.text.as_deref() {
        frames
            .extend(pieces(completion, text, 3).into_iter().map(|piece| chunk(json!({"content": piece}), None, None)));
    }
    for (index, call) in completion.tool_calls.iter().enumerate() {
        let id = call.id.clone().unwrap_or_else(|| format!("mk{:07}", number * 100 + index));
        let call =
            json!({"id": id, "function": {"name": call.name, "arguments": call.arguments_text()}, "index": index});
        frames.push(chunk(json!({"tool_calls": [call]}), None, None));
    }
    if let Some(message) = &completion.stream_error {
        frames.push(format!("data: {}\n\n", error_json(message, "server_error", 500)));
        return frames;
    }
    let finish = completion
        .finish_reason
        .clone()
        .unwrap_or_else(|| if completion.tool_calls.is_empty() { "stop" } else { "tool_calls" }.to_owned());
    let (input, output, _) = usage_counts(completion, request_bytes);
    let usage = json!({"prompt_tokens": input, "total_tokens": input + output, "completion_tokens": output});
    frames.push(chunk(json!({}), Some(&finish), Some(usage)));
    frames.push("data: [DONE]\n\n".to_owned());
    frames
}

/// Mistral's error object.
fn error_json(message: &str, kind: &str, code: u16) -> Value {
    json!({"object": "error", "message": message, "type": kind, "param": null, "code": code.to_string()})
}

/// An error response body as Mistral shapes it.
pub(crate) fn error_body(status: u16, message: &str) -> String {
    error_json(message, "mock_script_exhausted", status).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::MockToolCall;

    fn parsed(frames: &[String]) -> Vec<Value> {
        frames
            .iter()
            .filter_map(|f| f.strip_prefix("data: "))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect()
    }

    #[test]
    fn frames_look_like_mistral() {
        let completion = MockCompletion {
            thinking: Some("Hmm.".into()),
            text: Some("Hi there".into()),
            tool_calls: vec![MockToolCall { id: None, name: "read".into(), arguments: json!({"path": "a"}) }],
            ..MockCompletion::default()
        };
        let frames = frames(&completion, 7, "m", 40);
        let chunks = parsed(&frames);
        assert_eq!(frames.last().map(String::as_str), Some("data: [DONE]\n\n"));
        assert_eq!(chunks[0]["choices"][0]["delta"], json!({"role": "assistant", "content": ""}));
        assert_eq!(chunks[1]["choices"][0]["delta"]["content"][0]["type"], "thinking");
        let text: String = chunks.iter().filter_map(|c| c["choices"][0]["delta"]["content"].as_str()).collect();
        assert_eq!(text, "Hi there");
        let call = chunks.iter().find_map(|c| c["choices"][0]["delta"]["tool_calls"].get(0).cloned());
        assert_eq!(
            call,
            Some(json!({"id": "mk0000700", "function": {"name": "read", "arguments": "{\"path\":\"a\"}"}, "index": 0}))
        );
        let last = &chunks[chunks.len() - 1];
        assert_eq!(last["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(last["usage"], json!({"prompt_tokens": 10, "total_tokens": 17, "completion_tokens": 7}));
        assert!(chunks.iter().all(|c| c["id"] == "cmpl-mock-7" && c["model"] == "m"));
    }

    #[test]
    fn stream_errors_replace_the_ending() {
        let completion =
            MockCompletion { text: Some("x".into()), stream_error: Some("boom".into()), ..MockCompletion::default() };
        let frames = frames(&completion, 1, "m", 0);
        assert_eq!(
            frames.last().map(String::as_str),
            Some(
                "data: {\"object\":\"error\",\"message\":\"boom\",\"type\":\"server_error\",\"param\":null,\"code\":\"500\"}\n\n"
            )
        );
    }
}
