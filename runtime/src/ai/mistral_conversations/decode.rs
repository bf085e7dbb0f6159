//! Turns Mistral's streamed completion chunks into assistant-message events as pi 0.73 reads them: text
//! and thinking parts alternate in one open block (a string delta, even an empty one, is text), tool
//! calls are keyed by id and index and stay open until the stream ends, usage brings the cost, and the
//! finish reason the stop reason. A chunk the SDK's schema rejects fails the stream with a zod-style issue list.

use serde_json::{Value, json};

use super::request::derive_tool_call_id;
use crate::ai::Model;
use crate::ai::blocks::{block_end_event, block_is_thinking, push_block_start};
use crate::ai::streaming_arguments::StreamingArguments;
use crate::protocol::{AssistantContent, AssistantMessage, AssistantMessageEvent, StopReason, ToolCall, Usage};

/// A tool call still receiving argument pieces: its key (`id:index`), block and argument text.
#[derive(Debug)]
struct OpenToolCall {
    key: String,
    content_index: usize,
    arguments: StreamingArguments,
}

/// The message being built from one response.
#[derive(Debug)]
pub struct MistralState {
    output: AssistantMessage,
    /// The open text or thinking block.
    current: Option<usize>,
    /// Tool calls in the order they began.
    tools: Vec<OpenToolCall>,
}

impl MistralState {
    pub fn new(output: AssistantMessage) -> Self {
        Self { output, current: None, tools: Vec::new() }
    }

    pub fn message(&self) -> &AssistantMessage {
        &self.output
    }

    /// The message, leaving an empty one behind.
    pub fn take_message(&mut self) -> AssistantMessage {
        std::mem::take(&mut self.output)
    }

    /// Applies one `data:` payload. It must be a chunk the SDK accepts; otherwise the issues are the error.
    pub fn apply_data(
        &mut self,
        data: &str,
        model: &Model,
        events: &mut Vec<AssistantMessageEvent>,
    ) -> Result<(), String> {
        let chunk: Value = serde_json::from_str(data).map_err(|error| {
            issues(&[
                json!({"code": "custom", "message": format!("malformed json: SyntaxError: {error}"), "path": ["data"]}),
            ])
        })?;
        validate(&chunk)?;
        self.apply_chunk(&chunk, model, events);
        Ok(())
    }

    fn apply_chunk(&mut self, chunk: &Value, model: &Model, events: &mut Vec<AssistantMessageEvent>) {
        // pi keeps the first id that is not empty (an empty one holds the place until then).
        if self.output.response_id.as_deref().is_none_or(str::is_empty)
            && let Some(id) = chunk.get("id").and_then(Value::as_str)
        {
            self.output.response_id = Some(id.into());
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.output.usage = parse_usage(usage, model);
        }
        let Some(choice) = chunk.get("choices").and_then(|c| c.get(0)) else { return };
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str).filter(|r| !r.is_empty()) {
            self.output.stop_reason = map_finish_reason(reason);
        }
        let Some(delta) = choice.get("delta") else { return };
        match delta.get("content") {
            Some(Value::String(text)) => self.push_piece(text, false, events),
            Some(Value::Array(parts)) => {
                for part in parts {
                    self.apply_part(part, events);
                }
            }
            _ => {}
        }
        if let Some(Value::Array(calls)) = delta.get("tool_calls") {
            for call in calls {
                self.apply_tool_call(call, events);
            }
        }
    }

    fn apply_part(&mut self, part: &Value, events: &mut Vec<AssistantMessageEvent>) {
        match part.get("type").and_then(Value::as_str) {
            Some("thinking") => {
                let pieces = part.get("thinking").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
                let text: String =
                    pieces.iter().filter_map(|piece| piece.get("text").and_then(Value::as_str)).collect();
                if !text.is_empty() {
                    self.push_piece(&text, true, events);
                }
            }
            Some("text") => {
                let text = part.get("text").and_then(Value::as_str).unwrap_or_default();
                self.push_piece(text, false, events);
            }
            _ => {}
        }
    }

    /// A piece of text or thinking: the open block grows when it is of that kind, else it closes and a new
    /// one opens.
    fn push_piece(&mut self, text: &str, thinking: bool, events: &mut Vec<AssistantMessageEvent>) {
        let open = self.current.filter(|index| block_is_thinking(&self.output, *index) == Some(thinking));
        let content_index = match open {
            Some(index) => index,
            None => {
                self.close_current(events);
                let (index, start) = push_block_start(&mut self.output, thinking, None);
                events.push(start);
                self.current = Some(index);
                index
            }
        };
        let delta = match self.output.content.get_mut(content_index) {
            Some(AssistantContent::Thinking(block)) => block.thinking.push_str_view(text),
            Some(AssistantContent::Text(block)) => block.text.push_str_view(text),
            _ => text.into(),
        };
        let partial = self.output.clone();
        events.push(if thinking {
            AssistantMessageEvent::ThinkingDelta { content_index, delta, partial }
        } else {
            AssistantMessageEvent::TextDelta { content_index, delta, partial }
        });
    }

    fn close_current(&mut self, events: &mut Vec<AssistantMessageEvent>) {
        if let Some(index) = self.current.take() {
            events.extend(block_end_event(&self.output, index));
        }
    }

    /// A tool-call delta: the open text or thinking block closes; the call with this id and index grows, or
    /// a new one starts (a call without an id gets one made from its index).
    fn apply_tool_call(&mut self, call: &Value, events: &mut Vec<AssistantMessageEvent>) {
        self.close_current(events);
        let index = call.get("index").and_then(Value::as_u64).unwrap_or(0);
        let id = match call.get("id").and_then(Value::as_str) {
            Some(id) if !id.is_empty() && id != "null" => id.to_owned(),
            _ => derive_tool_call_id(&format!("toolcall:{index}"), 0),
        };
        let key = format!("{id}:{index}");
        let function = call.get("function");
        let arguments_delta = match function.and_then(|f| f.get("arguments")) {
            Some(Value::String(text)) => text.clone(),
            Some(Value::Null) | None => "{}".to_owned(),
            Some(other) => other.to_string(),
        };
        let position = match self.tools.iter().position(|open| open.key == key) {
            Some(position) => position,
            None => {
                let content_index = self.output.content.len();
                let name = function.and_then(|f| f.get("name")).and_then(Value::as_str).unwrap_or_default();
                self.output.content.push(AssistantContent::ToolCall(ToolCall {
                    id,
                    name: name.to_owned(),
                    arguments: Value::Object(Default::default()),
                    thought_signature: None,
                }));
                self.tools.push(OpenToolCall { key, content_index, arguments: StreamingArguments::new() });
                events.push(AssistantMessageEvent::ToolcallStart { content_index, partial: self.output.clone() });
                self.tools.len() - 1
            }
        };
        let open = &mut self.tools[position];
        let parsed = open.arguments.push(&arguments_delta).clone();
        let content_index = open.content_index;
        if let Some(AssistantContent::ToolCall(block)) = self.output.content.get_mut(content_index) {
            block.arguments = parsed;
        }
        events.push(AssistantMessageEvent::ToolcallDelta {
            content_index,
            delta: arguments_delta.into(),
            partial: self.output.clone(),
        });
    }

    /// The stream ended: the open text or thinking block closes, then every tool call in the order they began.
    pub fn finish(&mut self, events: &mut Vec<AssistantMessageEvent>) {
        self.close_current(events);
        for mut open in std::mem::take(&mut self.tools) {
            let Some(AssistantContent::ToolCall(block)) = self.output.content.get_mut(open.content_index) else {
                continue;
            };
            block.arguments = open.arguments.value().clone();
            let tool_call = block.clone();
            events.push(AssistantMessageEvent::ToolcallEnd {
                content_index: open.content_index,
                tool_call,
                partial: self.output.clone(),
            });
        }
    }
}

impl MistralState {
    /// A stream that never named a finish reason stopped normally (a level-1.5 message starts `pending`).
    pub fn settle_pending(&mut self) {
        if self.output.stop_reason == StopReason::Pending {
            self.output.stop_reason = StopReason::Stop;
        }
    }
}

/// pi's stop reason for a Mistral finish reason (unknown ones count as `stop`).
fn map_finish_reason(reason: &str) -> StopReason {
    match reason {
        "length" | "model_length" => StopReason::Length,
        "tool_calls" => StopReason::ToolUse,
        "error" => StopReason::Error,
        _ => StopReason::Stop,
    }
}

/// Usage as pi counts it: no cache figures, the total as reported (else input plus output).
fn parse_usage(usage: &Value, model: &Model) -> Usage {
    let count = |key: &str| usage.get(key).and_then(Value::as_f64).map_or(0, |n| n.max(0.0) as u64);
    let (input, output) = (count("prompt_tokens"), count("completion_tokens"));
    let total = count("total_tokens");
    let mut parsed =
        Usage { input, output, total_tokens: if total > 0 { total } else { input + output }, ..Usage::default() };
    model.apply_cost(&mut parsed);
    parsed
}

/// How zod names a JSON value's type in its messages.
fn received(value: Option<&Value>) -> &'static str {
    match value {
        None => "undefined",
        Some(Value::Null) => "null",
        Some(Value::Bool(_)) => "boolean",
        Some(Value::Number(_)) => "number",
        Some(Value::String(_)) => "string",
        Some(Value::Array(_)) => "array",
        Some(Value::Object(_)) => "object",
    }
}

/// zod's issue for a value of the wrong type at `path` (under the event's `data`).
fn type_issue(expected: &str, path: &[Value], value: Option<&Value>) -> Value {
    let mut full = vec![json!("data")];
    full.extend_from_slice(path);
    json!({
        "expected": expected,
        "code": "invalid_type",
        "path": full,
        "message": format!("Invalid input: expected {expected}, received {}", received(value)),
    })
}

/// The error text of a failed parse: the issue list as zod prints it.
fn issues(list: &[Value]) -> String {
    serde_json::to_string_pretty(list).unwrap_or_default()
}

/// The checks of the SDK's chunk schema that a server can plausibly fail: a chunk object with a string `id`
/// and `model`, an object `usage` when present, and `choices`, each with an integer `index`, an object
/// `delta` and a `finish_reason` that is a string or null.
fn validate(chunk: &Value) -> Result<(), String> {
    let Some(fields) = chunk.as_object() else { return Err(issues(&[type_issue("object", &[], Some(chunk))])) };
    let mut found = Vec::new();
    for key in ["id", "model"] {
        if !fields.get(key).is_some_and(Value::is_string) {
            found.push(type_issue("string", &[json!(key)], fields.get(key)));
        }
    }
    if let Some(usage) = fields.get("usage").filter(|usage| !usage.is_object()) {
        found.push(type_issue("object", &[json!("usage")], Some(usage)));
    }
    match fields.get("choices") {
        Some(Value::Array(choices)) => {
            for (at, choice) in choices.iter().enumerate() {
                let path = |key: &str| [json!("choices"), json!(at), json!(key)];
                let Some(choice) = choice.as_object() else {
                    found.push(type_issue("object", &[json!("choices"), json!(at)], Some(choice)));
                    continue;
                };
                if choice.get("index").is_none_or(|i| i.as_i64().is_none()) {
                    found.push(type_issue("int", &path("index"), choice.get("index")));
                }
                if !choice.get("delta").is_some_and(Value::is_object) {
                    found.push(type_issue("object", &path("delta"), choice.get("delta")));
                }
                if !choice.get("finish_reason").is_some_and(|r| r.is_string() || r.is_null()) {
                    found.push(type_issue("string", &path("finish_reason"), choice.get("finish_reason")));
                }
            }
        }
        other => found.push(type_issue("array", &[json!("choices")], other)),
    }
    if found.is_empty() { Ok(()) } else { Err(issues(&found)) }
}

#[cfg(test)]
#[path = "decode_tests.rs"]
mod tests;
