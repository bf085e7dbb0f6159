//! The google-generative-ai request body as pi sends it through the `@google/genai` SDK: pi's
//! conversion of messages into `contents`, the generation config with its thinking settings, and
//! the SDK's key order (`contents`, `systemInstruction`, `tools`, `generationConfig`). The
//! `google-vertex` API sends the same body with the few differences a [`Dialect`] names.

use crate::ai::ThinkingBudgets;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value, json};

use crate::ai::output_limit::requested_output_tokens;
use crate::ai::replay::transform_messages;
use crate::ai::{LlmContext, Model, StreamOptions, ThinkingLevel, ToolSpec};
use crate::protocol::{AssistantContent, AssistantMessage, Message, MessageContent, ToolResultMessage, UserContent};

/// pi's default output limit when the caller gives none: the model's, capped at 32000.
const DEFAULT_MAX_TOKENS_CAP: u64 = 32_000;
/// The function response of a tool result that holds only images.
const IMAGE_ONLY_RESULT: &str = "(see attached image)";
/// Heads the separate user turn that carries tool-result images for models before Gemini 3.
const TOOL_IMAGES_INTRO: &str = "Tool result image:";
/// The longest tool-call id models behind Google's API accept.
const MAX_TOOL_CALL_ID_LEN: usize = 64;

static GEMINI_3_PRO: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"gemini-3(?:\.\d+)?-pro").ok());
static GEMINI_3_FLASH: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"gemini-3(?:\.\d+)?-flash").ok());
static GEMMA_4: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"gemma-?4").ok());
static GEMINI_MAJOR: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"^gemini(?:-live)?-(\d+)").ok());

fn id_matches(pattern: &LazyLock<Option<Regex>>, model: &Model) -> bool {
    pattern.as_ref().is_some_and(|re| re.is_match(&model.id.to_lowercase()))
}

/// Which of the two Gemini APIs a body is for: they share pi's conversion, and differ only where pi's
/// two providers or the SDK's two converters do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Dialect {
    /// `google-generative-ai`: the SDK rewrites parts into its own key order (`inlineData` as `data`,
    /// `mimeType`; `functionCall` as `id`, `args`, `name`); pi knows Gemma 4 and Flash-Lite's budgets.
    #[default]
    GeminiApi,
    /// `google-vertex`: the SDK passes pi's parts through as they are (`mimeType` before `data`, `name`
    /// before `args`) and writes function declarations `description` first; pi's Vertex provider has no
    /// Gemma 4 levels and no Flash-Lite budgets.
    Vertex,
}

/// Which thinking switch a model family takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ThinkingFamily {
    /// Gemini 3 Pro: `thinkingLevel` LOW or HIGH.
    Gemini3Pro,
    /// Gemini 3 Flash: `thinkingLevel` MINIMAL to HIGH.
    Gemini3Flash,
    /// Gemma 4: `thinkingLevel` MINIMAL or HIGH.
    Gemma4,
    /// Everything else (Gemini 2.x): `thinkingBudget` in tokens.
    Budget,
}

impl ThinkingFamily {
    fn of(model: &Model, dialect: Dialect) -> Self {
        if id_matches(&GEMINI_3_PRO, model) {
            Self::Gemini3Pro
        } else if id_matches(&GEMINI_3_FLASH, model) {
            Self::Gemini3Flash
        } else if dialect == Dialect::GeminiApi && id_matches(&GEMMA_4, model) {
            Self::Gemma4
        } else {
            Self::Budget
        }
    }
}

/// The `thinkingConfig` pi sends: with thoughts for a thinking level, or the lowest setting the model
/// allows when thinking is off. `None` for models without reasoning.
pub(crate) fn thinking_config(
    model: &Model,
    level: Option<ThinkingLevel>,
    budgets: &ThinkingBudgets,
    dialect: Dialect,
) -> Option<Value> {
    if !model.reasoning {
        return None;
    }
    let family = ThinkingFamily::of(model, dialect);
    let effort = match level {
        None | Some(ThinkingLevel::Off) => {
            return Some(match family {
                ThinkingFamily::Gemini3Pro => json!({"thinkingLevel": "LOW"}),
                ThinkingFamily::Gemini3Flash | ThinkingFamily::Gemma4 => json!({"thinkingLevel": "MINIMAL"}),
                ThinkingFamily::Budget => json!({"thinkingBudget": 0}),
            });
        }
        // Without a per-model level map, xhigh and pi 1.5's max fall back to high.
        Some(ThinkingLevel::Xhigh | ThinkingLevel::Max) => ThinkingLevel::High,
        Some(level) => level,
    };
    Some(match family {
        ThinkingFamily::Budget => {
            let budget = budgets
                .for_level(effort)
                .map_or_else(|| thinking_budget(model, effort, dialect), |tokens| tokens as i64);
            json!({"includeThoughts": true, "thinkingBudget": budget})
        }
        family => json!({"includeThoughts": true, "thinkingLevel": thinking_level(family, effort)}),
    })
}

/// The `thinkingLevel` of a Gemini 3 or Gemma 4 model for an effort.
fn thinking_level(family: ThinkingFamily, effort: ThinkingLevel) -> &'static str {
    let high = matches!(effort, ThinkingLevel::Medium | ThinkingLevel::High | ThinkingLevel::Xhigh);
    match family {
        ThinkingFamily::Gemini3Pro => {
            if high {
                "HIGH"
            } else {
                "LOW"
            }
        }
        ThinkingFamily::Gemma4 => {
            if high {
                "HIGH"
            } else {
                "MINIMAL"
            }
        }
        _ => match effort {
            ThinkingLevel::Minimal | ThinkingLevel::Off => "MINIMAL",
            ThinkingLevel::Low => "LOW",
            ThinkingLevel::Medium => "MEDIUM",
            _ => "HIGH",
        },
    }
}

/// The built-in `thinkingBudget` of a Gemini 2.5 model for an effort; -1 (dynamic) for other models.
fn thinking_budget(model: &Model, effort: ThinkingLevel, dialect: Dialect) -> i64 {
    let budgets: [i64; 4] = if model.id.contains("2.5-pro") {
        [128, 2048, 8192, 32768]
    } else if dialect == Dialect::GeminiApi && model.id.contains("2.5-flash-lite") {
        [512, 2048, 8192, 24576]
    } else if model.id.contains("2.5-flash") {
        [128, 2048, 8192, 24576]
    } else {
        return -1;
    };
    match effort {
        ThinkingLevel::Minimal | ThinkingLevel::Off => budgets[0],
        ThinkingLevel::Low => budgets[1],
        ThinkingLevel::Medium => budgets[2],
        _ => budgets[3],
    }
}

/// The JSON body pi sends to `…/models/{id}:streamGenerateContent`, keys in the SDK's order.
/// Fails when there is nothing to send (the SDK refuses empty `contents`). At level 1.5 `maxOutputTokens` is
/// the caller's or the model's whole limit, fitted to the context window.
pub fn build_body(model: &Model, context: &LlmContext, options: &StreamOptions) -> Result<Value, String> {
    build_body_for(Dialect::GeminiApi, model, context, options)
}

/// [`build_body`] for either API.
pub(crate) fn build_body_for(
    dialect: Dialect,
    model: &Model,
    context: &LlmContext,
    options: &StreamOptions,
) -> Result<Value, String> {
    let contents = convert_messages(dialect, model, &context.messages);
    if contents.is_empty() {
        return Err("the request has no contents: every message was empty".to_owned());
    }
    let mut body = Map::new();
    body.insert("contents".into(), Value::Array(contents));
    if !context.system_prompt.is_empty() {
        body.insert("systemInstruction".into(), json!({"parts": [{"text": context.system_prompt}], "role": "user"}));
    }
    if !context.tools.is_empty() {
        let declarations: Vec<Value> = context.tools.iter().map(|tool| function_declaration(dialect, tool)).collect();
        body.insert("tools".into(), json!([{"functionDeclarations": declarations}]));
    }
    let mut generation = Map::new();
    if let Some(temperature) = options.temperature {
        generation.insert("temperature".into(), json!(temperature));
    }
    let max_tokens = if options.pi_compat.is_v1_5() {
        Some(requested_output_tokens(model, context, options)).filter(|tokens| *tokens > 0)
    } else {
        options.max_tokens.or_else(|| (model.max_tokens > 0).then(|| model.max_tokens.min(DEFAULT_MAX_TOKENS_CAP)))
    };
    if let Some(max_tokens) = max_tokens {
        generation.insert("maxOutputTokens".into(), json!(max_tokens));
    }
    let schema = options.response_schema.as_deref();
    crate::ai::structured_output::insert_gemini_format(&mut generation, schema, !context.tools.is_empty());
    if let Some(thinking) = thinking_config(model, options.reasoning, &options.thinking_budgets, dialect) {
        generation.insert("thinkingConfig".into(), thinking);
    }
    body.insert("generationConfig".into(), Value::Object(generation));
    Ok(Value::Object(body))
}

fn function_declaration(dialect: Dialect, tool: &ToolSpec) -> Value {
    match dialect {
        Dialect::GeminiApi => {
            json!({"name": tool.name, "description": tool.description, "parametersJsonSchema": tool.parameters})
        }
        Dialect::Vertex => {
            json!({"description": tool.description, "name": tool.name, "parametersJsonSchema": tool.parameters})
        }
    }
}

/// Models behind Google's API that need explicit ids on function calls and responses.
pub(crate) fn requires_tool_call_id(model_id: &str) -> bool {
    model_id.starts_with("claude-") || model_id.starts_with("gpt-oss-")
}

/// Gemini 3 and later (and non-Gemini models) take images inside function responses.
fn supports_multimodal_function_response(model: &Model) -> bool {
    let major = GEMINI_MAJOR
        .as_ref()
        .and_then(|re| re.captures(&model.id.to_lowercase()).and_then(|c| c.get(1).map(|m| m.as_str().to_owned())));
    major.and_then(|m| m.parse::<u32>().ok()).is_none_or(|major| major >= 3)
}

/// Google sends signatures as base64 bytes: anything else would be rejected on replay.
pub(crate) fn is_valid_thought_signature(signature: &str) -> bool {
    let body = signature.trim_end_matches('=');
    let padding = signature.len() - body.len();
    !body.is_empty()
        && signature.len().is_multiple_of(4)
        && padding <= 2
        && body.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
}

/// A signature worth replaying: from this very model and well-formed.
fn kept_signature(same_model: bool, signature: Option<&str>) -> Option<&str> {
    signature.filter(|s| same_model && is_valid_thought_signature(s))
}

fn convert_messages(dialect: Dialect, model: &Model, messages: &[Message]) -> Vec<Value> {
    let normalize = |id: &str| -> String {
        if !requires_tool_call_id(&model.id) {
            return id.to_owned();
        }
        id.chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
            .take(MAX_TOOL_CALL_ID_LEN)
            .collect()
    };
    let mut contents: Vec<Value> = Vec::new();
    for message in transform_messages(messages, model, normalize) {
        match &message {
            Message::User(user) => contents.extend(convert_user(dialect, &user.content)),
            Message::Assistant(assistant) => contents.extend(convert_assistant(dialect, model, assistant)),
            Message::ToolResult(result) => push_tool_result(dialect, model, result, &mut contents),
        }
    }
    contents
}

/// `inlineData` as the SDK writes a top-level part: `data` before `mimeType` for the Gemini API, pi's own
/// order for Vertex.
fn inline_data_part(dialect: Dialect, data: &str, mime_type: &str) -> Value {
    match dialect {
        Dialect::GeminiApi => json!({"inlineData": {"data": data, "mimeType": mime_type}}),
        Dialect::Vertex => json!({"inlineData": {"mimeType": mime_type, "data": data}}),
    }
}

fn convert_user(dialect: Dialect, content: &MessageContent) -> Option<Value> {
    let blocks = match content {
        MessageContent::Text(text) => return Some(json!({"parts": [{"text": text}], "role": "user"})),
        MessageContent::Blocks(blocks) => blocks,
    };
    let parts: Vec<Value> = blocks
        .iter()
        .map(|block| match block {
            UserContent::Text(text) => json!({"text": text.text}),
            UserContent::Image(image) => inline_data_part(dialect, &image.data, &image.mime_type),
        })
        .collect();
    (!parts.is_empty()).then(|| json!({"parts": parts, "role": "user"}))
}

/// A `model` turn: text, thinking (as thought parts for the same model, else plain text) and
/// function calls, with signatures only where they can be replayed. `None` when nothing is left.
fn convert_assistant(dialect: Dialect, model: &Model, message: &AssistantMessage) -> Option<Value> {
    let same_model = message.provider == model.provider && message.model == model.id;
    let mut parts = Vec::new();
    for block in &message.content {
        match block {
            AssistantContent::Text(text) => {
                if text.text.trim().is_empty() {
                    continue;
                }
                let mut part = Map::new();
                part.insert("text".into(), json!(text.text));
                if let Some(signature) = kept_signature(same_model, text.text_signature.as_deref()) {
                    part.insert("thoughtSignature".into(), json!(signature));
                }
                parts.push(Value::Object(part));
            }
            AssistantContent::Thinking(thinking) => {
                if thinking.thinking.trim().is_empty() {
                    continue;
                }
                let mut part = Map::new();
                part.insert("text".into(), json!(thinking.thinking));
                if same_model {
                    part.insert("thought".into(), json!(true));
                    if let Some(signature) = kept_signature(same_model, thinking.thinking_signature.as_deref()) {
                        part.insert("thoughtSignature".into(), json!(signature));
                    }
                }
                parts.push(Value::Object(part));
            }
            AssistantContent::ToolCall(call) => {
                let args = if call.arguments.is_null() { json!({}) } else { call.arguments.clone() };
                let id = requires_tool_call_id(&model.id).then(|| json!(call.id));
                let function_call = match dialect {
                    Dialect::GeminiApi => [("id", id), ("args", Some(args)), ("name", Some(json!(call.name)))],
                    Dialect::Vertex => [("name", Some(json!(call.name))), ("args", Some(args)), ("id", id)],
                };
                let function_call: Map<String, Value> =
                    function_call.into_iter().filter_map(|(key, value)| Some((key.to_owned(), value?))).collect();
                let mut part = Map::new();
                part.insert("functionCall".into(), Value::Object(function_call));
                if let Some(signature) = kept_signature(same_model, call.thought_signature.as_deref()) {
                    part.insert("thoughtSignature".into(), json!(signature));
                }
                parts.push(Value::Object(part));
            }
        }
    }
    (!parts.is_empty()).then(|| json!({"parts": parts, "role": "model"}))
}

/// Adds a tool result as a `functionResponse` part, merged into the previous user turn when that
/// turn already holds function responses. Images ride inside the response for Gemini 3+, else in a
/// user turn of their own.
fn push_tool_result(dialect: Dialect, model: &Model, result: &ToolResultMessage, contents: &mut Vec<Value>) {
    let blocks = &result.content;
    let text: Vec<&str> = blocks.iter().filter_map(UserContent::as_text).collect();
    let text = text.join("\n");
    let images: Vec<(&str, &str)> = blocks
        .iter()
        .filter_map(|block| match block {
            UserContent::Image(image) => Some((image.data.as_str(), image.mime_type.as_str())),
            _ => None,
        })
        .collect();
    let value = if !text.is_empty() {
        text
    } else if !images.is_empty() {
        IMAGE_ONLY_RESULT.to_owned()
    } else {
        String::new()
    };
    let multimodal = supports_multimodal_function_response(model);
    let mut response = Map::new();
    response.insert("name".into(), json!(result.tool_name));
    let key = if result.is_error { "error" } else { "output" };
    response.insert("response".into(), json!({ key: value }));
    if !images.is_empty() && multimodal {
        // Passed through the SDK untouched, so pi's own key order.
        let nested: Vec<Value> =
            images.iter().map(|(data, mime)| json!({"inlineData": {"mimeType": mime, "data": data}})).collect();
        response.insert("parts".into(), Value::Array(nested));
    }
    if requires_tool_call_id(&model.id) {
        response.insert("id".into(), json!(result.tool_call_id));
    }
    let part = json!({"functionResponse": response});
    let merged = contents.last_mut().and_then(|last| {
        let is_user = last.get("role").and_then(Value::as_str) == Some("user");
        let parts = last.get_mut("parts").and_then(Value::as_array_mut)?;
        (is_user && parts.iter().any(|p| p.get("functionResponse").is_some())).then_some(parts)
    });
    match merged {
        Some(parts) => parts.push(part),
        None => contents.push(json!({"parts": [part], "role": "user"})),
    }
    if !images.is_empty() && !multimodal {
        let mut parts = vec![json!({"text": TOOL_IMAGES_INTRO})];
        parts.extend(images.iter().map(|(data, mime)| inline_data_part(dialect, data, mime)));
        contents.push(json!({"parts": parts, "role": "user"}));
    }
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
