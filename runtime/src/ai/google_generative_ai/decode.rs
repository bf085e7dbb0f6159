//! Turns Gemini `streamGenerateContent` chunks into assistant-message events: text and thought
//! parts (a new block whenever the kind changes), whole function calls, signatures, finish
//! reasons, usage with cost, and error chunks.

use std::sync::atomic::{AtomicU64, Ordering};

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Map, Value};

use crate::ai::Model;
use crate::ai::blocks::{block_end_event, block_is_thinking, push_block_start};
use crate::protocol::{
    AssistantContent, AssistantMessage, AssistantMessageEvent, PiCompat, StopReason, ToolCall, Usage, now_ms,
};

/// Numbers the ids made up for function calls that arrive without one (process-wide, as in pi).
static GENERATED_CALL_IDS: AtomicU64 = AtomicU64::new(0);

/// Finish reasons pi knows and maps to an error stop (any other unknown value is a failure).
const ERROR_FINISH_REASONS: [&str; 15] = [
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "SAFETY",
    "IMAGE_SAFETY",
    "IMAGE_PROHIBITED_CONTENT",
    "IMAGE_RECITATION",
    "IMAGE_OTHER",
    "RECITATION",
    "FINISH_REASON_UNSPECIFIED",
    "OTHER",
    "LANGUAGE",
    "MALFORMED_FUNCTION_CALL",
    "UNEXPECTED_TOOL_CALL",
    "NO_IMAGE",
];

/// A chunk as servers send it for most of a stream, borrowed from the event's text. The fields that make a
/// chunk more than text and usage are only checked for presence (`null` counts as absent); a field of
/// another type fails the parse and the general path reads the chunk.
#[derive(Deserialize)]
struct TypicalChunk<'a> {
    #[serde(borrow)]
    candidates: [TypicalCandidate<'a>; 1],
    #[serde(rename = "responseId", default, borrow)]
    response_id: Option<Cow<'a, str>>,
    #[serde(rename = "usageMetadata", default)]
    usage_metadata: Option<Value>,
    #[serde(default)]
    error: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct TypicalCandidate<'a> {
    #[serde(borrow)]
    content: TypicalContent<'a>,
    #[serde(rename = "finishReason", default)]
    finish_reason: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct TypicalContent<'a> {
    #[serde(borrow)]
    parts: Vec<TypicalPart<'a>>,
}

#[derive(Deserialize)]
struct TypicalPart<'a> {
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(default)]
    thought: Option<bool>,
    #[serde(rename = "thoughtSignature", default, borrow)]
    thought_signature: Option<Cow<'a, str>>,
    #[serde(rename = "functionCall", default)]
    function_call: Option<IgnoredAny>,
}

/// The message being built from one response.
#[derive(Debug)]
pub(crate) struct StreamState {
    output: AssistantMessage,
    /// The open text or thinking block (always the last block).
    open_block: Option<usize>,
    /// The pi release whose finish reasons and usage to reproduce.
    compat: PiCompat,
}

impl StreamState {
    pub(crate) fn new(output: AssistantMessage) -> Self {
        Self { output, open_block: None, compat: PiCompat::V0_73 }
    }

    /// Reads finish reasons and usage as `compat`'s pi does (level 1.5: the raw finish reason kept, error
    /// reasons named, thought tokens reported apart).
    pub(crate) fn with_compat(mut self, compat: PiCompat) -> Self {
        self.compat = compat;
        self
    }

    pub(crate) fn message(&self) -> &AssistantMessage {
        &self.output
    }

    /// The message, leaving an empty one behind.
    pub(crate) fn take_message(&mut self) -> AssistantMessage {
        std::mem::take(&mut self.output)
    }

    /// Applies one parsed `data:` chunk, pushing the events it produces. An `error` object or an
    /// unknown finish reason is a failure, given as its message.
    pub(crate) fn apply_chunk(
        &mut self,
        chunk: &Value,
        model: &Model,
        events: &mut Vec<AssistantMessageEvent>,
    ) -> Result<(), String> {
        let Some(chunk) = chunk.as_object() else { return Ok(()) };
        if let Some(error) = chunk.get("error").filter(|e| e.is_object()) {
            return Err(error_chunk_message(error, chunk));
        }
        if self.output.response_id.is_none() {
            self.output.response_id =
                chunk.get("responseId").and_then(Value::as_str).filter(|s| !s.is_empty()).map(Into::into);
        }
        let candidate = chunk.get("candidates").and_then(|c| c.get(0)).and_then(Value::as_object);
        let parts = candidate.and_then(|c| c.get("content")).and_then(|c| c.get("parts")).and_then(Value::as_array);
        for part in parts.into_iter().flatten() {
            self.apply_part(part, events);
        }
        let reason = candidate.and_then(|c| c.get("finishReason")).and_then(Value::as_str).filter(|r| !r.is_empty());
        if let Some(reason) = reason {
            if self.compat.is_v1_5() {
                self.settle_finish_reason_v1_5(reason)?;
            } else {
                self.output.stop_reason = map_finish_reason(reason)?;
                if self.output.tool_calls().next().is_some() {
                    self.output.stop_reason = StopReason::ToolUse;
                }
            }
        }
        if let Some(usage) = chunk.get("usageMetadata").filter(|u| u.is_object()) {
            self.output.usage = parse_usage(usage, model, self.compat);
        }
        Ok(())
    }

    /// pi 1.5's reading of a finish reason: kept as the raw one; an error reason stops the message with
    /// `Provider stopped with: …` (reported at the end), an unknown one fails at once; tool calls turn only a
    /// plain stop into `toolUse`.
    fn settle_finish_reason_v1_5(&mut self, reason: &str) -> Result<(), String> {
        self.output.raw_stop_reason = Some(reason.to_owned());
        self.output.stop_reason = match map_finish_reason(reason)? {
            StopReason::Error => {
                self.output.error_message = Some(format!("Provider stopped with: {reason}"));
                StopReason::Error
            }
            StopReason::Stop if self.output.tool_calls().next().is_some() => StopReason::ToolUse,
            other => other,
        };
        Ok(())
    }

    /// Closes the open text or thinking block.
    pub(crate) fn finish(&mut self, events: &mut Vec<AssistantMessageEvent>) {
        self.close_block(events);
    }

    /// The common chunk, text or thought parts and the usage so far (Gemini sends it in every chunk), with no
    /// function call, finish reason or error, read without building a JSON tree for more than the usage;
    /// `false` when the chunk is anything else, which [`apply_chunk`](Self::apply_chunk) then reads.
    pub(crate) fn apply_typical_chunk(
        &mut self,
        data: &str,
        model: &Model,
        events: &mut Vec<AssistantMessageEvent>,
    ) -> bool {
        let Ok(chunk) = serde_json::from_str::<TypicalChunk>(data) else { return false };
        let [candidate] = &chunk.candidates;
        let plain = chunk.error.is_none()
            && candidate.finish_reason.is_none()
            && candidate.content.parts.iter().all(|part| part.function_call.is_none());
        if !plain {
            return false;
        }
        if self.output.response_id.is_none() {
            self.output.response_id = chunk.response_id.filter(|id| !id.is_empty()).map(Into::into);
        }
        for part in &candidate.content.parts {
            let signature = part.thought_signature.as_deref().filter(|s| !s.is_empty());
            if let Some(text) = part.text.as_deref() {
                self.apply_text_part(text, part.thought == Some(true), signature, events);
            }
        }
        if let Some(usage) = chunk.usage_metadata.filter(Value::is_object) {
            self.output.usage = parse_usage(&usage, model, self.compat);
        }
        true
    }

    fn apply_part(&mut self, part: &Value, events: &mut Vec<AssistantMessageEvent>) {
        let signature = part.get("thoughtSignature").and_then(Value::as_str).filter(|s| !s.is_empty());
        if let Some(text) = part.get("text").and_then(Value::as_str) {
            let thinking = part.get("thought").and_then(Value::as_bool) == Some(true);
            self.apply_text_part(text, thinking, signature, events);
        }
        if let Some(call) = part.get("functionCall").and_then(Value::as_object) {
            self.close_block(events);
            self.push_tool_call(call, signature, events);
        }
    }

    /// A text or thought part: the block of its kind opens or grows; a signature replaces the block's.
    fn apply_text_part(
        &mut self,
        text: &str,
        thinking: bool,
        signature: Option<&str>,
        events: &mut Vec<AssistantMessageEvent>,
    ) {
        let index = self.open_kind(thinking, events);
        match self.output.content.get_mut(index) {
            Some(AssistantContent::Thinking(block)) => {
                let delta = block.thinking.push_str_view(text);
                if let Some(signature) = signature {
                    block.thinking_signature = Some(signature.into());
                }
                let partial = self.output.clone();
                events.push(AssistantMessageEvent::ThinkingDelta { content_index: index, delta, partial });
            }
            Some(AssistantContent::Text(block)) => {
                let delta = block.text.push_str_view(text);
                if let Some(signature) = signature {
                    block.text_signature = Some(signature.into());
                }
                let partial = self.output.clone();
                events.push(AssistantMessageEvent::TextDelta { content_index: index, delta, partial });
            }
            _ => {}
        }
    }

    /// Returns the open block of the wanted kind, closing the other kind and opening one as needed.
    fn open_kind(&mut self, thinking: bool, events: &mut Vec<AssistantMessageEvent>) -> usize {
        if let Some(index) = self.open_block {
            if block_is_thinking(&self.output, index) == Some(thinking) {
                return index;
            }
            self.close_block(events);
        }
        let (index, start) = push_block_start(&mut self.output, thinking, None);
        self.open_block = Some(index);
        events.push(start);
        index
    }

    fn close_block(&mut self, events: &mut Vec<AssistantMessageEvent>) {
        let Some(index) = self.open_block.take() else { return };
        events.extend(block_end_event(&self.output, index));
    }

    /// A function call arrives whole: start, one delta with its JSON arguments, end.
    fn push_tool_call(
        &mut self,
        call: &Map<String, Value>,
        signature: Option<&str>,
        events: &mut Vec<AssistantMessageEvent>,
    ) {
        let name = call.get("name").and_then(Value::as_str);
        let given = call.get("id").and_then(Value::as_str).filter(|id| !id.is_empty());
        let id = match given {
            Some(id) if !self.output.tool_calls().any(|c| c.id == id) => id.to_owned(),
            _ => generated_call_id(name),
        };
        let arguments = call.get("args").filter(|a| !a.is_null()).cloned().unwrap_or_else(|| Value::Object(Map::new()));
        let delta = arguments.to_string().into();
        let tool_call = ToolCall {
            id,
            name: name.unwrap_or_default().to_owned(),
            arguments,
            thought_signature: signature.map(str::to_owned),
        };
        let content_index = self.output.content.len();
        self.output.content.push(AssistantContent::ToolCall(tool_call.clone()));
        events.push(AssistantMessageEvent::ToolcallStart { content_index, partial: self.output.clone() });
        events.push(AssistantMessageEvent::ToolcallDelta { content_index, delta, partial: self.output.clone() });
        events.push(AssistantMessageEvent::ToolcallEnd { content_index, tool_call, partial: self.output.clone() });
    }
}

/// `{name}_{unix millis}_{n}`, pi's id for a call the server did not name (`undefined` stands in
/// for a missing name, as in JavaScript).
fn generated_call_id(name: Option<&str>) -> String {
    let n = GENERATED_CALL_IDS.fetch_add(1, Ordering::Relaxed) + 1;
    format!("{}_{}_{n}", name.unwrap_or("undefined"), now_ms())
}

/// The genai SDK's text for an error chunk: its `status`, then the whole chunk as JSON.
fn error_chunk_message(error: &Value, chunk: &Map<String, Value>) -> String {
    let status = match error.get("status") {
        None | Some(Value::Null) => "undefined".to_owned(),
        Some(Value::String(status)) => status.clone(),
        Some(other) => other.to_string(),
    };
    format!("got status: {status}. {}", Value::Object(chunk.clone()))
}

/// pi's stop reason for a Gemini finish reason; an unknown value is a failure.
fn map_finish_reason(reason: &str) -> Result<StopReason, String> {
    match reason {
        "STOP" => Ok(StopReason::Stop),
        "MAX_TOKENS" => Ok(StopReason::Length),
        known if ERROR_FINISH_REASONS.contains(&known) => Ok(StopReason::Error),
        other => Err(format!("Unhandled stop reason: {other}")),
    }
}

/// Usage as pi counts it: cached tokens split out of the prompt, thoughts added to the output, the total
/// as the server reports it; pi 1.5 also reports the thoughts apart and marks the cost as computed.
fn parse_usage(usage: &Value, model: &Model, compat: PiCompat) -> Usage {
    let count = |key: &str| usage.get(key).and_then(Value::as_f64).map_or(0, |n| n.max(0.0) as u64);
    let cached = count("cachedContentTokenCount");
    let mut parsed = Usage {
        input: count("promptTokenCount").saturating_sub(cached),
        output: count("candidatesTokenCount") + count("thoughtsTokenCount"),
        cache_read: cached,
        cache_write: 0,
        total_tokens: count("totalTokenCount"),
        ..Usage::default()
    };
    model.apply_cost(&mut parsed);
    if compat.is_v1_5() {
        parsed.reasoning = Some(count("thoughtsTokenCount"));
        parsed.cost.total_from_provider = Some(false);
    }
    parsed
}

#[cfg(test)]
#[path = "decode_tests.rs"]
mod tests;
