//! Request-body tests: pi's key order, cache markers in the first and later requests, merged tool
//! results, thinking budgets and efforts, tool-id normalisation, images, and OAuth differences.

use serde_json::{Value, json};

use super::*;
use crate::protocol::{PiCompat, StopReason, TextContent, ThinkingContent, ToolCall, UserMessage};

const API: &str = "anthropic-messages";

fn model() -> Model {
    Model::new("mock", "mock-claude", API, "http://127.0.0.1:9")
}

fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}}),
        },
        ToolSpec {
            name: "edit".into(),
            description: "Edit a file".into(),
            parameters: json!({
                "type": "object",
                "required": ["edits"],
                "properties": {"edits": {"type": "array", "items": {"type": "object", "additionalProperties": false}}},
                "additionalProperties": false,
            }),
        },
        ToolSpec {
            name: "ls".into(),
            description: "List".into(),
            parameters: json!({"type": "object", "properties": {}}),
        },
    ]
}

fn user(text: &str) -> Message {
    Message::User(UserMessage::text(text))
}

fn assistant(model_id: &str, content: Vec<AssistantContent>) -> Message {
    Message::Assistant(AssistantMessage {
        content,
        api: API.into(),
        provider: "mock".into(),
        model: model_id.into(),
        stop_reason: StopReason::ToolUse,
        ..AssistantMessage::default()
    })
}

fn call(id: &str, name: &str, arguments: Value) -> AssistantContent {
    AssistantContent::ToolCall(ToolCall { id: id.into(), name: name.into(), arguments, thought_signature: None })
}

fn thinking(text: &str, signature: Option<&str>) -> AssistantContent {
    AssistantContent::Thinking(ThinkingContent {
        thinking: text.into(),
        thinking_signature: signature.map(Into::into),
        redacted: None,
    })
}

fn result(id: &str, content: Vec<UserContent>) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: "read".into(),
        content,
        details: None,
        is_error: false,
        timestamp: 0,
        duration_ms: None,
    })
}

fn image() -> UserContent {
    UserContent::Image(ImageContent { data: "aGk=".into(), mime_type: "image/png".into() })
}

fn body(model: &Model, messages: Vec<Message>, options: &StreamOptions) -> Value {
    let context = LlmContext { system_prompt: "You are a test.".into(), messages, tools: tools() };
    build_body(model, &context, options, CacheRetention::Short)
}

fn keys(value: &Value) -> Vec<&str> {
    value.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default()
}

fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

#[test]
fn first_request_matches_pi() {
    let body = body(&model(), vec![user("Say hello")], &StreamOptions::default());
    assert_eq!(keys(&body), ["model", "messages", "max_tokens", "stream", "system", "tools"]);
    assert_eq!(body["max_tokens"], 16384, "the model's maxTokens, capped at 32000");
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "Say hello", "cache_control": ephemeral()}]}])
    );
    assert_eq!(body["system"], json!([{"type": "text", "text": "You are a test.", "cache_control": ephemeral()}]));
    let tools = body["tools"].as_array().cloned().unwrap_or_default();
    assert_eq!(keys(&tools[0]), ["name", "description", "eager_input_streaming", "input_schema"]);
    assert_eq!(keys(&tools[2]), ["name", "description", "eager_input_streaming", "input_schema", "cache_control"]);
    assert_eq!(
        tools[0]["input_schema"],
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})
    );
    // The top-level additionalProperties goes, nested ones stay; a missing `required` becomes [].
    assert_eq!(keys(&tools[1]["input_schema"]), ["type", "properties", "required"]);
    assert_eq!(tools[1]["input_schema"]["properties"]["edits"]["items"]["additionalProperties"], false);
    assert_eq!(tools[2]["input_schema"]["required"], json!([]));
    assert_eq!(tools[2]["cache_control"], ephemeral());
}

#[test]
fn later_requests_merge_tool_results_and_move_the_cache_marker() {
    let messages = vec![
        user("Read two files"),
        assistant(
            "mock-claude",
            vec![
                thinking("Both files.", Some("sig-1")),
                AssistantContent::text("Reading."),
                call("toolu_1", "read", json!({"path": "a"})),
                call("toolu_2", "read", json!({"path": "b"})),
            ],
        ),
        result("toolu_1", vec![UserContent::text("A1"), UserContent::text("A2")]),
        result("toolu_2", vec![UserContent::text("B")]),
    ];
    let body = body(&model(), messages, &StreamOptions::default());
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    assert_eq!(messages.len(), 3);
    assert_eq!(messages[0], json!({"role": "user", "content": [{"type": "text", "text": "Read two files"}]}));
    assert_eq!(
        messages[1],
        json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "Both files.", "signature": "sig-1"},
            {"type": "text", "text": "Reading."},
            {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a"}},
            {"type": "tool_use", "id": "toolu_2", "name": "read", "input": {"path": "b"}},
        ]})
    );
    assert_eq!(
        messages[2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "A1\nA2", "is_error": false},
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": "B", "is_error": false, "cache_control": ephemeral()},
        ]})
    );
    assert_eq!(keys(&messages[2]["content"][1]), ["type", "tool_use_id", "content", "is_error", "cache_control"]);
}

#[test]
fn thinking_levels_set_budgets_and_output_limits() {
    let mut reasoning = model();
    reasoning.reasoning = true;
    reasoning.max_tokens = 32_000;
    let plan_for = |model: &Model, level: Option<ThinkingLevel>, max_tokens: Option<u64>| {
        let options =
            StreamOptions { reasoning: level, max_tokens, temperature: Some(0.5), ..StreamOptions::default() };
        let body = body(model, vec![user("hi")], &options);
        (body["max_tokens"].clone(), body["thinking"].clone(), body.get("temperature").cloned())
    };
    let plan = |level, max_tokens| plan_for(&reasoning, level, max_tokens);
    let enabled = |budget: u64| json!({"type": "enabled", "budget_tokens": budget, "display": "summarized"});
    assert_eq!(plan(None, None), (json!(32000), json!({"type": "disabled"}), Some(json!(0.5))));
    assert_eq!(plan(Some(ThinkingLevel::Off), None).1, json!({"type": "disabled"}));
    assert_eq!(plan(Some(ThinkingLevel::Minimal), None), (json!(32000), enabled(1024), None));
    assert_eq!(plan(Some(ThinkingLevel::Low), None).1, enabled(2048));
    assert_eq!(plan(Some(ThinkingLevel::Medium), None).1, enabled(8192));
    assert_eq!(plan(Some(ThinkingLevel::High), None).1, enabled(16384));
    assert_eq!(plan(Some(ThinkingLevel::Xhigh), None).1, enabled(16384), "xhigh is high for budget models");
    // A small caller limit grows by the budget; a model limit below the budget shrinks the budget.
    assert_eq!(plan(Some(ThinkingLevel::Medium), Some(1000)), (json!(9192), enabled(8192), None));
    let mut small = reasoning.clone();
    small.max_tokens = 4000;
    assert_eq!(plan_for(&small, Some(ThinkingLevel::High), None), (json!(4000), enabled(2976), None));
    // Budgets from settings (`thinkingBudgets`) replace the built-in ones for the levels they name.
    let budgets = crate::ai::ThinkingBudgets { low: Some(3000), ..Default::default() };
    let with_budgets = |level| {
        let options = StreamOptions { reasoning: Some(level), thinking_budgets: budgets, ..StreamOptions::default() };
        body(&reasoning, vec![user("hi")], &options)["thinking"].clone()
    };
    assert_eq!(with_budgets(ThinkingLevel::Low), enabled(3000));
    assert_eq!(with_budgets(ThinkingLevel::Medium), enabled(8192));

    let keys_of = |model: &Model, level| {
        let body = body(model, vec![user("hi")], &StreamOptions { reasoning: Some(level), ..StreamOptions::default() });
        keys(&body).into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    assert_eq!(
        keys_of(&reasoning, ThinkingLevel::Low),
        ["model", "messages", "max_tokens", "stream", "system", "tools", "thinking"]
    );
    let plain = model();
    assert!(!keys_of(&plain, ThinkingLevel::Low).contains(&"thinking".to_owned()), "no thinking for plain models");
}

#[test]
fn adaptive_models_send_an_effort() {
    let mut opus = Model::new("anthropic", "claude-opus-4-6", API, "https://api.anthropic.com");
    opus.reasoning = true;
    opus.max_tokens = 128_000;
    let send = |model: &Model, level| {
        let body = body(model, vec![user("hi")], &StreamOptions { reasoning: Some(level), ..StreamOptions::default() });
        (body["max_tokens"].clone(), body["thinking"].clone(), body["output_config"].clone())
    };
    let adaptive = json!({"type": "adaptive", "display": "summarized"});
    assert_eq!(send(&opus, ThinkingLevel::Minimal), (json!(32000), adaptive.clone(), json!({"effort": "low"})));
    assert_eq!(send(&opus, ThinkingLevel::Medium).2, json!({"effort": "medium"}));
    assert_eq!(send(&opus, ThinkingLevel::Xhigh).2, json!({"effort": "max"}), "the catalog maps xhigh to max");
    let mut custom = opus.clone();
    custom.provider = "proxy".into();
    assert_eq!(send(&custom, ThinkingLevel::Xhigh).2, json!({"effort": "high"}));
    let body = body(&opus, vec![user("hi")], &StreamOptions::default());
    assert_eq!((body["thinking"].clone(), body.get("output_config")), (json!({"type": "disabled"}), None));
}

#[test]
fn foreign_tool_ids_are_normalised() {
    let long = format!("call|{}", "x".repeat(80));
    let messages = vec![
        user("go"),
        assistant(
            "other-model",
            vec![
                thinking("foreign plan", Some("sig")),
                call("call_1|fc.abc", "read", json!({})),
                call("id😀", "read", Value::Null),
                call(&long, "read", json!({})),
            ],
        ),
        result("call_1|fc.abc", vec![UserContent::text("ok")]),
        result("id😀", vec![UserContent::text("ok")]),
        result(&long, vec![UserContent::text("ok")]),
    ];
    let body = body(&model(), messages, &StreamOptions::default());
    let turn = &body["messages"][1]["content"];
    assert_eq!(turn[0], json!({"type": "text", "text": "foreign plan"}), "another model's thinking is text");
    assert_eq!(turn[1]["id"], "call_1_fc_abc");
    assert_eq!(turn[2]["id"], "id__", "a non-BMP character counts as two UTF-16 units");
    assert_eq!(turn[2]["input"], json!({}));
    let capped = turn[3]["id"].as_str().unwrap_or_default();
    assert_eq!((capped.len(), capped.starts_with("call_xx")), (64, true));
    let results = &body["messages"][2]["content"];
    assert_eq!(results[0]["tool_use_id"], "call_1_fc_abc");
    assert_eq!(results[1]["tool_use_id"], "id__");
    assert_eq!(results[2]["tool_use_id"], capped);
    assert_eq!(normalize_tool_call_id("toolu_01-AZ"), "toolu_01-AZ");
}

#[test]
fn images_are_sent_or_replaced_by_model_input() {
    let messages = || {
        vec![
            Message::User(UserMessage {
                content: MessageContent::Blocks(vec![
                    UserContent::text("look"),
                    image(),
                    image(),
                    UserContent::text("  "),
                ]),
                timestamp: 0,
            }),
            assistant("mock-claude", vec![call("toolu_1", "read", json!({}))]),
            result("toolu_1", vec![image()]),
        ]
    };
    let mut vision = model();
    vision.input = vec!["text".into(), "image".into()];
    let body_with = body(&vision, messages(), &StreamOptions::default());
    let source = json!({"type": "base64", "media_type": "image/png", "data": "aGk="});
    assert_eq!(
        body_with["messages"][0]["content"],
        json!([{"type": "text", "text": "look"}, {"type": "image", "source": source}, {"type": "image", "source": source}])
    );
    assert_eq!(
        body_with["messages"][2]["content"][0]["content"],
        json!([{"type": "text", "text": "(see attached image)"}, {"type": "image", "source": source}])
    );

    let body_without = body(&model(), messages(), &StreamOptions::default());
    assert_eq!(
        body_without["messages"][0]["content"],
        json!([{"type": "text", "text": "look"}, {"type": "text", "text": crate::ai::replay::USER_IMAGE_PLACEHOLDER}])
    );
    assert_eq!(body_without["messages"][2]["content"][0]["content"], crate::ai::replay::TOOL_IMAGE_PLACEHOLDER);
}

#[test]
fn blank_content_is_dropped_and_replay_blocks_keep_their_kinds() {
    let messages = vec![
        Message::User(UserMessage { content: MessageContent::Text("   ".into()), timestamp: 0 }),
        Message::User(UserMessage { content: MessageContent::Blocks(vec![UserContent::text("")]), timestamp: 0 }),
        user("real"),
        assistant(
            "mock-claude",
            vec![
                thinking("unsigned", None),
                thinking("   ", Some("sig")),
                AssistantContent::Thinking(ThinkingContent {
                    thinking: "[Reasoning redacted]".into(),
                    thinking_signature: Some("opaque".into()),
                    redacted: Some(true),
                }),
                AssistantContent::Text(TextContent::new(" ")),
                AssistantContent::text("answer"),
            ],
        ),
        assistant("mock-claude", vec![AssistantContent::text("  ")]),
        Message::User(UserMessage { content: MessageContent::Text("plain string".into()), timestamp: 0 }),
    ];
    let body = body(&model(), messages, &StreamOptions::default());
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "real"}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "unsigned"},
                {"type": "redacted_thinking", "data": "opaque"},
                {"type": "text", "text": "answer"},
            ]},
            {"role": "user", "content": [{"type": "text", "text": "plain string", "cache_control": ephemeral()}]},
        ])
    );
}

#[test]
fn cache_retention_controls_the_markers() {
    let context = LlmContext { system_prompt: "sys".into(), messages: vec![user("hi")], tools: tools() };
    let options = StreamOptions::default();
    let none = build_body(&model(), &context, &options, CacheRetention::None);
    assert!(!none.to_string().contains("cache_control"), "{none}");
    let long = build_body(&model(), &context, &options, CacheRetention::Long);
    let hour = json!({"type": "ephemeral", "ttl": "1h"});
    assert_eq!((&long["system"][0]["cache_control"], &long["tools"][2]["cache_control"]), (&hour, &hour));
    let mut no_long = model();
    no_long.compat = Some(json!({"supportsLongCacheRetention": false, "supportsEagerToolInputStreaming": false}));
    let short = build_body(&no_long, &context, &options, CacheRetention::Long);
    assert_eq!(short["messages"][0]["content"][0]["cache_control"], ephemeral());
    assert_eq!(short["tools"][0].get("eager_input_streaming"), None);
    // A last turn from the assistant carries no marker.
    let ending = LlmContext {
        messages: vec![user("hi"), assistant("mock-claude", vec![AssistantContent::text("yo")])],
        ..context
    };
    let body = build_body(&model(), &ending, &options, CacheRetention::Short);
    assert_eq!(body["messages"][0]["content"][0].get("cache_control"), None);
    assert_eq!(body["messages"][1]["content"][0].get("cache_control"), None);
}

#[test]
fn oauth_tokens_add_the_identity_and_claude_code_tool_names() {
    let options = StreamOptions { api_key: Some("sk-ant-oat01-abc".into()), ..StreamOptions::default() };
    let messages = vec![user("go"), assistant("mock-claude", vec![call("toolu_1", "read", json!({}))])];
    let body = body(&model(), messages, &options);
    let system: Vec<&str> =
        body["system"].as_array().into_iter().flatten().filter_map(|b| b["text"].as_str()).collect();
    assert_eq!(system, [CLAUDE_CODE_IDENTITY, "You are a test."]);
    let names: Vec<&str> = body["tools"].as_array().into_iter().flatten().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["Read", "Edit", "ls"]);
    assert_eq!(body["messages"][1]["content"][0]["name"], "Read");
}

#[test]
fn level_1_5_plans_the_whole_limit_and_keeps_the_budget_below_it() {
    let v1_5 = |reasoning, max_tokens| StreamOptions {
        reasoning,
        max_tokens,
        pi_compat: PiCompat::V1_5,
        ..StreamOptions::default()
    };
    let mut model = Model::new("mock", "claude-sonnet-4-5", API, "http://127.0.0.1:9");
    (model.reasoning, model.max_tokens) = (true, 65_536);
    let context = LlmContext { system_prompt: "sys".into(), messages: vec![user("hi")], tools: Vec::new() };
    let plan = |options: &StreamOptions, model: &Model| plan_call(model, &context, options);
    let budget = |tokens| ThinkingPlan::Budget { budget_tokens: tokens };
    // Observed from pi 1.5.2 (0.73.1 sent 32000, and 48384 with a 16384 budget).
    assert_eq!(plan(&v1_5(None, None), &model), (65_536, ThinkingPlan::Off));
    assert_eq!(plan(&v1_5(Some(ThinkingLevel::High), None), &model), (65_536, budget(16_384)));
    assert_eq!(plan(&v1_5(Some(ThinkingLevel::High), Some(1000)), &model), (17_384, budget(16_360)));
    assert_eq!(plan_tokens(&model, &v1_5(Some(ThinkingLevel::High), None)), (48_384, budget(16_384)), "0.73's plan");
    // A 20000-token window: the limit fits next to the input (2 tokens) and the 4096-token margin.
    model.context_window = 20_000;
    assert_eq!(plan(&v1_5(Some(ThinkingLevel::High), None), &model), (15_902, budget(14_878)));
    // A custom model with an adaptive id thinks on a budget at 1.5 unless its compat says otherwise.
    let mut opus = Model::new("mock", "claude-opus-4-6", API, "http://127.0.0.1:9");
    opus.reasoning = true;
    assert!(!thinks_adaptively(&opus, PiCompat::V1_5) && thinks_adaptively(&opus, PiCompat::V0_73));
    opus.compat = Some(json!({"forceAdaptiveThinking": true}));
    assert!(thinks_adaptively(&opus, PiCompat::V1_5));
    let effort = ThinkingPlan::Adaptive { effort: "high".into() };
    assert_eq!(plan(&v1_5(Some(ThinkingLevel::High), None), &opus), (16_384, effort));
    assert!(thinks_adaptively(&Model::new("anthropic", "claude-opus-4-6", API, "x"), PiCompat::V1_5), "built in");
}

#[test]
fn level_1_5_sends_the_max_effort_where_the_catalog_names_it() {
    let effort = |id: &str, level, pi_compat| {
        let mut model = Model::new("anthropic", id, API, "https://api.anthropic.com");
        (model.reasoning, model.max_tokens) = (true, 128_000);
        let options = StreamOptions { reasoning: Some(level), pi_compat, ..StreamOptions::default() };
        body(&model, vec![user("hi")], &options)["output_config"]["effort"].clone()
    };
    let (old, new) = (PiCompat::V0_73, PiCompat::V1_5);
    assert_eq!(effort("claude-opus-4-7", ThinkingLevel::Max, new), "max");
    assert_eq!(effort("claude-opus-4-7", ThinkingLevel::Xhigh, new), "xhigh");
    assert_eq!(effort("claude-sonnet-4-6", ThinkingLevel::Max, new), "max");
    assert_eq!(effort("claude-opus-4-6", ThinkingLevel::Max, new), "max");
    // pi 1.5's opus 4.6 names no xhigh (a session clamps it up to max); 0.73's sent xhigh as max.
    assert_eq!(effort("claude-opus-4-6", ThinkingLevel::Xhigh, new), "high");
    assert_eq!(effort("claude-opus-4-6", ThinkingLevel::Xhigh, old), "max");
    // A model whose map does not name max: the default effort, high.
    let mut proxy = Model::new("proxy", "claude-opus-4-7", API, "http://127.0.0.1:9");
    (proxy.reasoning, proxy.compat) = (true, Some(json!({"forceAdaptiveThinking": true})));
    let options = StreamOptions { reasoning: Some(ThinkingLevel::Max), pi_compat: new, ..StreamOptions::default() };
    assert_eq!(body(&proxy, vec![user("hi")], &options)["output_config"]["effort"], "high");

    // On a token budget, max thinks as much as high.
    let mut sonnet = Model::new("anthropic", "claude-sonnet-4-5", API, "https://api.anthropic.com");
    (sonnet.reasoning, sonnet.max_tokens) = (true, 64_000);
    let context = LlmContext { system_prompt: "sys".into(), messages: vec![user("hi")], tools: Vec::new() };
    let at = |level| StreamOptions { reasoning: Some(level), pi_compat: new, ..StreamOptions::default() };
    assert_eq!(
        plan_call(&sonnet, &context, &at(ThinkingLevel::Max)),
        plan_call(&sonnet, &context, &at(ThinkingLevel::High))
    );
}
