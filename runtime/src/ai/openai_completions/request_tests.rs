//! Request-body tests, checked against the bodies pi was observed to send (pi-wire.md section 4).

use serde_json::{Value, json};

use super::*;
use crate::protocol::{ImageContent, TextContent, ThinkingContent, ToolCall, UserMessage};

fn model() -> Model {
    Model::new("mock", "mock-model", "openai-completions", "http://127.0.0.1:9/v1")
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

fn assistant(content: Vec<AssistantContent>) -> Message {
    Message::Assistant(AssistantMessage {
        content,
        api: "openai-completions".into(),
        provider: "mock".into(),
        model: "mock-model".into(),
        ..AssistantMessage::default()
    })
}

fn tool_result(id: &str, content: Vec<UserContent>) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: "read".into(),
        content,
        details: None,
        is_error: false,
        timestamp: 3,
        duration_ms: None,
    })
}

fn keys(value: &Value) -> Vec<&str> {
    value.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default()
}

#[test]
fn first_request_matches_pi() {
    let context = LlmContext {
        system_prompt: "SYSTEM".into(),
        messages: vec![user("Say hello in one short sentence.")],
        tools: vec![read_tool()],
    };
    let body = build_body(&model(), &context, &StreamOptions::default());
    let expected = json!({
        "model": "mock-model",
        "messages": [
            {"role": "system", "content": "SYSTEM"},
            {"role": "user", "content": [{"type": "text", "text": "Say hello in one short sentence."}]}
        ],
        "stream": true,
        "stream_options": {"include_usage": true},
        "store": false,
        "max_completion_tokens": 16384,
        "tools": [{"type": "function", "function": {
            "name": "read",
            "description": "Read a file",
            "parameters": {"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}},
            "strict": false
        }}]
    });
    assert_eq!(body, expected);
    // Byte-for-byte, so the key order is pi's too.
    assert_eq!(serde_json::to_string(&body).ok(), serde_json::to_string(&expected).ok());
}

#[test]
fn reasoning_model_uses_developer_role_and_effort_last() {
    let mut model = model();
    model.reasoning = true;
    let context = LlmContext { system_prompt: "S".into(), messages: vec![user("hi")], tools: vec![read_tool()] };
    let options = StreamOptions { reasoning: Some(ThinkingLevel::Medium), ..StreamOptions::default() };
    let body = build_body(&model, &context, &options);
    assert_eq!(body["messages"][0]["role"], "developer");
    assert_eq!(
        keys(&body),
        [
            "model",
            "messages",
            "stream",
            "stream_options",
            "store",
            "max_completion_tokens",
            "tools",
            "reasoning_effort"
        ]
    );
    assert_eq!(body["reasoning_effort"], "medium");

    let off = StreamOptions { reasoning: Some(ThinkingLevel::Off), ..StreamOptions::default() };
    assert!(build_body(&model, &context, &off).get("reasoning_effort").is_none());
    let xhigh = StreamOptions { reasoning: Some(ThinkingLevel::Xhigh), ..StreamOptions::default() };
    assert_eq!(build_body(&model, &context, &xhigh)["reasoning_effort"], "high");
    // A model that does not reason never gets an effort, whatever the level.
    assert!(build_body(&self::model(), &context, &options).get("reasoning_effort").is_none());
}

#[test]
fn options_override_limits_and_add_temperature() {
    let mut big = model();
    big.max_tokens = 128_000;
    let context = LlmContext { messages: vec![user("hi")], ..LlmContext::default() };
    let body = build_body(&big, &context, &StreamOptions::default());
    assert_eq!(body["max_completion_tokens"], 32000);
    assert!(body.get("tools").is_none());
    assert!(body["messages"].as_array().is_some_and(|m| m.len() == 1), "no system message when the prompt is empty");

    let options = StreamOptions { max_tokens: Some(100), temperature: Some(0.5), ..StreamOptions::default() };
    let body = build_body(&big, &context, &options);
    assert_eq!(
        keys(&body),
        ["model", "messages", "stream", "stream_options", "store", "max_completion_tokens", "temperature"]
    );
    assert_eq!(body["max_completion_tokens"], 100);
    assert_eq!(body["temperature"], 0.5);
}

#[test]
fn tool_turn_replays_like_pi() {
    let call = ToolCall {
        id: "call_1".into(),
        name: "read".into(),
        arguments: json!({"path": "hello.txt"}),
        thought_signature: None,
    };
    let context = LlmContext {
        system_prompt: String::new(),
        messages: vec![
            user("read it"),
            assistant(vec![AssistantContent::ToolCall(call)]),
            tool_result("call_1", vec![UserContent::text("Hello from the fixture file.\n")]),
        ],
        tools: vec![],
    };
    let body = build_body(&model(), &context, &StreamOptions::default());
    let messages = &body["messages"];
    let replay = json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"hello.txt\"}"}}
    ]});
    assert_eq!(messages[1], replay);
    assert_eq!(serde_json::to_string(&messages[1]).ok(), serde_json::to_string(&replay).ok());
    let tool = json!({"role": "tool", "content": "Hello from the fixture file.\n", "tool_call_id": "call_1"});
    assert_eq!(serde_json::to_string(&messages[2]).ok(), serde_json::to_string(&tool).ok());
    // No tools configured, but the history has tool calls: pi sends an empty list.
    assert_eq!(body["tools"], json!([]));
}

#[test]
fn assistant_text_thinking_and_empty_turns() {
    let thinking = AssistantContent::Thinking(ThinkingContent {
        thinking: "let me think".into(),
        thinking_signature: Some("reasoning_content".into()),
        redacted: None,
    });
    let context = LlmContext {
        messages: vec![
            assistant(vec![thinking, AssistantContent::text("Hello "), AssistantContent::text("world")]),
            assistant(vec![AssistantContent::text("  ")]),
            assistant(vec![]),
        ],
        ..LlmContext::default()
    };
    let body = build_body(&model(), &context, &StreamOptions::default());
    let expected = json!([{"role": "assistant", "content": "Hello world", "reasoning_content": "let me think"}]);
    assert_eq!(body["messages"], expected);
    assert_eq!(keys(&body["messages"][0]), ["role", "content", "reasoning_content"]);
}

#[test]
fn failed_assistant_turns_are_skipped() {
    let mut failed = AssistantMessage { content: vec![AssistantContent::text("half")], ..AssistantMessage::default() };
    failed.stop_reason = crate::protocol::StopReason::Error;
    let context =
        LlmContext { messages: vec![user("a"), Message::Assistant(failed), user("b")], ..LlmContext::default() };
    let body = build_body(&model(), &context, &StreamOptions::default());
    assert_eq!(body["messages"].as_array().map(Vec::len), Some(2));
}

#[test]
fn images_follow_model_input() {
    let image = UserContent::Image(ImageContent { data: "AAAA".into(), mime_type: "image/png".into() });
    let context = LlmContext {
        messages: vec![
            Message::User(UserMessage {
                content: MessageContent::Blocks(vec![UserContent::Text(TextContent::new("look")), image.clone()]),
                timestamp: 1,
            }),
            assistant(vec![AssistantContent::ToolCall(ToolCall {
                id: "c1".into(),
                name: "read".into(),
                arguments: json!({}),
                thought_signature: None,
            })]),
            tool_result("c1", vec![image]),
            Message::User(UserMessage { content: MessageContent::Text("plain".into()), timestamp: 4 }),
        ],
        ..LlmContext::default()
    };
    let text_only = build_body(&model(), &context, &StreamOptions::default());
    // pi 0.73 replays images to a text-only model as a note, not silently dropped.
    let note = crate::ai::replay::USER_IMAGE_PLACEHOLDER;
    assert_eq!(
        text_only["messages"][0]["content"],
        json!([{"type": "text", "text": "look"}, {"type": "text", "text": note}])
    );
    assert_eq!(text_only["messages"][2]["content"], crate::ai::replay::TOOL_IMAGE_PLACEHOLDER);
    assert_eq!(text_only["messages"][3], json!({"role": "user", "content": "plain"}));

    let mut vision = model();
    vision.input.push("image".into());
    let body = build_body(&vision, &context, &StreamOptions::default());
    let url = json!({"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}});
    assert_eq!(body["messages"][0]["content"][1], url);
    let attached =
        json!({"role": "user", "content": [{"type": "text", "text": "Attached image(s) from tool result:"}, url]});
    assert_eq!(body["messages"][3], attached);
    assert_eq!(body["messages"][4]["content"], "plain");
}

#[test]
fn compat_detection_and_overrides() {
    let mut xai = Model::new("xai", "grok-4", "openai-completions", "https://api.x.ai/v1");
    xai.reasoning = true;
    let context = LlmContext { system_prompt: "S".into(), messages: vec![user("hi")], tools: vec![] };
    let options = StreamOptions { reasoning: Some(ThinkingLevel::High), ..StreamOptions::default() };
    let body = build_body(&xai, &context, &options);
    assert_eq!(body["messages"][0]["role"], "system");
    assert!(body.get("store").is_none());
    assert!(body.get("reasoning_effort").is_none());

    let mut zai = Model::new("zai", "glm-4.6", "openai-completions", "https://api.z.ai/api/coding/paas/v4");
    zai.reasoning = true;
    assert_eq!(build_body(&zai, &context, &options)["enable_thinking"], true);
    assert_eq!(build_body(&zai, &context, &StreamOptions::default())["enable_thinking"], false);

    let mut custom = model();
    custom.reasoning = true;
    custom.compat = Some(json!({
        "maxTokensField": "max_tokens",
        "supportsStrictMode": false,
        "reasoningEffortMap": {"high": "max"},
        "supportsUsageInStreaming": false
    }));
    let context = LlmContext { tools: vec![read_tool()], ..context };
    let body = build_body(&custom, &context, &options);
    assert_eq!(body["max_tokens"], 16384);
    assert!(body.get("stream_options").is_none());
    assert!(body["tools"][0]["function"].get("strict").is_none());
    assert_eq!(body["reasoning_effort"], "max");
}

#[test]
fn foreign_tool_call_ids_are_normalised() {
    assert_eq!(normalize_tool_call_id("call_abc|item/xyz"), "call_abc");
    assert_eq!(normalize_tool_call_id("ca ll.1|x"), "ca_ll_1");
    assert_eq!(normalize_tool_call_id(&format!("{}|i", "a".repeat(50))), "a".repeat(40));
    assert_eq!(normalize_tool_call_id("toolu_01"), "toolu_01");
}

#[test]
fn mistral_gets_nine_character_ids_that_keep_calls_and_results_paired() {
    assert_eq!(mistral_tool_call_id("aB3dE6gH9"), "aB3dE6gH9", "valid ids are kept");
    let made = mistral_tool_call_id("call_abc|fc_123");
    assert_eq!(made.len(), 9);
    assert!(made.bytes().all(|b| b.is_ascii_alphanumeric()), "{made}");
    assert_eq!(made, mistral_tool_call_id("call_abc|fc_123"), "deterministic");
    assert_ne!(made, mistral_tool_call_id("call_abd|fc_123"));

    let mut mistral = model();
    mistral.compat = Some(json!({"requiresMistralToolIds": true}));
    let mut foreign = AssistantMessage {
        content: vec![AssistantContent::ToolCall(ToolCall {
            id: "toolu_01ABC".into(),
            name: "read".into(),
            arguments: json!({}),
            thought_signature: None,
        })],
        api: "anthropic-messages".into(),
        provider: "anthropic".into(),
        model: "claude".into(),
        ..AssistantMessage::default()
    };
    foreign.stop_reason = crate::protocol::StopReason::ToolUse;
    let context = LlmContext {
        messages: vec![
            user("go"),
            Message::Assistant(foreign),
            tool_result("toolu_01ABC", vec![UserContent::text("ok")]),
        ],
        ..LlmContext::default()
    };
    let body = build_body(&mistral, &context, &StreamOptions::default());
    let call_id = body["messages"][1]["tool_calls"][0]["id"].as_str().unwrap_or_default().to_owned();
    assert_eq!(call_id.len(), 9, "{body}");
    assert_eq!(body["messages"][2]["tool_call_id"], call_id.as_str());
}

#[test]
fn level_1_5_sends_no_strict_and_the_models_whole_limit_fitted_to_the_window() {
    let mut model = model();
    model.max_tokens = 65_536;
    model.compat = Some(json!({"supportsStrictMode": true}));
    let context = LlmContext { system_prompt: "S".into(), messages: vec![user("hi")], tools: vec![read_tool()] };
    let at = |pi_compat, max_tokens| StreamOptions { pi_compat, max_tokens, ..StreamOptions::default() };
    let v1_5 = build_body(&model, &context, &at(crate::protocol::PiCompat::V1_5, None));
    assert_eq!(keys(&v1_5["tools"][0]["function"]), ["name", "description", "parameters"]);
    assert_eq!(v1_5["max_completion_tokens"], 65_536, "no 32000 cap");
    let v0_73 = build_body(&model, &context, &at(crate::protocol::PiCompat::V0_73, None));
    assert_eq!(
        (v0_73["max_completion_tokens"].clone(), v0_73["tools"][0]["function"]["strict"].clone()),
        (json!(32_000), json!(false))
    );
    // A small window leaves its room next to the estimated input and pi 1.5's 4096-token margin.
    model.context_window = 20_000;
    let input = crate::ai::output_limit::estimate_input_tokens(&context);
    let fitted = build_body(&model, &context, &at(crate::protocol::PiCompat::V1_5, None));
    assert_eq!(fitted["max_completion_tokens"], 20_000 - input - 4096);
    let asked = build_body(&model, &context, &at(crate::protocol::PiCompat::V1_5, Some(1000)));
    assert_eq!(asked["max_completion_tokens"], 1000);
}

#[test]
fn level_1_5_sends_max_as_the_models_map_names_it() {
    let context = LlmContext { messages: vec![user("hi")], ..LlmContext::default() };
    let at = |level, pi_compat| StreamOptions { reasoning: Some(level), pi_compat, ..StreamOptions::default() };
    let effort = |model: &Model, level, pi_compat| {
        build_body(model, &context, &at(level, pi_compat))["reasoning_effort"].clone()
    };
    let (old, new) = (crate::protocol::PiCompat::V0_73, crate::protocol::PiCompat::V1_5);
    let mut deepseek = Model::new("deepseek", "deepseek-v4-pro", "openai-completions", "http://127.0.0.1:9/v1");
    deepseek.reasoning = true;
    assert_eq!(effort(&deepseek, ThinkingLevel::Max, new), "max");
    assert_eq!(effort(&deepseek, ThinkingLevel::Xhigh, old), "high", "0.73's completions never named xhigh here");
    let mut opus = Model::new("openrouter", "anthropic/claude-opus-4.7", "openai-completions", "http://127.0.0.1:9/v1");
    opus.reasoning = true;
    assert_eq!(effort(&opus, ThinkingLevel::Max, new), "max");
    // A model the session let think at max (a models.json map naming it): pi 1.5 sends the level's own name.
    let mut custom = model();
    custom.reasoning = true;
    assert_eq!(effort(&custom, ThinkingLevel::Max, new), "max");
    // pi 0.73 has no max; should one arrive, it counts as xhigh.
    assert_eq!(effort(&custom, ThinkingLevel::Max, old), "high");
}
