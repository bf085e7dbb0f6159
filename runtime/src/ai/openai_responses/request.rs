//! The openai-responses request body as pi 0.73 (and 1.5) sends it: key order, reasoning settings, cache key,
//! and the conversion of pi messages into Responses input items (reasoning items replayed from
//! `thinkingSignature`, message ids from `textSignature`, `call_id|item_id` tool-call ids).

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::ids::{normalize_id_part, normalize_tool_call_id, short_hash};
use crate::ai::catalog::{ThinkingLevelMap, builtin_thinking_level_map, clamp_thinking_level};
use crate::ai::output_limit::requested_output_tokens;
use crate::ai::replay::transform_messages;
use crate::ai::{LlmContext, Model, StreamOptions, ThinkingLevel, ToolSpec};
use crate::protocol::{
    AssistantContent, AssistantMessage, Message, MessageContent, PiCompat, ToolResultMessage, UserContent,
};

/// pi's default output limit when the caller gives none: the model's, capped at 32000.
const DEFAULT_MAX_TOKENS_CAP: u64 = 32_000;
/// Sent as the tool output when a result carries no text.
const IMAGE_ONLY_RESULT: &str = "(see attached image)";
/// The effort sent for a reasoning model with thinking off, unless its thinking map renames `off`.
const EFFORT_OFF: &str = "none";
/// The environment variable pi reads for the default cache retention (`long` asks for 24 h).
const CACHE_RETENTION_ENV: &str = "PI_CACHE_RETENTION";
/// Message ids the Responses API accepts are at most this long.
const MAX_ITEM_ID_LEN: usize = 64;

/// Switches of `model.compat` this API reads (pi's names), with pi's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ResponsesCompat {
    /// `sendSessionIdHeader`: send the session id as a `session_id` header.
    pub(crate) send_session_id_header: bool,
    /// `supportsLongCacheRetention`: send `prompt_cache_retention: "24h"` when retention is long.
    pub(crate) supports_long_cache_retention: bool,
}

impl ResponsesCompat {
    pub(crate) fn for_model(model: &Model) -> Self {
        let flag = |key: &str| model.compat.as_ref().and_then(|c| c.get(key)).and_then(Value::as_bool);
        Self {
            send_session_id_header: flag("sendSessionIdHeader").unwrap_or(true),
            supports_long_cache_retention: flag("supportsLongCacheRetention").unwrap_or(true),
        }
    }
}

/// Whether the process asks for long prompt-cache retention (`PI_CACHE_RETENTION=long`).
fn long_cache_retention() -> bool {
    std::env::var(CACHE_RETENTION_ENV).is_ok_and(|value| value == "long")
}

/// The JSON body pi sends to `{baseUrl}/responses`, keys in pi's order. At level 1.5 the output limit is the
/// model's own fitted to the context window, and tools carry no `strict`.
pub fn build_body(model: &Model, context: &LlmContext, options: &StreamOptions) -> Value {
    build_body_with_retention(model, context, options, long_cache_retention())
}

/// The service a Responses body is built for; they differ in a few top-level fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect<'a> {
    /// OpenAI's own API and compatible servers.
    OpenAi,
    /// An Azure OpenAI resource: `model` names the deployment; no `store` and no cache retention are sent.
    Azure { deployment: &'a str },
}

pub(crate) fn build_body_with_retention(
    model: &Model,
    context: &LlmContext,
    options: &StreamOptions,
    long_retention: bool,
) -> Value {
    build_dialect_body(model, context, options, Dialect::OpenAi, long_retention)
}

/// The body for `dialect`, keys in pi's order.
pub(crate) fn build_dialect_body(
    model: &Model,
    context: &LlmContext,
    options: &StreamOptions,
    dialect: Dialect<'_>,
    long_retention: bool,
) -> Value {
    let compat = ResponsesCompat::for_model(model);
    let openai = dialect == Dialect::OpenAi;
    let mut body = Map::new();
    let model_name = match dialect {
        Dialect::OpenAi => model.id.as_str(),
        Dialect::Azure { deployment } => deployment,
    };
    body.insert("model".into(), json!(model_name));
    body.insert("input".into(), Value::Array(convert_input(model, context)));
    body.insert("stream".into(), json!(true));
    if let Some(session_id) = &options.session_id {
        body.insert("prompt_cache_key".into(), json!(session_id));
    }
    if openai && long_retention && compat.supports_long_cache_retention {
        body.insert("prompt_cache_retention".into(), json!("24h"));
    }
    if openai {
        body.insert("store".into(), json!(false));
    }
    let v1_5 = options.pi_compat.is_v1_5();
    let max_tokens = if v1_5 {
        requested_output_tokens(model, context, options)
    } else {
        options.max_tokens.unwrap_or_else(|| model.max_tokens.min(DEFAULT_MAX_TOKENS_CAP))
    };
    if max_tokens > 0 {
        body.insert("max_output_tokens".into(), json!(max_tokens));
    }
    if let Some(temperature) = options.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if !context.tools.is_empty() {
        let tools = context.tools.iter().map(|tool| convert_tool(tool, !v1_5)).collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if model.reasoning {
        insert_reasoning(&mut body, model, options.reasoning, options.pi_compat, openai);
    }
    crate::ai::structured_output::insert_responses_format(&mut body, options.response_schema.as_deref());
    Value::Object(body)
}

/// `reasoning` (and `include`) for a reasoning model: the effort with summaries when thinking is on,
/// else the model's "off" effort (`none`), unless its thinking map says it cannot be switched off (or, on
/// OpenAI's dialect, the model is GitHub Copilot's). The level is clamped to the model among `pi_compat`'s
/// levels (pi 1.5's `max` only where the model's map names it).
fn insert_reasoning(
    body: &mut Map<String, Value>,
    model: &Model,
    level: Option<ThinkingLevel>,
    pi_compat: PiCompat,
    openai: bool,
) {
    let map = builtin_thinking_level_map(&model.provider, &model.id);
    let level = clamp_thinking_level(model, map, level.unwrap_or(ThinkingLevel::Off), pi_compat);
    let renamed = |level: ThinkingLevel| map.and_then(|m: &ThinkingLevelMap| m.get_at(level, pi_compat));
    if level != ThinkingLevel::Off {
        let effort = renamed(level).flatten().unwrap_or(level.as_str());
        body.insert("reasoning".into(), json!({"effort": effort, "summary": "auto"}));
        body.insert("include".into(), json!(["reasoning.encrypted_content"]));
        return;
    }
    if openai && model.provider == "github-copilot" {
        return;
    }
    match renamed(ThinkingLevel::Off) {
        Some(None) => {}
        Some(Some(name)) => {
            body.insert("reasoning".into(), json!({"effort": name}));
        }
        None => {
            body.insert("reasoning".into(), json!({"effort": EFFORT_OFF}));
        }
    }
}

/// A function tool; pi 0.73 adds `strict: false`, pi 1.5 leaves it out.
fn convert_tool(tool: &ToolSpec, strict_field: bool) -> Value {
    let mut out = json!({
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters,
    });
    if let (true, Some(object)) = (strict_field, out.as_object_mut()) {
        object.insert("strict".into(), json!(false));
    }
    out
}

/// The `input` items: system prompt, then each replayed message in order.
pub(crate) fn convert_input(model: &Model, context: &LlmContext) -> Vec<Value> {
    let mut items = Vec::new();
    if !context.system_prompt.is_empty() {
        let role = if model.reasoning { "developer" } else { "system" };
        items.push(json!({"role": role, "content": context.system_prompt}));
    }
    items.extend(convert_messages(model, context));
    items
}

/// The replayed messages as `input` items, without the system prompt (which Codex sends as `instructions`).
pub(crate) fn convert_messages(model: &Model, context: &LlmContext) -> Vec<Value> {
    let mut items = Vec::new();
    let renamed = foreign_tool_call_ids(model, &context.messages);
    let normalize = |id: &str| renamed.get(id).cloned().unwrap_or_else(|| normalize_id_part(id));
    // Counts replayed messages (pi's `msgIndex`); it names text items that carry no id.
    let mut message_index = 0usize;
    for message in transform_messages(&context.messages, model, normalize) {
        let converted = match &message {
            Message::User(user) => convert_user(model, &user.content),
            Message::Assistant(assistant) => convert_assistant(model, assistant, message_index),
            Message::ToolResult(result) => vec![convert_tool_result(model, result)],
        };
        if converted.is_empty() {
            continue;
        }
        items.extend(converted);
        message_index += 1;
    }
    items
}

/// The new id of every tool call made by another model, as pi's Responses normalisation gives it
/// (it depends on the message the call came from, which the replay transform does not see).
fn foreign_tool_call_ids(model: &Model, messages: &[Message]) -> HashMap<String, String> {
    let mut renamed = HashMap::new();
    for message in messages {
        let Message::Assistant(source) = message else { continue };
        if source.provider == model.provider && source.api == model.api && source.model == model.id {
            continue;
        }
        for call in source.tool_calls() {
            renamed.insert(call.id.clone(), normalize_tool_call_id(model, source, &call.id));
        }
    }
    renamed
}

fn image_data_url(data: &str, mime_type: &str) -> String {
    format!("data:{mime_type};base64,{data}")
}

fn input_image(data: &str, mime_type: &str) -> Value {
    json!({"type": "input_image", "detail": "auto", "image_url": image_data_url(data, mime_type)})
}

/// A string becomes one `input_text` part; blocks become parts (images only for models that take
/// them). No item when no part is left.
fn convert_user(model: &Model, content: &MessageContent) -> Vec<Value> {
    let parts: Vec<Value> = match content {
        MessageContent::Text(text) => vec![json!({"type": "input_text", "text": text})],
        MessageContent::Blocks(blocks) => blocks
            .iter()
            .filter_map(|block| match block {
                UserContent::Text(text) => Some(json!({"type": "input_text", "text": text.text})),
                UserContent::Image(image) if model.supports_images() => {
                    Some(input_image(&image.data, &image.mime_type))
                }
                _ => None,
            })
            .collect(),
    };
    if parts.is_empty() {
        return Vec::new();
    }
    vec![json!({"role": "user", "content": parts})]
}

/// The message id and phase a `textSignature` holds: `{"v":1,"id","phase"?}` or a legacy plain id.
fn parse_text_signature(signature: &str) -> (String, Option<String>) {
    if signature.starts_with('{')
        && let Ok(Value::Object(parsed)) = serde_json::from_str::<Value>(signature)
        && parsed.get("v").and_then(Value::as_f64) == Some(1.0)
        && let Some(id) = parsed.get("id").and_then(Value::as_str)
    {
        let phase = parsed
            .get("phase")
            .and_then(Value::as_str)
            .filter(|phase| matches!(*phase, "commentary" | "final_answer"))
            .map(str::to_owned);
        return (id.to_owned(), phase);
    }
    (signature.to_owned(), None)
}

/// An assistant turn as output items: reasoning items verbatim, text as completed messages, tool
/// calls as `function_call` items.
fn convert_assistant(model: &Model, message: &AssistantMessage, message_index: usize) -> Vec<Value> {
    let other_model_same_api =
        message.model != model.id && message.provider == model.provider && message.api == model.api;
    let mut items = Vec::new();
    for block in &message.content {
        match block {
            AssistantContent::Thinking(thinking) => {
                if let Some(signature) = thinking.thinking_signature.as_deref().filter(|s| !s.is_empty()) {
                    // pi replays the stored item as it is; a signature that is not JSON is skipped.
                    if let Ok(item) = serde_json::from_str::<Value>(signature) {
                        items.push(item);
                    }
                }
            }
            AssistantContent::Text(text) => {
                let (id, phase) = match text.text_signature.as_deref().filter(|s| !s.is_empty()) {
                    Some(signature) => parse_text_signature(signature),
                    None => (String::new(), None),
                };
                let id = if id.is_empty() {
                    format!("msg_{message_index}")
                } else if id.encode_utf16().count() > MAX_ITEM_ID_LEN {
                    format!("msg_{}", short_hash(&id))
                } else {
                    id
                };
                let mut item = Map::new();
                item.insert("type".into(), json!("message"));
                item.insert("role".into(), json!("assistant"));
                item.insert("content".into(), json!([{"type": "output_text", "text": text.text, "annotations": []}]));
                item.insert("status".into(), json!("completed"));
                item.insert("id".into(), json!(id));
                if let Some(phase) = phase {
                    item.insert("phase".into(), json!(phase));
                }
                items.push(Value::Object(item));
            }
            AssistantContent::ToolCall(call) => {
                let mut parts = call.id.split('|');
                let call_id = parts.next().unwrap_or_default();
                // Another model's `fc_` item id is left out, so the API does not try to pair it
                // with reasoning items it never saw.
                let item_id = parts.next().filter(|id| !(other_model_same_api && id.starts_with("fc_")));
                let arguments = serde_json::to_string(&call.arguments).unwrap_or_else(|_| "{}".to_owned());
                let mut item = Map::new();
                item.insert("type".into(), json!("function_call"));
                if let Some(item_id) = item_id {
                    item.insert("id".into(), json!(item_id));
                }
                item.insert("call_id".into(), json!(call_id));
                item.insert("name".into(), json!(call.name));
                item.insert("arguments".into(), json!(arguments));
                items.push(Value::Object(item));
            }
        }
    }
    items
}

/// A tool result as `function_call_output`: its text, or text and image parts for models that take
/// images.
fn convert_tool_result(model: &Model, result: &ToolResultMessage) -> Value {
    let text = result.content.iter().filter_map(UserContent::as_text).collect::<Vec<_>>().join("\n");
    let has_images = result.content.iter().any(|c| matches!(c, UserContent::Image(_)));
    let output = if has_images && model.supports_images() {
        let mut parts = Vec::new();
        if !text.is_empty() {
            parts.push(json!({"type": "input_text", "text": text}));
        }
        parts.extend(result.content.iter().filter_map(|block| match block {
            UserContent::Image(image) => Some(input_image(&image.data, &image.mime_type)),
            _ => None,
        }));
        Value::Array(parts)
    } else if text.is_empty() {
        json!(IMAGE_ONLY_RESULT)
    } else {
        json!(text)
    };
    let call_id = result.tool_call_id.split('|').next().unwrap_or_default();
    json!({"type": "function_call_output", "call_id": call_id, "output": output})
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
