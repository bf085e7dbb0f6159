//! Renders a scripted completion as the SSE frames an OpenAI chat-completions stream carries:
//! role chunk, reasoning and content deltas, tool-call deltas, finish chunk, usage chunk, `[DONE]`.

use serde_json::{Value, json};

use super::{pieces, split, usage_counts};
use crate::testing::MockCompletion;

/// The `data:` frames of one streamed completion, each already terminated by a blank line.
/// `number` counts completions served (it makes the response id); `request_bytes` sizes estimated usage.
pub(crate) fn frames(completion: &MockCompletion, number: usize, model: &str, request_bytes: usize) -> Vec<String> {
    let chunk = Chunk { id: format!("chatcmpl-mock-{number}"), model: model.to_owned(), created: unix_seconds() };
    let mut frames = vec![chunk.delta(json!({"role": "assistant", "content": "", "refusal": null}))];
    if let Some(thinking) = completion.thinking.as_deref() {
        frames.extend(
            pieces(completion, thinking, 3).into_iter().map(|piece| chunk.delta(json!({"reasoning_content": piece}))),
        );
    }
    if let Some(text) = completion.text.as_deref() {
        frames.extend(pieces(completion, text, 3).into_iter().map(|piece| chunk.delta(json!({"content": piece}))));
    }
    for (index, call) in completion.tool_calls.iter().enumerate() {
        let opening = json!({"tool_calls": [{
            "index": index,
            "id": call.id.clone().unwrap_or_default(),
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }]});
        frames.push(chunk.delta(opening));
        for piece in split(&call.arguments_text(), 2) {
            frames.push(chunk.delta(json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})));
        }
    }
    if let Some(message) = &completion.stream_error {
        frames.push(frame(&json!({"error": {"message": message, "type": "server_error", "code": 500}})));
        return frames;
    }
    let finish = completion
        .finish_reason
        .clone()
        .unwrap_or_else(|| if completion.tool_calls.is_empty() { "stop" } else { "tool_calls" }.to_owned());
    frames.push(chunk.frame(json!([{"index": 0, "delta": {}, "logprobs": null, "finish_reason": finish}]), None));
    frames.push(chunk.frame(json!([]), Some(usage(completion, request_bytes))));
    frames.push("data: [DONE]\n\n".to_owned());
    frames
}

struct Chunk {
    id: String,
    model: String,
    created: u64,
}

impl Chunk {
    fn delta(&self, delta: Value) -> String {
        self.frame(json!([{"index": 0, "delta": delta, "logprobs": null, "finish_reason": null}]), None)
    }

    fn frame(&self, choices: Value, usage: Option<Value>) -> String {
        let mut chunk = json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": choices,
        });
        if let (Some(usage), Some(object)) = (usage, chunk.as_object_mut()) {
            object.insert("usage".into(), usage);
        }
        frame(&chunk)
    }
}

fn frame(value: &Value) -> String {
    format!("data: {value}\n\n")
}

/// OpenAI's usage object (cached tokens are part of `prompt_tokens`).
fn usage(completion: &MockCompletion, request_bytes: usize) -> Value {
    let (input, output, cached) = usage_counts(completion, request_bytes);
    json!({
        "prompt_tokens": input + cached,
        "completion_tokens": output,
        "total_tokens": input + cached + output,
        "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    })
}

fn unix_seconds() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::MockToolCall;

    #[test]
    fn frames_look_like_openai() {
        let completion = MockCompletion {
            text: Some("Hi there".into()),
            tool_calls: vec![MockToolCall {
                id: Some("call_1".into()),
                name: "read".into(),
                arguments: json!({"path": "a"}),
            }],
            ..MockCompletion::default()
        };
        let frames = frames(&completion, 7, "m", 40);
        let parsed: Vec<Value> = frames
            .iter()
            .filter_map(|f| f.strip_prefix("data: "))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect();
        assert_eq!(frames.last().map(String::as_str), Some("data: [DONE]\n\n"));
        assert!(frames.iter().all(|f| f.ends_with("\n\n")));
        assert_eq!(parsed[0]["id"], "chatcmpl-mock-7");
        assert_eq!(parsed[0]["choices"][0]["delta"]["role"], "assistant");
        let text: String = parsed.iter().filter_map(|c| c["choices"][0]["delta"]["content"].as_str()).collect();
        assert_eq!(text, "Hi there");
        let args: String = parsed
            .iter()
            .filter_map(|c| c["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"].as_str())
            .collect();
        assert_eq!(args, r#"{"path":"a"}"#);
        let finish = &parsed[parsed.len() - 2];
        assert_eq!(finish["choices"][0]["finish_reason"], "tool_calls");
        let usage = &parsed[parsed.len() - 1]["usage"];
        assert_eq!((usage["prompt_tokens"].as_u64(), usage["completion_tokens"].as_u64()), (Some(10), Some(6)));
    }

    #[test]
    fn stream_errors_replace_the_ending() {
        let completion =
            MockCompletion { text: Some("x".into()), stream_error: Some("boom".into()), ..MockCompletion::default() };
        let frames = frames(&completion, 1, "m", 0);
        assert_eq!(
            frames.last().map(String::as_str),
            Some("data: {\"error\":{\"message\":\"boom\",\"type\":\"server_error\",\"code\":500}}\n\n")
        );
    }
}
