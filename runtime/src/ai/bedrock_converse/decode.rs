//! Turns ConverseStream events into assistant-message events as pi 0.73.1 reads them: `start` on
//! `messageStart`, text and reasoning blocks opened by their first delta, tool uses by `contentBlockStart`,
//! blocks matched by `contentBlockIndex` while open, stop reasons from `messageStop`, usage and cost from
//! `metadata`, and exception events as errors.

use serde_json::Value;

use super::errors::{ServiceError, stream_exception};
use crate::ai::Model;
use crate::ai::blocks::block_end_event;
use crate::ai::streaming_arguments::StreamingArguments;
use crate::ai::transport::DecodeError;
use crate::protocol::{
    AssistantContent, AssistantMessage, AssistantMessageEvent, StopReason, TextContent, ThinkingContent, ToolCall,
};

/// A content block still receiving deltas.
#[derive(Debug)]
struct OpenBlock {
    /// Its `contentBlockIndex` in the stream.
    stream_index: u64,
    content_index: usize,
    /// Tool input received so far (tool uses only).
    input: StreamingArguments,
}

/// ConverseStream events in, assistant-message events out.
#[derive(Debug)]
pub struct BedrockDecoder {
    output: AssistantMessage,
    model: Model,
    open: Vec<OpenBlock>,
}

impl BedrockDecoder {
    pub fn new(output: AssistantMessage, model: &Model) -> Self {
        Self { output, model: model.clone(), open: Vec::new() }
    }

    pub fn message(&self) -> &AssistantMessage {
        &self.output
    }

    pub fn take_message(&mut self) -> AssistantMessage {
        std::mem::take(&mut self.output)
    }

    /// One event-stream message: its `:message-type`, its `:event-type` or `:exception-type`, and payload.
    pub fn on_message(
        &mut self,
        message_type: &str,
        name: &str,
        payload: &[u8],
        events: &mut Vec<AssistantMessageEvent>,
    ) -> Result<(), DecodeError> {
        match message_type {
            "event" => {}
            "exception" => return Err(stream_exception(name, payload).into_decode_error()),
            // Not a modelled exception (`:error-code` and `:error-message` headers; `name` holds the message).
            _ => return Err(DecodeError { message: name.to_owned(), kind: None }),
        }
        let event: Value = serde_json::from_slice(payload)
            .map_err(|error| DecodeError::from(format!("could not parse the Bedrock {name} event as JSON: {error}")))?;
        match name {
            "messageStart" => {
                let role = event.get("role").and_then(Value::as_str).unwrap_or_default();
                if role != "assistant" {
                    return Err(format!(
                        "the Bedrock stream started a message of role \"{role}\", not an assistant message"
                    )
                    .into());
                }
                events.push(AssistantMessageEvent::Start { partial: self.output.clone() });
            }
            "contentBlockStart" => self.start_block(&event, events),
            "contentBlockDelta" => self.apply_delta(&event, events),
            "contentBlockStop" => self.stop_block(&event, events),
            "messageStop" => {
                let reason = event.get("stopReason").and_then(Value::as_str).unwrap_or_default();
                self.output.stop_reason = map_stop_reason(reason);
            }
            "metadata" => self.apply_usage(event.get("usage")),
            // Events this client does not know are skipped, as the SDK hands them on unparsed.
            _ => {}
        }
        Ok(())
    }

    fn index_of(event: &Value) -> Option<u64> {
        event.get("contentBlockIndex").and_then(Value::as_u64)
    }

    fn open_block(&mut self, stream_index: u64, content: AssistantContent) -> usize {
        let content_index = self.output.content.len();
        self.output.content.push(content);
        self.open.push(OpenBlock { stream_index, content_index, input: StreamingArguments::new() });
        content_index
    }

    /// Only tool uses announce themselves; text and reasoning blocks start with their first delta.
    fn start_block(&mut self, event: &Value, events: &mut Vec<AssistantMessageEvent>) {
        let (Some(stream_index), Some(tool_use)) = (Self::index_of(event), event.pointer("/start/toolUse")) else {
            return;
        };
        let text = |key: &str| tool_use.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
        let call = ToolCall {
            id: text("toolUseId"),
            name: text("name"),
            arguments: Value::Object(serde_json::Map::new()),
            thought_signature: None,
        };
        let content_index = self.open_block(stream_index, AssistantContent::ToolCall(call));
        events.push(AssistantMessageEvent::ToolcallStart { content_index, partial: self.output.clone() });
    }

    fn apply_delta(&mut self, event: &Value, events: &mut Vec<AssistantMessageEvent>) {
        let Some(stream_index) = Self::index_of(event) else { return };
        let Some(delta) = event.get("delta") else { return };
        let open = self.open.iter().position(|block| block.stream_index == stream_index);
        if let Some(text) = delta.get("text") {
            let piece = text.as_str().unwrap_or_default();
            let content_index = match open {
                Some(pos) => self.open[pos].content_index,
                None => {
                    let index = self.open_block(stream_index, AssistantContent::Text(TextContent::new("")));
                    events
                        .push(AssistantMessageEvent::TextStart { content_index: index, partial: self.output.clone() });
                    index
                }
            };
            if let Some(AssistantContent::Text(block)) = self.output.content.get_mut(content_index) {
                let delta = block.text.push_str_view(piece);
                events.push(AssistantMessageEvent::TextDelta { content_index, delta, partial: self.output.clone() });
            }
        } else if let Some(tool_use) = delta.get("toolUse") {
            let Some(pos) = open else { return };
            let content_index = self.open[pos].content_index;
            let piece = tool_use.get("input").and_then(Value::as_str).unwrap_or_default();
            if let Some(AssistantContent::ToolCall(block)) = self.output.content.get_mut(content_index) {
                block.arguments = self.open[pos].input.push(piece).clone();
                let partial = self.output.clone();
                events.push(AssistantMessageEvent::ToolcallDelta { content_index, delta: piece.into(), partial });
            }
        } else if let Some(reasoning) = delta.get("reasoningContent") {
            let content_index = match open {
                Some(pos) => self.open[pos].content_index,
                None => {
                    let thinking = ThinkingContent {
                        thinking: Default::default(),
                        thinking_signature: Some(Default::default()),
                        redacted: None,
                    };
                    let index = self.open_block(stream_index, AssistantContent::Thinking(thinking));
                    events.push(AssistantMessageEvent::ThinkingStart {
                        content_index: index,
                        partial: self.output.clone(),
                    });
                    index
                }
            };
            let Some(AssistantContent::Thinking(block)) = self.output.content.get_mut(content_index) else { return };
            let piece = |key: &str| reasoning.get(key).and_then(Value::as_str).filter(|piece| !piece.is_empty());
            if let Some(text) = piece("text") {
                let delta = block.thinking.push_str_view(text);
                events.push(AssistantMessageEvent::ThinkingDelta {
                    content_index,
                    delta,
                    partial: self.output.clone(),
                });
            }
            if let (Some(signature), Some(AssistantContent::Thinking(block))) =
                (piece("signature"), self.output.content.get_mut(content_index))
            {
                block.thinking_signature.get_or_insert_with(Default::default).push_str(signature);
            }
        }
    }

    fn stop_block(&mut self, event: &Value, events: &mut Vec<AssistantMessageEvent>) {
        let Some(stream_index) = Self::index_of(event) else { return };
        let Some(pos) = self.open.iter().position(|block| block.stream_index == stream_index) else { return };
        let mut open = self.open.remove(pos);
        let content_index = open.content_index;
        if let Some(AssistantContent::ToolCall(block)) = self.output.content.get_mut(content_index) {
            block.arguments = open.input.value().clone();
        }
        if let Some(AssistantContent::ToolCall(block)) = self.output.content.get(content_index) {
            let (tool_call, partial) = (block.clone(), self.output.clone());
            events.push(AssistantMessageEvent::ToolcallEnd { content_index, tool_call, partial });
        } else {
            events.extend(block_end_event(&self.output, content_index));
        }
    }

    /// Token counts as reported (a missing total is input plus output), and their cost.
    fn apply_usage(&mut self, usage: Option<&Value>) {
        let Some(usage) = usage else { return };
        let count = |key: &str| usage.get(key).and_then(Value::as_f64).filter(|n| *n > 0.0).map_or(0, |n| n as u64);
        let target = &mut self.output.usage;
        target.input = count("inputTokens");
        target.output = count("outputTokens");
        target.cache_read = count("cacheReadInputTokens");
        target.cache_write = count("cacheWriteInputTokens");
        target.total_tokens = match count("totalTokens") {
            0 => target.input + target.output,
            total => total,
        };
        self.model.apply_cost(target);
    }
}

/// pi's reading of a Converse stop reason; one it does not know (guardrails, content filters) is an error.
fn map_stop_reason(reason: &str) -> StopReason {
    match reason {
        "end_turn" | "stop_sequence" => StopReason::Stop,
        "max_tokens" | "model_context_window_exceeded" => StopReason::Length,
        "tool_use" => StopReason::ToolUse,
        _ => StopReason::Error,
    }
}

impl ServiceError {
    fn into_decode_error(self) -> DecodeError {
        DecodeError { message: self.text(), kind: Some(self.kind()) }
    }
}

#[cfg(test)]
#[path = "decode_tests.rs"]
mod tests;
