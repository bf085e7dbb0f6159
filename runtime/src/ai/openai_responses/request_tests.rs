//! Request-body tests, checked against the bodies pi 0.73.1 was observed to send to `/responses`.

use serde_json::{Value, json};

use super::*;
use crate::protocol::{ImageContent, StopReason, TextContent, ThinkingContent, ToolCall, UserMessage};

fn model() -> Model {
    let mut model = Model::new("mock", "m", "openai-responses", "http://127.0.0.1:9/v1");
    model.reasoning = true;
    model
}

fn read_tool() -> ToolSpec {
    ToolSpec {
        name: "read".into(),
        description: "Read a file".into(),
        parameters: json!({"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}}),
    }
}

fn user(text: &str) -> Message {
    Message::User(UserMessage { content: MessageContent::Blocks(vec![UserContent::text(text)]), timestamp: 1 })
}

fn assistant_from(provider: &str, api: &str, model: &str, content: Vec<AssistantContent>) -> Message {
    Message::Assistant(AssistantMessage {
        content,
        api: api.into(),
        provider: provider.into(),
        model: model.into(),
        stop_reason: StopReason::ToolUse,
        ..AssistantMessage::default()
    })
}

fn assistant(content: Vec<AssistantContent>) -> Message {
    assistant_from("mock", "openai-responses", "m", content)
}

fn call(id: &str, path: &str) -> AssistantContent {
    AssistantContent::ToolCall(ToolCall {
        id: id.into(),
        name: "read".into(),
        arguments: json!({"path": path}),
        thought_signature: None,
    })
}

fn result(id: &str, content: Vec<UserContent>) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: "read".into(),
        content,
        details: None,
        is_error: false,
        timestamp: 2,
        duration_ms: None,
    })
}

fn body_for(model: &Model, messages: Vec<Message>, options: &StreamOptions) -> Value {
    let context = LlmContext { system_prompt: "System.".into(), messages, tools: vec![read_tool()] };
    build_body_with_retention(model, &context, options, false)
}

fn keys(value: &Value) -> Vec<&str> {
    value.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default()
}

fn medium() -> StreamOptions {
    StreamOptions {
        reasoning: Some(ThinkingLevel::Medium),
        session_id: Some("sess-1".into()),
        ..StreamOptions::default()
    }
}

#[test]
fn a_first_request_has_pis_keys_in_pis_order() {
    let body = body_for(&model(), vec![user("hi")], &medium());
    assert_eq!(
        keys(&body),
        ["model", "input", "stream", "prompt_cache_key", "store", "max_output_tokens", "tools", "reasoning", "include"]
    );
    assert_eq!(body["prompt_cache_key"], "sess-1");
    assert_eq!(body["store"], false);
    assert_eq!(body["max_output_tokens"], 16384);
    assert_eq!(body["reasoning"], json!({"effort": "medium", "summary": "auto"}));
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(
        body["input"],
        json!([
            {"role": "developer", "content": "System."},
            {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        ])
    );
    assert_eq!(
        body["tools"][0].to_string(),
        r#"{"type":"function","name":"read","description":"Read a file","parameters":{"type":"object","required":["path"],"properties":{"path":{"type":"string"}}},"strict":false}"#
    );
}

#[test]
fn thinking_off_and_plain_models_follow_pi() {
    let off = StreamOptions { session_id: Some("s".into()), ..StreamOptions::default() };
    let body = body_for(&model(), vec![user("hi")], &off);
    assert_eq!(body["reasoning"], json!({"effort": "none"}), "a reasoning model is told not to think");
    assert!(body.get("include").is_none());

    let mut plain = model();
    plain.reasoning = false;
    let body = body_for(&plain, vec![Message::User(UserMessage::text("hi"))], &medium());
    assert_eq!(keys(&body), ["model", "input", "stream", "prompt_cache_key", "store", "max_output_tokens", "tools"]);
    assert_eq!(body["input"][0]["role"], "system");
    assert_eq!(body["input"][1], json!({"role": "user", "content": [{"type": "input_text", "text": "hi"}]}));

    let xhigh = StreamOptions { reasoning: Some(ThinkingLevel::Xhigh), ..StreamOptions::default() };
    let body = body_for(&model(), vec![user("hi")], &xhigh);
    assert_eq!(body["reasoning"]["effort"], "high", "xhigh needs a model that names it");
    assert!(body.get("prompt_cache_key").is_none(), "no session, no cache key");
}

#[test]
fn options_and_retention_add_their_keys() {
    let options = StreamOptions { max_tokens: Some(100), temperature: Some(0.5), ..medium() };
    let context = LlmContext { system_prompt: String::new(), messages: vec![user("hi")], tools: Vec::new() };
    let body = build_body_with_retention(&model(), &context, &options, true);
    assert_eq!(
        keys(&body),
        [
            "model",
            "input",
            "stream",
            "prompt_cache_key",
            "prompt_cache_retention",
            "store",
            "max_output_tokens",
            "temperature",
            "reasoning",
            "include"
        ]
    );
    assert_eq!((body["prompt_cache_retention"].as_str(), body["temperature"].as_f64()), (Some("24h"), Some(0.5)));
    assert_eq!(body["input"].as_array().map(Vec::len), Some(1), "no system item without a prompt");
    let mut model = model();
    model.compat = Some(json!({"supportsLongCacheRetention": false}));
    assert!(build_body_with_retention(&model, &context, &options, true).get("prompt_cache_retention").is_none());
}

#[test]
fn a_replayed_turn_becomes_reasoning_message_and_function_call_items() {
    let reasoning = r#"{"id":"rs_1","type":"reasoning","encrypted_content":"ENC","summary":[{"type":"summary_text","text":"Plan"}]}"#;
    let messages = vec![
        user("read it"),
        assistant(vec![
            AssistantContent::Thinking(ThinkingContent {
                thinking: "Plan".into(),
                thinking_signature: Some(reasoning.into()),
                redacted: None,
            }),
            AssistantContent::Text(TextContent {
                text: "Reading.".into(),
                text_signature: Some(r#"{"v":1,"id":"msg_1","phase":"commentary"}"#.into()),
            }),
            call("call_1|fc_1", "a.txt"),
        ]),
        result("call_1|fc_1", vec![UserContent::text("line one"), UserContent::text("line two")]),
    ];
    let body = body_for(&model(), messages, &medium());
    let input = &body["input"];
    assert_eq!(input[2].to_string(), reasoning, "the reasoning item is replayed verbatim");
    assert_eq!(
        input[3].to_string(),
        r#"{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Reading.","annotations":[]}],"status":"completed","id":"msg_1","phase":"commentary"}"#
    );
    assert_eq!(
        input[4].to_string(),
        r#"{"type":"function_call","id":"fc_1","call_id":"call_1","name":"read","arguments":"{\"path\":\"a.txt\"}"}"#
    );
    assert_eq!(
        input[5].to_string(),
        r#"{"type":"function_call_output","call_id":"call_1","output":"line one\nline two"}"#
    );
    assert_eq!(input.as_array().map(Vec::len), Some(6));
}

#[test]
fn message_ids_come_from_the_signature_or_the_message_index() {
    let text = |text: &str, signature: Option<&str>| {
        AssistantContent::Text(TextContent { text: text.into(), text_signature: signature.map(Into::into) })
    };
    let long = "x".repeat(70);
    let messages = vec![
        user("one"),
        assistant(vec![text("a", None), text("b", Some("legacy_id")), text("c", Some(&long))]),
        user("two"),
        assistant(vec![text("d", Some(r#"{"v":1,"id":"msg_9","phase":"other"}"#)), text("e", Some("{not json"))]),
    ];
    let body = body_for(&model(), messages, &medium());
    let ids: Vec<&str> = body["input"].as_array().into_iter().flatten().filter_map(|i| i["id"].as_str()).collect();
    assert_eq!(ids, ["msg_1", "legacy_id", &format!("msg_{}", short_hash(&long)), "msg_9", "{not json"]);
    assert!(body["input"][6].get("phase").is_none(), "unknown phases are dropped");
    assert_eq!(body["input"][6]["id"], "msg_9");
}

#[test]
fn another_models_calls_are_renamed_for_this_api() {
    let messages = vec![
        user("go"),
        assistant_from("anthropic", "anthropic-messages", "claude", vec![call("toolu.01", "a")]),
        result("toolu.01", vec![UserContent::text("ok")]),
        assistant_from("mock", "openai-responses", "m-old", vec![call("call_2|fc_2", "b")]),
        result("call_2|fc_2", vec![UserContent::text("ok")]),
    ];
    let body = body_for(&model(), messages, &medium());
    let input = &body["input"];
    assert_eq!(
        input[2],
        json!({"type": "function_call", "call_id": "toolu_01", "name": "read", "arguments": "{\"path\":\"a\"}"})
    );
    assert_eq!(input[3]["call_id"], "toolu_01");
    // The mock provider is not an OpenAI one: the whole id is sanitised into the call id.
    assert_eq!(
        input[4],
        json!({"type": "function_call", "call_id": "call_2_fc_2", "name": "read", "arguments": "{\"path\":\"b\"}"})
    );
    assert_eq!(input[5]["call_id"], "call_2_fc_2");

    let mut openai = model();
    openai.provider = "openai".into();
    let messages = vec![
        user("go"),
        assistant_from("openai", "openai-responses", "gpt-old", vec![call("call_2|fc_2", "b")]),
        result("call_2|fc_2", vec![UserContent::text("ok")]),
        assistant_from("anthropic", "anthropic-messages", "claude", vec![call("call_3|item_3", "c")]),
        result("call_3|item_3", vec![UserContent::text("ok")]),
    ];
    let body = body_for(&openai, messages, &medium());
    let input = &body["input"];
    assert!(input[2].get("id").is_none(), "another model's fc_ item id is left out: {}", input[2]);
    assert_eq!(input[2]["call_id"], "call_2");
    assert_eq!(input[4]["id"], format!("fc_{}", short_hash("item_3")));
    assert_eq!(input[5]["call_id"], "call_3");
}

#[test]
fn tool_result_images_and_empty_results() {
    let image = UserContent::Image(ImageContent { data: "QUJD".into(), mime_type: "image/png".into() });
    let messages = || {
        vec![
            user("look"),
            assistant(vec![call("c1|fc_1", "a.png"), call("c2|fc_2", "b")]),
            result("c1|fc_1", vec![UserContent::text("an image"), image.clone()]),
            result("c2|fc_2", Vec::new()),
        ]
    };
    let mut vision = model();
    vision.input = vec!["text".into(), "image".into()];
    let body = body_for(&vision, messages(), &medium());
    assert_eq!(
        body["input"][4]["output"],
        json!([
            {"type": "input_text", "text": "an image"},
            {"type": "input_image", "detail": "auto", "image_url": "data:image/png;base64,QUJD"},
        ])
    );
    assert_eq!(body["input"][5]["output"], IMAGE_ONLY_RESULT);
    let body = body_for(&model(), messages(), &medium());
    let expected = format!("an image\n{}", crate::ai::replay::TOOL_IMAGE_PLACEHOLDER);
    assert_eq!(body["input"][4]["output"], expected, "a note stands in for images a text-only model cannot take");

    let with_image = Message::User(UserMessage {
        content: MessageContent::Blocks(vec![UserContent::text("see"), image.clone()]),
        timestamp: 1,
    });
    let body = body_for(&vision, vec![with_image], &medium());
    assert_eq!(body["input"][1]["content"][1]["type"], "input_image");
}

#[test]
fn failed_turns_are_dropped_and_orphaned_calls_answered() {
    let mut failed = AssistantMessage { stop_reason: StopReason::Error, ..AssistantMessage::default() };
    failed.content = vec![AssistantContent::text("broken")];
    let messages = vec![user("a"), Message::Assistant(failed), assistant(vec![call("c1|fc_1", "x")]), user("b")];
    let body = body_for(&model(), messages, &medium());
    let types: Vec<&str> =
        body["input"].as_array().into_iter().flatten().map(|i| i["type"].as_str().unwrap_or("role")).collect();
    assert_eq!(types, ["role", "role", "function_call", "function_call_output", "role"]);
    assert_eq!(body["input"][3]["output"], crate::ai::NO_RESULT_TEXT);
}

#[test]
fn level_1_5_sends_no_strict_and_the_models_whole_limit() {
    let mut model = model();
    model.max_tokens = 65_536;
    let context = LlmContext { system_prompt: "S".into(), messages: vec![user("hi")], tools: vec![read_tool()] };
    let at = |pi_compat| StreamOptions { pi_compat, ..StreamOptions::default() };
    let v1_5 = build_body_with_retention(&model, &context, &at(crate::protocol::PiCompat::V1_5), false);
    assert_eq!(v1_5["tools"][0].as_object().map(|o| o.contains_key("strict")), Some(false));
    assert_eq!(v1_5["max_output_tokens"], 65_536);
    let v0_73 = build_body_with_retention(&model, &context, &at(crate::protocol::PiCompat::V0_73), false);
    assert_eq!(
        (v0_73["max_output_tokens"].clone(), v0_73["tools"][0]["strict"].clone()),
        (json!(32_000), json!(false))
    );
}

#[test]
fn level_1_5_clamps_max_to_what_the_model_names() {
    let at = |level| StreamOptions {
        reasoning: Some(level),
        pi_compat: crate::protocol::PiCompat::V1_5,
        ..StreamOptions::default()
    };
    let effort = |model: &Model, level| body_for(model, vec![user("hi")], &at(level))["reasoning"]["effort"].clone();
    // No OpenAI model of pi-gen's catalog names max at 1.5: gpt-5.4 tops out at xhigh, others at high.
    let mut gpt = Model::new("openai", "gpt-5.4", "openai-responses", "https://api.openai.com/v1");
    gpt.reasoning = true;
    assert_eq!(effort(&gpt, ThinkingLevel::Max), "xhigh");
    assert_eq!(effort(&model(), ThinkingLevel::Max), "high");
    assert_eq!(effort(&model(), ThinkingLevel::High), "high");
}
