//! Text and thinking blocks as decoders open and close them while a message streams: the block
//! pushed with its `*_start` event, and the `*_end` event that carries the finished content.

use crate::protocol::{AssistantContent, AssistantMessage, AssistantMessageEvent, TextContent, ThinkingContent};

/// Appends an empty thinking block (with `signature`) or text block and returns its index and start event.
pub(crate) fn push_block_start(
    message: &mut AssistantMessage,
    thinking: bool,
    signature: Option<String>,
) -> (usize, AssistantMessageEvent) {
    let index = message.content.len();
    if thinking {
        let block = ThinkingContent {
            thinking: Default::default(),
            thinking_signature: signature.map(Into::into),
            redacted: None,
        };
        message.content.push(AssistantContent::Thinking(block));
        (index, AssistantMessageEvent::ThinkingStart { content_index: index, partial: message.clone() })
    } else {
        message.content.push(AssistantContent::Text(TextContent::new("")));
        (index, AssistantMessageEvent::TextStart { content_index: index, partial: message.clone() })
    }
}

/// The end event of the text or thinking block at `index` (`None` for other blocks).
pub(crate) fn block_end_event(message: &AssistantMessage, index: usize) -> Option<AssistantMessageEvent> {
    let partial = message.clone();
    match message.content.get(index) {
        Some(AssistantContent::Text(t)) => {
            Some(AssistantMessageEvent::TextEnd { content_index: index, content: t.text.clone(), partial })
        }
        Some(AssistantContent::Thinking(t)) => {
            Some(AssistantMessageEvent::ThinkingEnd { content_index: index, content: t.thinking.clone(), partial })
        }
        _ => None,
    }
}

/// Whether the block at `index` is thinking (`true`) or text (`false`); `None` for anything else.
pub(crate) fn block_is_thinking(message: &AssistantMessage, index: usize) -> Option<bool> {
    match message.content.get(index) {
        Some(AssistantContent::Thinking(_)) => Some(true),
        Some(AssistantContent::Text(_)) => Some(false),
        _ => None,
    }
}
