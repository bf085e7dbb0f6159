//! Unit tests of the google-generative-ai request body: pi 0.73.1's shapes and key order, thinking
//! settings per model family, signatures, tool ids, merged tool results and images.

use serde_json::{Value, json};

use super::*;
use crate::protocol::{
    ImageContent, StopReason, TextContent, ThinkingContent, ToolCall, ToolResultMessage, UserMessage,
};

/// pi 0.73.1 (`gemini-2.5-flash`, thinking medium) after a read of two files, recorded from the
/// mock server; only the system text and the tool list were shortened.
const PI_READ_ROUND_TRIP: &str = r#"{"contents":[{"parts":[{"text":"hi"}],"role":"user"},{"parts":[{"text":"Need the file.","thought":true,"thoughtSignature":"bW9ja3NpZy0x"},{"text":"I will read it."},{"functionCall":{"args":{"path":"notes.txt"},"name":"read"}},{"functionCall":{"args":{"path":"missing.txt"},"name":"read"}}],"role":"model"},{"parts":[{"functionResponse":{"name":"read","response":{"output":"hello file content\n"}}},{"functionResponse":{"name":"read","response":{"error":"ENOENT: no such file"}}}],"role":"user"}],"systemInstruction":{"parts":[{"text":"SYS"}],"role":"user"},"tools":[{"functionDeclarations":[{"name":"read","description":"D","parametersJsonSchema":{"type":"object","required":["path"],"properties":{"path":{"type":"string"}}}}]}],"generationConfig":{"maxOutputTokens":16384,"thinkingConfig":{"includeThoughts":true,"thinkingBudget":8192}}}"#;

fn model(id: &str) -> Model {
    let mut model = Model::new("google", id, API_NAME, "http://127.0.0.1:1/v1beta");
    model.reasoning = true;
    model.input = vec!["text".into(), "image".into()];
    model
}

const API_NAME: &str = "google-generative-ai";

fn assistant(model: &Model, content: Vec<AssistantContent>) -> Message {
    Message::Assistant(AssistantMessage {
        content,
        api: model.api.as_str().into(),
        provider: model.provider.as_str().into(),
        model: model.id.as_str().into(),
        stop_reason: StopReason::ToolUse,
        ..AssistantMessage::default()
    })
}

fn call(id: &str, path: &str, signature: Option<&str>) -> AssistantContent {
    AssistantContent::ToolCall(ToolCall {
        id: id.into(),
        name: "read".into(),
        arguments: json!({"path": path}),
        thought_signature: signature.map(str::to_owned),
    })
}

fn thinking(text: &str, signature: Option<&str>) -> AssistantContent {
    AssistantContent::Thinking(ThinkingContent {
        thinking: text.into(),
        thinking_signature: signature.map(Into::into),
        redacted: None,
    })
}

fn result(id: &str, content: Vec<UserContent>, is_error: bool) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: "read".into(),
        content,
        details: None,
        is_error,
        timestamp: 0,
        duration_ms: None,
    })
}

fn image() -> UserContent {
    UserContent::Image(ImageContent { data: "aW1n".into(), mime_type: "image/png".into() })
}

fn body(model: &Model, messages: Vec<Message>, options: &StreamOptions) -> Value {
    let context = LlmContext { system_prompt: String::new(), messages, tools: Vec::new() };
    build_body(model, &context, options).unwrap_or_else(|e| panic!("no body: {e}"))
}

fn medium() -> StreamOptions {
    StreamOptions { reasoning: Some(ThinkingLevel::Medium), ..StreamOptions::default() }
}

#[test]
fn a_read_round_trip_matches_pi_byte_for_byte() {
    let m = model("gemini-2.5-flash");
    let messages = vec![
        Message::User(UserMessage::text("hi")),
        assistant(
            &m,
            vec![
                thinking("Need the file.", Some("bW9ja3NpZy0x")),
                AssistantContent::text("I will read it."),
                call("call_1", "notes.txt", None),
                call("call_2", "missing.txt", None),
            ],
        ),
        result("call_1", vec![UserContent::text("hello file content\n")], false),
        result("call_2", vec![UserContent::text("ENOENT: no such file")], true),
    ];
    let context = LlmContext {
        system_prompt: "SYS".into(),
        messages,
        tools: vec![ToolSpec {
            name: "read".into(),
            description: "D".into(),
            parameters: json!({"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}}),
        }],
    };
    let built = build_body(&m, &context, &medium()).map(|b| b.to_string());
    assert_eq!(built.as_deref(), Ok(PI_READ_ROUND_TRIP));
}

#[test]
fn thinking_settings_follow_the_model_family() {
    let builtin = crate::ai::ThinkingBudgets::default();
    let config =
        |id: &str, level: Option<ThinkingLevel>| thinking_config(&model(id), level, &builtin, Dialect::GeminiApi);
    let on = |budget: i64| Some(json!({"includeThoughts": true, "thinkingBudget": budget}));
    let level = |name: &str| Some(json!({"includeThoughts": true, "thinkingLevel": name}));
    use ThinkingLevel::{High, Low, Medium, Minimal, Off, Xhigh};
    assert_eq!(config("gemini-2.5-pro", Some(Minimal)), on(128));
    assert_eq!(config("gemini-2.5-pro", Some(Xhigh)), on(32768), "xhigh falls back to high");
    assert_eq!(config("gemini-2.5-flash", Some(High)), on(24576));
    assert_eq!(config("gemini-2.5-flash-lite", Some(Minimal)), on(512));
    assert_eq!(config("gemini-2.5-flash", Some(Low)), on(2048));
    assert_eq!(config("gemini-2.0-flash-thinking", Some(Medium)), on(-1));
    assert_eq!(config("gemini-3-pro-preview", Some(Minimal)), level("LOW"));
    assert_eq!(config("gemini-3.1-pro-preview", Some(Medium)), level("HIGH"));
    assert_eq!(config("gemini-3-flash-preview", Some(Minimal)), level("MINIMAL"));
    assert_eq!(config("gemini-3-flash-preview", Some(Medium)), level("MEDIUM"));
    assert_eq!(config("Gemini-3-Flash", Some(Low)), level("LOW"), "ids are matched case-insensitively");
    assert_eq!(config("gemma-4-27b-it", Some(Low)), level("MINIMAL"));
    assert_eq!(config("gemma4", Some(High)), level("HIGH"));
    // Thinking off: the lowest setting each family allows, without thoughts.
    assert_eq!(config("gemini-2.5-flash", None), Some(json!({"thinkingBudget": 0})));
    assert_eq!(config("gemini-2.5-flash", Some(Off)), Some(json!({"thinkingBudget": 0})));
    assert_eq!(config("gemini-3-pro-preview", None), Some(json!({"thinkingLevel": "LOW"})));
    assert_eq!(config("gemini-3-flash-preview", None), Some(json!({"thinkingLevel": "MINIMAL"})));
    let mut plain = model("gemini-2.0-flash");
    plain.reasoning = false;
    assert_eq!(
        thinking_config(&plain, Some(High), &builtin, Dialect::GeminiApi),
        None,
        "models without reasoning get no thinking config"
    );
    // Budgets from settings (`thinkingBudgets`) come first, for budget models only.
    let budgets = crate::ai::ThinkingBudgets { high: Some(4096), ..Default::default() };
    assert_eq!(thinking_config(&model("gemini-2.5-pro"), Some(Xhigh), &budgets, Dialect::GeminiApi), on(4096));
    assert_eq!(thinking_config(&model("gemini-2.5-pro"), Some(Low), &budgets, Dialect::GeminiApi), on(2048));
    assert_eq!(
        thinking_config(&model("gemini-3-flash-preview"), Some(High), &budgets, Dialect::GeminiApi),
        level("HIGH")
    );
}

#[test]
fn generation_config_holds_temperature_max_tokens_and_thinking_in_order() {
    let mut m = model("gemini-2.5-pro");
    m.max_tokens = 65_536;
    let options = StreamOptions { temperature: Some(0.5), ..medium() };
    let config = &body(&m, vec![Message::User(UserMessage::text("x"))], &options)["generationConfig"];
    assert_eq!(
        config.to_string(),
        r#"{"temperature":0.5,"maxOutputTokens":32000,"thinkingConfig":{"includeThoughts":true,"thinkingBudget":8192}}"#
    );
    let options = StreamOptions { max_tokens: Some(100), ..StreamOptions::default() };
    let config = &body(&m, vec![Message::User(UserMessage::text("x"))], &options)["generationConfig"];
    assert_eq!(config, &json!({"maxOutputTokens": 100, "thinkingConfig": {"thinkingBudget": 0}}));
    m.max_tokens = 0;
    m.reasoning = false;
    let full = body(&m, vec![Message::User(UserMessage::text("x"))], &StreamOptions::default());
    assert_eq!(full, json!({"contents": [{"parts": [{"text": "x"}], "role": "user"}], "generationConfig": {}}));
}

#[test]
fn signatures_are_replayed_only_to_the_same_model_and_only_as_base64() {
    let m = model("gemini-2.5-flash");
    let own = assistant(
        &m,
        vec![
            thinking("plan", Some("c2ln")),
            AssistantContent::Text(TextContent { text: "answer".into(), text_signature: Some("dGV4dA==".into()) }),
            call("a", "x", Some("not base64!")),
            call("b", "y", Some("Y2FsbA==")),
        ],
    );
    let contents = body(&m, vec![own, result("a", vec![], false), result("b", vec![], false)], &medium());
    assert_eq!(
        contents["contents"][0]["parts"],
        json!([
            {"text": "plan", "thought": true, "thoughtSignature": "c2ln"},
            {"text": "answer", "thoughtSignature": "dGV4dA=="},
            {"functionCall": {"args": {"path": "x"}, "name": "read"}},
            {"functionCall": {"args": {"path": "y"}, "name": "read"}, "thoughtSignature": "Y2FsbA=="},
        ])
    );
    let mut other = model("gemini-2.5-pro");
    other.provider = "google".into();
    let foreign = assistant(&other, vec![thinking("plan", Some("c2ln")), call("a", "x", Some("Y2FsbA=="))]);
    let contents = body(&m, vec![foreign, result("a", vec![], false)], &medium());
    assert_eq!(
        contents["contents"][0]["parts"],
        json!([{"text": "plan"}, {"functionCall": {"args": {"path": "x"}, "name": "read"}}]),
        "another model's thinking is plain text and its signatures are dropped"
    );
    for (signature, valid) in
        [("c2ln", true), ("YQ==", true), ("Yw=", false), ("a-b_", false), ("", false), ("====", false)]
    {
        assert_eq!(is_valid_thought_signature(signature), valid, "{signature:?}");
    }
}

#[test]
fn empty_blocks_and_failed_turns_are_left_out() {
    let m = model("gemini-2.5-flash");
    let empty = assistant(&m, vec![AssistantContent::text("  "), thinking("", Some("c2ln"))]);
    let mut failed = assistant(&m, vec![AssistantContent::text("half")]);
    if let Message::Assistant(a) = &mut failed {
        a.stop_reason = StopReason::Error;
    }
    let messages = vec![Message::User(UserMessage::text("a")), empty, failed, Message::User(UserMessage::text("b"))];
    let contents = body(&m, messages, &medium())["contents"].clone();
    assert_eq!(
        contents,
        json!([{"parts": [{"text": "a"}], "role": "user"}, {"parts": [{"text": "b"}], "role": "user"}])
    );
}

#[test]
fn tool_results_merge_into_one_user_turn_with_output_or_error() {
    let m = model("gemini-2.5-flash");
    let messages = vec![
        assistant(&m, vec![call("a", "x", None), call("b", "y", None), call("c", "z", None)]),
        result("a", vec![UserContent::text("one"), UserContent::text("two")], false),
        result("b", vec![UserContent::text("bad")], true),
        // "c" never got a result: replay answers it with a synthetic error.
        Message::User(UserMessage::text("next")),
    ];
    let contents = body(&m, messages, &medium())["contents"].clone();
    assert_eq!(contents.as_array().map(Vec::len), Some(3));
    assert_eq!(
        contents[1],
        json!({"parts": [
            {"functionResponse": {"name": "read", "response": {"output": "one\ntwo"}}},
            {"functionResponse": {"name": "read", "response": {"error": "bad"}}},
            {"functionResponse": {"name": "read", "response": {"error": "No result provided"}}},
        ], "role": "user"})
    );
    assert_eq!(contents[2], json!({"parts": [{"text": "next"}], "role": "user"}));
}

#[test]
fn claude_and_gpt_oss_models_get_call_ids_normalised() {
    let m = model("claude-sonnet-4");
    let mut foreign = model("gpt-5");
    foreign.provider = "openai".into();
    let messages = vec![
        assistant(&foreign, vec![call("call|with.odd*chars", "x", None)]),
        result("call|with.odd*chars", vec![UserContent::text("ok")], false),
    ];
    let contents = body(&m, messages, &StreamOptions::default())["contents"].clone();
    assert_eq!(
        contents[0]["parts"][0],
        json!({"functionCall": {"id": "call_with_odd_chars", "args": {"path": "x"}, "name": "read"}})
    );
    assert_eq!(
        contents[1]["parts"][0],
        json!({"functionResponse": {"name": "read", "response": {"output": "ok"}, "id": "call_with_odd_chars"}})
    );
    let long = "x".repeat(80);
    let messages = vec![assistant(&foreign, vec![call(&long, "x", None)]), result(&long, vec![], false)];
    let contents = body(&model("gpt-oss-120b"), messages, &StreamOptions::default())["contents"].clone();
    assert_eq!(contents[0]["parts"][0]["functionCall"]["id"].as_str().map(str::len), Some(64));
    let gemini = body(&model("gemini-2.5-flash"), vec![assistant(&foreign, vec![call("a|b", "x", None)])], &medium());
    assert_eq!(gemini["contents"][0]["parts"][0], json!({"functionCall": {"args": {"path": "x"}, "name": "read"}}));
}

#[test]
fn images_go_where_each_model_takes_them() {
    let user = Message::User(UserMessage {
        content: MessageContent::Blocks(vec![UserContent::text("look"), image(), image()]),
        timestamp: 0,
    });
    let g3 = model("gemini-3-pro-preview");
    let messages =
        vec![user.clone(), assistant(&g3, vec![call("a", "p.png", None)]), result("a", vec![image()], false)];
    let contents = body(&g3, messages.clone(), &medium())["contents"].clone();
    assert_eq!(
        contents[0]["parts"][1].to_string(),
        r#"{"inlineData":{"data":"aW1n","mimeType":"image/png"}}"#,
        "the SDK writes data before mimeType"
    );
    assert_eq!(
        contents[2]["parts"][0].to_string(),
        r#"{"functionResponse":{"name":"read","response":{"output":"(see attached image)"},"parts":[{"inlineData":{"mimeType":"image/png","data":"aW1n"}}]}}"#,
        "Gemini 3 nests images in the function response, in pi's key order"
    );

    let g25 = model("gemini-2.5-flash");
    let messages = vec![
        assistant(&g25, vec![call("a", "p.png", None), call("b", "q.png", None)]),
        result("a", vec![UserContent::text("img"), image()], false),
        result("b", vec![image()], false),
    ];
    let contents = body(&g25, messages, &medium())["contents"].clone();
    let image_turn = json!({"parts": [{"text": "Tool result image:"}, {"inlineData": {"data": "aW1n", "mimeType": "image/png"}}], "role": "user"});
    assert_eq!(
        contents,
        json!([
            {"parts": [
                {"functionCall": {"args": {"path": "p.png"}, "name": "read"}},
                {"functionCall": {"args": {"path": "q.png"}, "name": "read"}},
            ], "role": "model"},
            {"parts": [{"functionResponse": {"name": "read", "response": {"output": "img"}}}], "role": "user"},
            image_turn,
            {"parts": [{"functionResponse": {"name": "read", "response": {"output": "(see attached image)"}}}], "role": "user"},
            image_turn,
        ]),
        "before Gemini 3 images follow in their own turn, which also ends the merging"
    );

    let mut blind = model("gemini-2.5-flash");
    blind.input = vec!["text".into()];
    let messages = vec![user, assistant(&blind, vec![call("a", "p.png", None)]), result("a", vec![image()], false)];
    let contents = body(&blind, messages, &medium())["contents"].clone();
    assert_eq!(contents[0]["parts"], json!([{"text": "look"}, {"text": crate::ai::replay::USER_IMAGE_PLACEHOLDER}]));
    assert_eq!(
        contents[2]["parts"][0]["functionResponse"]["response"],
        json!({"output": crate::ai::replay::TOOL_IMAGE_PLACEHOLDER})
    );
    assert_eq!(contents.as_array().map(Vec::len), Some(3), "no image turn for a model without image input");
}

#[test]
fn plain_string_user_content_and_tools_are_sent_as_is() {
    let m = model("gemini-2.5-flash");
    let user = Message::User(UserMessage { content: MessageContent::Text(String::new()), timestamp: 0 });
    let context = LlmContext {
        system_prompt: String::new(),
        messages: vec![user],
        tools: vec![ToolSpec { name: "ls".into(), description: "List".into(), parameters: json!({"type": "object"}) }],
    };
    let built = build_body(&m, &context, &medium()).unwrap_or_default();
    assert_eq!(built["contents"], json!([{"parts": [{"text": ""}], "role": "user"}]));
    assert!(built.get("systemInstruction").is_none(), "no system instruction without a system prompt");
    assert_eq!(
        built["tools"],
        json!([{"functionDeclarations": [{"name": "ls", "description": "List", "parametersJsonSchema": {"type": "object"}}]}])
    );
    let keys: Vec<&str> = built.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
    assert_eq!(keys, ["contents", "tools", "generationConfig"]);
}

#[test]
fn level_1_5_asks_for_the_models_whole_limit_fitted_to_the_window() {
    let mut model = model("gemini-2.5-flash");
    model.max_tokens = 65_536;
    let messages = vec![Message::User(UserMessage::text("hi"))];
    let at = |pi_compat, max_tokens| StreamOptions { pi_compat, max_tokens, ..StreamOptions::default() };
    let limit = |model: &Model, options: &StreamOptions| {
        body(model, messages.clone(), options)["generationConfig"]["maxOutputTokens"].clone()
    };
    // Observed: pi 1.5.2 sent 65536 where 0.73.1 sent 32000; a caller's 1000 stayed 1000 in both.
    assert_eq!(limit(&model, &at(crate::protocol::PiCompat::V1_5, None)), 65_536);
    assert_eq!(limit(&model, &at(crate::protocol::PiCompat::V0_73, None)), 32_000);
    assert_eq!(limit(&model, &at(crate::protocol::PiCompat::V1_5, Some(1000))), 1000);
    model.context_window = 20_000;
    assert_eq!(limit(&model, &at(crate::protocol::PiCompat::V1_5, None)), 20_000 - 1 - 4096);
}

#[test]
fn level_1_5_thinks_at_max_as_at_high() {
    let at = |level| StreamOptions {
        reasoning: Some(level),
        pi_compat: crate::protocol::PiCompat::V1_5,
        ..StreamOptions::default()
    };
    let thinking = |id: &str, level| {
        let messages = vec![Message::User(UserMessage::text("hi"))];
        body(&model(id), messages, &at(level))["generationConfig"]["thinkingConfig"].clone()
    };
    // No Gemini model of pi 1.5 names max: it is clamped to high, a budget model's high budget.
    assert_eq!(
        thinking("gemini-2.5-pro", ThinkingLevel::Max),
        json!({"includeThoughts": true, "thinkingBudget": 32768})
    );
    assert_eq!(thinking("gemini-2.5-pro", ThinkingLevel::Max), thinking("gemini-2.5-pro", ThinkingLevel::High));
    assert_eq!(
        thinking("gemini-3.1-pro-preview", ThinkingLevel::Max),
        json!({"includeThoughts": true, "thinkingLevel": "HIGH"})
    );
}
