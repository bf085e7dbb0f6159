//! The Mistral chat payload as pi 0.73 builds it, before the SDK writes it out: camelCase fields (`maxTokens`,
//! `toolCalls`, `toolCallId`, `imageUrl`), the reasoning switch (`promptMode` or `reasoningEffort`, by model),
//! tool results as text parts that say when they failed, and tool-call ids other models made mapped to the
//! nine letters and digits Mistral accepts. [`super::wire`] turns it into the JSON that is sent.

use std::cell::RefCell;
use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::ai::catalog::{builtin_thinking_level_map, clamp_thinking_level};
use crate::ai::openai_responses::short_hash;
use crate::ai::output_limit::requested_output_tokens;
use crate::ai::replay::transform_messages;
use crate::ai::{LlmContext, Model, StreamOptions, ThinkingLevel, ToolSpec};
use crate::protocol::{
    AssistantContent, AssistantMessage, Message, MessageContent, PiCompat, ToolResultMessage, UserContent,
};

/// Mistral's tool-call ids are this many ASCII letters and digits.
const TOOL_CALL_ID_LEN: usize = 9;
/// pi's default output limit when the caller gives none: the model's, capped at 32000.
const DEFAULT_MAX_TOKENS_CAP: u64 = 32_000;
/// Models that take `reasoningEffort`; other reasoning models take `promptMode: "reasoning"`.
const REASONING_EFFORT_MODELS: [&str; 3] = ["mistral-small-2603", "mistral-small-latest", "mistral-medium-3.5"];
/// The effort sent when the model's thinking map does not name the level.
const DEFAULT_EFFORT: &str = "high";

/// Said in place of a user message whose only content was images the model cannot see.
const USER_IMAGES_OMITTED: &str = "(image omitted: model does not support images)";
/// Tool-result texts for results without text.
const SEE_IMAGE: &str = "(see attached image)";
const NO_OUTPUT: &str = "(no tool output)";
const TOOL_IMAGE_OMITTED: &str = "[tool image omitted: model does not support images]";
/// Put in front of the text of a failed tool's result.
const TOOL_ERROR_PREFIX: &str = "[tool error] ";

/// pi's payload for `context` (camelCase, keys in pi's order; the system prompt first among the messages).
pub fn build_payload(model: &Model, context: &LlmContext, options: &StreamOptions) -> Value {
    let normalizer = RefCell::new(ToolCallIds::default());
    let messages = transform_messages(&context.messages, model, |id| normalizer.borrow_mut().normalize(id));
    let mut chat = to_chat_messages(&messages, model.supports_images());
    let mut payload = Map::new();
    payload.insert("model".into(), json!(model.id));
    payload.insert("stream".into(), json!(true));
    if !context.system_prompt.is_empty() {
        chat.insert(0, json!({"role": "system", "content": context.system_prompt}));
    }
    payload.insert("messages".into(), Value::Array(chat));
    if !context.tools.is_empty() {
        payload.insert("tools".into(), context.tools.iter().map(function_tool).collect());
    }
    if let Some(temperature) = options.temperature {
        payload.insert("temperature".into(), json!(temperature));
    }
    if let Some(max_tokens) = max_tokens(model, context, options) {
        payload.insert("maxTokens".into(), json!(max_tokens));
    }
    let (prompt_mode, effort) = reasoning(model, options.reasoning, options.pi_compat);
    if let Some(mode) = prompt_mode {
        payload.insert("promptMode".into(), json!(mode));
    }
    if let Some(effort) = effort {
        payload.insert("reasoningEffort".into(), json!(effort));
    }
    Value::Object(payload)
}

/// The call's limit, else the model's capped at 32000 (none for a model without one); pi 1.5 fits the
/// model's to the context window.
fn max_tokens(model: &Model, context: &LlmContext, options: &StreamOptions) -> Option<u64> {
    if options.pi_compat.is_v1_5() {
        return Some(requested_output_tokens(model, context, options));
    }
    options.max_tokens.or_else(|| (model.max_tokens > 0).then(|| model.max_tokens.min(DEFAULT_MAX_TOKENS_CAP)))
}

/// `(promptMode, reasoningEffort)` for a reasoning model with thinking on (clamped to what it supports).
fn reasoning(
    model: &Model,
    level: Option<ThinkingLevel>,
    pi_compat: PiCompat,
) -> (Option<&'static str>, Option<String>) {
    let map = builtin_thinking_level_map(&model.provider, &model.id);
    let level =
        level.map(|level| clamp_thinking_level(model, map, level, pi_compat)).filter(|l| *l != ThinkingLevel::Off);
    let Some(level) = level.filter(|_| model.reasoning) else { return (None, None) };
    if !REASONING_EFFORT_MODELS.contains(&model.id.as_str()) {
        return (Some("reasoning"), None);
    }
    let effort = map.and_then(|map| map.get_at(level, pi_compat)).flatten().unwrap_or(DEFAULT_EFFORT);
    (None, Some(effort.to_owned()))
}

fn function_tool(tool: &ToolSpec) -> Value {
    json!({
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters, "strict": false},
    })
}

fn data_url(data: &str, mime_type: &str) -> String {
    format!("data:{mime_type};base64,{data}")
}

fn image_part(data: &str, mime_type: &str) -> Value {
    json!({"type": "image_url", "imageUrl": data_url(data, mime_type)})
}

/// The replayed conversation as Mistral chat messages (without the system prompt).
fn to_chat_messages(messages: &[Message], supports_images: bool) -> Vec<Value> {
    let mut out = Vec::new();
    for message in messages {
        match message {
            Message::User(user) => out.extend(user_message(&user.content, supports_images)),
            Message::Assistant(assistant) => out.extend(assistant_message(assistant)),
            Message::ToolResult(result) => out.push(tool_message(result, supports_images)),
        }
    }
    out
}

fn user_message(content: &MessageContent, supports_images: bool) -> Option<Value> {
    let blocks = match content {
        MessageContent::Text(text) => return Some(json!({"role": "user", "content": text})),
        MessageContent::Blocks(blocks) => blocks,
    };
    let had_images = blocks.iter().any(|block| matches!(block, UserContent::Image(_)));
    let parts: Vec<Value> = blocks
        .iter()
        .filter_map(|block| match block {
            UserContent::Text(text) => Some(json!({"type": "text", "text": text.text})),
            UserContent::Image(image) if supports_images => Some(image_part(&image.data, &image.mime_type)),
            UserContent::Image(_) => None,
        })
        .collect();
    if !parts.is_empty() {
        return Some(json!({"role": "user", "content": parts}));
    }
    (had_images && !supports_images).then(|| json!({"role": "user", "content": USER_IMAGES_OMITTED}))
}

/// Text and thinking (blank ones left out) as content parts, tool calls as `toolCalls`; nothing when neither
/// is left.
fn assistant_message(message: &AssistantMessage) -> Option<Value> {
    let mut parts = Vec::new();
    let mut calls = Vec::new();
    for block in &message.content {
        match block {
            AssistantContent::Text(text) if !text.text.trim().is_empty() => {
                parts.push(json!({"type": "text", "text": text.text}));
            }
            AssistantContent::Thinking(thinking) if !thinking.thinking.trim().is_empty() => {
                parts.push(json!({"type": "thinking", "thinking": [{"type": "text", "text": thinking.thinking}]}));
            }
            AssistantContent::Text(_) | AssistantContent::Thinking(_) => {}
            AssistantContent::ToolCall(call) => {
                let arguments = match &call.arguments {
                    Value::Null => "{}".to_owned(),
                    other => other.to_string(),
                };
                calls.push(json!({
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": arguments},
                }));
            }
        }
    }
    if parts.is_empty() && calls.is_empty() {
        return None;
    }
    let mut out = Map::new();
    out.insert("role".into(), json!("assistant"));
    if !parts.is_empty() {
        out.insert("content".into(), Value::Array(parts));
    }
    if !calls.is_empty() {
        out.insert("toolCalls".into(), Value::Array(calls));
    }
    Some(Value::Object(out))
}

fn tool_message(result: &ToolResultMessage, supports_images: bool) -> Value {
    let text = result.content.iter().filter_map(UserContent::as_text).collect::<Vec<_>>().join("\n");
    let has_images = result.content.iter().any(|block| matches!(block, UserContent::Image(_)));
    let mut content =
        vec![json!({"type": "text", "text": tool_result_text(&text, has_images, supports_images, result.is_error)})];
    if supports_images {
        content.extend(result.content.iter().filter_map(|block| match block {
            UserContent::Image(image) => Some(image_part(&image.data, &image.mime_type)),
            UserContent::Text(_) => None,
        }));
    }
    json!({"role": "tool", "toolCallId": result.tool_call_id, "name": result.tool_name, "content": content})
}

/// The text part of a tool result: its trimmed text (or a note when it has none), marked when the tool
/// failed, with a note for images the model cannot see.
fn tool_result_text(text: &str, has_images: bool, supports_images: bool, is_error: bool) -> String {
    let prefix = if is_error { TOOL_ERROR_PREFIX } else { "" };
    let trimmed = text.trim();
    if !trimmed.is_empty() {
        let suffix = if has_images && !supports_images { format!("\n{TOOL_IMAGE_OMITTED}") } else { String::new() };
        return format!("{prefix}{trimmed}{suffix}");
    }
    let note = match (has_images, supports_images) {
        (true, true) => SEE_IMAGE,
        (true, false) => USER_IMAGES_OMITTED,
        (false, _) => NO_OUTPUT,
    };
    format!("{prefix}{note}")
}

/// Maps other models' tool-call ids to Mistral ids for one request, keeping distinct ids distinct.
#[derive(Debug, Default)]
pub(crate) struct ToolCallIds {
    given: HashMap<String, String>,
    owners: HashMap<String, String>,
}

impl ToolCallIds {
    pub(crate) fn normalize(&mut self, id: &str) -> String {
        if let Some(existing) = self.given.get(id) {
            return existing.clone();
        }
        let mut attempt = 0;
        loop {
            let candidate = derive_tool_call_id(id, attempt);
            if self.owners.get(&candidate).is_none_or(|owner| owner == id) {
                self.given.insert(id.to_owned(), candidate.clone());
                self.owners.insert(candidate.clone(), id.to_owned());
                return candidate;
            }
            attempt += 1;
        }
    }
}

/// `id` as nine ASCII letters and digits: its own when it has exactly nine, else a hash of them (or of the
/// whole id when it has none), with `:attempt` added to the seed after a collision.
pub(crate) fn derive_tool_call_id(id: &str, attempt: u32) -> String {
    let alphanumeric: String = id.chars().filter(char::is_ascii_alphanumeric).collect();
    if attempt == 0 && alphanumeric.len() == TOOL_CALL_ID_LEN {
        return alphanumeric;
    }
    let base = if alphanumeric.is_empty() { id } else { alphanumeric.as_str() };
    let seed = if attempt == 0 { base.to_owned() } else { format!("{base}:{attempt}") };
    short_hash(&seed).chars().filter(char::is_ascii_alphanumeric).take(TOOL_CALL_ID_LEN).collect()
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
