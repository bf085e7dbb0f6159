//! The request's messages (seed 003, Phase 3): each panel as an assistant `dynamic_panel` tool call and its
//! result, a footer pair, the system prompt repeated (for APIs that take it), then the conversation with
//! empty messages dropped, tool calls without results (and results without calls) skipped, and roles
//! alternating.

use std::collections::HashSet;

use serde_json::json;

use super::{CONVERSATION_ID, ContextItem, PanelTexts};
use crate::protocol::{
    AssistantContent, AssistantMessage, Message, MessageContent, StopReason, ToolCall, ToolResultMessage, UserContent,
    UserMessage,
};
use crate::session::iso_timestamp;

/// The name of the fake tool panels are "returned" by.
pub const PANEL_TOOL: &str = "dynamic_panel";
/// How many of the latest conversation messages the footer lists with their times.
const FOOTER_MESSAGE_TIMES: usize = 10;

/// What one request is built from.
#[derive(Debug, Clone, Copy)]
pub struct PanelRequest<'a> {
    /// The panels, in any order (the conversation's own item is ignored).
    pub items: &'a [ContextItem],
    /// The live conversation, oldest first.
    pub conversation: &'a [Message],
    /// The number (`#n`) of each conversation message, as the message tools take it; empty numbers them
    /// from 1.
    pub numbers: &'a [usize],
    pub system_prompt: &'a str,
    /// Repeat the system prompt after the panels (Context Pilot does for Anthropic, not for OpenAI-style APIs).
    pub reinject_system_prompt: bool,
    /// Now, in ms since the epoch (the footer's date and time).
    pub now_ms: i64,
    /// The first panel's header and its timestamp line go in one text block, a line apart (for APIs that
    /// join an assistant's text blocks with nothing between them); Anthropic takes them as two blocks.
    pub join_texts: bool,
    pub texts: &'a PanelTexts,
}

/// The messages of one request: panels (most stable first), footer, repeated system prompt, conversation.
pub fn assemble_request(request: &PanelRequest<'_>) -> Vec<Message> {
    assemble_request_owned(request, request.conversation.to_vec())
}

/// [`assemble_request`] with the conversation given up by the caller (nothing of it is copied);
/// `request.conversation` is not read.
pub fn assemble_request_owned(request: &PanelRequest<'_>, conversation: Vec<Message>) -> Vec<Message> {
    let mut items: Vec<&ContextItem> = request.items.iter().filter(|item| item.id != CONVERSATION_ID).collect();
    // Stable: panels refreshed in the same millisecond keep their given order.
    items.sort_by_key(|item| item.last_refresh_ms);
    let footer = footer_text(request.texts, &conversation, request.numbers, request.now_ms);
    let conversation = clean_owned_conversation(conversation);
    let mut messages = Vec::with_capacity(items.len() * 2 + 4 + conversation.len());
    let texts = request.texts;
    let mut last_time: Option<(i64, String)> = None;
    for (position, item) in items.iter().enumerate() {
        let mut content = Vec::with_capacity(3);
        // Panels refreshed together share their time: format it once.
        if last_time.as_ref().is_none_or(|(ms, _)| *ms != item.last_refresh_ms) {
            last_time = Some((item.last_refresh_ms, iso_timestamp(item.last_refresh_ms)));
        }
        let time = last_time.as_ref().map(|(_, text)| text.as_str()).unwrap_or_default();
        let stamp = texts.timestamp.replace("{iso_time}", time);
        match (position, request.join_texts) {
            (0, true) => content.push(AssistantContent::text(format!("{}\n{stamp}", texts.header))),
            (0, false) => {
                content.push(AssistantContent::text(texts.header.as_str()));
                content.push(AssistantContent::text(stamp));
            }
            _ => content.push(AssistantContent::text(stamp)),
        }
        let call_id = format!("panel_{}", item.id);
        content.push(tool_call(&call_id, json!({ "id": item.id })));
        messages.push(assistant(content, item.last_refresh_ms));
        let mut body = String::with_capacity(item.id.len() + item.header.len() + item.content.len() + 20);
        for piece in ["======= [", &item.id, "] ", &item.header, " =======\n", &item.content] {
            body.push_str(piece);
        }
        messages.push(tool_result(call_id, body, item.last_refresh_ms));
    }
    let footer_call = tool_call("panel_footer", json!({ "action": "end_panels" }));
    messages.push(assistant(vec![AssistantContent::text(footer), footer_call], request.now_ms));
    messages.push(tool_result("panel_footer".to_owned(), texts.footer_ack.clone(), request.now_ms));
    if request.reinject_system_prompt {
        let repeated = format!("{}{}", texts.reinjection, request.system_prompt);
        messages.push(Message::User(UserMessage {
            content: MessageContent::Blocks(vec![UserContent::text(repeated)]),
            timestamp: request.now_ms,
        }));
        messages.push(assistant(vec![AssistantContent::text(texts.reinjection_ack.as_str())], request.now_ms));
    }
    messages.extend(conversation);
    messages
}

/// The footer: its opening text, the numbers and times of the latest conversation messages, and now.
fn footer_text(texts: &PanelTexts, conversation: &[Message], numbers: &[usize], now_ms: i64) -> String {
    let mut text = texts.footer.clone();
    let skip = conversation.len().saturating_sub(FOOTER_MESSAGE_TIMES);
    let mut times = conversation.iter().enumerate().skip(skip).peekable();
    if times.peek().is_some() {
        text.push_str("\nMessage timestamps:");
        for (index, message) in times {
            let number = numbers.get(index).copied().unwrap_or(index + 1);
            let (role, timestamp) = match message {
                Message::User(user) => ("user", user.timestamp),
                Message::Assistant(answer) => ("assistant", answer.timestamp),
                Message::ToolResult(result) => ("tool result", result.timestamp),
            };
            text.push_str(&format!("\n- #{number} {role}: {}", iso_timestamp(timestamp)));
        }
    }
    text.push_str(&format!("\nCurrent datetime: {}", iso_timestamp(now_ms)));
    text
}

fn tool_call(id: &str, arguments: serde_json::Value) -> AssistantContent {
    AssistantContent::ToolCall(ToolCall {
        id: id.to_owned(),
        name: PANEL_TOOL.to_owned(),
        arguments,
        thought_signature: None,
    })
}

fn assistant(content: Vec<AssistantContent>, timestamp: i64) -> Message {
    let stop_reason = match content.last() {
        Some(AssistantContent::ToolCall(_)) => StopReason::ToolUse,
        _ => StopReason::Stop,
    };
    Message::Assistant(AssistantMessage { content, stop_reason, timestamp, ..AssistantMessage::default() })
}

fn tool_result(tool_call_id: String, text: String, timestamp: i64) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id,
        tool_name: PANEL_TOOL.to_owned(),
        content: vec![UserContent::text(text)],
        details: None,
        is_error: false,
        timestamp,
        duration_ms: None,
    })
}

/// The conversation as the API can take it (seed 003, step 8 and its orphan rule): tool calls without a
/// result and results without a call are skipped, messages left empty are dropped, and consecutive
/// assistant messages (or consecutive user messages) are merged so roles alternate.
pub fn clean_conversation(conversation: &[Message]) -> Vec<Message> {
    clean_owned_conversation(conversation.to_vec())
}

/// [`clean_conversation`] of a conversation the caller gives up (nothing is copied).
pub fn clean_owned_conversation(conversation: Vec<Message>) -> Vec<Message> {
    // Which blocks survive is decided while the ids can still be borrowed: one flag per assistant block and
    // per tool result, in order.
    let keep = {
        let answered: HashSet<&str> = conversation
            .iter()
            .filter_map(|message| match message {
                Message::ToolResult(result) => Some(result.tool_call_id.as_str()),
                _ => None,
            })
            .collect();
        let called: HashSet<&str> = conversation
            .iter()
            .filter_map(|message| match message {
                Message::Assistant(answer) => Some(answer.tool_calls().map(|call| call.id.as_str())),
                _ => None,
            })
            .flatten()
            .collect();
        let mut keep = Vec::with_capacity(conversation.len() * 2);
        for message in &conversation {
            match message {
                Message::Assistant(answer) => keep.extend(answer.content.iter().map(|block| match block {
                    AssistantContent::ToolCall(call) => answered.contains(call.id.as_str()),
                    AssistantContent::Text(text) => !text.text.is_empty(),
                    _ => true,
                })),
                Message::ToolResult(result) => keep.push(called.contains(result.tool_call_id.as_str())),
                Message::User(_) => {}
            }
        }
        keep
    };
    let mut flags = keep.into_iter();
    let mut cleaned: Vec<Message> = Vec::with_capacity(conversation.len());
    for message in conversation {
        match message {
            Message::Assistant(mut answer) => {
                answer.content.retain(|_| flags.next().unwrap_or(false));
                if answer.content.is_empty() {
                    continue;
                }
                if let Some(Message::Assistant(previous)) = cleaned.last_mut() {
                    previous.content.append(&mut answer.content);
                    previous.stop_reason = answer.stop_reason;
                    continue;
                }
                cleaned.push(Message::Assistant(answer));
            }
            Message::ToolResult(result) => {
                if flags.next().unwrap_or(false) {
                    cleaned.push(Message::ToolResult(result));
                }
            }
            Message::User(user) => {
                if user_is_empty(&user.content) {
                    continue;
                }
                if let Some(Message::User(previous)) = cleaned.last_mut() {
                    let mut blocks =
                        into_blocks(std::mem::replace(&mut previous.content, MessageContent::Text(String::new())));
                    blocks.extend(into_blocks(user.content));
                    previous.content = MessageContent::Blocks(blocks);
                    continue;
                }
                cleaned.push(Message::User(user));
            }
        }
    }
    cleaned
}

fn user_is_empty(content: &MessageContent) -> bool {
    match content {
        MessageContent::Text(text) => text.is_empty(),
        MessageContent::Blocks(blocks) => blocks.iter().all(|block| match block {
            UserContent::Text(text) => text.text.is_empty(),
            _ => false,
        }),
    }
}

fn into_blocks(content: MessageContent) -> Vec<UserContent> {
    match content {
        MessageContent::Text(text) => vec![UserContent::text(text)],
        MessageContent::Blocks(blocks) => blocks,
    }
}
