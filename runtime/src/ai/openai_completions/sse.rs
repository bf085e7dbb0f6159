//! Turns chat-completion chunks into assistant-message events: text, thinking and tool-call blocks
//! with their content indexes, usage and cost, finish reasons, and mid-stream error chunks.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

use crate::ai::Model;
use crate::ai::blocks::{block_end_event, block_is_thinking, push_block_start};
use crate::ai::openai_sdk_errors::{is_truthy, stream_error_message};
use crate::ai::pi15::apply_openrouter_cost;
use crate::ai::streaming_arguments::StreamingArguments;
use crate::protocol::{
    AssistantContent, AssistantMessage, AssistantMessageEvent, PiCompat, StopReason, ToolCall, Usage,
};

/// Delta fields that carry reasoning, in the order pi looks at them; the one found names the signature.
const REASONING_FIELDS: [&str; 3] = ["reasoning_content", "reasoning", "reasoning_text"];

/// A chunk as servers send it for most of a stream, borrowed from the event's text. The fields that make a
/// chunk more than a text piece are only checked for presence (`null` counts as absent, as it does for
/// [`StreamState::apply_chunk`]); a field of another type fails the parse and the general path reads it.
#[derive(Deserialize)]
struct TypicalChunk<'a> {
    #[serde(default, borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(default)]
    error: Option<IgnoredAny>,
    #[serde(default)]
    usage: Option<IgnoredAny>,
    #[serde(borrow)]
    choices: [TypicalChoice<'a>; 1],
}

#[derive(Deserialize)]
struct TypicalChoice<'a> {
    #[serde(borrow)]
    delta: TypicalDelta<'a>,
    #[serde(default)]
    finish_reason: Option<IgnoredAny>,
    #[serde(default)]
    usage: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct TypicalDelta<'a> {
    #[serde(default, borrow)]
    content: Option<Cow<'a, str>>,
    #[serde(default)]
    reasoning_content: Option<IgnoredAny>,
    #[serde(default)]
    reasoning: Option<IgnoredAny>,
    #[serde(default)]
    reasoning_text: Option<IgnoredAny>,
    #[serde(default)]
    tool_calls: Option<IgnoredAny>,
}

/// A tool call still receiving argument deltas.
#[derive(Debug)]
struct OpenToolCall {
    content_index: usize,
    /// The chunk's `index` for this call, when the server sends one.
    stream_index: Option<u64>,
    partial_args: StreamingArguments,
}

/// The message being built from one response.
///
/// Text and thinking alternate in one open block; tool calls stay open side by side, so (as pi 0.73
/// was observed to do) a text block begun before tool calls is closed only at the end of the stream.
#[derive(Debug)]
pub struct StreamState {
    output: AssistantMessage,
    /// The open text or thinking block.
    open_block: Option<usize>,
    open_tools: Vec<OpenToolCall>,
    /// The pi release whose stop reasons and usage to reproduce.
    compat: PiCompat,
}

impl StreamState {
    pub fn new(output: AssistantMessage) -> Self {
        Self { output, open_block: None, open_tools: Vec::new(), compat: PiCompat::V0_73 }
    }

    /// Reads stop reasons and usage as `compat`'s pi does (level 1.5: the raw finish reason kept, unknown ones
    /// failing only at the end, reasoning tokens reported apart).
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

    /// Applies one parsed `data:` chunk, returning the events it produced. An `error` object in the
    /// chunk or an unknown finish reason is a failure, given as its message.
    pub fn apply_chunk(&mut self, chunk: &Value, model: &Model) -> Result<Vec<AssistantMessageEvent>, String> {
        let mut events = Vec::new();
        let Some(chunk) = chunk.as_object() else { return Ok(events) };
        if let Some(error) = chunk.get("error").filter(|e| is_truthy(e)) {
            return Err(stream_error_message(error));
        }
        if self.output.response_id.is_none() {
            self.output.response_id = chunk.get("id").and_then(Value::as_str).filter(|s| !s.is_empty()).map(Into::into);
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.output.usage = self.parse_usage(usage, model);
        }
        let Some(choice) = chunk.get("choices").and_then(|c| c.get(0)).and_then(Value::as_object) else {
            return Ok(events);
        };
        if let Some(usage) =
            choice.get("usage").filter(|u| u.is_object() && !chunk.get("usage").is_some_and(Value::is_object))
        {
            self.output.usage = self.parse_usage(usage, model);
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str).filter(|r| !r.is_empty()) {
            if self.compat.is_v1_5() {
                self.settle_finish_reason(reason);
            } else {
                self.output.stop_reason = map_finish_reason(reason)?;
            }
        }
        let Some(delta) = choice.get("delta").and_then(Value::as_object) else { return Ok(events) };
        let non_empty = |key: &str| delta.get(key).and_then(Value::as_str).filter(|s| !s.is_empty());

        if let Some(text) = non_empty("content") {
            self.push_piece(text, None, &mut events);
        }
        if let Some((field, text)) = REASONING_FIELDS.iter().find_map(|f| non_empty(f).map(|t| (*f, t))) {
            self.push_piece(text, Some(field), &mut events);
        }
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for call in calls {
                self.apply_tool_delta(call, &mut events);
            }
        }
        Ok(events)
    }

    /// pi 1.5's reading of a finish reason: kept as the raw stop reason; one it does not know (or
    /// `content_filter`) stops the message with an error that the end of the stream reports.
    fn settle_finish_reason(&mut self, reason: &str) {
        self.output.raw_stop_reason = Some(reason.to_owned());
        self.output.stop_reason = match reason {
            "stop" | "end" => StopReason::Stop,
            "length" => StopReason::Length,
            "tool_calls" | "function_call" => StopReason::ToolUse,
            other => {
                self.output.error_message = Some(format!("Provider finish_reason: {other}"));
                StopReason::Error
            }
        };
    }

    fn parse_usage(&self, usage: &Value, model: &Model) -> Usage {
        if self.compat.is_v1_5() { parse_usage_v1_5(usage, model) } else { parse_usage(usage, model) }
    }

    /// The common chunk, a piece of answer text and nothing else, read without building a JSON tree; `false`
    /// when the chunk is anything else (an error, usage, a finish reason, reasoning, tool calls, another
    /// shape), which [`apply_chunk`](Self::apply_chunk) then reads.
    pub fn apply_typical_chunk(&mut self, data: &str, events: &mut Vec<AssistantMessageEvent>) -> bool {
        let Ok(chunk) = serde_json::from_str::<TypicalChunk>(data) else { return false };
        let [choice] = &chunk.choices;
        let delta = &choice.delta;
        let plain = chunk.error.is_none()
            && chunk.usage.is_none()
            && choice.usage.is_none()
            && choice.finish_reason.is_none()
            && delta.reasoning_content.is_none()
            && delta.reasoning.is_none()
            && delta.reasoning_text.is_none()
            && delta.tool_calls.is_none();
        if !plain {
            return false;
        }
        if self.output.response_id.is_none() {
            self.output.response_id = chunk.id.filter(|id| !id.is_empty()).map(Into::into);
        }
        if let Some(text) = delta.content.as_deref().filter(|text| !text.is_empty()) {
            self.push_piece(text, None, events);
        }
        true
    }

    /// A piece of answer text, or of reasoning when `reasoning_field` names the delta field it came in (the
    /// block's signature): tool calls close, the block of that kind opens or grows.
    fn push_piece(&mut self, text: &str, reasoning_field: Option<&str>, events: &mut Vec<AssistantMessageEvent>) {
        self.close_tools(events);
        let thinking = reasoning_field.is_some();
        let content_index = self.open_kind(events, thinking, reasoning_field.unwrap_or(""));
        let delta = match self.output.content.get_mut(content_index) {
            Some(AssistantContent::Thinking(block)) if thinking => block.thinking.push_str_view(text),
            Some(AssistantContent::Text(block)) if !thinking => block.text.push_str_view(text),
            _ => text.into(),
        };
        let partial = self.output.clone();
        events.push(if thinking {
            AssistantMessageEvent::ThinkingDelta { content_index, delta, partial }
        } else {
            AssistantMessageEvent::TextDelta { content_index, delta, partial }
        });
    }

    /// Closes every open block (text or thinking first, then tool calls in content order).
    pub fn finish(&mut self) -> Vec<AssistantMessageEvent> {
        let mut events = Vec::new();
        self.close_block(&mut events);
        self.close_tools(&mut events);
        events
    }

    /// Returns the open text (or thinking) block, closing the other kind and opening one when needed.
    fn open_kind(&mut self, events: &mut Vec<AssistantMessageEvent>, thinking: bool, signature: &str) -> usize {
        if let Some(index) = self.open_block {
            // Only the last block can grow: text after tool calls starts a new block.
            if block_is_thinking(&self.output, index) == Some(thinking) && index + 1 == self.output.content.len() {
                return index;
            }
            self.close_block(events);
        }
        let (index, start) = push_block_start(&mut self.output, thinking, Some(signature.to_owned()));
        self.open_block = Some(index);
        events.push(start);
        index
    }

    fn close_block(&mut self, events: &mut Vec<AssistantMessageEvent>) {
        let Some(index) = self.open_block.take() else { return };
        events.extend(block_end_event(&self.output, index));
    }

    fn apply_tool_delta(&mut self, call: &Value, events: &mut Vec<AssistantMessageEvent>) {
        let stream_index = call.get("index").and_then(Value::as_u64);
        let id = call.get("id").and_then(Value::as_str).filter(|s| !s.is_empty());
        let function = call.get("function");
        let name = function.and_then(|f| f.get("name")).and_then(Value::as_str).filter(|s| !s.is_empty());
        let args = function.and_then(|f| f.get("arguments")).and_then(Value::as_str).unwrap_or("");

        let mut slot = match stream_index {
            Some(i) => self.open_tools.iter().position(|t| t.stream_index == Some(i)),
            None => self.open_tools.len().checked_sub(1),
        };
        // A different id on the same slot starts a new call (some servers reuse index 0).
        if let (Some(pos), Some(id)) = (slot, id) {
            let current = self.tool_call(self.open_tools[pos].content_index).map(|c| c.id.as_str());
            if current.is_some_and(|current| !current.is_empty() && current != id) {
                self.close_tool(pos, events);
                slot = None;
            }
        }
        let pos = match slot {
            Some(pos) => pos,
            None => {
                let content_index = self.output.content.len();
                // The call's id and name are known from its first chunk (pi 1.5's `toolcall_start` names them).
                self.output.content.push(AssistantContent::ToolCall(ToolCall {
                    id: id.unwrap_or_default().to_owned(),
                    name: name.unwrap_or_default().to_owned(),
                    arguments: Value::Object(Default::default()),
                    thought_signature: None,
                }));
                self.open_tools.push(OpenToolCall {
                    content_index,
                    stream_index,
                    partial_args: StreamingArguments::new(),
                });
                events.push(AssistantMessageEvent::ToolcallStart { content_index, partial: self.output.clone() });
                self.open_tools.len() - 1
            }
        };
        let open = &mut self.open_tools[pos];
        let (content_index, parsed) =
            (open.content_index, (!args.is_empty()).then(|| open.partial_args.push(args).clone()));
        if let Some(AssistantContent::ToolCall(block)) = self.output.content.get_mut(content_index) {
            if let Some(id) = id {
                block.id = id.to_owned();
            }
            if let Some(name) = name {
                block.name = name.to_owned();
            }
            if let Some(parsed) = parsed {
                block.arguments = parsed;
            }
        }
        events.push(AssistantMessageEvent::ToolcallDelta {
            content_index,
            delta: args.into(),
            partial: self.output.clone(),
        });
    }

    fn tool_call(&self, index: usize) -> Option<&ToolCall> {
        match self.output.content.get(index) {
            Some(AssistantContent::ToolCall(call)) => Some(call),
            _ => None,
        }
    }

    fn close_tools(&mut self, events: &mut Vec<AssistantMessageEvent>) {
        while !self.open_tools.is_empty() {
            self.close_tool(0, events);
        }
    }

    fn close_tool(&mut self, pos: usize, events: &mut Vec<AssistantMessageEvent>) {
        let open = self.open_tools.remove(pos);
        let Some(AssistantContent::ToolCall(block)) = self.output.content.get_mut(open.content_index) else { return };
        let mut arguments = open.partial_args;
        block.arguments = arguments.value().clone();
        let tool_call = block.clone();
        events.push(AssistantMessageEvent::ToolcallEnd {
            content_index: open.content_index,
            tool_call,
            partial: self.output.clone(),
        });
    }
}

/// pi's stop reason for a finish reason; unknown values are an error, as in pi.
fn map_finish_reason(reason: &str) -> Result<StopReason, String> {
    match reason {
        "stop" | "end" => Ok(StopReason::Stop),
        "length" => Ok(StopReason::Length),
        "tool_calls" | "function_call" => Ok(StopReason::ToolUse),
        "content_filter" => Ok(StopReason::Error),
        other => Err(format!("Unhandled stop reason: {other}")),
    }
}

/// Usage as pi counts it: cached prompt tokens split out of `input`, reasoning tokens added to `output`.
fn parse_usage(usage: &Value, model: &Model) -> Usage {
    let count = |pointer: &str| usage.pointer(pointer).and_then(Value::as_f64).map_or(0, |n| n.max(0.0) as u64);
    let cached = count("/prompt_tokens_details/cached_tokens");
    let input = count("/prompt_tokens").saturating_sub(cached);
    let output = count("/completion_tokens") + count("/completion_tokens_details/reasoning_tokens");
    let mut parsed = Usage {
        input,
        output,
        cache_read: cached,
        cache_write: 0,
        total_tokens: input + output + cached,
        ..Usage::default()
    };
    model.apply_cost(&mut parsed);
    parsed
}

/// Usage as pi 1.5 counts it: cache reads (`cached_tokens`, else DeepSeek's `prompt_cache_hit_tokens`) and
/// writes split out of `input`, `output` as reported (it includes the reasoning tokens, also given apart),
/// and OpenRouter's billed total when it reports one.
fn parse_usage_v1_5(usage: &Value, model: &Model) -> Usage {
    let number = |pointer: &str| usage.pointer(pointer).and_then(Value::as_f64).map(|n| n.max(0.0) as u64);
    let count = |pointer: &str| number(pointer).unwrap_or(0);
    let cache_read =
        number("/prompt_tokens_details/cached_tokens").or_else(|| number("/prompt_cache_hit_tokens")).unwrap_or(0);
    let cache_write = count("/prompt_tokens_details/cache_write_tokens");
    let input = count("/prompt_tokens").saturating_sub(cache_read + cache_write);
    let output = count("/completion_tokens");
    let mut parsed = Usage {
        input,
        output,
        cache_read,
        cache_write,
        reasoning: Some(count("/completion_tokens_details/reasoning_tokens")),
        total_tokens: input + output + cache_read + cache_write,
        ..Usage::default()
    };
    model.apply_cost(&mut parsed);
    parsed.cost.total_from_provider = Some(false);
    apply_openrouter_cost(model, &mut parsed, usage);
    parsed
}

#[cfg(test)]
#[path = "sse_tests.rs"]
mod tests;
