//! The conversation as plain text for a summarization request: one `[Role]: …` paragraph per part, so
//! the summarizer reads it as a transcript rather than a conversation to continue.

use serde_json::Value;

use crate::protocol::{AgentMessage, AssistantContent, Message, MessageContent};

/// Tool results longer than this (in characters) are cut in the transcript.
pub const TOOL_RESULT_MAX_CHARS: usize = 2000;

/// `text` cut to `max_chars` characters with a note saying how many were dropped.
fn truncate_for_summary(text: &str, max_chars: usize) -> String {
    let total = text.chars().count();
    if total <= max_chars {
        return text.to_owned();
    }
    let kept: String = text.chars().take(max_chars).collect();
    format!("{kept}\n\n[... {} more characters truncated]", total - max_chars)
}

fn user_text(content: &MessageContent) -> String {
    match content {
        MessageContent::Text(text) => text.clone(),
        MessageContent::Blocks(blocks) => blocks.iter().filter_map(|b| b.as_text()).collect(),
    }
}

/// `name(k=json, …)`.
fn format_tool_call(name: &str, arguments: &Value) -> String {
    let args = match arguments {
        Value::Object(map) => map
            .iter()
            .map(|(key, value)| format!("{key}={}", serde_json::to_string(value).unwrap_or_default()))
            .collect::<Vec<_>>()
            .join(", "),
        _ => String::new(),
    };
    format!("{name}({args})")
}

/// pi's `serializeConversation` over LLM messages.
pub fn serialize_conversation(messages: &[Message]) -> String {
    let mut parts: Vec<String> = Vec::new();
    for message in messages {
        match message {
            Message::User(user) => {
                let text = user_text(&user.content);
                if !text.is_empty() {
                    parts.push(format!("[User]: {text}"));
                }
            }
            Message::Assistant(assistant) => {
                let (mut texts, mut thinking, mut calls) = (Vec::new(), Vec::new(), Vec::new());
                for block in &assistant.content {
                    match block {
                        AssistantContent::Text(t) => texts.push(t.text.as_str()),
                        AssistantContent::Thinking(t) => thinking.push(t.thinking.as_str()),
                        AssistantContent::ToolCall(call) => calls.push(format_tool_call(&call.name, &call.arguments)),
                    }
                }
                if !thinking.is_empty() {
                    parts.push(format!("[Assistant thinking]: {}", thinking.join("\n")));
                }
                if !texts.is_empty() {
                    parts.push(format!("[Assistant]: {}", texts.join("\n")));
                }
                if !calls.is_empty() {
                    parts.push(format!("[Assistant tool calls]: {}", calls.join("; ")));
                }
            }
            Message::ToolResult(result) => {
                let text: String = result.content.iter().filter_map(|b| b.as_text()).collect();
                if !text.is_empty() {
                    parts.push(format!("[Tool result]: {}", truncate_for_summary(&text, TOOL_RESULT_MAX_CHARS)));
                }
            }
        }
    }
    parts.join("\n\n")
}

/// The LLM view of agent messages: the coding agent's `convertToLlm` ([`crate::session::convert_to_llm`]).
pub fn to_llm_messages(messages: &[AgentMessage]) -> Vec<Message> {
    crate::session::convert_to_llm(messages)
}

/// [`serialize_conversation`] of [`to_llm_messages`].
pub fn serialize_agent_messages(messages: &[AgentMessage]) -> String {
    serialize_conversation(&to_llm_messages(messages))
}
