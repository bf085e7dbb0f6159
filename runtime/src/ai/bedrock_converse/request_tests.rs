//! Tests of the ConverseStream request body and path.

use serde_json::json;

use super::*;
use crate::ai::ThinkingBudgets;
use crate::protocol::{
    AssistantMessage, StopReason, TextContent, ThinkingContent, ToolCall, ToolResultMessage, UserMessage,
};

const SONNET: &str = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";

fn model(id: &str, reasoning: bool) -> Model {
    let mut model = Model::new("amazon-bedrock", id, "bedrock-converse-stream", "https://x");
    model.reasoning = reasoning;
    model.max_tokens = 64_000;
    model
}

fn no_env() -> AwsEnvironment {
    AwsEnvironment::fixed(Vec::<(String, String)>::new())
}

fn user(text: &str) -> Message {
    Message::User(UserMessage { content: MessageContent::Text(text.into()), timestamp: 0 })
}

fn body(model: &Model, context: &LlmContext, options: &StreamOptions) -> Value {
    build_body(model, context, options, CacheRetention::Short, &no_env()).expect("body")
}

#[test]
fn paths_encode_the_model_id_like_the_sdk() {
    assert_eq!(
        converse_stream_url("http://127.0.0.1:9/", SONNET),
        "http://127.0.0.1:9/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
    );
    let arn = "arn:aws:bedrock:us-east-1:123:application-inference-profile/ab c";
    assert_eq!(
        converse_stream_url("https://h", arn),
        "https://h/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123%3Aapplication-inference-profile%2Fab%20c/converse-stream"
    );
}

#[test]
fn claude_bodies_follow_pi_with_cache_points_and_a_thinking_budget() {
    let context = LlmContext {
        system_prompt: "You are helpful.".into(),
        messages: vec![user("hi")],
        tools: vec![ToolSpec {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}}),
        }],
    };
    let options = StreamOptions { reasoning: Some(ThinkingLevel::Medium), ..StreamOptions::default() };
    let body = body(&model(SONNET, true), &context, &options);
    let keys: Vec<&str> = body.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
    assert_eq!(keys, ["messages", "system", "inferenceConfig", "toolConfig", "additionalModelRequestFields"]);
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [{"text": "hi"}, {"cachePoint": {"type": "default"}}]}])
    );
    assert_eq!(body["system"], json!([{"text": "You are helpful."}, {"cachePoint": {"type": "default"}}]));
    assert_eq!(body["inferenceConfig"], json!({"maxTokens": 40192}));
    let spec = &body["toolConfig"]["tools"][0]["toolSpec"];
    let spec_keys: Vec<&str> = spec.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
    assert_eq!(spec_keys, ["name", "inputSchema", "description"]);
    assert_eq!(spec["inputSchema"]["json"]["required"], json!(["path"]));
    assert_eq!(
        body["additionalModelRequestFields"],
        json!({"thinking": {"type": "enabled", "budget_tokens": 8192, "display": "summarized"},
               "anthropic_beta": ["interleaved-thinking-2025-05-14"]})
    );
}

#[test]
fn thinking_off_sends_no_thinking_and_the_capped_limit() {
    let context = LlmContext { messages: vec![user("hi")], ..LlmContext::default() };
    let body = body(&model(SONNET, true), &context, &StreamOptions { temperature: Some(0.5), ..Default::default() });
    assert_eq!(body["inferenceConfig"], json!({"maxTokens": 32000, "temperature": 0.5}));
    assert!(body.get("additionalModelRequestFields").is_none() && body.get("system").is_none());
    assert!(body.get("toolConfig").is_none());
}

#[test]
fn budgets_shrink_to_fit_and_follow_settings() {
    let mut small = model(SONNET, true);
    small.max_tokens = 4096;
    let context = LlmContext { messages: vec![user("hi")], ..LlmContext::default() };
    let high = StreamOptions { reasoning: Some(ThinkingLevel::High), ..StreamOptions::default() };
    let body = body(&small, &context, &high);
    assert_eq!(body["inferenceConfig"]["maxTokens"], 4096);
    assert_eq!(body["additionalModelRequestFields"]["thinking"]["budget_tokens"], 3072);
    let custom = StreamOptions {
        reasoning: Some(ThinkingLevel::Low),
        thinking_budgets: ThinkingBudgets { low: Some(500), ..ThinkingBudgets::default() },
        max_tokens: Some(1000),
        ..StreamOptions::default()
    };
    let body =
        super::build_body(&model(SONNET, true), &context, &custom, CacheRetention::Long, &no_env()).expect("body");
    assert_eq!(body["inferenceConfig"]["maxTokens"], 1500);
    assert_eq!(body["additionalModelRequestFields"]["thinking"]["budget_tokens"], 500);
    assert_eq!(body["messages"][0]["content"][1], json!({"cachePoint": {"type": "default", "ttl": "1h"}}));
}

#[test]
fn adaptive_claude_models_get_an_effort_and_gov_cloud_no_display() {
    let context = LlmContext { messages: vec![user("hi")], ..LlmContext::default() };
    let opus = model("us.anthropic.claude-opus-4-6-v1", true);
    let options = StreamOptions { reasoning: Some(ThinkingLevel::Minimal), ..StreamOptions::default() };
    let body = body(&opus, &context, &options);
    assert_eq!(
        body["additionalModelRequestFields"],
        json!({"thinking": {"type": "adaptive", "display": "summarized"}, "output_config": {"effort": "low"}})
    );
    assert_eq!(body["inferenceConfig"]["maxTokens"], 32000);
    let xhigh = StreamOptions { reasoning: Some(ThinkingLevel::Xhigh), ..StreamOptions::default() };
    let opus47 = model("global.anthropic.claude-opus-4-7", true);
    assert_eq!(body_of(&opus47, &context, &xhigh)["additionalModelRequestFields"]["output_config"]["effort"], "xhigh");
    let gov = AwsEnvironment::fixed([("AWS_REGION", "us-gov-west-1")]);
    let body = build_body(&opus, &context, &options, CacheRetention::Short, &gov).expect("body");
    assert_eq!(body["additionalModelRequestFields"]["thinking"], json!({"type": "adaptive"}));
}

fn body_of(model: &Model, context: &LlmContext, options: &StreamOptions) -> Value {
    body(model, context, options)
}

#[test]
fn other_models_get_no_thinking_fields_and_no_cache_points_unless_forced() {
    let context = LlmContext { system_prompt: "s".into(), messages: vec![user("hi")], ..LlmContext::default() };
    let nova = model("amazon.nova-premier-v1:0", true);
    let options = StreamOptions { reasoning: Some(ThinkingLevel::High), ..StreamOptions::default() };
    let body = body(&nova, &context, &options);
    assert_eq!(body["system"], json!([{"text": "s"}]));
    assert!(body.get("additionalModelRequestFields").is_none());
    assert_eq!(body["inferenceConfig"]["maxTokens"], 32000);
    let forced = AwsEnvironment::fixed([("AWS_BEDROCK_FORCE_CACHE", "1")]);
    let body = build_body(&nova, &context, &options, CacheRetention::Short, &forced).expect("body");
    assert_eq!(body["system"][1], json!({"cachePoint": {"type": "default"}}));
    let none = build_body(&model(SONNET, true), &context, &options, CacheRetention::None, &no_env()).expect("body");
    assert_eq!(none["system"], json!([{"text": "s"}]));
    // An old Claude takes no cache points.
    let old = build_body(
        &model("anthropic.claude-3-haiku-20240307-v1:0", false),
        &context,
        &options,
        CacheRetention::Short,
        &no_env(),
    );
    assert_eq!(old.map(|b| b["system"].clone()), Ok(json!([{"text": "s"}])));
}

fn assistant(content: Vec<AssistantContent>, model_id: &str) -> Message {
    Message::Assistant(AssistantMessage {
        content,
        api: "bedrock-converse-stream".into(),
        provider: "amazon-bedrock".into(),
        model: model_id.into(),
        stop_reason: StopReason::ToolUse,
        ..AssistantMessage::default()
    })
}

fn tool_result(id: &str, text: &str, is_error: bool) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: "read".into(),
        content: vec![UserContent::Text(TextContent::new(text))],
        details: None,
        is_error,
        duration_ms: None,
        timestamp: 0,
    })
}

#[test]
fn replay_merges_tool_results_and_signs_claude_reasoning() {
    let thinking = |text: &str, signature: Option<&str>| {
        AssistantContent::Thinking(ThinkingContent {
            thinking: text.into(),
            thinking_signature: signature.map(Into::into),
            redacted: None,
        })
    };
    let call = |id: &str| {
        AssistantContent::ToolCall(ToolCall {
            id: id.into(),
            name: "read".into(),
            arguments: json!({"path": "a"}),
            thought_signature: None,
        })
    };
    let messages = vec![
        user("go"),
        assistant(
            vec![
                thinking("plan", Some("sig")),
                thinking("  ", Some("x")),
                AssistantContent::Text(TextContent::new(" ")),
                call("t1"),
                call("t2"),
            ],
            SONNET,
        ),
        tool_result("t1", "one", false),
        tool_result("t2", "two", true),
    ];
    let context = LlmContext { messages, ..LlmContext::default() };
    let body = body(&model(SONNET, true), &context, &StreamOptions::default());
    assert_eq!(
        body["messages"][1],
        json!({"role": "assistant", "content": [
            {"reasoningContent": {"reasoningText": {"text": "plan", "signature": "sig"}}},
            {"toolUse": {"toolUseId": "t1", "name": "read", "input": {"path": "a"}}},
            {"toolUse": {"toolUseId": "t2", "name": "read", "input": {"path": "a"}}}
        ]})
    );
    assert_eq!(
        body["messages"][2],
        json!({"role": "user", "content": [
            {"toolResult": {"toolUseId": "t1", "content": [{"text": "one"}], "status": "success"}},
            {"toolResult": {"toolUseId": "t2", "content": [{"text": "two"}], "status": "error"}},
            {"cachePoint": {"type": "default"}}
        ]})
    );
    assert_eq!(body["messages"].as_array().map(Vec::len), Some(3));

    // Unsigned thinking goes back as text to Claude, and without a signature to other models.
    let unsigned = LlmContext {
        messages: vec![user("go"), assistant(vec![thinking("hmm", None)], SONNET), user("again")],
        ..LlmContext::default()
    };
    assert_eq!(
        body_of(&model(SONNET, true), &unsigned, &StreamOptions::default())["messages"][1]["content"],
        json!([{"text": "hmm"}])
    );
    let qwen = "qwen.qwen3-32b-v1:0";
    let other = LlmContext {
        messages: vec![user("go"), assistant(vec![thinking("hmm", Some("s"))], qwen), user("again")],
        ..LlmContext::default()
    };
    assert_eq!(
        body_of(&model(qwen, true), &other, &StreamOptions::default())["messages"][1]["content"],
        json!([{"reasoningContent": {"reasoningText": {"text": "hmm"}}}])
    );
}

#[test]
fn images_carry_their_format_and_unknown_types_fail() {
    let image = |mime: &str| UserContent::Image(ImageContent { data: "aGk=".into(), mime_type: mime.into() });
    let message = |mime: &str| {
        Message::User(UserMessage {
            content: MessageContent::Blocks(vec![UserContent::Text(TextContent::new("see")), image(mime)]),
            timestamp: 0,
        })
    };
    let mut vision = model(SONNET, false);
    vision.input = vec!["text".into(), "image".into()];
    let context = LlmContext { messages: vec![message("image/jpg")], ..LlmContext::default() };
    let body = body(&vision, &context, &StreamOptions::default());
    assert_eq!(body["messages"][0]["content"][1], json!({"image": {"format": "jpeg", "source": {"bytes": "aGk="}}}));
    let bad = LlmContext { messages: vec![message("image/bmp")], ..LlmContext::default() };
    let error = build_body(&vision, &bad, &StreamOptions::default(), CacheRetention::Short, &no_env());
    assert_eq!(error.err().as_deref(), Some("Bedrock takes no images of type image/bmp"));
}

#[test]
fn model_families_match_by_id_or_name() {
    let mut profile = model("arn:aws:bedrock:us-east-1:1:application-inference-profile/xyz", true);
    assert!(!is_claude(&profile));
    profile.name = "Claude Sonnet 4.6 (prod)".into();
    assert!(is_claude(&profile) && thinks_adaptively(&profile));
    assert!(supports_prompt_caching(&profile, &no_env()));
    assert_eq!(normalize_tool_call_id("call:1|x"), "call_1_x");
}
