//! Codex body tests, checked against the bodies pi 0.73.1 was observed to send (`-p hi --provider openai-codex
//! --model gpt-5.5`, thinking at its default, off, minimal and xhigh).

use serde_json::{Value, json};

use super::*;
use crate::ai::catalog::builtin_model;
use crate::protocol::{
    AssistantContent, AssistantMessage, Message, StopReason, ToolCall, ToolResultMessage, UserMessage,
};

fn gpt_5_5() -> Model {
    builtin_model("openai-codex", "gpt-5.5").cloned().unwrap_or_else(|| Model::new("openai-codex", "gpt-5.5", "x", ""))
}

fn read_tool() -> ToolSpec {
    ToolSpec {
        name: "read".into(),
        description: "Read a file".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    }
}

fn context(system_prompt: &str, messages: Vec<Message>) -> LlmContext {
    LlmContext { system_prompt: system_prompt.into(), messages, tools: vec![read_tool()] }
}

fn options(reasoning: Option<ThinkingLevel>) -> StreamOptions {
    StreamOptions { reasoning, session_id: Some("sess-1".into()), ..StreamOptions::default() }
}

fn hi() -> Message {
    Message::User(UserMessage { content: crate::protocol::MessageContent::Text("hi".into()), timestamp: 1 })
}

fn keys(value: &Value) -> Vec<&str> {
    value.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default()
}

#[test]
fn a_first_request_has_pis_fields_in_pis_order() {
    let body = build_body(&gpt_5_5(), &context("System.", vec![hi()]), &options(Some(ThinkingLevel::Medium)));
    assert_eq!(
        keys(&body),
        [
            "model",
            "store",
            "stream",
            "instructions",
            "input",
            "text",
            "include",
            "prompt_cache_key",
            "tool_choice",
            "parallel_tool_calls",
            "tools",
            "reasoning"
        ]
    );
    assert_eq!(body["model"], "gpt-5.5");
    assert_eq!((body["store"].clone(), body["stream"].clone()), (json!(false), json!(true)));
    assert_eq!(body["instructions"], "System.");
    assert_eq!(body["input"], json!([{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]));
    assert_eq!(body["text"], json!({"verbosity": "low"}));
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(body["prompt_cache_key"], "sess-1");
    assert_eq!((body["tool_choice"].clone(), body["parallel_tool_calls"].clone()), (json!("auto"), json!(true)));
    assert_eq!(body["tools"][0]["strict"], Value::Null);
    assert!(body["tools"][0].as_object().is_some_and(|tool| tool.contains_key("strict")), "strict is sent as null");
    assert_eq!(body["reasoning"], json!({"effort": "medium", "summary": "auto"}));
    assert!(body.get("max_output_tokens").is_none(), "Codex takes no output limit");
}

#[test]
fn thinking_levels_follow_the_models_map_and_off_sends_no_reasoning() {
    let effort = |level: Option<ThinkingLevel>| {
        build_body(&gpt_5_5(), &context("", vec![hi()]), &options(level))["reasoning"].clone()
    };
    assert_eq!(effort(None), Value::Null);
    assert_eq!(effort(Some(ThinkingLevel::Off)), Value::Null);
    assert_eq!(effort(Some(ThinkingLevel::Minimal)), json!({"effort": "low", "summary": "auto"}));
    assert_eq!(effort(Some(ThinkingLevel::Xhigh)), json!({"effort": "xhigh", "summary": "auto"}));
    let mini = builtin_model("openai-codex", "gpt-5.1-codex-mini").cloned();
    let mini_effort = mini.map(|model| {
        build_body(&model, &context("", vec![hi()]), &options(Some(ThinkingLevel::Low)))["reasoning"]["effort"].clone()
    });
    assert_eq!(mini_effort, Some(json!("medium")));
}

#[test]
fn no_system_prompt_sends_pis_default_instructions_and_no_session_no_cache_key() {
    let body = build_body(&gpt_5_5(), &context("", vec![hi()]), &StreamOptions::default());
    assert_eq!(body["instructions"], DEFAULT_INSTRUCTIONS);
    assert!(body.get("prompt_cache_key").is_none());
    let warm = build_body(
        &gpt_5_5(),
        &context("", vec![hi()]),
        &StreamOptions { temperature: Some(0.5), ..StreamOptions::default() },
    );
    assert_eq!(warm["temperature"], 0.5);
}

#[test]
fn tool_round_trips_replay_as_responses_items() {
    let model = gpt_5_5();
    let call = AssistantMessage {
        content: vec![AssistantContent::ToolCall(ToolCall {
            id: "call_1|fc_1".into(),
            name: "read".into(),
            arguments: json!({"path": "a.txt"}),
            thought_signature: None,
        })],
        api: model.api.clone().into(),
        provider: model.provider.clone().into(),
        model: model.id.clone().into(),
        stop_reason: StopReason::ToolUse,
        ..AssistantMessage::default()
    };
    let result = ToolResultMessage {
        tool_call_id: "call_1|fc_1".into(),
        tool_name: "read".into(),
        content: vec![crate::protocol::UserContent::text("contents")],
        details: None,
        is_error: false,
        timestamp: 2,
        duration_ms: None,
    };
    let messages = vec![hi(), Message::Assistant(call), Message::ToolResult(result)];
    let body = build_body(&model, &context("System.", messages), &options(None));
    assert_eq!(
        body["input"],
        json!([
            {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read", "arguments": "{\"path\":\"a.txt\"}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "contents"}
        ])
    );
}
