//! Turns Anthropic Messages stream events into assistant-message events: content blocks matched by
//! their stream `index`, signatures, partial tool input, usage and cost, stop reasons, and errors.

use serde_json::{Map, Value};

use super::typical_delta::{DELTA_FIELDS, read_typical_delta};
use crate::ai::Model;
use crate::ai::ProviderErrorKind;
use crate::ai::pi15::{apply_openrouter_cost, settled_error};
use crate::ai::streaming_arguments::StreamingArguments;
use crate::ai::transport::{DecodeError, Flow, StreamDecoder};
use crate::protocol::{
    AssistantContent, AssistantMessage, AssistantMessageEvent, PiCompat, StopReason, TextContent, ThinkingContent,
    ToolCall,
};

/// The SSE event names that carry message events; every other name (`ping`, unknown) is skipped.
const MESSAGE_EVENTS: [&str; 6] = [
    "message_start",
    "message_delta",
    "message_stop",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
];
/// The text pi stores for reasoning the API returned encrypted.
const REDACTED_THINKING_TEXT: &str = "[Reasoning redacted]";
/// The stream ended normally but the message was refused (stop reason `refusal` or `sensitive`).
const UNKNOWN_ERROR: &str = "An unknown error occurred";
/// The body held data but no Anthropic message events.
const NOT_ANTHROPIC: &str = "the response stream carried no Anthropic message events";
/// An `error` event with no data.
const EMPTY_ERROR_EVENT: &str = "the Anthropic stream sent an error event without any details";
/// The body ended after `message_start` without `message_stop`.
const TRUNCATED_STREAM: &str = "the Anthropic stream ended before its message_stop event";
/// pi's words for a truncated stream (used at level 1.5).
const PI_TRUNCATED_STREAM: &str = "Anthropic stream ended before message_stop";
/// pi 1.5's error for a stream that never said why it stopped.
const NO_STOP_REASON: &str = "Anthropic stream ended without a stop reason";

/// A content block still receiving deltas.
#[derive(Debug)]
struct OpenBlock {
    /// The block's `index` in the stream.
    stream_index: u64,
    content_index: usize,
    /// Tool input received so far (tool-use blocks only).
    partial_json: StreamingArguments,
}

/// Messages API events in, assistant-message events out.
#[derive(Debug)]
pub struct AnthropicDecoder {
    output: AssistantMessage,
    model: Model,
    open: Vec<OpenBlock>,
    /// With an OAuth token tools are sent in Claude Code casing; these names map them back.
    tool_names: Option<Vec<String>>,
    saw_message_start: bool,
    saw_message_stop: bool,
    /// Data arrived under an event name this API does not use (not even `ping`).
    saw_foreign_data: bool,
    /// The pi release whose stop reasons and usage to reproduce.
    compat: PiCompat,
}

impl AnthropicDecoder {
    pub fn new(output: AssistantMessage, model: &Model) -> Self {
        Self {
            output,
            model: model.clone(),
            open: Vec::new(),
            tool_names: None,
            saw_message_start: false,
            saw_message_stop: false,
            saw_foreign_data: false,
            compat: PiCompat::V0_73,
        }
    }

    /// Reads stop reasons and usage as `compat`'s pi does (level 1.5: the raw stop reason kept, refusals
    /// explained, thinking tokens reported apart, OpenRouter's billed total).
    pub fn with_compat(mut self, compat: PiCompat) -> Self {
        self.compat = compat;
        self
    }

    /// Maps tool names the API returns back to these names, ignoring case (OAuth requests).
    pub fn with_tool_names(mut self, names: Vec<String>) -> Self {
        self.tool_names = Some(names);
        self
    }

    /// Applies one parsed event (dispatched on its `type`).
    fn apply(&mut self, event: &Value, events: &mut Vec<AssistantMessageEvent>) -> Result<Flow, DecodeError> {
        match event.get("type").and_then(Value::as_str) {
            Some("message_start") => {
                let message = event.get("message");
                if let Some(id) = message.and_then(|m| m.get("id")).and_then(Value::as_str) {
                    self.output.response_id = Some(id.into());
                }
                self.saw_message_start = true;
                let usage = message.and_then(|m| m.get("usage"));
                let count = |key: &str| usage.and_then(|u| u.get(key)).and_then(Value::as_f64).map_or(0, to_count);
                let target = &mut self.output.usage;
                target.input = count("input_tokens");
                target.output = count("output_tokens");
                target.cache_read = count("cache_read_input_tokens");
                target.cache_write = count("cache_creation_input_tokens");
                self.settle_usage();
            }
            Some("content_block_start") => self.start_block(event, events),
            Some("content_block_delta") => self.apply_delta(event, events),
            Some("content_block_stop") => self.stop_block(event, events),
            Some("message_delta") => {
                if let Some(reason) =
                    event.pointer("/delta/stop_reason").and_then(Value::as_str).filter(|r| !r.is_empty())
                {
                    if self.compat.is_v1_5() {
                        self.settle_stop_reason_v1_5(reason, event.pointer("/delta/stop_details"))?;
                    } else {
                        self.output.stop_reason = map_stop_reason(reason)?;
                    }
                }
                let usage = event.get("usage");
                let field = |key: &str| usage.and_then(|u| u.get(key)).and_then(Value::as_f64).map(to_count);
                let target = &mut self.output.usage;
                for (key, slot) in [
                    ("input_tokens", &mut target.input),
                    ("output_tokens", &mut target.output),
                    ("cache_read_input_tokens", &mut target.cache_read),
                    ("cache_creation_input_tokens", &mut target.cache_write),
                ] {
                    if let Some(count) = field(key) {
                        *slot = count;
                    }
                }
                if self.compat.is_v1_5()
                    && let Some(thinking) = usage.and_then(|u| u.pointer("/output_tokens_details/thinking_tokens"))
                    && let Some(count) = thinking.as_f64()
                {
                    self.output.usage.reasoning = Some(to_count(count));
                }
                self.settle_usage();
                if let (true, Some(usage)) = (self.compat.is_v1_5(), usage) {
                    apply_openrouter_cost(&self.model, &mut self.output.usage, usage);
                }
            }
            Some("message_stop") => {
                self.saw_message_stop = true;
                return Ok(Flow::Stop);
            }
            _ => {}
        }
        Ok(Flow::Continue)
    }

    fn settle_usage(&mut self) {
        let usage = &mut self.output.usage;
        usage.total_tokens = usage.input + usage.output + usage.cache_read + usage.cache_write;
        self.model.apply_cost(usage);
        if self.compat.is_v1_5() {
            usage.cost.total_from_provider = Some(false);
        }
    }

    /// pi 1.5's reading of a stop reason: kept as the raw one; a refusal (with the API's explanation when it
    /// gives one) or `sensitive` stops with an error the end of the stream reports; an unknown one fails.
    fn settle_stop_reason_v1_5(&mut self, reason: &str, details: Option<&Value>) -> Result<(), String> {
        self.output.raw_stop_reason = Some(reason.to_owned());
        let (stop_reason, error) = match reason {
            "end_turn" | "pause_turn" | "stop_sequence" => (StopReason::Stop, None),
            "max_tokens" => (StopReason::Length, None),
            "tool_use" => (StopReason::ToolUse, None),
            "refusal" => {
                let explanation = details.and_then(|d| d.get("explanation")).and_then(Value::as_str);
                let text = explanation.filter(|e| !e.is_empty()).unwrap_or("The model refused to complete the request");
                (StopReason::Error, Some(text.to_owned()))
            }
            "sensitive" => (StopReason::Error, Some(format!("Provider stopped with: {reason}"))),
            other => return Err(format!("Unhandled stop reason: {other}")),
        };
        self.output.stop_reason = stop_reason;
        self.output.error_message = error;
        Ok(())
    }

    fn start_block(&mut self, event: &Value, events: &mut Vec<AssistantMessageEvent>) {
        let (Some(stream_index), Some(block)) =
            (event.get("index").and_then(Value::as_u64), event.get("content_block"))
        else {
            return;
        };
        let text_of = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
        let content = match block.get("type").and_then(Value::as_str) {
            Some("text") => AssistantContent::Text(TextContent::new("")),
            Some("thinking") => AssistantContent::Thinking(ThinkingContent {
                thinking: Default::default(),
                thinking_signature: Some(Default::default()),
                redacted: None,
            }),
            Some("redacted_thinking") => AssistantContent::Thinking(ThinkingContent {
                thinking: REDACTED_THINKING_TEXT.into(),
                thinking_signature: block.get("data").and_then(Value::as_str).map(Into::into),
                redacted: Some(true),
            }),
            Some("tool_use") => AssistantContent::ToolCall(ToolCall {
                id: text_of("id"),
                name: self.local_tool_name(&text_of("name")),
                arguments: block
                    .get("input")
                    .filter(|v| !v.is_null())
                    .cloned()
                    .unwrap_or_else(|| Value::Object(Map::new())),
                thought_signature: None,
            }),
            _ => return,
        };
        let content_index = self.output.content.len();
        let is_text = matches!(content, AssistantContent::Text(_));
        let is_tool = matches!(content, AssistantContent::ToolCall(_));
        self.output.content.push(content);
        self.open.push(OpenBlock { stream_index, content_index, partial_json: StreamingArguments::new() });
        let partial = self.output.clone();
        events.push(if is_text {
            AssistantMessageEvent::TextStart { content_index, partial }
        } else if is_tool {
            AssistantMessageEvent::ToolcallStart { content_index, partial }
        } else {
            AssistantMessageEvent::ThinkingStart { content_index, partial }
        });
    }

    fn apply_delta(&mut self, event: &Value, events: &mut Vec<AssistantMessageEvent>) {
        let Some(stream_index) = event.get("index").and_then(Value::as_u64) else { return };
        let Some(delta) = event.get("delta") else { return };
        let kind = delta.get("type").and_then(Value::as_str);
        let piece = |key: &str| delta.get(key).and_then(Value::as_str).unwrap_or_default();
        let text = match kind {
            Some(kind) => DELTA_FIELDS.iter().find(|(name, _)| *name == kind).map_or("", |(_, field)| piece(field)),
            None => "",
        };
        self.apply_block_delta(stream_index, kind, text, events);
    }

    /// A `content_block_delta` of kind `kind` carrying `piece` for the block at `stream_index`.
    fn apply_block_delta(
        &mut self,
        stream_index: u64,
        kind: Option<&str>,
        piece: &str,
        events: &mut Vec<AssistantMessageEvent>,
    ) {
        let Some(pos) = self.open.iter().position(|b| b.stream_index == stream_index) else { return };
        let content_index = self.open[pos].content_index;
        match (kind, self.output.content.get_mut(content_index)) {
            (Some("text_delta"), Some(AssistantContent::Text(block))) => {
                let delta = block.text.push_str_view(piece);
                let partial = self.output.clone();
                events.push(AssistantMessageEvent::TextDelta { content_index, delta, partial });
            }
            (Some("thinking_delta"), Some(AssistantContent::Thinking(block))) => {
                let delta = block.thinking.push_str_view(piece);
                let partial = self.output.clone();
                events.push(AssistantMessageEvent::ThinkingDelta { content_index, delta, partial });
            }
            (Some("input_json_delta"), Some(AssistantContent::ToolCall(block))) => {
                let open = &mut self.open[pos];
                block.arguments = open.partial_json.push(piece).clone();
                let (delta, partial) = (piece.into(), self.output.clone());
                events.push(AssistantMessageEvent::ToolcallDelta { content_index, delta, partial });
            }
            (Some("signature_delta"), Some(AssistantContent::Thinking(block))) => {
                block.thinking_signature.get_or_insert_with(Default::default).push_str(piece);
            }
            _ => {}
        }
    }

    /// The common event, a `content_block_delta` in its usual shape, read without building a JSON tree;
    /// `false` when it is anything else (then the general path reads it).
    fn apply_typical_delta(&mut self, data: &str, events: &mut Vec<AssistantMessageEvent>) -> bool {
        let Some(delta) = read_typical_delta(data) else { return false };
        self.apply_block_delta(delta.index, Some(&delta.kind), &delta.piece, events);
        true
    }

    fn stop_block(&mut self, event: &Value, events: &mut Vec<AssistantMessageEvent>) {
        let Some(stream_index) = event.get("index").and_then(Value::as_u64) else { return };
        let Some(pos) = self.open.iter().position(|b| b.stream_index == stream_index) else { return };
        let open = self.open.remove(pos);
        let content_index = open.content_index;
        if let Some(AssistantContent::ToolCall(block)) = self.output.content.get_mut(content_index) {
            let mut arguments = open.partial_json;
            block.arguments = arguments.value().clone();
        }
        let partial = self.output.clone();
        match self.output.content.get(content_index) {
            Some(AssistantContent::Text(block)) => {
                events.push(AssistantMessageEvent::TextEnd { content_index, content: block.text.clone(), partial });
            }
            Some(AssistantContent::Thinking(block)) => {
                let content = block.thinking.clone();
                events.push(AssistantMessageEvent::ThinkingEnd { content_index, content, partial });
            }
            Some(AssistantContent::ToolCall(block)) => {
                let tool_call = block.clone();
                events.push(AssistantMessageEvent::ToolcallEnd { content_index, tool_call, partial });
            }
            None => {}
        }
    }

    /// The caller's spelling of a tool name the API returned (OAuth requests use Claude Code casing).
    fn local_tool_name(&self, name: &str) -> String {
        self.tool_names
            .as_ref()
            .and_then(|names| names.iter().find(|n| n.eq_ignore_ascii_case(name)))
            .map_or_else(|| name.to_owned(), Clone::clone)
    }
}

impl StreamDecoder for AnthropicDecoder {
    fn message(&self) -> &AssistantMessage {
        &self.output
    }

    fn take_message(&mut self) -> AssistantMessage {
        std::mem::take(&mut self.output)
    }

    fn on_event(
        &mut self,
        name: &str,
        data: &str,
        events: &mut Vec<AssistantMessageEvent>,
    ) -> Result<Flow, DecodeError> {
        if name == "error" {
            // pi reports the event's data verbatim; an event without data gets words of its own.
            let message = if data.trim().is_empty() { EMPTY_ERROR_EVENT.to_owned() } else { data.to_owned() };
            return Err(DecodeError { message, kind: stream_error_kind(data) });
        }
        if name == "content_block_delta" && self.apply_typical_delta(data, events) {
            return Ok(Flow::Continue);
        }
        if !MESSAGE_EVENTS.contains(&name) {
            self.saw_foreign_data |= name != "ping" && !data.trim().is_empty();
            return Ok(Flow::Continue);
        }
        let event = parse_json_with_repair(data)
            .map_err(|error| format!("could not parse the Anthropic {name} event ({error}): {data}"))?;
        self.apply(&event, events)
    }

    fn finish(&mut self, _events: &mut Vec<AssistantMessageEvent>) -> Result<(), DecodeError> {
        // pi would end such a stream as an empty answer; a body of foreign events is surely a
        // misconfigured endpoint, so it is reported instead.
        if !self.saw_message_start && self.saw_foreign_data {
            return Err(NOT_ANTHROPIC.into());
        }
        if self.saw_message_start && !self.saw_message_stop {
            return Err(if self.compat.is_v1_5() { PI_TRUNCATED_STREAM } else { TRUNCATED_STREAM }.into());
        }
        if self.compat.is_v1_5() {
            return settled_error(&self.output, NO_STOP_REASON).map_or(Ok(()), |e| Err(e.into()));
        }
        if self.output.stop_reason == StopReason::Error {
            return Err(UNKNOWN_ERROR.into());
        }
        Ok(())
    }

    fn http_error(&self, status: u16, body: &str) -> String {
        http_error_message(status, body)
    }
}

fn to_count(value: f64) -> u64 {
    if value.is_finite() && value > 0.0 { value as u64 } else { 0 }
}

/// pi's stop reason for Anthropic's; unknown values are an error, as in pi.
fn map_stop_reason(reason: &str) -> Result<StopReason, String> {
    match reason {
        "end_turn" | "pause_turn" | "stop_sequence" => Ok(StopReason::Stop),
        "max_tokens" => Ok(StopReason::Length),
        "tool_use" => Ok(StopReason::ToolUse),
        "refusal" | "sensitive" => Ok(StopReason::Error),
        other => Err(format!("Unhandled stop reason: {other}")),
    }
}

/// The failure kind an `error` event's `error.type` names.
fn stream_error_kind(data: &str) -> Option<ProviderErrorKind> {
    let parsed: Value = serde_json::from_str(data).ok()?;
    match parsed.pointer("/error/type").and_then(Value::as_str)? {
        "overloaded_error" | "api_error" => Some(ProviderErrorKind::Server),
        "rate_limit_error" => Some(ProviderErrorKind::RateLimit { retry_after: None }),
        "authentication_error" | "permission_error" => Some(ProviderErrorKind::Authentication),
        "request_too_large" => Some(ProviderErrorKind::ContextOverflow),
        "invalid_request_error" | "not_found_error" => Some(ProviderErrorKind::InvalidRequest),
        _ => None,
    }
}

/// JavaScript truthiness of a JSON value.
fn is_truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// The Anthropic SDK's text for an HTTP error: `{status} {message}`, where the message is the body's
/// top-level `message` when it has one, else the whole JSON body (compact), else the raw text, and
/// `{status} status code (no body)` when there is nothing.
pub(crate) fn http_error_message(status: u16, body: &str) -> String {
    let parsed = serde_json::from_str::<Value>(body).ok().filter(is_truthy);
    let message = match &parsed {
        Some(json) => match json.get("message").filter(|m| is_truthy(m)) {
            Some(Value::String(text)) => text.clone(),
            Some(other) => other.to_string(),
            None => json.to_string(),
        },
        None => body.to_owned(),
    };
    if message.is_empty() { format!("{status} status code (no body)") } else { format!("{status} {message}") }
}

/// `JSON.parse`, and on failure a second try after repairing string literals (raw control
/// characters escaped, backslashes before invalid escapes doubled), as pi reads events.
pub(crate) fn parse_json_with_repair(text: &str) -> Result<Value, serde_json::Error> {
    serde_json::from_str(text).or_else(|error| {
        let repaired = repair_json(text);
        if repaired == text { Err(error) } else { serde_json::from_str(&repaired) }
    })
}

fn repair_json(text: &str) -> String {
    const VALID_ESCAPES: [char; 9] = ['"', '\\', '/', 'b', 'f', 'n', 'r', 't', 'u'];
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        i += 1;
        if !in_string {
            in_string = c == '"';
            out.push(c);
            continue;
        }
        match c {
            '"' => {
                in_string = false;
                out.push(c);
            }
            '\\' => match chars.get(i) {
                Some('u') if chars.get(i + 1..i + 5).is_some_and(|d| d.iter().all(char::is_ascii_hexdigit)) => {
                    out.push('\\');
                    out.extend(&chars[i..i + 5]);
                    i += 5;
                }
                Some(next) if VALID_ESCAPES.contains(next) => {
                    out.push('\\');
                    out.push(*next);
                    i += 1;
                }
                _ => out.push_str("\\\\"),
            },
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
#[path = "decode_tests.rs"]
mod tests;
