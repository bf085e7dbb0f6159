//! Renders a scripted completion as an OpenAI Responses API event stream: `response.created`,
//! `response.in_progress`, a reasoning item (summary deltas, `encrypted_content`), a message item
//! (`output_text` deltas), function-call items (argument deltas), then `response.completed` (or
//! `response.failed` for a scripted stream error).

use serde_json::{Map, Value, json};

use super::{pieces, split, sse_frame, thinking_signature, usage_counts};
use crate::testing::MockCompletion;

/// The SSE frames of one streamed response, each already terminated by a blank line.
/// `number` counts responses served (it makes the ids); `request_bytes` sizes estimated usage.
pub(crate) fn frames(completion: &MockCompletion, number: usize, model: &str, request_bytes: usize) -> Vec<String> {
    let mut stream = ResponseStream { frames: Vec::new(), sequence: 0 };
    let envelope = Envelope { id: format!("resp_mock_{number}"), model: model.to_owned(), created_at: unix_seconds() };
    stream.push("response.created", json!({"response": envelope.response("in_progress", &[], None)}));
    stream.push("response.in_progress", json!({"response": envelope.response("in_progress", &[], None)}));

    // Item ids follow from the content, so the same scripted answer always yields the same message.
    let tag = content_tag(completion);
    let mut output: Vec<Value> = Vec::new();
    if let Some(thinking) = completion.thinking.as_deref() {
        let item = stream.reasoning_item(output.len(), format!("rs_mock_{tag}"), thinking, completion, number);
        output.push(item);
    }
    if let Some(text) = completion.text.as_deref() {
        output.push(stream.message_item(output.len(), format!("msg_mock_{tag}"), text, completion));
    }
    for (index, call) in completion.tool_calls.iter().enumerate() {
        let call_id = call.id.clone().unwrap_or_else(|| format!("call_mock_{tag}_{index}"));
        let item = json!({
            "id": format!("fc_mock_{tag}_{index}"),
            "type": "function_call",
            "status": "completed",
            "arguments": call.arguments_text(),
            "call_id": call_id,
            "name": call.name,
        });
        output.push(stream.function_call_item(output.len(), item));
    }

    if let Some(message) = &completion.stream_error {
        let mut failed = envelope.response("failed", &output, None);
        if let Some(object) = failed.as_object_mut() {
            object.insert("error".into(), json!({"code": "server_error", "message": message}));
        }
        stream.push("response.failed", json!({"response": failed}));
        return stream.frames;
    }
    let (status, incomplete) = match completion.finish_reason.as_deref() {
        None | Some("stop" | "tool_calls" | "completed") => ("completed", None),
        Some("length") => ("incomplete", Some("max_output_tokens")),
        Some("content_filter") => ("incomplete", Some("content_filter")),
        Some(other) => (other, None),
    };
    let mut completed = envelope.response(status, &output, Some(usage(completion, request_bytes)));
    if let (Some(reason), Some(object)) = (incomplete, completed.as_object_mut()) {
        object.insert("incomplete_details".into(), json!({"reason": reason}));
    }
    // The mock reports every ending through `response.completed` (pi reads the status from it).
    stream.push("response.completed", json!({"response": completed}));
    stream.frames
}

/// Collects frames, numbering each event.
struct ResponseStream {
    frames: Vec<String>,
    sequence: u64,
}

impl ResponseStream {
    /// Adds an event whose SSE name and `type` are both `kind`; `fields` follow `type` and `sequence_number`.
    fn push(&mut self, kind: &str, fields: Value) {
        let mut data = Map::new();
        data.insert("type".into(), json!(kind));
        data.insert("sequence_number".into(), json!(self.sequence));
        if let Value::Object(fields) = fields {
            data.extend(fields);
        }
        self.sequence += 1;
        self.frames.push(sse_frame(Some(kind), &Value::Object(data)));
    }

    fn reasoning_item(
        &mut self,
        output_index: usize,
        id: String,
        thinking: &str,
        completion: &MockCompletion,
        number: usize,
    ) -> Value {
        let added = json!({"id": id, "type": "reasoning", "summary": []});
        self.push("response.output_item.added", json!({"output_index": output_index, "item": added}));
        let part = |text: &str| json!({"type": "summary_text", "text": text});
        let at = json!({"item_id": id, "output_index": output_index, "summary_index": 0});
        self.push("response.reasoning_summary_part.added", with(&at, json!({"part": part("")})));
        for piece in pieces(completion, thinking, 3).into_iter() {
            self.push("response.reasoning_summary_text.delta", with(&at, json!({"delta": piece})));
        }
        self.push("response.reasoning_summary_text.done", with(&at, json!({"text": thinking})));
        self.push("response.reasoning_summary_part.done", with(&at, json!({"part": part(thinking)})));
        let done = json!({
            "id": id,
            "type": "reasoning",
            "encrypted_content": thinking_signature(completion, number),
            "summary": [part(thinking)],
        });
        self.push("response.output_item.done", json!({"output_index": output_index, "item": done.clone()}));
        done
    }

    fn message_item(&mut self, output_index: usize, id: String, text: &str, completion: &MockCompletion) -> Value {
        let added = json!({"id": id, "type": "message", "status": "in_progress", "content": [], "role": "assistant"});
        self.push("response.output_item.added", json!({"output_index": output_index, "item": added}));
        let part = |text: &str| json!({"type": "output_text", "annotations": [], "logprobs": [], "text": text});
        let at = json!({"item_id": id, "output_index": output_index, "content_index": 0});
        self.push("response.content_part.added", with(&at, json!({"part": part("")})));
        for piece in pieces(completion, text, 3).into_iter() {
            self.push("response.output_text.delta", with(&at, json!({"delta": piece, "logprobs": []})));
        }
        self.push("response.output_text.done", with(&at, json!({"text": text, "logprobs": []})));
        self.push("response.content_part.done", with(&at, json!({"part": part(text)})));
        let done = json!({
            "id": id,
            "type": "message",
            "status": "completed",
            "content": [part(text)],
            "role": "assistant",
        });
        self.push("response.output_item.done", json!({"output_index": output_index, "item": done.clone()}));
        done
    }

    /// Streams a finished `function_call` item: added with empty arguments, argument deltas, done.
    fn function_call_item(&mut self, output_index: usize, done: Value) -> Value {
        let mut added = done.clone();
        if let Some(object) = added.as_object_mut() {
            object.insert("status".into(), json!("in_progress"));
            object.insert("arguments".into(), json!(""));
        }
        self.push("response.output_item.added", json!({"output_index": output_index, "item": added}));
        let arguments = done["arguments"].as_str().unwrap_or_default().to_owned();
        let at = json!({"item_id": done["id"], "output_index": output_index});
        for piece in split(&arguments, 2) {
            self.push("response.function_call_arguments.delta", with(&at, json!({"delta": piece})));
        }
        self.push("response.function_call_arguments.done", with(&at, json!({"arguments": arguments})));
        self.push("response.output_item.done", json!({"output_index": output_index, "item": done.clone()}));
        done
    }
}

/// A short hex tag of the scripted content (FNV-1a over thinking, text and tool calls).
fn content_tag(completion: &MockCompletion) -> String {
    let mut hash: u32 = 0x811c_9dc5;
    let mut feed = |text: &str| {
        for byte in text.bytes().chain([0]) {
            hash = (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193);
        }
    };
    feed(completion.thinking.as_deref().unwrap_or_default());
    feed(completion.text.as_deref().unwrap_or_default());
    for call in &completion.tool_calls {
        feed(call.id.as_deref().unwrap_or_default());
        feed(&call.name);
        feed(&call.arguments_text());
    }
    format!("{hash:08x}")
}

/// `base` with `extra`'s fields appended.
fn with(base: &Value, extra: Value) -> Value {
    let mut merged = base.as_object().cloned().unwrap_or_default();
    if let Value::Object(extra) = extra {
        merged.extend(extra);
    }
    Value::Object(merged)
}

/// The parts of the `response` object that stay the same through the stream.
struct Envelope {
    id: String,
    model: String,
    created_at: u64,
}

impl Envelope {
    fn response(&self, status: &str, output: &[Value], usage: Option<Value>) -> Value {
        json!({
            "id": self.id,
            "object": "response",
            "created_at": self.created_at,
            "status": status,
            "error": null,
            "incomplete_details": null,
            "model": self.model,
            "output": output,
            "parallel_tool_calls": true,
            "service_tier": "default",
            "store": false,
            "usage": usage,
        })
    }
}

/// The Responses usage object (cached tokens are part of `input_tokens`).
fn usage(completion: &MockCompletion, request_bytes: usize) -> Value {
    let (input, output, cached) = usage_counts(completion, request_bytes);
    json!({
        "input_tokens": input + cached,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": input + cached + output,
    })
}

fn unix_seconds() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::MockToolCall;

    /// `(event name, data)` of each frame.
    fn parse(frames: &[String]) -> Vec<(String, Value)> {
        frames
            .iter()
            .filter_map(|frame| {
                let (event, data) = frame.strip_prefix("event: ")?.split_once("\ndata: ")?;
                Some((event.to_owned(), serde_json::from_str(data.trim()).ok()?))
            })
            .collect()
    }

    #[test]
    fn a_full_response_streams_every_item_in_order() {
        let completion = MockCompletion {
            thinking: Some("Plan it".into()),
            thinking_signature: Some("ENC".into()),
            text: Some("Hi there".into()),
            tool_calls: vec![MockToolCall {
                id: Some("call_1".into()),
                name: "read".into(),
                arguments: json!({"path": "a"}),
            }],
            ..MockCompletion::default()
        };
        let frames = frames(&completion, 7, "m", 40);
        assert!(frames.iter().all(|f| f.ends_with("\n\n")));
        let events = parse(&frames);
        assert_eq!(events.len(), frames.len(), "every frame parses");
        for (index, (name, data)) in events.iter().enumerate() {
            assert_eq!(data["type"], json!(name), "event name matches type");
            assert_eq!(data["sequence_number"], json!(index));
        }
        let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(&names[..3], ["response.created", "response.in_progress", "response.output_item.added"]);
        assert_eq!(names.last(), Some(&"response.completed"));
        let of = |kind: &str| events.iter().filter(|(n, _)| n == kind).map(|(_, d)| d.clone()).collect::<Vec<_>>();
        let thinking: String =
            of("response.reasoning_summary_text.delta").iter().filter_map(|d| d["delta"].as_str()).collect();
        assert_eq!(thinking, "Plan it");
        let text: String = of("response.output_text.delta").iter().filter_map(|d| d["delta"].as_str()).collect();
        assert_eq!(text, "Hi there");
        let args: String =
            of("response.function_call_arguments.delta").iter().filter_map(|d| d["delta"].as_str()).collect();
        assert_eq!(args, r#"{"path":"a"}"#);
        let done = of("response.output_item.done");
        assert_eq!(done.len(), 3);
        assert_eq!(done[0]["item"]["encrypted_content"], "ENC");
        let tag = content_tag(&completion);
        assert_eq!(done[0]["item"]["id"], format!("rs_mock_{tag}"));
        assert_eq!(done[1]["item"]["id"], format!("msg_mock_{tag}"));
        assert_eq!(done[2]["item"]["call_id"], "call_1");
        assert_eq!(done[2]["item"]["id"], format!("fc_mock_{tag}_0"));
        let other = MockCompletion { text: Some("Hi there!".into()), ..completion.clone() };
        assert_ne!(content_tag(&other), tag, "different content, different ids");
        let again = super::frames(&completion, 8, "m", 40);
        assert_eq!(again[2..again.len() - 1], frames[2..frames.len() - 1], "only the response envelope changes");
        let completed = &of("response.completed")[0]["response"];
        assert_eq!((completed["id"].as_str(), completed["status"].as_str()), (Some("resp_mock_7"), Some("completed")));
        assert_eq!(completed["output"].as_array().map(Vec::len), Some(3));
        assert_eq!(completed["usage"]["input_tokens"], 10);
        assert_eq!(
            completed["usage"]["total_tokens"],
            completed["usage"]["input_tokens"].as_u64().unwrap_or(0)
                + completed["usage"]["output_tokens"].as_u64().unwrap_or(0)
        );
    }

    #[test]
    fn stream_errors_and_finish_reasons_shape_the_ending() {
        let failing =
            MockCompletion { text: Some("x".into()), stream_error: Some("boom".into()), ..MockCompletion::default() };
        let events = parse(&frames(&failing, 1, "m", 0));
        let (name, data) = events.last().cloned().unwrap_or_default();
        assert_eq!(name, "response.failed");
        assert_eq!(data["response"]["error"], json!({"code": "server_error", "message": "boom"}));

        let cut = MockCompletion { text: Some("x".into()), finish_reason: Some("length".into()), ..Default::default() };
        let events = parse(&frames(&cut, 1, "m", 0));
        let (name, data) = events.last().cloned().unwrap_or_default();
        assert_eq!(name, "response.completed");
        assert_eq!(data["response"]["status"], "incomplete");
        assert_eq!(data["response"]["incomplete_details"]["reason"], "max_output_tokens");
    }
}
