//! The openai-completions request body: pi's key order, compat switches, and the conversion of
//! pi messages into chat-completions messages.

use serde_json::{Map, Value, json};

use crate::ai::catalog::builtin_thinking_level_map;
use crate::ai::output_limit::requested_output_tokens;
use crate::ai::replay::transform_messages;
use crate::ai::{LlmContext, Model, StreamOptions, ThinkingLevel, ToolSpec};
use crate::protocol::{
    AssistantContent, AssistantMessage, Message, MessageContent, PiCompat, ToolResultMessage, UserContent,
};

/// pi's default output limit when the caller gives none: the model's, capped at 32000.
const DEFAULT_MAX_TOKENS_CAP: u64 = 32_000;
/// Sent as the tool message when a result holds only images.
const IMAGE_ONLY_RESULT: &str = "(see attached image)";
/// Heads the user message that carries the images of a run of tool results.
const TOOL_IMAGES_INTRO: &str = "Attached image(s) from tool result:";
/// The assistant turn some providers need between tool results and a user message.
const TOOL_RESULTS_BRIDGE: &str = "I have processed the tool results.";

/// How the model's endpoint wants thinking switched on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ThinkingFormat {
    /// `reasoning_effort`.
    OpenAi,
    /// `enable_thinking: bool` (zai, qwen).
    EnableThinking,
    /// `chat_template_kwargs.enable_thinking`.
    QwenChatTemplate,
}

/// Provider quirks, detected from provider and base URL and overridable by `model.compat` (pi's names).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Compat {
    supports_store: bool,
    supports_developer_role: bool,
    supports_reasoning_effort: bool,
    supports_usage_in_streaming: bool,
    supports_strict_mode: bool,
    max_tokens_field: String,
    requires_tool_result_name: bool,
    requires_assistant_after_tool_result: bool,
    requires_thinking_as_text: bool,
    /// Mistral accepts only tool-call ids of exactly nine ASCII letters and digits.
    requires_mistral_tool_ids: bool,
    thinking_format: ThinkingFormat,
    reasoning_effort_map: Map<String, Value>,
}

impl Compat {
    pub(crate) fn for_model(model: &Model) -> Self {
        let is = |provider: &str, host: &str| model.provider == provider || model.base_url.contains(host);
        let (cerebras, xai, chutes) = (is("cerebras", "cerebras.ai"), is("xai", "api.x.ai"), is("chutes", "chutes.ai"));
        let (deepseek, zai, opencode) =
            (is("deepseek", "deepseek.com"), is("zai", "api.z.ai"), is("opencode", "opencode.ai"));
        let non_standard = cerebras || xai || chutes || deepseek || zai || opencode;
        let mut compat = Self {
            supports_store: !non_standard,
            supports_developer_role: !non_standard,
            supports_reasoning_effort: !(xai || zai),
            supports_usage_in_streaming: true,
            supports_strict_mode: true,
            max_tokens_field: if chutes { "max_tokens" } else { "max_completion_tokens" }.to_owned(),
            requires_tool_result_name: false,
            requires_assistant_after_tool_result: false,
            requires_thinking_as_text: false,
            requires_mistral_tool_ids: false,
            thinking_format: if zai { ThinkingFormat::EnableThinking } else { ThinkingFormat::OpenAi },
            reasoning_effort_map: Map::new(),
        };
        if let Some(Value::Object(overrides)) = &model.compat {
            compat.apply(overrides);
        }
        compat
    }

    fn apply(&mut self, o: &Map<String, Value>) {
        let flag = |key: &str, slot: &mut bool| {
            if let Some(value) = o.get(key).and_then(Value::as_bool) {
                *slot = value;
            }
        };
        flag("supportsStore", &mut self.supports_store);
        flag("supportsDeveloperRole", &mut self.supports_developer_role);
        flag("supportsReasoningEffort", &mut self.supports_reasoning_effort);
        flag("supportsUsageInStreaming", &mut self.supports_usage_in_streaming);
        flag("supportsStrictMode", &mut self.supports_strict_mode);
        flag("requiresToolResultName", &mut self.requires_tool_result_name);
        flag("requiresAssistantAfterToolResult", &mut self.requires_assistant_after_tool_result);
        flag("requiresThinkingAsText", &mut self.requires_thinking_as_text);
        flag("requiresMistralToolIds", &mut self.requires_mistral_tool_ids);
        if let Some(field) = o.get("maxTokensField").and_then(Value::as_str) {
            self.max_tokens_field = field.to_owned();
        }
        match o.get("thinkingFormat").and_then(Value::as_str) {
            Some("zai" | "qwen") => self.thinking_format = ThinkingFormat::EnableThinking,
            Some("qwen-chat-template") => self.thinking_format = ThinkingFormat::QwenChatTemplate,
            Some(_) => self.thinking_format = ThinkingFormat::OpenAi,
            None => {}
        }
        if let Some(Value::Object(map)) = o.get("reasoningEffortMap") {
            self.reasoning_effort_map = map.clone();
        }
    }
}

/// The effort pi sends for a thinking level: none when off; xhigh only for models that support it. pi 1.5's
/// `max` (already clamped to the model by the session) goes by the name the model's 1.5 thinking map gives
/// it, else as `max`, as pi 1.5 sends `thinkingLevelMap[level] ?? level`; pi 0.73 knows no `max`, so there
/// it counts as `xhigh`.
fn reasoning_effort(model: &Model, level: Option<ThinkingLevel>, pi_compat: PiCompat) -> Option<&'static str> {
    let supports_xhigh = ["gpt-5.2", "gpt-5.3", "gpt-5.4"].iter().any(|m| model.id.contains(m));
    match level? {
        ThinkingLevel::Off => None,
        ThinkingLevel::Max if pi_compat.is_v1_5() => {
            let map = builtin_thinking_level_map(&model.provider, &model.id);
            Some(map.and_then(|map| map.get_at(ThinkingLevel::Max, pi_compat)).flatten().unwrap_or("max"))
        }
        ThinkingLevel::Xhigh | ThinkingLevel::Max if !supports_xhigh => Some("high"),
        ThinkingLevel::Max => Some("xhigh"),
        level => Some(level.as_str()),
    }
}

/// The JSON body pi sends to `{baseUrl}/chat/completions`, keys in pi's order. At level 1.5 the output limit
/// is the model's own fitted to the context window, and tools carry no `strict`.
pub fn build_body(model: &Model, context: &LlmContext, options: &StreamOptions) -> Value {
    let v1_5 = options.pi_compat.is_v1_5();
    let mut compat = Compat::for_model(model);
    compat.supports_strict_mode &= !v1_5;
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert("messages".into(), Value::Array(convert_messages(model, context, &compat)));
    body.insert("stream".into(), json!(true));
    if compat.supports_usage_in_streaming {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if compat.supports_store {
        body.insert("store".into(), json!(false));
    }
    let max_tokens = if v1_5 {
        requested_output_tokens(model, context, options)
    } else {
        options.max_tokens.unwrap_or_else(|| model.max_tokens.min(DEFAULT_MAX_TOKENS_CAP))
    };
    if max_tokens > 0 {
        body.insert(compat.max_tokens_field.clone(), json!(max_tokens));
    }
    if let Some(temperature) = options.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    crate::ai::structured_output::insert_chat_completions_format(&mut body, options.response_schema.as_deref());
    if !context.tools.is_empty() {
        let tools = context.tools.iter().map(|tool| convert_tool(tool, &compat)).collect();
        body.insert("tools".into(), Value::Array(tools));
    } else if has_tool_history(&context.messages) {
        body.insert("tools".into(), json!([]));
    }
    let effort = reasoning_effort(model, options.reasoning, options.pi_compat);
    if model.reasoning {
        match compat.thinking_format {
            ThinkingFormat::EnableThinking => {
                body.insert("enable_thinking".into(), json!(effort.is_some()));
            }
            ThinkingFormat::QwenChatTemplate => {
                body.insert("chat_template_kwargs".into(), json!({"enable_thinking": effort.is_some()}));
            }
            ThinkingFormat::OpenAi => {
                if let Some(effort) = effort.filter(|_| compat.supports_reasoning_effort) {
                    let mapped = compat.reasoning_effort_map.get(effort).cloned().unwrap_or_else(|| json!(effort));
                    body.insert("reasoning_effort".into(), mapped);
                }
            }
        }
    }
    Value::Object(body)
}

fn convert_tool(tool: &ToolSpec, compat: &Compat) -> Value {
    let mut function = Map::new();
    function.insert("name".into(), json!(tool.name));
    function.insert("description".into(), json!(tool.description));
    function.insert("parameters".into(), tool.parameters.clone());
    if compat.supports_strict_mode {
        function.insert("strict".into(), json!(false));
    }
    json!({"type": "function", "function": function})
}

fn has_tool_history(messages: &[Message]) -> bool {
    messages.iter().any(|m| match m {
        Message::ToolResult(_) => true,
        Message::Assistant(a) => a.tool_calls().next().is_some(),
        _ => false,
    })
}

/// A foreign `call|item` id keeps its call part, sanitised to `[A-Za-z0-9_-]`, at most 40 characters.
pub(crate) fn normalize_tool_call_id(id: &str) -> String {
    match id.split_once('|') {
        Some((call, _)) => call
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
            .take(40)
            .collect(),
        None => id.to_owned(),
    }
}

/// A Mistral tool-call id: nine letters and digits derived from `id` (ids already in that form are
/// kept), the same every time so a call and its result still match.
pub(crate) fn mistral_tool_call_id(id: &str) -> String {
    if id.len() == 9 && id.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return id.to_owned();
    }
    const ALPHABET: &[u8; 62] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    // FNV-1a over the id, then nine base-62 digits of the 64-bit hash.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in id.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    (0..9)
        .map(|_| {
            let digit = ALPHABET[(hash % 62) as usize] as char;
            hash /= 62;
            digit
        })
        .collect()
}

fn image_url_part(data: &str, mime_type: &str) -> Value {
    json!({"type": "image_url", "image_url": {"url": format!("data:{mime_type};base64,{data}")}})
}

fn convert_messages(model: &Model, context: &LlmContext, compat: &Compat) -> Vec<Value> {
    let mut out = Vec::new();
    if !context.system_prompt.is_empty() {
        let role = if model.reasoning && compat.supports_developer_role { "developer" } else { "system" };
        out.push(json!({"role": role, "content": context.system_prompt}));
    }
    let mut last_was_tool_result = false;
    let mut pending_images: Vec<Value> = Vec::new();
    let normalize = |id: &str| {
        if compat.requires_mistral_tool_ids { mistral_tool_call_id(id) } else { normalize_tool_call_id(id) }
    };
    for message in transform_messages(&context.messages, model, normalize) {
        if !matches!(message, Message::ToolResult(_)) && !pending_images.is_empty() {
            out.push(tool_images_message(&mut pending_images));
            last_was_tool_result = false;
        }
        let converted = match &message {
            Message::User(user) => {
                if compat.requires_assistant_after_tool_result && last_was_tool_result {
                    out.push(json!({"role": "assistant", "content": TOOL_RESULTS_BRIDGE}));
                }
                convert_user(model, &user.content)
            }
            Message::Assistant(assistant) => convert_assistant(assistant, compat),
            Message::ToolResult(result) => {
                if model.supports_images() {
                    pending_images.extend(result.content.iter().filter_map(|c| match c {
                        UserContent::Image(image) => Some(image_url_part(&image.data, &image.mime_type)),
                        _ => None,
                    }));
                }
                Some(convert_tool_result(result, compat))
            }
        };
        if let Some(converted) = converted {
            out.push(converted);
            last_was_tool_result = matches!(message, Message::ToolResult(_));
        }
    }
    if !pending_images.is_empty() {
        out.push(tool_images_message(&mut pending_images));
    }
    out
}

fn tool_images_message(images: &mut Vec<Value>) -> Value {
    let mut parts = vec![json!({"type": "text", "text": TOOL_IMAGES_INTRO})];
    parts.append(images);
    json!({"role": "user", "content": parts})
}

/// A string stays a string; blocks become parts (images only for models that take them). `None` when empty.
fn convert_user(model: &Model, content: &MessageContent) -> Option<Value> {
    let blocks = match content {
        MessageContent::Text(text) => return Some(json!({"role": "user", "content": text})),
        MessageContent::Blocks(blocks) => blocks,
    };
    let parts: Vec<Value> = blocks
        .iter()
        .filter_map(|block| match block {
            UserContent::Text(text) => Some(json!({"type": "text", "text": text.text})),
            UserContent::Image(image) if model.supports_images() => Some(image_url_part(&image.data, &image.mime_type)),
            _ => None,
        })
        .collect();
    (!parts.is_empty()).then(|| json!({"role": "user", "content": parts}))
}

/// Text joined into one string (or null), thinking under its signature field, tool calls with
/// compact JSON arguments. `None` for a turn with neither content nor tool calls.
fn convert_assistant(message: &AssistantMessage, compat: &Compat) -> Option<Value> {
    let mut text = String::new();
    let mut thinking: Vec<&str> = Vec::new();
    let mut signature: Option<&str> = None;
    let mut tool_calls = Vec::new();
    for block in &message.content {
        match block {
            AssistantContent::Text(t) if !t.text.trim().is_empty() => text.push_str(&t.text),
            AssistantContent::Thinking(t) if !t.thinking.trim().is_empty() => {
                signature = signature.or(t.thinking_signature.as_deref());
                thinking.push(&t.thinking);
            }
            AssistantContent::ToolCall(call) => {
                let arguments = serde_json::to_string(&call.arguments).unwrap_or_else(|_| "{}".to_owned());
                tool_calls.push(json!({
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": arguments},
                }));
            }
            _ => {}
        }
    }
    if compat.requires_thinking_as_text && !thinking.is_empty() {
        let as_text: Vec<String> = thinking.iter().map(|t| format!("<thinking>\n{t}\n</thinking>")).collect();
        let joined = as_text.join("\n");
        text = if text.is_empty() { joined } else { format!("{joined}\n{text}") };
    }
    if text.is_empty() && tool_calls.is_empty() {
        return None;
    }
    let mut out = Map::new();
    out.insert("role".into(), json!("assistant"));
    out.insert("content".into(), if text.is_empty() { Value::Null } else { json!(text) });
    if let Some(field) = signature.filter(|s| !s.is_empty() && !compat.requires_thinking_as_text) {
        out.insert(field.to_owned(), json!(thinking.join("\n")));
    }
    if !tool_calls.is_empty() {
        out.insert("tool_calls".into(), Value::Array(tool_calls));
    }
    Some(Value::Object(out))
}

fn convert_tool_result(result: &ToolResultMessage, compat: &Compat) -> Value {
    let text: Vec<&str> = result.content.iter().filter_map(UserContent::as_text).collect();
    let has_images = result.content.iter().any(|c| matches!(c, UserContent::Image(_)));
    let content = if text.is_empty() && has_images { IMAGE_ONLY_RESULT.to_owned() } else { text.join("\n") };
    let mut out = Map::new();
    out.insert("role".into(), json!("tool"));
    out.insert("content".into(), json!(content));
    out.insert("tool_call_id".into(), json!(result.tool_call_id));
    if compat.requires_tool_result_name {
        out.insert("name".into(), json!(result.tool_name));
    }
    Value::Object(out)
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
