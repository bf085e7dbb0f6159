//! The ConverseStream request as pi 0.73.1 builds it: the path with the encoded model id, and the JSON body
//! in the SDK's key order (messages, system, inferenceConfig, toolConfig, additionalModelRequestFields) with
//! pi's cache points, thinking configuration for Claude models and message conversion.

use serde_json::{Map, Value, json};

use super::credentials::{AwsEnvironment, configured_region};
use crate::ai::anthropic_messages::CacheRetention;
use crate::ai::catalog::builtin_thinking_level_map;
use crate::ai::replay::transform_messages;
use crate::ai::{LlmContext, Model, StreamOptions, ThinkingLevel, ToolSpec};
use crate::protocol::{AssistantContent, AssistantMessage, ImageContent, Message, MessageContent, UserContent};

/// pi's default output limit when the caller gives none: the model's, capped at 32000.
const DEFAULT_MAX_TOKENS_CAP: u64 = 32_000;
/// Output tokens pi keeps free next to a thinking budget.
const MIN_OUTPUT_TOKENS: u64 = 1024;
/// The beta Claude models without adaptive thinking get for thinking between tool calls.
const INTERLEAVED_THINKING_BETA: &str = "interleaved-thinking-2025-05-14";

/// `{endpoint}/model/{model id}/converse-stream`, the id encoded as the SDK encodes a path label.
pub fn converse_stream_url(endpoint: &str, model_id: &str) -> String {
    format!("{}/model/{}/converse-stream", endpoint.trim_end_matches('/'), encode_label(model_id))
}

/// Percent-encodes everything but RFC 3986's unreserved characters (`A-Z a-z 0-9 - _ . ~`).
fn encode_label(label: &str) -> String {
    let mut out = String::with_capacity(label.len());
    for byte in label.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The lowercased id and name of `model`, each also with runs of space, `_`, `.` and `:` turned into `-`
/// (pi matches model families against these).
fn match_candidates(model: &Model) -> Vec<String> {
    let mut candidates = Vec::new();
    for value in
        [Some(model.id.as_str()), Some(model.name.as_str()).filter(|name| !name.is_empty())].into_iter().flatten()
    {
        let lower = value.to_lowercase();
        let mut dashed = String::with_capacity(lower.len());
        let mut in_separator = false;
        for c in lower.chars() {
            let separator = c.is_whitespace() || matches!(c, '_' | '.' | ':');
            if !separator {
                dashed.push(c);
            } else if !in_separator {
                dashed.push('-');
            }
            in_separator = separator;
        }
        candidates.push(lower);
        candidates.push(dashed);
    }
    candidates
}

/// An Anthropic Claude model on Bedrock (by id, or by a name that mentions Claude).
pub(super) fn is_claude(model: &Model) -> bool {
    let (id, name) = (model.id.to_lowercase(), model.name.to_lowercase());
    ["anthropic.claude", "anthropic/claude"].iter().any(|m| id.contains(m) || name.contains(m))
        || name.contains("claude")
}

/// Claude models that think adaptively (Opus 4.6 and 4.7, Sonnet 4.6).
fn thinks_adaptively(model: &Model) -> bool {
    match_candidates(model).iter().any(|c| ["opus-4-6", "opus-4-7", "sonnet-4-6"].iter().any(|m| c.contains(m)))
}

/// Claude 4.x, 3.7 Sonnet and 3.5 Haiku take cache points; other models only with `AWS_BEDROCK_FORCE_CACHE=1`.
fn supports_prompt_caching(model: &Model, env: &AwsEnvironment) -> bool {
    let candidates = match_candidates(model);
    if !candidates.iter().any(|c| c.contains("claude")) {
        return env.var("AWS_BEDROCK_FORCE_CACHE").as_deref() == Some("1");
    }
    candidates.iter().any(|c| c.contains("-4-") || c.contains("claude-3-7-sonnet") || c.contains("claude-3-5-haiku"))
}

/// GovCloud rejects Claude's `thinking.display`.
fn is_gov_cloud(model: &Model, env: &AwsEnvironment) -> bool {
    let id = model.id.to_lowercase();
    configured_region(env).is_some_and(|region| region.to_lowercase().starts_with("us-gov-"))
        || id.starts_with("us-gov.")
        || id.starts_with("arn:aws-us-gov:")
}

/// The effort sent to adaptive models: `xhigh` on Opus 4.7, the model's thinking-level map when it names
/// the level, else minimal and low → low, medium → medium, anything higher → high.
fn adaptive_effort(model: &Model, level: ThinkingLevel) -> String {
    if level == ThinkingLevel::Xhigh && match_candidates(model).iter().any(|c| c.contains("opus-4-7")) {
        return "xhigh".to_owned();
    }
    let mapped = builtin_thinking_level_map(&model.provider, &model.id).and_then(|map| map.get(level)).flatten();
    if let Some(name) = mapped {
        return name.to_owned();
    }
    match level {
        ThinkingLevel::Minimal | ThinkingLevel::Low => "low",
        ThinkingLevel::Medium => "medium",
        _ => "high",
    }
    .to_owned()
}

/// pi's default budget for `level` (`xhigh` as `high`).
fn default_budget(level: ThinkingLevel) -> u64 {
    match level {
        ThinkingLevel::Minimal => 1024,
        ThinkingLevel::Low => 2048,
        ThinkingLevel::Medium => 8192,
        _ => 16_384,
    }
}

/// `inferenceConfig.maxTokens` and, for Claude models thinking on a budget, the budget (pi's simple-stream
/// options: the budget is added to the output limit up to the model's, and shrunk when it would not fit).
fn plan_tokens(model: &Model, options: &StreamOptions, thinking: Option<ThinkingLevel>) -> (Option<u64>, u64) {
    let base =
        options.max_tokens.or_else(|| (model.max_tokens > 0).then(|| model.max_tokens.min(DEFAULT_MAX_TOKENS_CAP)));
    let Some(level) = thinking else { return (base, 0) };
    let budget = options.thinking_budgets.for_level(level).unwrap_or_else(|| default_budget(level));
    if !is_claude(model) || thinks_adaptively(model) {
        return (base, budget);
    }
    let max_tokens = (base.unwrap_or(0) + budget).min(model.max_tokens);
    let budget = if max_tokens <= budget { max_tokens.saturating_sub(MIN_OUTPUT_TOKENS) } else { budget };
    (Some(max_tokens), budget)
}

/// A `cachePoint` block for `retention`.
fn cache_point(retention: CacheRetention) -> Value {
    match retention {
        CacheRetention::Long => json!({"cachePoint": {"type": "default", "ttl": "1h"}}),
        _ => json!({"cachePoint": {"type": "default"}}),
    }
}

/// The ConverseStream body for `model`, keys in the SDK's order. Fails only on an image type Bedrock
/// does not take.
pub fn build_body(
    model: &Model,
    context: &LlmContext,
    options: &StreamOptions,
    retention: CacheRetention,
    env: &AwsEnvironment,
) -> Result<Value, String> {
    let thinking = options.reasoning.filter(|level| *level != ThinkingLevel::Off);
    let cache =
        (retention != CacheRetention::None && supports_prompt_caching(model, env)).then(|| cache_point(retention));
    let (max_tokens, budget) = plan_tokens(model, options, thinking);
    let mut body = Map::new();
    body.insert("messages".into(), Value::Array(convert_messages(model, &context.messages, cache.as_ref())?));
    if !context.system_prompt.is_empty() {
        let mut system = vec![json!({"text": context.system_prompt})];
        system.extend(cache.clone());
        body.insert("system".into(), Value::Array(system));
    }
    let mut inference = Map::new();
    if let Some(max_tokens) = max_tokens {
        inference.insert("maxTokens".into(), json!(max_tokens));
    }
    if let Some(temperature) = options.temperature {
        inference.insert("temperature".into(), json!(temperature));
    }
    body.insert("inferenceConfig".into(), Value::Object(inference));
    if !context.tools.is_empty() {
        body.insert("toolConfig".into(), json!({"tools": context.tools.iter().map(tool_spec).collect::<Vec<_>>()}));
    }
    if let Some(level) = thinking.filter(|_| model.reasoning && is_claude(model)) {
        let display = (!is_gov_cloud(model, env)).then_some("summarized");
        let mut fields = Map::new();
        if thinks_adaptively(model) {
            let mut thinking = json!({"type": "adaptive"});
            if let Some(display) = display {
                thinking["display"] = json!(display);
            }
            fields.insert("thinking".into(), thinking);
            fields.insert("output_config".into(), json!({"effort": adaptive_effort(model, level)}));
        } else {
            let mut thinking = json!({"type": "enabled", "budget_tokens": budget});
            if let Some(display) = display {
                thinking["display"] = json!(display);
            }
            fields.insert("thinking".into(), thinking);
            fields.insert("anthropic_beta".into(), json!([INTERLEAVED_THINKING_BETA]));
        }
        body.insert("additionalModelRequestFields".into(), Value::Object(fields));
    }
    Ok(Value::Object(body))
}

fn tool_spec(tool: &ToolSpec) -> Value {
    json!({"toolSpec": {"name": tool.name, "inputSchema": {"json": tool.parameters}, "description": tool.description}})
}

/// Bedrock's tool-use id rule: `[a-zA-Z0-9_-]`, at most 64 characters (a character outside the BMP, two
/// UTF-16 units in pi, becomes two underscores).
fn normalize_tool_call_id(id: &str) -> String {
    let mut out = String::new();
    for c in id.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            out.push(c);
        } else {
            out.extend(std::iter::repeat_n('_', c.len_utf16()));
        }
    }
    out.truncate(64);
    out
}

fn image_block(image: &ImageContent) -> Result<Value, String> {
    let format = match image.mime_type.as_str() {
        "image/jpeg" | "image/jpg" => "jpeg",
        "image/png" => "png",
        "image/gif" => "gif",
        "image/webp" => "webp",
        other => return Err(format!("Bedrock takes no images of type {other}")),
    };
    Ok(json!({"image": {"format": format, "source": {"bytes": image.data}}}))
}

fn user_block(block: &UserContent) -> Result<Value, String> {
    match block {
        UserContent::Text(text) => Ok(json!({"text": text.text})),
        UserContent::Image(image) => image_block(image),
    }
}

/// Converse messages for `messages`: consecutive tool results merged into one user message, and the cache
/// point appended to a final user message.
fn convert_messages(model: &Model, messages: &[Message], cache: Option<&Value>) -> Result<Vec<Value>, String> {
    let messages = transform_messages(messages, model, normalize_tool_call_id);
    let mut out = Vec::new();
    let mut index = 0;
    while let Some(message) = messages.get(index) {
        index += 1;
        match message {
            Message::User(user) => {
                let content = match &user.content {
                    MessageContent::Text(text) => vec![json!({"text": text})],
                    MessageContent::Blocks(blocks) => blocks.iter().map(user_block).collect::<Result<_, _>>()?,
                };
                out.push(json!({"role": "user", "content": content}));
            }
            Message::Assistant(assistant) => out.extend(convert_assistant(model, assistant)),
            Message::ToolResult(_) => {
                let mut results = Vec::new();
                index -= 1;
                while let Some(Message::ToolResult(result)) = messages.get(index) {
                    let content = result.content.iter().map(user_block).collect::<Result<Vec<_>, _>>()?;
                    let status = if result.is_error { "error" } else { "success" };
                    results.push(
                        json!({"toolResult": {"toolUseId": result.tool_call_id, "content": content, "status": status}}),
                    );
                    index += 1;
                }
                out.push(json!({"role": "user", "content": results}));
            }
        }
    }
    if let (Some(cache), Some(last)) = (cache, out.last_mut())
        && last["role"] == "user"
        && let Some(content) = last.get_mut("content").and_then(Value::as_array_mut)
    {
        content.push(cache.clone());
    }
    Ok(out)
}

/// Text, thinking and tool uses; blank text and thinking are dropped, and so is a message left empty.
/// Claude models get signed reasoning back (unsigned thinking as text); others reasoning without signature.
fn convert_assistant(model: &Model, message: &AssistantMessage) -> Option<Value> {
    let mut blocks = Vec::new();
    for block in &message.content {
        match block {
            AssistantContent::Text(text) if text.text.trim().is_empty() => {}
            AssistantContent::Text(text) => blocks.push(json!({"text": text.text})),
            AssistantContent::ToolCall(call) => {
                blocks.push(json!({"toolUse": {"toolUseId": call.id, "name": call.name, "input": call.arguments}}));
            }
            AssistantContent::Thinking(thinking) if thinking.thinking.trim().is_empty() => {}
            AssistantContent::Thinking(thinking) if is_claude(model) => {
                match thinking.thinking_signature.as_deref().filter(|s| !s.trim().is_empty()) {
                    Some(signature) => blocks.push(json!({"reasoningContent": {"reasoningText": {
                        "text": thinking.thinking, "signature": signature}}})),
                    None => blocks.push(json!({"text": thinking.thinking})),
                }
            }
            AssistantContent::Thinking(thinking) => {
                blocks.push(json!({"reasoningContent": {"reasoningText": {"text": thinking.thinking}}}));
            }
        }
    }
    (!blocks.is_empty()).then(|| json!({"role": "assistant", "content": blocks}))
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
