//! The azure-openai-responses provider against the mock server over real HTTP: the URL with `api-version`,
//! the `api-key` header and the deployment as `model`, text, a tool round trip whose second request equals
//! the one pi 0.73.1 sent, thinking, errors, retries, abort and the idle timeout.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{Value, json};

use super::{MockLlmServer, MockScript};
use crate::ai::azure_openai_responses::{API, API_VERSION_ENV, BASE_URL_ENV, DEPLOYMENT_MAP_ENV};
use crate::ai::{
    ApiProvider, AzureOpenAiResponsesProvider, LlmContext, Model, ProviderErrorKind, StreamOptions, ThinkingLevel,
    ToolSpec,
};
use crate::protocol::{
    AssistantContent, AssistantMessage, AssistantMessageEvent, ErrorReason, Message, StopReason, ToolResultMessage,
    UserContent, UserMessage,
};

/// What pi 0.73.1 was served and sent (see the file's `about`).
const PI_FIXTURES: &str = include_str!("fixtures/pi073_azure_mistral.json");

fn fixtures() -> Value {
    serde_json::from_str(PI_FIXTURES).unwrap_or_default()
}

async fn server(script: &str) -> MockLlmServer {
    let script = MockScript::from_json_str(script).map_err(|e| e.to_string());
    let Ok(script) = script else { panic!("bad script: {script:?}") };
    let server = MockLlmServer::start(script).await;
    let Ok(server) = server else { panic!("cannot start the mock server: {server:?}") };
    server
}

/// A provider whose environment points at the mock (`/openai/v1`), maps `gpt-5.4` to `my-deploy`, and holds
/// `extra` variables.
fn provider(server: &MockLlmServer, extra: &[(&str, &str)]) -> AzureOpenAiResponsesProvider {
    let mut env: HashMap<String, String> = HashMap::new();
    env.insert(BASE_URL_ENV.into(), format!("http://127.0.0.1:{}/openai/v1", server.addr().port()));
    env.insert(DEPLOYMENT_MAP_ENV.into(), "gpt-5.4=my-deploy".into());
    env.extend(extra.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    AzureOpenAiResponsesProvider::new().with_env(move |name| env.get(name).cloned())
}

fn model() -> Model {
    let mut model = Model::new(API, "gpt-5.4", API, "");
    model.reasoning = true;
    model.max_tokens = 128_000;
    model
}

fn options() -> StreamOptions {
    StreamOptions {
        api_key: Some("az-key".into()),
        reasoning: Some(ThinkingLevel::Medium),
        session_id: Some("<session id>".into()),
        ..StreamOptions::default()
    }
}

fn read_tool(parameters: Value) -> ToolSpec {
    ToolSpec { name: "read".into(), description: "<description>".into(), parameters }
}

fn context(messages: Vec<Message>) -> LlmContext {
    LlmContext { system_prompt: "<system prompt>".into(), messages, tools: vec![read_tool(json!({"type": "object"}))] }
}

fn ask(text: &str) -> Vec<Message> {
    vec![Message::User(UserMessage::text(text))]
}

async fn collect(
    provider: &AzureOpenAiResponsesProvider,
    context: &LlmContext,
    options: StreamOptions,
) -> Vec<AssistantMessageEvent> {
    let mut stream = provider.stream(&model(), context, options);
    let run = async {
        let mut events = Vec::new();
        while let Some(event) = stream.next().await {
            events.push(event);
        }
        events
    };
    let events = tokio::time::timeout(Duration::from_secs(20), run).await;
    let Ok(events) = events else { panic!("the stream hung") };
    events
}

fn final_message(events: &[AssistantMessageEvent]) -> &AssistantMessage {
    match events.last() {
        Some(event) if event.is_terminal() => event.message(),
        other => panic!("no terminal event, last was {other:?}"),
    }
}

#[tokio::test]
async fn text_goes_to_the_deployment_with_the_api_key_header() {
    let server = server(r#"[{"text":"Hello from Azure."}]"#).await;
    let provider = provider(&server, &[(API_VERSION_ENV, "2025-04-01-preview")]);
    let events = collect(&provider, &context(ask("hi")), options()).await;
    let message = final_message(&events);
    assert_eq!((message.text(), message.stop_reason), ("Hello from Azure.".to_owned(), StopReason::Stop));
    assert_eq!((message.api.as_str(), message.model.as_str()), (API, "gpt-5.4"));
    let requests = server.requests();
    assert_eq!(requests[0].path, "/openai/v1/responses?api-version=2025-04-01-preview");
    assert_eq!((requests[0].header("api-key"), requests[0].header("authorization")), (Some("az-key"), None));
    assert_eq!((requests[0].header("session_id"), requests[0].header("x-client-request-id")), (None, None));
    let body = &requests[0].body;
    let keys: Vec<&str> = body.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
    assert_eq!(
        keys,
        ["model", "input", "stream", "prompt_cache_key", "max_output_tokens", "tools", "reasoning", "include"]
    );
    assert_eq!((body["model"].as_str(), body["max_output_tokens"].as_u64()), (Some("my-deploy"), Some(32_000)));
}

#[tokio::test]
async fn a_read_round_trip_sends_what_pi_sent() {
    let fixtures = fixtures();
    let azure = &fixtures["azure"];
    let script = json!([{"raw": azure["streams"][0]}, {"raw": azure["streams"][1]}]).to_string();
    let server = server(&script).await;
    let provider = provider(&server, &[]);
    let pi_second: Value = serde_json::from_str(azure["secondRequest"].as_str().unwrap_or("null")).unwrap_or_default();
    let mut context = LlmContext {
        system_prompt: "<system prompt>".into(),
        messages: ask("Read hello.txt"),
        tools: vec![read_tool(pi_second["tools"][0]["parameters"].clone())],
    };
    let first = final_message(&collect(&provider, &context, options()).await).clone();
    assert_eq!(first.stop_reason, StopReason::ToolUse, "{:?}", first.error_message);
    let AssistantContent::Thinking(thinking) = &first.content[0] else { panic!("{:?}", first.content) };
    assert_eq!(thinking.thinking, "I should read.");
    let call_id = first.tool_calls().next().map(|c| c.id.clone()).unwrap_or_default();
    assert_eq!(call_id, "call_1|fc_1");
    let usage = first.usage;
    assert_eq!((usage.input, usage.output, usage.total_tokens), (10, 5, 15));
    context.messages.push(Message::Assistant(first));
    context.messages.push(Message::ToolResult(ToolResultMessage {
        tool_call_id: call_id,
        tool_name: "read".into(),
        content: vec![UserContent::text("Hello from the fixture file.\n")],
        details: None,
        is_error: false,
        duration_ms: None,
        timestamp: 0,
    }));
    let second = final_message(&collect(&provider, &context, options()).await).clone();
    assert_eq!(second.text(), "It says hello.");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].body.to_string(), pi_second.to_string());
}

#[tokio::test]
async fn service_tiers_do_not_change_azure_costs() {
    let completed = r#"{"type":"response.completed","response":{"id":"r","status":"completed","service_tier":"priority","usage":{"input_tokens":1000000,"output_tokens":0,"total_tokens":1000000}}}"#;
    let server =
        server(&json!([{"raw": format!("event: response.completed\ndata: {completed}\n\n")}]).to_string()).await;
    let provider = provider(&server, &[]);
    let mut model = model();
    model.cost.input = 2.0;
    let events = {
        let mut stream = provider.stream(&model, &context(ask("hi")), options());
        let mut events = Vec::new();
        while let Some(event) = stream.next().await {
            events.push(event);
        }
        events
    };
    assert!((final_message(&events).usage.cost.total - 2.0).abs() < 1e-9, "{:?}", final_message(&events).usage);
}

#[tokio::test]
async fn errors_are_classified_and_retried_like_openai_responses() {
    let overloaded =
        r#"{"error":{"status":503,"body":{"error":{"message":"overloaded"}},"headers":{"retry-after-ms":"5"}}}"#;
    let script = format!(
        r#"[{overloaded},{{"text":"recovered"}},
            {{"error":{{"status":400,"body":{{"error":{{"message":"Unsupported parameter: 'reasoning.effort'","type":"invalid_request_error"}}}}}}}},
            {{"error":{{"status":401,"body":{{"error":{{"code":"401","message":"Access denied due to invalid subscription key."}}}}}}}},
            {overloaded},{overloaded},{overloaded}]"#
    );
    let server = server(&script).await;
    let provider = provider(&server, &[]);
    let recovered = collect(&provider, &context(ask("hi")), options()).await;
    assert_eq!(final_message(&recovered).text(), "recovered", "a 503 is retried by the SDK rules");
    let mut failures = Vec::new();
    for _ in 0..3 {
        let events = collect(&provider, &context(ask("hi")), options()).await;
        let Some(AssistantMessageEvent::Error { reason: ErrorReason::Error, error }) = events.last() else {
            panic!("{events:?}")
        };
        failures.push((error.error_message.clone().unwrap_or_default(), error.error_kind));
    }
    assert_eq!(
        failures,
        [
            ("400 Unsupported parameter: 'reasoning.effort'".to_owned(), Some(ProviderErrorKind::InvalidRequest)),
            ("401 Access denied due to invalid subscription key.".to_owned(), Some(ProviderErrorKind::Authentication)),
            ("503 overloaded".to_owned(), Some(ProviderErrorKind::Server)),
        ]
    );
    assert!(failures.iter().all(|(text, _)| !text.contains("az-key")), "the key never shows");
    assert_eq!(server.requests().len(), 7, "400 and 401 once each, the last 503 three times");
}

#[tokio::test]
async fn abort_and_idle_timeout_end_the_stream() {
    let server =
        server(r#"[{"text":"one two three four five six","delayMs":200},{"text":"stalls","stallAfter":3}]"#).await;
    let provider = provider(&server, &[]);
    let opts = options();
    let cancel = opts.cancel.clone();
    let mut stream = provider.stream(&model(), &context(ask("hi")), opts);
    let mut last = None;
    while let Some(event) = tokio::time::timeout(Duration::from_secs(10), stream.next()).await.ok().flatten() {
        if matches!(event, AssistantMessageEvent::TextDelta { .. }) {
            cancel.cancel();
        }
        last = Some(event);
    }
    let Some(AssistantMessageEvent::Error { reason: ErrorReason::Aborted, error }) = last else { panic!("{last:?}") };
    assert_eq!(error.error_message.as_deref(), Some("Request was aborted"));

    let opts = StreamOptions { idle_timeout: Some(Duration::from_millis(200)), ..options() };
    let events = collect(&provider, &context(ask("hi")), opts).await;
    assert_eq!(final_message(&events).error_message.as_deref(), Some("Request timed out."));
}

#[tokio::test]
async fn missing_configuration_fails_without_a_request() {
    let server = server("[]").await;
    let nowhere = AzureOpenAiResponsesProvider::new().with_env(|_| None);
    let events = collect(&nowhere, &context(ask("hi")), options()).await;
    let error = final_message(&events).error_message.clone().unwrap_or_default();
    assert!(error.starts_with("Azure OpenAI base URL is required."), "{error}");
    let keyless = StreamOptions { api_key: None, ..options() };
    let events = collect(&provider(&server, &[]), &context(ask("hi")), keyless).await;
    let error = final_message(&events).error_message.clone().unwrap_or_default();
    assert!(error.starts_with("Azure OpenAI API key is required."), "{error}");
    assert!(server.requests().is_empty());
}
