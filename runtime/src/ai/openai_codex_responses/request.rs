//! The Codex request body as pi 0.73.1 sends it: the system prompt as `instructions`, the conversation as
//! Responses `input` items, `store: false`, low text verbosity, encrypted reasoning included, the session as
//! `prompt_cache_key`, tools with `strict: null`, and `reasoning` only when thinking is on (no output limit).

use serde_json::{Map, Value, json};

use crate::ai::catalog::{ThinkingLevelMap, builtin_thinking_level_map, clamp_thinking_level};
use crate::ai::openai_responses::convert_messages;
use crate::ai::{LlmContext, Model, StreamOptions, ThinkingLevel, ToolSpec};

/// The instructions pi sends when the agent has no system prompt.
pub const DEFAULT_INSTRUCTIONS: &str = "You are a helpful assistant.";
/// pi's text verbosity when the caller sets none.
const DEFAULT_TEXT_VERBOSITY: &str = "low";

/// The JSON body pi posts to `…/codex/responses`, keys in pi's order.
pub fn build_body(model: &Model, context: &LlmContext, options: &StreamOptions) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(model.id));
    body.insert("store".into(), json!(false));
    body.insert("stream".into(), json!(true));
    let instructions =
        if context.system_prompt.is_empty() { DEFAULT_INSTRUCTIONS } else { context.system_prompt.as_str() };
    body.insert("instructions".into(), json!(instructions));
    body.insert("input".into(), Value::Array(convert_messages(model, context)));
    body.insert("text".into(), json!({"verbosity": DEFAULT_TEXT_VERBOSITY}));
    body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    if let Some(session_id) = &options.session_id {
        body.insert("prompt_cache_key".into(), json!(session_id));
    }
    body.insert("tool_choice".into(), json!("auto"));
    body.insert("parallel_tool_calls".into(), json!(true));
    if let Some(temperature) = options.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if !context.tools.is_empty() {
        body.insert("tools".into(), Value::Array(context.tools.iter().map(convert_tool).collect()));
    }
    if let Some(effort) = reasoning_effort(model, options) {
        body.insert("reasoning".into(), json!({"effort": effort, "summary": "auto"}));
    }
    Value::Object(body)
}

/// A function tool; Codex's tools carry `strict: null`.
fn convert_tool(tool: &ToolSpec) -> Value {
    json!({
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters,
        "strict": null,
    })
}

/// The effort for the call's thinking level clamped to the model, renamed by the model's thinking map; none
/// when thinking is off or the map says the level has no effort.
fn reasoning_effort(model: &Model, options: &StreamOptions) -> Option<String> {
    let requested = options.reasoning?;
    let map = builtin_thinking_level_map(&model.provider, &model.id);
    let level = clamp_thinking_level(model, map, requested, options.pi_compat);
    if level == ThinkingLevel::Off {
        return None;
    }
    match map.and_then(|map: &ThinkingLevelMap| map.get_at(level, options.pi_compat)) {
        Some(None) => None,
        Some(Some(name)) => Some(name.to_owned()),
        None => Some(level.as_str().to_owned()),
    }
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
