//! End-to-end tests: the google-vertex provider against the mock server over real HTTP, authorized by a
//! service-account key, gcloud user credentials or an API key, with the mock playing the token endpoint.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use super::{MockLlmServer, MockScript, RecordedRequest, TEST_CLIENT_EMAIL};
use crate::ai::{
    ApiProvider, GoogleVertexProvider, LlmContext, Model, ModelCost, ProviderErrorKind, StreamOptions, ThinkingLevel,
    ToolSpec,
};
use crate::protocol::{
    AssistantContent, AssistantMessage, AssistantMessageEvent, ErrorReason, Message, StopReason, ToolResultMessage,
    UserContent, UserMessage,
};

/// The path a regional ADC request takes (the host is the mock, through `GOOGLE_VERTEX_BASE_URL`).
const REGIONAL_PATH: &str = "/v1/projects/my-proj/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse";

async fn server(script: Value) -> MockLlmServer {
    let script = MockScript::from_json_str(&script.to_string()).map_err(|e| e.to_string());
    let Ok(script) = script else { panic!("bad script: {script:?}") };
    let server = MockLlmServer::start(script).await;
    let Ok(server) = server else { panic!("cannot start the mock server: {server:?}") };
    server
}

/// A built-in Vertex model (its base URL names `{location}`, so the SDK's host rules apply).
fn model() -> Model {
    let mut model = Model::new(
        "google-vertex",
        "gemini-2.5-flash",
        "google-vertex",
        "https://{location}-aiplatform.googleapis.com",
    );
    model.reasoning = true;
    model.max_tokens = 65_536;
    model
}

/// A scratch directory holding credential files; kept alive by the test.
struct Creds {
    dir: tempfile::TempDir,
}

impl Creds {
    fn new() -> Self {
        Self { dir: tempfile::tempdir().expect("tempdir") }
    }

    fn write(&self, name: &str, value: &Value) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, value.to_string()).expect("write credentials");
        path
    }
}

/// The environment of a project in us-central1 whose Vertex host is the mock, plus `extra`.
fn env(server: &MockLlmServer, extra: &[(&str, String)]) -> HashMap<String, String> {
    let mut vars: HashMap<String, String> = [
        ("GOOGLE_CLOUD_PROJECT", "my-proj".to_owned()),
        ("GOOGLE_CLOUD_LOCATION", "us-central1".to_owned()),
        ("GOOGLE_VERTEX_BASE_URL", format!("http://{}", server.addr())),
        ("HOME", "/nonexistent".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    vars.extend(extra.iter().map(|(k, v)| ((*k).to_owned(), v.clone())));
    vars
}

fn provider(vars: HashMap<String, String>) -> GoogleVertexProvider {
    GoogleVertexProvider::new().with_env(move |name| vars.get(name).cloned())
}

/// A provider authorized by the test service account (whose token endpoint is the mock).
fn service_account_provider(server: &MockLlmServer, creds: &Creds) -> GoogleVertexProvider {
    let file = creds.write("sa.json", &server.service_account_json());
    provider(env(server, &[("GOOGLE_APPLICATION_CREDENTIALS", file.to_string_lossy().into_owned())]))
}

fn read_tool() -> ToolSpec {
    ToolSpec {
        name: "read".into(),
        description: "Read a file".into(),
        parameters: json!({"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}}),
    }
}

fn ask(text: &str) -> Vec<Message> {
    vec![Message::User(UserMessage::text(text))]
}

fn options() -> StreamOptions {
    StreamOptions { reasoning: Some(ThinkingLevel::Medium), ..StreamOptions::default() }
}

async fn collect(
    provider: &GoogleVertexProvider,
    model: &Model,
    messages: Vec<Message>,
    options: StreamOptions,
) -> Vec<AssistantMessageEvent> {
    let context = LlmContext { system_prompt: "You are a test.".into(), messages, tools: vec![read_tool()] };
    let mut stream = provider.stream(model, &context, options);
    let run = async {
        let mut events = Vec::new();
        while let Some(event) = stream.next().await {
            events.push(event);
        }
        events
    };
    let Ok(events) = tokio::time::timeout(Duration::from_secs(20), run).await else { panic!("the stream hung") };
    events
}

fn final_message(events: &[AssistantMessageEvent]) -> &AssistantMessage {
    match events.last() {
        Some(event) if event.is_terminal() => event.message(),
        other => panic!("no terminal event, last was {other:?}"),
    }
}

fn form(request: &RecordedRequest) -> String {
    request.body.as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn a_service_account_answer_goes_to_the_project_path_with_a_bearer_token() {
    let server =
        server(json!([{"text": "Hello from Vertex", "usage": {"input": 1000, "output": 200, "cacheRead": 400}}])).await;
    let creds = Creds::new();
    let mut model = model();
    model.cost = ModelCost { input: 0.3, output: 2.5, cache_read: 0.03, cache_write: 0.0 };
    let events = collect(&service_account_provider(&server, &creds), &model, ask("hi"), options()).await;
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::Stop, "{:?}", message.error_message);
    assert_eq!(message.text(), "Hello from Vertex");
    assert_eq!((message.api.as_str(), message.provider.as_str()), ("google-vertex", "google-vertex"));
    assert_eq!((message.usage.input, message.usage.output, message.usage.cache_read), (1000, 200, 400));
    assert!((message.usage.cost.total - (1000.0 * 0.3 + 200.0 * 2.5 + 400.0 * 0.03) / 1e6).abs() < 1e-12);

    let requests = server.requests();
    assert_eq!(requests.len(), 2, "a token request, then the model request");
    let (token, call) = (&requests[0], &requests[1]);
    assert_eq!((token.method.as_str(), token.path.as_str()), ("POST", "/token"));
    assert_eq!(token.header("content-type"), Some("application/x-www-form-urlencoded"));
    assert!(form(token).starts_with("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion="));
    assert_eq!((call.method.as_str(), call.path.as_str()), ("POST", REGIONAL_PATH));
    assert_eq!(call.header("authorization"), Some("Bearer mock-access-token-1"));
    assert_eq!(call.header("x-goog-api-key"), None);
    assert_eq!(call.header("x-goog-user-project"), None);
    assert_eq!(call.header("content-type"), Some("application/json"));
    let body = &call.body;
    assert_eq!(body["contents"], json!([{"parts": [{"text": "hi"}], "role": "user"}]));
    let declaration: Vec<&String> =
        body["tools"][0]["functionDeclarations"][0].as_object().map(|o| o.keys().collect()).unwrap_or_default();
    assert_eq!(declaration, ["description", "name", "parametersJsonSchema"], "the Vertex converter's order");
    assert_eq!(
        body["generationConfig"],
        json!({"maxOutputTokens": 32000, "thinkingConfig": {"includeThoughts": true, "thinkingBudget": 8192}})
    );
}

#[tokio::test]
async fn two_requests_share_one_token() {
    let server = server(json!([{"text": "one"}, {"text": "two"}])).await;
    let creds = Creds::new();
    let provider = service_account_provider(&server, &creds);
    for _ in 0..2 {
        let events = collect(&provider, &model(), ask("hi"), options()).await;
        assert_eq!(final_message(&events).stop_reason, StopReason::Stop);
    }
    assert_eq!(server.token_requests(), 1, "two requests share one token");
    let bearers: Vec<_> =
        server.model_requests().iter().map(|r| r.header("authorization").map(str::to_owned)).collect();
    assert_eq!(bearers, [Some("Bearer mock-access-token-1".to_owned()), Some("Bearer mock-access-token-1".to_owned())]);
}

#[tokio::test]
async fn a_token_near_its_expiry_is_fetched_again() {
    let server = server(json!([{"text": "one"}, {"text": "two"}, {"text": "three"}])).await;
    // Refreshed five minutes early, a token of 303 s is good for about three seconds.
    server.set_token_lifetime(303);
    let creds = Creds::new();
    let provider = service_account_provider(&server, &creds);
    collect(&provider, &model(), ask("hi"), options()).await;
    collect(&provider, &model(), ask("hi"), options()).await;
    assert_eq!(server.token_requests(), 1, "still good");
    tokio::time::sleep(Duration::from_millis(3200)).await;
    let message = final_message(&collect(&provider, &model(), ask("hi"), options()).await).clone();
    assert_eq!(message.text(), "three", "{:?}", message.error_message);
    assert_eq!(server.token_requests(), 2, "the token neared its expiry, so a new one was fetched");
    let last = server.model_requests().pop().and_then(|r| r.header("authorization").map(str::to_owned));
    assert_eq!(last.as_deref(), Some("Bearer mock-access-token-2"));
}

#[tokio::test]
async fn gcloud_user_credentials_use_the_refresh_grant_and_quota_project() {
    let server = server(json!([{"text": "user ok"}])).await;
    let creds = Creds::new();
    let mut user = server.authorized_user_json();
    user["quota_project_id"] = json!("billing-proj");
    creds.write("application_default_credentials.json", &user);
    let config_dir = creds.dir.path().to_string_lossy().into_owned();
    let provider = provider(env(&server, &[("CLOUDSDK_CONFIG", config_dir)]));
    let message = final_message(&collect(&provider, &model(), ask("hi"), options()).await).clone();
    assert_eq!(message.text(), "user ok", "{:?}", message.error_message);
    let requests = server.requests();
    assert_eq!(
        form(&requests[0]),
        "refresh_token=mock-refresh-token&client_id=mock-client-id.apps.googleusercontent.com&client_secret=mock-client-secret&grant_type=refresh_token"
    );
    assert_eq!(requests[1].path, REGIONAL_PATH);
    assert_eq!(requests[1].header("authorization"), Some("Bearer mock-access-token-1"));
    assert_eq!(requests[1].header("x-goog-user-project"), Some("billing-proj"));
}

#[tokio::test]
async fn an_api_key_needs_no_project_and_no_token() {
    let server = server(json!([{"text": "express"}, {"text": "marker"}])).await;
    let provider = provider(env(&server, &[("GOOGLE_CLOUD_API_KEY", "AIza-test-key".to_owned())]));
    let message = final_message(&collect(&provider, &model(), ask("hi"), options()).await).clone();
    assert_eq!(message.text(), "express", "{:?}", message.error_message);
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/v1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
    assert_eq!(requests[0].header("x-goog-api-key"), Some("AIza-test-key"));
    assert_eq!(requests[0].header("authorization"), None);

    // The credentials marker turns the key off: with no credentials anywhere that is a clear error.
    let marker = StreamOptions { api_key: Some("gcp-vertex-credentials".into()), ..options() };
    let events = collect(&provider, &model(), ask("hi"), marker).await;
    let error = final_message(&events).error_message.clone().unwrap_or_default();
    assert!(error.starts_with("Vertex AI has no credentials"), "{error}");
    assert_eq!(server.requests().len(), 1, "nothing was sent");
}

#[tokio::test]
async fn a_tool_round_trip_with_thinking_replays_in_vertex_order() {
    let server = server(json!([
        {"thinking": "Need the file.", "text": "Reading.", "toolCalls": [{"name": "read", "arguments": {"path": "notes.txt"}}]},
        {"text": "It says hello."}
    ]))
    .await;
    let creds = Creds::new();
    let provider = service_account_provider(&server, &creds);
    let first = final_message(&collect(&provider, &model(), ask("read it"), options()).await).clone();
    assert_eq!(first.stop_reason, StopReason::ToolUse, "{:?}", first.error_message);
    let AssistantContent::Thinking(thinking) = &first.content[0] else { panic!("{:?}", first.content) };
    assert_eq!(thinking.thinking, "Need the file.");
    let call = first.tool_calls().next().cloned().expect("a call");
    let history = vec![
        Message::User(UserMessage::text("read it")),
        Message::Assistant(first),
        Message::ToolResult(ToolResultMessage {
            tool_call_id: call.id.clone(),
            tool_name: "read".into(),
            content: vec![UserContent::text("hello\n")],
            details: None,
            is_error: false,
            timestamp: 0,
            duration_ms: None,
        }),
    ];
    let second = final_message(&collect(&provider, &model(), history, options()).await).clone();
    assert_eq!(second.text(), "It says hello.");
    assert_eq!(server.token_requests(), 1);
    let body = server.model_requests()[1].body.clone();
    assert_eq!(
        body["contents"][1]["parts"],
        json!([
            {"text": "Need the file.", "thought": true, "thoughtSignature": "bW9ja3NpZy0x"},
            {"text": "Reading."},
            {"functionCall": {"name": "read", "args": {"path": "notes.txt"}}}
        ])
    );
    assert_eq!(
        body["contents"][2],
        json!({"parts": [{"functionResponse": {"name": "read", "response": {"output": "hello\n"}}}], "role": "user"})
    );
}

#[tokio::test]
async fn model_errors_read_like_the_sdk_and_a_503_can_be_retried() {
    let bad = json!({"error": {"code": 400, "message": "Invalid model.", "status": "INVALID_ARGUMENT"}});
    let overloaded = json!({"error": {"status": 503, "body": {"error": {"code": 503, "message": "Overloaded.", "status": "UNAVAILABLE"}}}});
    let server = server(json!([{"error": {"status": 400, "body": bad}}, overloaded, {"text": "after retry"}])).await;
    let creds = Creds::new();
    let events = collect(&service_account_provider(&server, &creds), &model(), ask("hi"), options()).await;
    let Some(AssistantMessageEvent::Error { reason: ErrorReason::Error, error }) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(
        error.error_message.as_deref(),
        Some(r#"{"error":{"code":400,"message":"Invalid model.","status":"INVALID_ARGUMENT"}}"#)
    );
    assert_eq!(error.error_kind, Some(ProviderErrorKind::InvalidRequest));

    let retrying = service_account_provider(&server, &creds).with_max_retries(1);
    let message = final_message(&collect(&retrying, &model(), ask("hi"), options()).await).clone();
    assert_eq!(message.text(), "after retry", "{:?}", message.error_message);
    assert_eq!(server.model_requests().len(), 3);
    assert_eq!(server.token_requests(), 1, "the retry reuses the token");
}

#[tokio::test]
async fn token_endpoint_failures_are_clear_retried_when_transient_and_never_show_secrets() {
    let server = server(json!([{"text": "after a token retry"}])).await;
    let creds = Creds::new();
    let provider = service_account_provider(&server, &creds);
    server.fail_token_requests(
        1,
        400,
        &json!({"error": "invalid_grant", "error_description": "Invalid JWT Signature."}),
    );
    let events = collect(&provider, &model(), ask("hi"), options()).await;
    let failed = final_message(&events);
    let text = failed.error_message.clone().unwrap_or_default();
    assert_eq!(
        text,
        format!(
            "the Google Cloud token endpoint {} refused the service account {TEST_CLIENT_EMAIL}: 400 invalid_grant: Invalid JWT Signature.",
            server.token_uri()
        )
    );
    assert_eq!(failed.error_kind, Some(ProviderErrorKind::Authentication));
    assert!(!text.contains("PRIVATE KEY") && !text.contains("assertion"), "{text}");
    assert_eq!(server.model_requests().len(), 0);

    server.fail_token_requests(1, 503, &json!({"error": "backend_error"}));
    let message = final_message(&collect(&provider, &model(), ask("hi"), options()).await).clone();
    assert_eq!(message.text(), "after a token retry", "{:?}", message.error_message);
    assert_eq!(server.token_requests(), 3, "the failed grant, the 503, then the token");

    // Nobody listening at the token endpoint: a network error (retryable), after the SDK-like retries.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let port = closed.local_addr().expect("addr").port();
    drop(closed);
    let mut key = server.service_account_json();
    key["token_uri"] = json!(format!("http://127.0.0.1:{port}/token"));
    let file = creds.write("unreachable.json", &key);
    let provider =
        self::provider(env(&server, &[("GOOGLE_APPLICATION_CREDENTIALS", file.to_string_lossy().into_owned())]));
    let message = final_message(&collect(&provider, &model(), ask("hi"), options()).await).clone();
    let text = message.error_message.unwrap_or_default();
    assert!(
        text.starts_with(&format!("cannot reach the Google Cloud token endpoint http://127.0.0.1:{port}/token")),
        "{text}"
    );
    assert_eq!(message.error_kind, Some(ProviderErrorKind::Network));
}

#[tokio::test]
async fn missing_settings_fail_before_any_request() {
    let server = server(json!([])).await;
    let mut vars = env(&server, &[]);
    vars.remove("GOOGLE_CLOUD_LOCATION");
    let events = collect(&provider(vars), &model(), ask("hi"), options()).await;
    let text = final_message(&events).error_message.clone().unwrap_or_default();
    assert!(text.starts_with("Vertex AI needs a location"), "{text}");
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn cancelling_mid_stream_aborts() {
    let server = server(json!([{"text": "one two three four five six", "delayMs": 300}])).await;
    let creds = Creds::new();
    let provider = service_account_provider(&server, &creds);
    let opts = options();
    let cancel = opts.cancel.clone();
    let context = LlmContext { system_prompt: String::new(), messages: ask("hi"), tools: Vec::new() };
    let mut stream = provider.stream(&model(), &context, opts);
    let mut events = Vec::new();
    let run = async {
        while let Some(event) = stream.next().await {
            if matches!(event, AssistantMessageEvent::TextDelta { .. }) {
                cancel.cancel();
            }
            events.push(event);
        }
    };
    assert!(tokio::time::timeout(Duration::from_secs(10), run).await.is_ok(), "cancelling must end the stream");
    let Some(AssistantMessageEvent::Error { reason: ErrorReason::Aborted, error }) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(error.error_message.as_deref(), Some("Request was aborted"));
    assert!(error.text().starts_with("one"));
}

#[tokio::test]
async fn the_mock_rejects_vertex_calls_without_a_live_token() {
    let server = server(json!([{"text": "never"}])).await;
    let creds = Creds::new();
    let provider = service_account_provider(&server, &creds);
    let forged = StreamOptions { headers: vec![("Authorization".into(), "Bearer forged".into())], ..options() };
    let message = final_message(&collect(&provider, &model(), ask("hi"), forged).await).clone();
    assert!(
        message.error_message.as_deref().is_some_and(|e| e.contains("UNAUTHENTICATED")),
        "{:?}",
        message.error_message
    );
    assert_eq!(message.error_kind, Some(ProviderErrorKind::Authentication));
    assert_eq!(server.remaining_responses(), 1, "the script was not touched");
}
