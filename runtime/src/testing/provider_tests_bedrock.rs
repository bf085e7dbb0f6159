//! End-to-end tests: the bedrock-converse-stream provider against the mock server over real HTTP, each
//! request's SigV4 signature checked by the server with the mock key pair.

use std::time::Duration;

use serde_json::{Value, json};

use super::{
    MOCK_AWS_ACCESS_KEY_ID, MOCK_AWS_BEARER_TOKEN, MOCK_AWS_SECRET_ACCESS_KEY, MockLlmServer, MockScript,
    RecordedRequest,
};
use crate::ai::bedrock_converse::AwsEnvironment;
use crate::ai::{
    ApiProvider, BedrockConverseProvider, LlmContext, Model, ProviderErrorKind, StreamOptions, ThinkingLevel, ToolSpec,
};
use crate::protocol::{
    AssistantContent, AssistantMessage, AssistantMessageEvent, ErrorReason, Message, StopReason, ToolResultMessage,
    UserContent, UserMessage,
};

const SONNET: &str = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";

async fn server(script: Value) -> MockLlmServer {
    let script = MockScript::from_json_str(&script.to_string()).map_err(|e| e.to_string());
    let Ok(script) = script else { panic!("bad script: {script:?}") };
    let server = MockLlmServer::start(script).await;
    let Ok(server) = server else { panic!("cannot start the mock server: {server:?}") };
    server
}

fn model(server: &MockLlmServer) -> Model {
    let mut model =
        Model::new("amazon-bedrock", SONNET, "bedrock-converse-stream", format!("http://{}", server.addr()));
    model.reasoning = true;
    model.max_tokens = 64_000;
    model
}

/// The mock key pair in `us-west-2`, plus `extra`.
fn keys(extra: &[(&str, &str)]) -> AwsEnvironment {
    let mut vars = vec![
        ("AWS_ACCESS_KEY_ID", MOCK_AWS_ACCESS_KEY_ID),
        ("AWS_SECRET_ACCESS_KEY", MOCK_AWS_SECRET_ACCESS_KEY),
        ("AWS_REGION", "us-west-2"),
        ("HOME", "/nonexistent"),
    ];
    vars.extend_from_slice(extra);
    AwsEnvironment::fixed(vars)
}

fn context(prompt: &str) -> LlmContext {
    LlmContext {
        system_prompt: "You are a test.".into(),
        messages: vec![Message::User(UserMessage::text(prompt))],
        tools: vec![ToolSpec {
            name: "read".into(),
            description: "Read a file.".into(),
            parameters: json!({"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}}),
        }],
    }
}

async fn collect(
    env: AwsEnvironment,
    model: &Model,
    context: &LlmContext,
    options: StreamOptions,
) -> Vec<AssistantMessageEvent> {
    let mut stream = BedrockConverseProvider::with_env(env).stream(model, context, options);
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        events.push(event);
    }
    events
}

fn types(events: &[AssistantMessageEvent]) -> Vec<String> {
    let kind =
        |e: &AssistantMessageEvent| serde_json::to_value(e).ok().and_then(|v| v["type"].as_str().map(str::to_owned));
    events.iter().map(|e| kind(e).unwrap_or_default()).collect()
}

fn final_message(events: &[AssistantMessageEvent]) -> &AssistantMessage {
    match events.last() {
        Some(AssistantMessageEvent::Done { message, .. } | AssistantMessageEvent::Error { error: message, .. }) => {
            message
        }
        other => panic!("no final event: {other:?}"),
    }
}

fn signed_headers(request: &RecordedRequest) -> Vec<String> {
    let authorization = request.header("authorization").unwrap_or_default();
    let list = authorization.split("SignedHeaders=").nth(1).and_then(|rest| rest.split(',').next()).unwrap_or_default();
    list.split(';').map(str::to_owned).collect()
}

#[tokio::test]
async fn a_text_answer_is_signed_streamed_and_costed() {
    let server = server(json!([{"text": "Hello there", "usage": {"input": 20, "output": 4, "cacheRead": 6}}])).await;
    let mut model = model(&server);
    model.cost = crate::ai::ModelCost { input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 3.75 };
    let events = collect(keys(&[]), &model, &context("hi"), StreamOptions::default()).await;
    assert_eq!(types(&events), ["start", "text_start", "text_delta", "text_delta", "text_delta", "text_end", "done"]);
    let message = final_message(&events);
    assert_eq!((message.text(), message.stop_reason), ("Hello there".to_owned(), StopReason::Stop));
    assert_eq!(
        (message.usage.input, message.usage.output, message.usage.cache_read, message.usage.total_tokens),
        (20, 4, 6, 30)
    );
    assert!((message.usage.cost.total - (20.0 * 3.0 + 4.0 * 15.0 + 6.0 * 0.3) / 1e6).abs() < 1e-12);
    assert_eq!(message.api.as_str(), "bedrock-converse-stream");

    let requests = server.requests();
    let request = &requests[0];
    assert_eq!(request.path, "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream");
    let authorization = request.header("authorization").unwrap_or_default();
    assert!(
        authorization.starts_with(&format!("AWS4-HMAC-SHA256 Credential={MOCK_AWS_ACCESS_KEY_ID}/")),
        "{authorization}"
    );
    assert!(authorization.contains("/us-west-2/bedrock/aws4_request"), "{authorization}");
    assert_eq!(
        signed_headers(request),
        [
            "amz-sdk-invocation-id",
            "amz-sdk-request",
            "content-length",
            "content-type",
            "host",
            "x-amz-content-sha256",
            "x-amz-date",
            "x-amz-user-agent"
        ]
    );
    assert_eq!(request.header("amz-sdk-request"), Some("attempt=1; max=3"));
    assert_eq!(request.header("x-amz-security-token"), None);
    let keys: Vec<&str> = request.body.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
    assert_eq!(keys, ["messages", "system", "inferenceConfig", "toolConfig"]);
    assert_eq!(request.body["messages"][0]["content"][1], json!({"cachePoint": {"type": "default"}}));
}

#[tokio::test]
async fn a_tool_round_trip_with_thinking() {
    let server = server(json!([
        {"thinking": "Let me read it.", "thinkingSignature": "sig-7", "text": "Reading.",
         "toolCalls": [{"id": "tooluse_1", "name": "read", "arguments": {"path": "hello.txt"}}]},
        {"text": "It says hello."}
    ]))
    .await;
    let model = model(&server);
    let mut context = context("read hello.txt");
    let options = || StreamOptions { reasoning: Some(ThinkingLevel::Low), ..StreamOptions::default() };
    let events = collect(keys(&[]), &model, &context, options()).await;
    assert_eq!(
        types(&events),
        [
            "start",
            "thinking_start",
            "thinking_delta",
            "thinking_delta",
            "thinking_delta",
            "thinking_end",
            "text_start",
            "text_delta",
            "text_delta",
            "text_delta",
            "text_end",
            "toolcall_start",
            "toolcall_delta",
            "toolcall_delta",
            "toolcall_end",
            "done"
        ]
    );
    let first = final_message(&events).clone();
    assert_eq!(first.stop_reason, StopReason::ToolUse);
    let Some(AssistantContent::ToolCall(call)) = first.content.get(2) else { panic!("{:?}", first.content) };
    assert_eq!((call.id.as_str(), &call.arguments), ("tooluse_1", &json!({"path": "hello.txt"})));
    let Some(AssistantContent::Thinking(thinking)) = first.content.first() else { panic!("{:?}", first.content) };
    assert_eq!(thinking.thinking_signature.as_deref(), Some("sig-7"));

    context.messages.push(Message::Assistant(first));
    context.messages.push(Message::ToolResult(ToolResultMessage {
        tool_call_id: "tooluse_1".into(),
        tool_name: "read".into(),
        content: vec![UserContent::text("hello\n")],
        details: None,
        is_error: false,
        duration_ms: None,
        timestamp: 0,
    }));
    let events = collect(keys(&[]), &model, &context, options()).await;
    assert_eq!(final_message(&events).text(), "It says hello.");
    let requests = server.requests();
    let body = &requests[1].body;
    assert_eq!(
        body["additionalModelRequestFields"]["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048, "display": "summarized"})
    );
    assert_eq!(body["inferenceConfig"]["maxTokens"], 34048);
    assert_eq!(
        body["messages"][1]["content"],
        json!([
            {"reasoningContent": {"reasoningText": {"text": "Let me read it.", "signature": "sig-7"}}},
            {"text": "Reading."},
            {"toolUse": {"toolUseId": "tooluse_1", "name": "read", "input": {"path": "hello.txt"}}}
        ])
    );
    assert_eq!(
        body["messages"][2]["content"],
        json!([{"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "hello\n"}], "status": "success"}},
               {"cachePoint": {"type": "default"}}])
    );
}

#[tokio::test]
async fn errors_carry_pi_wording_and_only_retryable_ones_are_retried() {
    let server = server(json!([
        {"error": {"status": 400, "body": {"message": "The provided model identifier is invalid."}}},
        {"error": {"status": 503, "body": {"message": "Service is down"}}},
        {"error": {"status": 500, "body": {"message": "boom"}, "headers": {"x-amzn-errortype": "InternalServerException"}}},
        {"text": "recovered"},
        {"text": "partial", "streamError": "throttlingException: Too many tokens, slow down."}
    ]))
    .await;
    let model = model(&server);
    let events = collect(keys(&[]), &model, &context("hi"), StreamOptions::default()).await;
    let message = final_message(&events);
    assert_eq!(message.error_message.as_deref(), Some("Validation error: The provided model identifier is invalid."));
    assert_eq!(message.error_kind, Some(ProviderErrorKind::InvalidRequest));
    assert_eq!(server.requests().len(), 1, "a validation error is not retried");

    let events = collect(keys(&[]), &model, &context("hi"), StreamOptions::default()).await;
    assert_eq!(final_message(&events).text(), "recovered");
    let requests = server.requests();
    let attempts: Vec<Option<&str>> = requests[1..4].iter().map(|r| r.header("amz-sdk-request")).collect();
    assert_eq!(attempts, [Some("attempt=1; max=3"), Some("attempt=2; max=3"), Some("attempt=3; max=3")]);
    let invocation = requests[1].header("amz-sdk-invocation-id");
    assert!(invocation.is_some() && requests[1..4].iter().all(|r| r.header("amz-sdk-invocation-id") == invocation));
    assert_ne!(requests[0].header("amz-sdk-invocation-id"), invocation);

    let events = collect(keys(&[]), &model, &context("hi"), StreamOptions::default()).await;
    assert_eq!(types(&events), ["start", "text_start", "text_delta", "text_delta", "text_delta", "text_end", "error"]);
    let message = final_message(&events);
    assert_eq!(message.error_message.as_deref(), Some("Throttling error: Too many tokens, slow down."));
    assert_eq!(message.error_kind, Some(ProviderErrorKind::RateLimit { retry_after: None }));
    assert_eq!(message.text(), "partial", "the partial text is kept");
}

#[tokio::test]
async fn three_failures_in_a_row_end_the_call() {
    let unavailable = json!({"error": {"status": 503, "body": {"message": "Service is down"}}});
    let server = server(json!([unavailable, unavailable, unavailable, {"text": "late"}])).await;
    let events = collect(keys(&[]), &model(&server), &context("hi"), StreamOptions::default()).await;
    let message = final_message(&events);
    assert_eq!(message.error_message.as_deref(), Some("Service unavailable: Service is down"));
    assert_eq!(message.error_kind, Some(ProviderErrorKind::Server));
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn a_wrong_secret_is_refused_with_403_and_not_retried() {
    let server = server(json!([{"text": "never"}])).await;
    let wrong = AwsEnvironment::fixed([
        ("AWS_ACCESS_KEY_ID", MOCK_AWS_ACCESS_KEY_ID),
        ("AWS_SECRET_ACCESS_KEY", "not-the-secret"),
        ("HOME", "/nonexistent"),
    ]);
    let events = collect(wrong, &model(&server), &context("hi"), StreamOptions::default()).await;
    assert_eq!(types(&events), ["error"]);
    let message = final_message(&events);
    let text = message.error_message.as_deref().unwrap_or_default();
    assert!(text.starts_with("InvalidSignatureException: The signature the server computed"), "{text}");
    assert!(!text.contains("not-the-secret"), "{text}");
    assert_eq!(message.error_kind, Some(ProviderErrorKind::Authentication));
    assert!(!crate::ai::is_retryable_error(message, None));
    assert_eq!((server.requests().len(), server.remaining_responses()), (1, 1));
    let authorization = server.requests()[0].header("authorization").unwrap_or_default().to_owned();
    assert!(authorization.contains("/us-east-1/bedrock/"), "pi's default region: {authorization}");
}

#[tokio::test]
async fn session_tokens_are_sent_and_signed() {
    let server = server(json!([{"text": "ok"}])).await;
    let env = keys(&[("AWS_SESSION_TOKEN", "mock-session-token")]);
    let events = collect(env, &model(&server), &context("hi"), StreamOptions::default()).await;
    assert_eq!(final_message(&events).text(), "ok");
    let request = &server.requests()[0];
    assert_eq!(request.header("x-amz-security-token"), Some("mock-session-token"));
    assert!(signed_headers(request).contains(&"x-amz-security-token".to_owned()));
}

#[tokio::test]
async fn profiles_give_keys_and_region() {
    let server = server(json!([{"text": "from the profile"}])).await;
    let home = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(home.path().join(".aws")).expect("mkdir");
    let credentials = format!(
        "[mock]\naws_access_key_id = {MOCK_AWS_ACCESS_KEY_ID}\naws_secret_access_key = {MOCK_AWS_SECRET_ACCESS_KEY}\n"
    );
    std::fs::write(home.path().join(".aws/credentials"), credentials).expect("credentials");
    std::fs::write(home.path().join(".aws/config"), "[profile mock]\nregion = eu-north-1\n").expect("config");
    let home = home.path().to_string_lossy().into_owned();
    let env = AwsEnvironment::fixed([("HOME", home.as_str()), ("AWS_PROFILE", "mock")]);
    let events = collect(env, &model(&server), &context("hi"), StreamOptions::default()).await;
    assert_eq!(final_message(&events).text(), "from the profile");
    let authorization = server.requests()[0].header("authorization").unwrap_or_default().to_owned();
    assert!(authorization.contains("/eu-north-1/bedrock/aws4_request"), "{authorization}");
}

#[tokio::test]
async fn bearer_tokens_replace_signatures() {
    let server = server(json!([{"text": "bearer ok"}, {"text": "never"}])).await;
    let env = AwsEnvironment::fixed([("AWS_BEARER_TOKEN_BEDROCK", MOCK_AWS_BEARER_TOKEN), ("HOME", "/nonexistent")]);
    let events = collect(env, &model(&server), &context("hi"), StreamOptions::default()).await;
    assert_eq!(final_message(&events).text(), "bearer ok");
    let request = &server.requests()[0];
    assert_eq!(request.header("authorization"), Some(format!("Bearer {MOCK_AWS_BEARER_TOKEN}").as_str()));
    assert_eq!((request.header("x-amz-date"), request.header("x-amz-content-sha256")), (None, None));
    let wrong = AwsEnvironment::fixed([("AWS_BEARER_TOKEN_BEDROCK", "wrong"), ("HOME", "/nonexistent")]);
    let events = collect(wrong, &model(&server), &context("hi"), StreamOptions::default()).await;
    let message = final_message(&events);
    assert!(message.error_message.as_deref().is_some_and(|m| m.starts_with("UnrecognizedClientException: ")));
    assert!(!message.error_message.as_deref().unwrap_or_default().contains("wrong"));
}

#[tokio::test]
async fn abort_and_idle_timeout() {
    let server =
        server(json!([{"text": "one two three four five six", "delayMs": 300}, {"text": "slow", "stallAfter": 2}]))
            .await;
    let model = model(&server);
    let options = StreamOptions::default();
    let cancel = options.cancel.clone();
    let mut stream = BedrockConverseProvider::with_env(keys(&[])).stream(&model, &context("hi"), options);
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        if matches!(event, AssistantMessageEvent::TextDelta { .. }) {
            cancel.cancel();
        }
        events.push(event);
    }
    let Some(AssistantMessageEvent::Error { reason: ErrorReason::Aborted, error }) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!((error.stop_reason, error.error_message.as_deref()), (StopReason::Aborted, Some("Request was aborted")));
    assert!(error.text().starts_with("one"));

    let options = StreamOptions { idle_timeout: Some(Duration::from_millis(300)), ..StreamOptions::default() };
    let events = collect(keys(&[]), &model, &context("hi"), options).await;
    let message = final_message(&events);
    assert_eq!(
        (message.stop_reason, message.error_message.as_deref()),
        (StopReason::Error, Some("Request timed out."))
    );
}

#[tokio::test]
async fn missing_credentials_fail_before_any_request() {
    let server = server(json!([{"text": "never"}])).await;
    let events = collect(
        AwsEnvironment::fixed([("HOME", "/nonexistent")]),
        &model(&server),
        &context("hi"),
        StreamOptions::default(),
    )
    .await;
    let text = final_message(&events).error_message.clone().unwrap_or_default();
    assert!(text.starts_with("Could not load credentials from any providers"), "{text}");
    assert!(server.requests().is_empty());
}
