//! The anthropic-messages request body: pi's key order, output and thinking budgets, prompt-cache
//! markers, tool definitions, and the conversion of pi messages into Messages API turns.

use serde_json::{Map, Value, json};

use crate::ai::catalog::{builtin_model, builtin_thinking_level_map};
use crate::ai::output_limit::{fit_to_context, requested_output_tokens};
use crate::ai::replay::transform_messages;
use crate::ai::{LlmContext, Model, StreamOptions, ThinkingLevel, ToolSpec};
use crate::protocol::{
    AssistantContent, AssistantMessage, ImageContent, Message, MessageContent, PiCompat, ToolResultMessage, UserContent,
};

/// pi's default output limit when the caller gives none: the model's, capped at 32000.
const DEFAULT_MAX_TOKENS_CAP: u64 = 32_000;
/// Output tokens pi keeps free next to a thinking budget.
const MIN_OUTPUT_TOKENS: u64 = 1024;
/// The budget sent when the computed one is zero.
const FALLBACK_BUDGET_TOKENS: u64 = 1024;
/// Which thinking summaries to ask for.
const THINKING_DISPLAY: &str = "summarized";
/// Sent as the text of a tool result that holds only images.
const IMAGE_ONLY_RESULT: &str = "(see attached image)";
/// The identity block an OAuth (Claude subscription) token requires before the system prompt.
pub(crate) const CLAUDE_CODE_IDENTITY: &str = "You are Claude Code, Anthropic's official CLI for Claude.";
/// Claude Code's tool names; with an OAuth token, tools matching one case-insensitively take its casing.
const CLAUDE_CODE_TOOLS: [&str; 17] = [
    "Read",
    "Write",
    "Edit",
    "Bash",
    "Grep",
    "Glob",
    "AskUserQuestion",
    "EnterPlanMode",
    "ExitPlanMode",
    "KillShell",
    "NotebookEdit",
    "Skill",
    "Task",
    "TaskOutput",
    "TodoWrite",
    "WebFetch",
    "WebSearch",
];

/// How long the prompt cache should live (pi's `cacheRetention`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum CacheRetention {
    /// No `cache_control` markers at all.
    None,
    /// `{"type":"ephemeral"}` (five minutes).
    #[default]
    Short,
    /// Ephemeral with `ttl: "1h"` where the endpoint supports it.
    Long,
}

impl CacheRetention {
    /// pi's default: short, or long when `PI_CACHE_RETENTION=long`.
    pub fn from_env() -> Self {
        match std::env::var("PI_CACHE_RETENTION") {
            Ok(value) if value == "long" => Self::Long,
            _ => Self::Short,
        }
    }
}

/// Endpoint switches read from `model.compat` (pi's names), both on by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Compat {
    pub(crate) supports_eager_tool_input_streaming: bool,
    pub(crate) supports_long_cache_retention: bool,
}

impl Compat {
    pub(crate) fn for_model(model: &Model) -> Self {
        let flag = |key: &str| model.compat.as_ref().and_then(|c| c.get(key)).and_then(Value::as_bool).unwrap_or(true);
        Self {
            supports_eager_tool_input_streaming: flag("supportsEagerToolInputStreaming"),
            supports_long_cache_retention: flag("supportsLongCacheRetention"),
        }
    }
}

/// How thinking is configured for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ThinkingPlan {
    Off,
    /// Models that decide for themselves how long to think (Opus 4.6+, Sonnet 4.6), with an effort.
    Adaptive {
        effort: String,
    },
    /// Older models: a fixed budget of thinking tokens.
    Budget {
        budget_tokens: u64,
    },
}

/// Whether `model_id` takes adaptive thinking instead of a token budget.
pub(crate) fn supports_adaptive_thinking(model_id: &str) -> bool {
    ["opus-4-6", "opus-4.6", "opus-4-7", "opus-4.7", "sonnet-4-6", "sonnet-4.6"].iter().any(|m| model_id.contains(m))
}

/// Whether calls to `model` think adaptively (an effort) rather than on a token budget: pi 0.73 decides by
/// the id; pi 1.5 by the model's `compat.forceAdaptiveThinking`, which its catalog sets for its adaptive
/// Claude models (so a custom model with such an id thinks on a budget unless its compat says otherwise).
pub(crate) fn thinks_adaptively(model: &Model, compat: PiCompat) -> bool {
    if !compat.is_v1_5() {
        return supports_adaptive_thinking(&model.id);
    }
    match model.compat.as_ref().and_then(|c| c.get("forceAdaptiveThinking")).and_then(Value::as_bool) {
        Some(forced) => forced,
        None => builtin_model(&model.provider, &model.id).is_some() && supports_adaptive_thinking(&model.id),
    }
}

/// An OAuth access token (Claude subscription) rather than an API key.
pub(crate) fn is_oauth_token(api_key: Option<&str>) -> bool {
    api_key.is_some_and(|key| key.contains("sk-ant-oat"))
}

/// `max_tokens` and the thinking configuration for `compat`'s pi.
pub(crate) fn plan_call(model: &Model, context: &LlmContext, options: &StreamOptions) -> (u64, ThinkingPlan) {
    if options.pi_compat.is_v1_5() { plan_tokens_v1_5(model, context, options) } else { plan_tokens(model, options) }
}

/// pi 1.5's plan: the caller's or the model's whole limit fitted to the context window; on a budget, the
/// budget added (up to the model's limit), fitted again, and the budget kept 1024 tokens below the limit.
fn plan_tokens_v1_5(model: &Model, context: &LlmContext, options: &StreamOptions) -> (u64, ThinkingPlan) {
    let base = requested_output_tokens(model, context, options);
    let Some(level) = options.reasoning.filter(|level| *level != ThinkingLevel::Off) else {
        return (base, ThinkingPlan::Off);
    };
    if thinks_adaptively(model, PiCompat::V1_5) {
        return (base, ThinkingPlan::Adaptive { effort: adaptive_effort(model, level, PiCompat::V1_5) });
    }
    let budget = thinking_budget(options, level);
    let max_tokens = fit_to_context(model, context, base.saturating_add(budget).min(model.max_tokens));
    let budget = budget.min(max_tokens.saturating_sub(MIN_OUTPUT_TOKENS));
    let budget_tokens = if budget > 0 { budget } else { FALLBACK_BUDGET_TOKENS };
    (max_tokens, ThinkingPlan::Budget { budget_tokens })
}

/// The thinking budget for `level`: the configured one, else pi's default.
fn thinking_budget(options: &StreamOptions, level: ThinkingLevel) -> u64 {
    options.thinking_budgets.for_level(level).unwrap_or(match level {
        ThinkingLevel::Minimal => 1024,
        ThinkingLevel::Low => 2048,
        ThinkingLevel::Medium => 8192,
        _ => 16_384,
    })
}

/// `max_tokens` and the thinking configuration, as pi 0.73's simple-stream options compute them.
pub(crate) fn plan_tokens(model: &Model, options: &StreamOptions) -> (u64, ThinkingPlan) {
    let base = options
        .max_tokens
        .or_else(|| (model.max_tokens > 0).then(|| model.max_tokens.min(DEFAULT_MAX_TOKENS_CAP)))
        .filter(|tokens| *tokens > 0);
    let or_model_third = |tokens: Option<u64>| tokens.filter(|t| *t > 0).unwrap_or(model.max_tokens / 3);
    let Some(level) = options.reasoning.filter(|level| *level != ThinkingLevel::Off) else {
        return (or_model_third(base), ThinkingPlan::Off);
    };
    if supports_adaptive_thinking(&model.id) {
        let effort = adaptive_effort(model, level, PiCompat::V0_73);
        return (or_model_third(base), ThinkingPlan::Adaptive { effort });
    }
    let mut budget = thinking_budget(options, level);
    let max_tokens = (base.unwrap_or(0) + budget).min(model.max_tokens);
    if max_tokens <= budget {
        budget = max_tokens.saturating_sub(MIN_OUTPUT_TOKENS);
    }
    let budget_tokens = if budget > 0 { budget } else { FALLBACK_BUDGET_TOKENS };
    (or_model_third(Some(max_tokens)), ThinkingPlan::Budget { budget_tokens })
}

/// The effort for adaptive thinking: the model's thinking-level map (as `pi_compat`'s pi reads it) when it
/// names one, else minimal and low → low, medium → medium, anything higher (`xhigh`, `max`) → high.
fn adaptive_effort(model: &Model, level: ThinkingLevel, pi_compat: PiCompat) -> String {
    let map = builtin_thinking_level_map(&model.provider, &model.id);
    let mapped = map.and_then(|map| map.get_at(level, pi_compat)).flatten();
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

/// The `cache_control` marker for `retention`, if any.
fn cache_control(model: &Model, retention: CacheRetention) -> Option<Value> {
    match retention {
        CacheRetention::None => None,
        CacheRetention::Long if Compat::for_model(model).supports_long_cache_retention => {
            Some(json!({"type": "ephemeral", "ttl": "1h"}))
        }
        _ => Some(json!({"type": "ephemeral"})),
    }
}

/// The JSON body pi sends to `{baseUrl}/v1/messages`, keys in pi's order.
pub fn build_body(model: &Model, context: &LlmContext, options: &StreamOptions, retention: CacheRetention) -> Value {
    let oauth = is_oauth_token(options.api_key.as_deref());
    let cache = cache_control(model, retention);
    let (max_tokens, thinking) = plan_call(model, context, options);
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert("messages".into(), Value::Array(convert_messages(model, &context.messages, oauth, cache.as_ref())));
    body.insert("max_tokens".into(), json!(max_tokens));
    body.insert("stream".into(), json!(true));
    let mut system = Vec::new();
    if oauth {
        system.push(text_block(CLAUDE_CODE_IDENTITY, cache.as_ref()));
    }
    if !context.system_prompt.is_empty() {
        system.push(text_block(&context.system_prompt, cache.as_ref()));
    }
    if !system.is_empty() {
        body.insert("system".into(), Value::Array(system));
    }
    if let Some(temperature) = options.temperature.filter(|_| thinking == ThinkingPlan::Off) {
        body.insert("temperature".into(), json!(temperature));
    }
    if !context.tools.is_empty() {
        let eager = Compat::for_model(model).supports_eager_tool_input_streaming;
        let last = context.tools.len() - 1;
        let tools = context
            .tools
            .iter()
            .enumerate()
            .map(|(index, tool)| convert_tool(tool, oauth, eager, cache.as_ref().filter(|_| index == last)));
        body.insert("tools".into(), Value::Array(tools.collect()));
    }
    if model.reasoning {
        match thinking {
            ThinkingPlan::Off => {
                body.insert("thinking".into(), json!({"type": "disabled"}));
            }
            ThinkingPlan::Adaptive { effort } => {
                body.insert("thinking".into(), json!({"type": "adaptive", "display": THINKING_DISPLAY}));
                body.insert("output_config".into(), json!({"effort": effort}));
            }
            ThinkingPlan::Budget { budget_tokens } => {
                let thinking = json!({"type": "enabled", "budget_tokens": budget_tokens, "display": THINKING_DISPLAY});
                body.insert("thinking".into(), thinking);
            }
        }
    }
    Value::Object(body)
}

fn text_block(text: &str, cache: Option<&Value>) -> Value {
    let mut block = Map::new();
    block.insert("type".into(), json!("text"));
    block.insert("text".into(), json!(text));
    if let Some(cache) = cache {
        block.insert("cache_control".into(), cache.clone());
    }
    Value::Object(block)
}

/// A tool with only `type`, `properties` and `required` of its schema kept.
fn convert_tool(tool: &ToolSpec, oauth: bool, eager: bool, cache: Option<&Value>) -> Value {
    let field =
        |key: &str, default: Value| tool.parameters.get(key).filter(|v| !v.is_null()).cloned().unwrap_or(default);
    let mut out = Map::new();
    out.insert("name".into(), json!(if oauth { to_claude_code_name(&tool.name) } else { tool.name.clone() }));
    out.insert("description".into(), json!(tool.description));
    if eager {
        out.insert("eager_input_streaming".into(), json!(true));
    }
    let schema = json!({"type": "object", "properties": field("properties", json!({})), "required": field("required", json!([]))});
    out.insert("input_schema".into(), schema);
    if let Some(cache) = cache {
        out.insert("cache_control".into(), cache.clone());
    }
    Value::Object(out)
}

/// Claude Code's casing of `name` when it is one of its tools.
pub(crate) fn to_claude_code_name(name: &str) -> String {
    CLAUDE_CODE_TOOLS
        .iter()
        .find(|cc| cc.eq_ignore_ascii_case(name))
        .map_or_else(|| name.to_owned(), |cc| (*cc).to_owned())
}

/// Anthropic's tool-use id rule: `[a-zA-Z0-9_-]`, at most 64 characters. Like pi, a character
/// outside the BMP (two UTF-16 units) becomes two underscores.
pub(crate) fn normalize_tool_call_id(id: &str) -> String {
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

/// Messages API turns for `messages`, with the cache marker on the last block of a final user turn.
fn convert_messages(model: &Model, messages: &[Message], oauth: bool, cache: Option<&Value>) -> Vec<Value> {
    let messages = transform_messages(messages, model, normalize_tool_call_id);
    let mut out: Vec<Value> = Vec::new();
    let mut index = 0;
    while let Some(message) = messages.get(index) {
        index += 1;
        let converted = match message {
            Message::User(user) => convert_user(&user.content),
            Message::Assistant(assistant) => convert_assistant(assistant, oauth),
            Message::ToolResult(first) => {
                let mut results = vec![convert_tool_result(first)];
                while let Some(Message::ToolResult(next)) = messages.get(index) {
                    results.push(convert_tool_result(next));
                    index += 1;
                }
                Some(json!({"role": "user", "content": results}))
            }
        };
        out.extend(converted);
    }
    if let (Some(cache), Some(last)) = (cache, out.last_mut()) {
        mark_last_user_block(last, cache);
    }
    out
}

fn mark_last_user_block(message: &mut Value, cache: &Value) {
    if message["role"] != "user" {
        return;
    }
    let Some(content) = message.get_mut("content") else { return };
    match content {
        Value::String(text) => *content = json!([text_block(text, Some(cache))]),
        Value::Array(blocks) => {
            if let Some(Value::Object(block)) = blocks.last_mut() {
                let markable =
                    matches!(block.get("type").and_then(Value::as_str), Some("text" | "image" | "tool_result"));
                if markable {
                    block.insert("cache_control".into(), cache.clone());
                }
            }
        }
        _ => {}
    }
}

fn image_block(image: &ImageContent) -> Value {
    json!({"type": "image", "source": {"type": "base64", "media_type": image.mime_type, "data": image.data}})
}

/// Blank text is dropped; a string stays a string. `None` when nothing is left.
fn convert_user(content: &MessageContent) -> Option<Value> {
    let blocks = match content {
        MessageContent::Text(text) => {
            return (!text.trim().is_empty()).then(|| json!({"role": "user", "content": text}));
        }
        MessageContent::Blocks(blocks) => blocks,
    };
    let blocks: Vec<Value> = blocks
        .iter()
        .filter_map(|block| match block {
            UserContent::Text(text) if text.text.trim().is_empty() => None,
            UserContent::Text(text) => Some(text_block(&text.text, None)),
            UserContent::Image(image) => Some(image_block(image)),
        })
        .collect();
    (!blocks.is_empty()).then(|| json!({"role": "user", "content": blocks}))
}

/// Text, signed thinking (unsigned thinking is sent as text), redacted thinking and tool uses.
fn convert_assistant(message: &AssistantMessage, oauth: bool) -> Option<Value> {
    let mut blocks = Vec::new();
    for block in &message.content {
        match block {
            AssistantContent::Text(text) if text.text.trim().is_empty() => {}
            AssistantContent::Text(text) => blocks.push(text_block(&text.text, None)),
            AssistantContent::Thinking(thinking) if thinking.redacted == Some(true) => {
                let mut redacted = Map::new();
                redacted.insert("type".into(), json!("redacted_thinking"));
                if let Some(data) = &thinking.thinking_signature {
                    redacted.insert("data".into(), json!(data));
                }
                blocks.push(Value::Object(redacted));
            }
            AssistantContent::Thinking(thinking) if thinking.thinking.trim().is_empty() => {}
            AssistantContent::Thinking(thinking) => match thinking.thinking_signature.as_deref() {
                Some(signature) if !signature.trim().is_empty() => blocks.push(json!({
                    "type": "thinking",
                    "thinking": thinking.thinking,
                    "signature": signature,
                })),
                _ => blocks.push(text_block(&thinking.thinking, None)),
            },
            AssistantContent::ToolCall(call) => {
                let name = if oauth { to_claude_code_name(&call.name) } else { call.name.clone() };
                let input = if call.arguments.is_null() { json!({}) } else { call.arguments.clone() };
                blocks.push(json!({"type": "tool_use", "id": call.id, "name": name, "input": input}));
            }
        }
    }
    (!blocks.is_empty()).then(|| json!({"role": "assistant", "content": blocks}))
}

/// A `tool_result` block: the texts joined into one string, or blocks when there are images (with a
/// text note first when there is no text).
fn convert_tool_result(result: &ToolResultMessage) -> Value {
    let has_images = result.content.iter().any(|c| matches!(c, UserContent::Image(_)));
    let content = if has_images {
        let mut blocks: Vec<Value> = result
            .content
            .iter()
            .map(|block| match block {
                UserContent::Text(text) => text_block(&text.text, None),
                UserContent::Image(image) => image_block(image),
            })
            .collect();
        if !result.content.iter().any(|c| matches!(c, UserContent::Text(_))) {
            blocks.insert(0, text_block(IMAGE_ONLY_RESULT, None));
        }
        Value::Array(blocks)
    } else {
        json!(result.content.iter().filter_map(UserContent::as_text).collect::<Vec<_>>().join("\n"))
    };
    json!({"type": "tool_result", "tool_use_id": result.tool_call_id, "content": content, "is_error": result.is_error})
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
