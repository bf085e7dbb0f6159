//! Unit tests of the Mistral payload: reasoning switches, output limits, message conversion and tool-call
//! ids (hash values computed with pi's own function under node).

use serde_json::{Value, json};

use super::*;
use crate::ai::mistral_conversations::to_wire;
use crate::protocol::{ImageContent, StopReason, TextContent, ThinkingContent, ToolCall, UserMessage};

fn model(id: &str, reasoning: bool) -> Model {
    let mut model = Model::new("mistral", id, "mistral-conversations", "https://api.mistral.ai");
    model.reasoning = reasoning;
    model
}

fn payload(model: &Model, messages: Vec<Message>, options: &StreamOptions) -> Value {
    let context = LlmContext { system_prompt: String::new(), messages, tools: Vec::new() };
    build_payload(model, &context, options)
}

fn at_level(level: Option<ThinkingLevel>) -> StreamOptions {
    StreamOptions { reasoning: level, ..StreamOptions::default() }
}

#[test]
fn reasoning_models_get_prompt_mode_or_an_effort() {
    let medium = at_level(Some(ThinkingLevel::Medium));
    let magistral = payload(&model("magistral-medium-latest", true), Vec::new(), &medium);
    assert_eq!((magistral.get("promptMode"), magistral.get("reasoningEffort")), (Some(&json!("reasoning")), None));
    let small = payload(&model("mistral-small-latest", true), Vec::new(), &medium);
    assert_eq!((small.get("promptMode"), small.get("reasoningEffort")), (None, Some(&json!("high"))));
    for (model, options) in [
        (model("magistral-medium-latest", true), at_level(None)),
        (model("magistral-medium-latest", true), at_level(Some(ThinkingLevel::Off))),
        (model("devstral-medium-latest", false), medium.clone()),
    ] {
        let body = payload(&model, Vec::new(), &options);
        assert!(body.get("promptMode").is_none() && body.get("reasoningEffort").is_none(), "{body}");
    }
}

#[test]
fn the_output_limit_is_the_calls_else_the_models_capped() {
    let mut big = model("m", false);
    big.max_tokens = 128_000;
    assert_eq!(payload(&big, Vec::new(), &StreamOptions::default())["maxTokens"], 32_000);
    let options = StreamOptions { max_tokens: Some(77), temperature: Some(0.3), ..StreamOptions::default() };
    let body = payload(&big, Vec::new(), &options);
    assert_eq!((body["maxTokens"].as_u64(), body["temperature"].as_f64()), (Some(77), Some(0.3)));
    big.max_tokens = 0;
    assert!(payload(&big, Vec::new(), &StreamOptions::default()).get("maxTokens").is_none());
}

fn assistant(content: Vec<AssistantContent>, model: &Model) -> Message {
    Message::Assistant(AssistantMessage {
        content,
        api: model.api.as_str().into(),
        provider: model.provider.as_str().into(),
        model: model.id.as_str().into(),
        stop_reason: StopReason::ToolUse,
        ..AssistantMessage::default()
    })
}

fn result(id: &str, content: Vec<UserContent>, is_error: bool) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: "read".into(),
        content,
        details: None,
        is_error,
        duration_ms: None,
        timestamp: 0,
    })
}

fn image() -> UserContent {
    UserContent::Image(ImageContent { data: "AA".into(), mime_type: "image/png".into() })
}

#[test]
fn messages_are_converted_as_pi_converts_them() {
    let mut model = model("pixtral", false);
    model.input.push("image".into());
    let call = |id: &str| {
        AssistantContent::ToolCall(ToolCall {
            id: id.into(),
            name: "read".into(),
            arguments: json!({"path": "a"}),
            thought_signature: None,
        })
    };
    let messages = vec![
        Message::User(UserMessage { content: MessageContent::Text("plain".into()), timestamp: 0 }),
        Message::User(UserMessage {
            content: MessageContent::Blocks(vec![UserContent::text("look"), image()]),
            timestamp: 0,
        }),
        assistant(
            vec![
                AssistantContent::Text(TextContent::new("  ")),
                AssistantContent::Thinking(ThinkingContent {
                    thinking: "why".into(),
                    thinking_signature: None,
                    redacted: None,
                }),
                AssistantContent::Text(TextContent::new("Reading.")),
                call("abcDEF123"),
            ],
            &model,
        ),
        result("abcDEF123", vec![UserContent::text("  out\n"), image()], true),
        assistant(vec![AssistantContent::Text(TextContent::new(""))], &model),
    ];
    let body = to_wire(&payload(&model, messages, &StreamOptions::default()));
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": "plain"},
            {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": "data:image/png;base64,AA"}]},
            {"role": "assistant", "content": [{"type": "thinking", "thinking": [{"type": "text", "text": "why"}]}, {"type": "text", "text": "Reading."}],
             "tool_calls": [{"id": "abcDEF123", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"a\"}"}, "index": 0}],
             "prefix": false},
            {"role": "tool", "content": [{"type": "text", "text": "[tool error] out"}, {"type": "image_url", "image_url": "data:image/png;base64,AA"}],
             "tool_call_id": "abcDEF123", "name": "read"},
        ])
    );
}

#[test]
fn tool_result_texts_say_what_is_missing() {
    assert_eq!(tool_result_text(" x ", false, false, false), "x");
    assert_eq!(tool_result_text("x", true, false, false), "x\n[tool image omitted: model does not support images]");
    assert_eq!(tool_result_text("", true, true, false), "(see attached image)");
    assert_eq!(tool_result_text("", true, true, true), "[tool error] (see attached image)");
    assert_eq!(tool_result_text("", true, false, true), "[tool error] (image omitted: model does not support images)");
    assert_eq!(tool_result_text(" ", false, false, false), "(no tool output)");
    assert_eq!(tool_result_text("", false, false, true), "[tool error] (no tool output)");
}

#[test]
fn other_models_tool_call_ids_become_nine_letters_and_digits() {
    assert_eq!(derive_tool_call_id("abc-DEF-123", 0), "abcDEF123");
    assert_eq!(derive_tool_call_id("call_abc|fc_123", 0), "18g6kob34");
    assert_eq!(derive_tool_call_id("call_abc|fc_123", 1), "h04n81i8r");
    assert_eq!(derive_tool_call_id("toolu_01ABCdef", 0), "9o5szclp9");
    assert_eq!(derive_tool_call_id("toolcall:12", 0), "nn67j3147");
    assert_eq!(derive_tool_call_id("|||", 0), "1wjog0l1x");
    let mut ids = ToolCallIds::default();
    assert_eq!(ids.normalize("call_abc|fc_123"), "18g6kob34");
    assert_eq!(ids.normalize("call_abc|fc_123"), "18g6kob34", "the same id keeps its mapping");
    // Another id whose letters and digits are the same collides and gets the next attempt's hash.
    assert_eq!(ids.normalize("call-abc|fc-123"), "h04n81i8r");

    let mistral = model("devstral", false);
    let other = Model::new("anthropic", "claude", "anthropic-messages", "x");
    let messages = vec![
        assistant(
            vec![AssistantContent::ToolCall(ToolCall {
                id: "toolu_01ABCdef".into(),
                name: "read".into(),
                arguments: json!({}),
                thought_signature: None,
            })],
            &other,
        ),
        result("toolu_01ABCdef", vec![UserContent::text("ok")], false),
    ];
    let body = to_wire(&payload(&mistral, messages, &StreamOptions::default()));
    assert_eq!(body["messages"][0]["tool_calls"][0]["id"], "9o5szclp9");
    assert_eq!(body["messages"][1]["tool_call_id"], "9o5szclp9");
}
