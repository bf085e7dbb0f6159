//! Turns Responses API stream events (`response.*`, by their `type`) into assistant-message events:
//! reasoning, message and function-call items become thinking, text and tool-call blocks with their
//! signatures; `response.completed` brings usage, cost and the stop reason; failures become errors.

use serde_json::{Map, Value, json};

use super::errors::{
    FAILED_WITHOUT_DETAILS, PI_FAILED_WITHOUT_DETAILS, error_event_message, failure_message, is_truthy, js_text,
    js_text_or_undefined,
};
use crate::ai::Model;
use crate::ai::partial_json::parse_streaming_json;
use crate::ai::streaming_arguments::StreamingArguments;
use crate::protocol::{
    AssistantContent, AssistantMessage, AssistantMessageEvent, PiCompat, StopReason, TextContent, ThinkingContent,
    ToolCall, Usage,
};

#[path = "decode_v1_5.rs"]
mod v1_5;

/// The kind of block the current output item streams into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BlockKind {
    Thinking,
    Text,
    ToolCall,
}

/// The message being built from one response.
///
/// As in pi, the block being streamed is always the last one; `current_item` keeps the item as the
/// stream describes it (summary parts, content parts), since its final form becomes a signature.
#[derive(Debug)]
pub struct ResponsesState {
    output: AssistantMessage,
    current_item: Option<Map<String, Value>>,
    current_block: Option<BlockKind>,
    /// The argument text received so far for the open tool call.
    partial_json: StreamingArguments,
    /// The pi release whose endings and usage to reproduce.
    compat: PiCompat,
    /// Whether the cost follows the service tier that served the response (OpenAI's API; not Azure's).
    service_tier_pricing: bool,
}

impl ResponsesState {
    pub fn new(output: AssistantMessage) -> Self {
        Self {
            output,
            current_item: None,
            current_block: None,
            partial_json: StreamingArguments::new(),
            compat: PiCompat::V0_73,
            service_tier_pricing: true,
        }
    }

    /// Leaves the cost as the model's prices make it, whatever service tier the response names (pi's Azure
    /// provider does not price tiers).
    pub fn without_service_tier_pricing(mut self) -> Self {
        self.service_tier_pricing = false;
        self
    }

    /// Reads the response's ending as `compat`'s pi does (level 1.5: `response.incomplete` ends it too, the
    /// status is kept as the raw stop reason, reasoning tokens are reported apart).
    pub fn with_compat(mut self, compat: PiCompat) -> Self {
        self.compat = compat;
        self
    }

    pub fn message(&self) -> &AssistantMessage {
        &self.output
    }

    /// The message, leaving an empty one behind.
    pub fn take_message(&mut self) -> AssistantMessage {
        std::mem::take(&mut self.output)
    }

    /// The common events, text and reasoning-summary deltas, read without building a JSON tree; `false` when
    /// the event is anything else (or carries an `error`), which [`apply_event`](Self::apply_event) then reads.
    pub fn apply_typical_delta(&mut self, data: &str, events: &mut Vec<AssistantMessageEvent>) -> bool {
        let Ok(event) = serde_json::from_str::<TypicalDelta>(data) else { return false };
        if event.error.is_some() {
            return false;
        }
        match event.kind.as_ref() {
            "response.output_text.delta" => self.message_delta("output_text", &event.delta, events),
            "response.refusal.delta" => self.message_delta("refusal", &event.delta, events),
            "response.reasoning_summary_text.delta" => self.summary_delta(&event.delta, events),
            _ => return false,
        }
        true
    }

    /// Applies one parsed stream event. A failure (an `error` or `response.failed` event, or an
    /// unknown status) is returned as its message.
    pub fn apply_event(&mut self, event: &Value, model: &Model) -> Result<Vec<AssistantMessageEvent>, String> {
        let mut events = Vec::new();
        let kind = event.get("type").and_then(Value::as_str).unwrap_or_default();
        let text = |key: &str| event.get(key).and_then(Value::as_str).unwrap_or_default();
        match kind {
            "response.created" => {
                if let Some(id) = event.pointer("/response/id").and_then(Value::as_str) {
                    self.output.response_id = Some(id.into());
                }
            }
            "response.output_item.added" => self.open_item(event.get("item"), &mut events),
            "response.reasoning_summary_part.added" => {
                let part = event.get("part").cloned().unwrap_or(Value::Null);
                if let Some(parts) = self.current_item_of("reasoning").and_then(|item| list(item, "summary")) {
                    parts.push(part);
                }
            }
            "response.reasoning_summary_text.delta" => self.summary_delta(text("delta"), &mut events),
            "response.reasoning_summary_part.done" => self.summary_delta("\n\n", &mut events),
            "response.reasoning_text.delta" if self.is_current("reasoning", BlockKind::Thinking) => {
                self.push_thinking(text("delta"), &mut events);
            }
            "response.content_part.added" => {
                let part = event.get("part").cloned().unwrap_or(Value::Null);
                let part_type = part.get("type").and_then(Value::as_str);
                let accepted = matches!(part_type, Some("output_text" | "refusal"));
                if accepted && let Some(parts) = self.current_item_of("message").and_then(|item| list(item, "content"))
                {
                    parts.push(part);
                }
            }
            "response.output_text.delta" => self.message_delta("output_text", text("delta"), &mut events),
            "response.refusal.delta" => self.message_delta("refusal", text("delta"), &mut events),
            "response.function_call_arguments.delta" if self.is_current("function_call", BlockKind::ToolCall) => {
                let delta = text("delta");
                let arguments = self.partial_json.push(delta).clone();
                self.set_tool_arguments(arguments);
                self.push_tool_delta(delta, &mut events);
            }
            "response.function_call_arguments.done" if self.is_current("function_call", BlockKind::ToolCall) => {
                let arguments = text("arguments");
                let previous = std::mem::replace(&mut self.partial_json, StreamingArguments::from(arguments));
                let parsed = self.partial_json.value().clone();
                self.set_tool_arguments(parsed);
                if let Some(rest) = arguments.strip_prefix(previous.text()).filter(|rest| !rest.is_empty()) {
                    self.push_tool_delta(rest, &mut events);
                }
            }
            "response.output_item.done" => self.close_item(event.get("item"), &mut events),
            "response.completed" if self.compat.is_v1_5() => self.complete_v1_5(event.get("response"), model)?,
            "response.incomplete" if self.compat.is_v1_5() => self.complete_v1_5(event.get("response"), model)?,
            "response.completed" => self.complete(event.get("response"), model)?,
            "error" => return Err(error_event_message(event)),
            "response.failed" => {
                let message = failure_message(event.get("response"));
                if !self.compat.is_v1_5() {
                    return Err(message);
                }
                let status = event.pointer("/response/status").and_then(Value::as_str).filter(|s| !s.is_empty());
                self.output.raw_stop_reason = Some(status.unwrap_or("failed").to_owned());
                let without_details = message == FAILED_WITHOUT_DETAILS;
                return Err(if without_details { PI_FAILED_WITHOUT_DETAILS.to_owned() } else { message });
            }
            _ => {}
        }
        Ok(events)
    }

    fn last_index(&self) -> usize {
        self.output.content.len().saturating_sub(1)
    }

    fn current_item_of(&mut self, item_type: &str) -> Option<&mut Map<String, Value>> {
        self.current_item.as_mut().filter(|item| item.get("type").and_then(Value::as_str) == Some(item_type))
    }

    fn is_current(&self, item_type: &str, block: BlockKind) -> bool {
        let item_is = self.current_item.as_ref().and_then(|i| i.get("type")).and_then(Value::as_str) == Some(item_type);
        item_is && self.current_block == Some(block)
    }

    fn open_item(&mut self, item: Option<&Value>, events: &mut Vec<AssistantMessageEvent>) {
        let Some(item) = item.and_then(Value::as_object) else { return };
        let (block, content) = match item.get("type").and_then(Value::as_str) {
            Some("reasoning") => (
                BlockKind::Thinking,
                AssistantContent::Thinking(ThinkingContent {
                    thinking: Default::default(),
                    thinking_signature: None,
                    redacted: None,
                }),
            ),
            Some("message") => (BlockKind::Text, AssistantContent::Text(TextContent::new(""))),
            Some("function_call") => {
                self.partial_json =
                    StreamingArguments::from(item.get("arguments").and_then(Value::as_str).unwrap_or_default());
                let call = ToolCall {
                    id: tool_call_id(item),
                    name: item.get("name").and_then(Value::as_str).unwrap_or_default().to_owned(),
                    arguments: json!({}),
                    thought_signature: None,
                };
                (BlockKind::ToolCall, AssistantContent::ToolCall(call))
            }
            _ => return,
        };
        self.current_item = Some(item.clone());
        self.current_block = Some(block);
        self.output.content.push(content);
        let (content_index, partial) = (self.last_index(), self.output.clone());
        events.push(match block {
            BlockKind::Thinking => AssistantMessageEvent::ThinkingStart { content_index, partial },
            BlockKind::Text => AssistantMessageEvent::TextStart { content_index, partial },
            BlockKind::ToolCall => AssistantMessageEvent::ToolcallStart { content_index, partial },
        });
    }

    /// Adds `delta` to the thinking once the reasoning item has a summary part (the item's final
    /// text arrives with `response.output_item.done`).
    fn summary_delta(&mut self, delta: &str, events: &mut Vec<AssistantMessageEvent>) {
        if !self.is_current("reasoning", BlockKind::Thinking) {
            return;
        }
        let has_part = self
            .current_item_of("reasoning")
            .and_then(|item| list(item, "summary"))
            .is_some_and(|parts| parts.last().is_some_and(is_truthy));
        if has_part {
            self.push_thinking(delta, events);
        }
    }

    fn push_thinking(&mut self, delta: &str, events: &mut Vec<AssistantMessageEvent>) {
        let delta = match self.output.content.last_mut() {
            Some(AssistantContent::Thinking(block)) => block.thinking.push_str_view(delta),
            _ => delta.into(),
        };
        events.push(AssistantMessageEvent::ThinkingDelta {
            content_index: self.last_index(),
            delta,
            partial: self.output.clone(),
        });
    }

    /// Adds `delta` to the text when the message's last content part is of `part_type`.
    fn message_delta(&mut self, part_type: &str, delta: &str, events: &mut Vec<AssistantMessageEvent>) {
        if !self.is_current("message", BlockKind::Text) {
            return;
        }
        let last_type = self
            .current_item_of("message")
            .and_then(|item| list(item, "content"))
            .and_then(|parts| parts.last())
            .and_then(|part| part.get("type"))
            .and_then(Value::as_str);
        if last_type != Some(part_type) {
            return;
        }
        let delta = match self.output.content.last_mut() {
            Some(AssistantContent::Text(block)) => block.text.push_str_view(delta),
            _ => delta.into(),
        };
        events.push(AssistantMessageEvent::TextDelta {
            content_index: self.last_index(),
            delta,
            partial: self.output.clone(),
        });
    }

    fn set_tool_arguments(&mut self, arguments: Value) {
        if let Some(AssistantContent::ToolCall(call)) = self.output.content.last_mut() {
            call.arguments = arguments;
        }
    }

    fn push_tool_delta(&mut self, delta: &str, events: &mut Vec<AssistantMessageEvent>) {
        events.push(AssistantMessageEvent::ToolcallDelta {
            content_index: self.last_index(),
            delta: delta.into(),
            partial: self.output.clone(),
        });
    }

    /// `response.output_item.done`: the item's final form settles the block and its signature.
    fn close_item(&mut self, item: Option<&Value>, events: &mut Vec<AssistantMessageEvent>) {
        let Some(item) = item.and_then(Value::as_object) else { return };
        let content_index = self.last_index();
        match (item.get("type").and_then(Value::as_str), self.current_block) {
            (Some("reasoning"), Some(BlockKind::Thinking)) => {
                let summary = joined_texts(item.get("summary"), "text", "\n\n");
                let content = joined_texts(item.get("content"), "text", "\n\n");
                let signature = Value::Object(item.clone()).to_string();
                let Some(AssistantContent::Thinking(block)) = self.output.content.last_mut() else { return };
                if !summary.is_empty() {
                    block.thinking = summary.into();
                } else if !content.is_empty() {
                    block.thinking = content.into();
                }
                block.thinking_signature = Some(signature.into());
                let content = block.thinking.clone();
                self.current_block = None;
                events.push(AssistantMessageEvent::ThinkingEnd {
                    content_index,
                    content,
                    partial: self.output.clone(),
                });
            }
            (Some("message"), Some(BlockKind::Text)) => {
                let text: String = item
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(|part| {
                        let field = if part.get("type").and_then(Value::as_str) == Some("output_text") {
                            "text"
                        } else {
                            "refusal"
                        };
                        part.get(field).and_then(Value::as_str).unwrap_or_default()
                    })
                    .collect();
                let Some(AssistantContent::Text(block)) = self.output.content.last_mut() else { return };
                block.text = text.into();
                block.text_signature = Some(text_signature(item).into());
                let content = block.text.clone();
                self.current_block = None;
                events.push(AssistantMessageEvent::TextEnd { content_index, content, partial: self.output.clone() });
            }
            (Some("function_call"), current) => {
                let arguments = if current == Some(BlockKind::ToolCall) && !self.partial_json.text().is_empty() {
                    self.partial_json.value().clone()
                } else {
                    let raw = item.get("arguments").and_then(Value::as_str).filter(|a| !a.is_empty());
                    parse_streaming_json(raw.unwrap_or("{}"))
                };
                let tool_call = match (current, self.output.content.last_mut()) {
                    (Some(BlockKind::ToolCall), Some(AssistantContent::ToolCall(call))) => {
                        call.arguments = arguments;
                        call.clone()
                    }
                    // pi reports a call it never saw open without adding it to the message.
                    _ => ToolCall {
                        id: tool_call_id(item),
                        name: item.get("name").and_then(Value::as_str).unwrap_or_default().to_owned(),
                        arguments,
                        thought_signature: None,
                    },
                };
                self.current_block = None;
                events.push(AssistantMessageEvent::ToolcallEnd {
                    content_index,
                    tool_call,
                    partial: self.output.clone(),
                });
            }
            _ => {}
        }
    }

    /// `response.completed`: response id, usage with cost (service tier applied), and stop reason.
    fn complete(&mut self, response: Option<&Value>, model: &Model) -> Result<(), String> {
        let response = response.filter(|r| r.is_object());
        if let Some(id) = response.and_then(|r| r.get("id")).and_then(Value::as_str).filter(|id| !id.is_empty()) {
            self.output.response_id = Some(id.into());
        }
        if let Some(usage) = response.and_then(|r| r.get("usage")).filter(|u| u.is_object()) {
            self.output.usage = parse_usage(usage);
        }
        model.apply_cost(&mut self.output.usage);
        if self.service_tier_pricing {
            let tier = response.and_then(|r| r.get("service_tier")).and_then(Value::as_str);
            apply_service_tier(&mut self.output.usage, tier, model);
        }
        self.output.stop_reason = map_status(response.and_then(|r| r.get("status")))?;
        let has_tool_calls = self.output.content.iter().any(|b| matches!(b, AssistantContent::ToolCall(_)));
        if has_tool_calls && self.output.stop_reason == StopReason::Stop {
            self.output.stop_reason = StopReason::ToolUse;
        }
        Ok(())
    }
}

/// The array under `key`, created (or replacing a non-array) when needed.
fn list<'a>(item: &'a mut Map<String, Value>, key: &str) -> Option<&'a mut Vec<Value>> {
    let slot = item.entry(key).or_insert_with(|| json!([]));
    if !slot.is_array() {
        *slot = json!([]);
    }
    slot.as_array_mut()
}

/// The `field` texts of an array of parts, joined with `separator` (missing texts count as empty).
fn joined_texts(parts: Option<&Value>, field: &str, separator: &str) -> String {
    let Some(parts) = parts.and_then(Value::as_array) else { return String::new() };
    parts.iter().map(|p| p.get(field).and_then(Value::as_str).unwrap_or_default()).collect::<Vec<_>>().join(separator)
}

/// pi's tool-call id: `{call_id}|{item id}`.
fn tool_call_id(item: &Map<String, Value>) -> String {
    format!("{}|{}", js_text_or_undefined(item.get("call_id")), js_text_or_undefined(item.get("id")))
}

/// `{"v":1,"id":…,"phase"?:…}`: the message id (and phase) a text block is replayed with.
fn text_signature(item: &Map<String, Value>) -> String {
    let mut signature = Map::new();
    signature.insert("v".into(), json!(1));
    if let Some(id) = item.get("id").filter(|id| !id.is_null()) {
        signature.insert("id".into(), id.clone());
    }
    if let Some(phase) = item.get("phase").filter(|p| is_truthy(p)) {
        signature.insert("phase".into(), phase.clone());
    }
    Value::Object(signature).to_string()
}

/// pi's stop reason for a response status; an unknown status is an error, as in pi.
fn map_status(status: Option<&Value>) -> Result<StopReason, String> {
    let Some(status) = status.filter(|s| is_truthy(s)) else { return Ok(StopReason::Stop) };
    match status.as_str() {
        Some("completed" | "in_progress" | "queued") => Ok(StopReason::Stop),
        Some("incomplete") => Ok(StopReason::Length),
        Some("failed" | "cancelled") => Ok(StopReason::Error),
        _ => Err(format!("Unhandled stop reason: {}", js_text(Some(status)))),
    }
}

/// Usage as pi counts it: cached tokens split out of `input_tokens`, the total as reported.
pub(super) fn parse_usage(usage: &Value) -> Usage {
    let count = |pointer: &str| usage.pointer(pointer).and_then(Value::as_f64).map_or(0, |n| n.max(0.0) as u64);
    let cached = count("/input_tokens_details/cached_tokens");
    Usage {
        input: count("/input_tokens").saturating_sub(cached),
        output: count("/output_tokens"),
        cache_read: cached,
        cache_write: 0,
        total_tokens: count("/total_tokens"),
        ..Usage::default()
    }
}

/// Scales the cost for the service tier that served the response: flex halves it, priority doubles
/// it (2.5× for gpt-5.5).
pub(super) fn apply_service_tier(usage: &mut Usage, tier: Option<&str>, model: &Model) {
    let multiplier = match tier {
        Some("flex") => 0.5,
        Some("priority") if model.id == "gpt-5.5" => 2.5,
        Some("priority") => 2.0,
        _ => return,
    };
    let cost = &mut usage.cost;
    cost.input *= multiplier;
    cost.output *= multiplier;
    cost.cache_read *= multiplier;
    cost.cache_write *= multiplier;
    cost.total = cost.input + cost.output + cost.cache_read + cost.cache_write;
}

#[cfg(test)]
#[path = "decode_tests.rs"]
mod tests;

/// A delta event as servers send it, borrowed from the event's text; another shape fails the parse and the
/// general path reads it.
#[derive(serde::Deserialize)]
struct TypicalDelta<'a> {
    #[serde(rename = "type", borrow)]
    kind: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    delta: std::borrow::Cow<'a, str>,
    #[serde(default)]
    error: Option<serde::de::IgnoredAny>,
}
