//! End to end over a ChatGPT subscription (openai-codex) and GitHub Copilot: the generated pi binary, with an
//! auth.json login (Codex) or a Copilot token in the environment and models.json re-routing the built-in
//! provider to the mock server, completes a read-then-answer round trip carrying pi's headers, thinks, fails
//! on a Codex failure, rides out a 503 in pi's Codex retry loop, and lists the models once logged in.

use pi_gen_tests::{Sandbox, agent_binary, stderr, stdout};
use pi_runtime::testing::{MockLlmServer, MockScript, RecordedRequest};
use serde_json::{Value, json};

async fn server(script: Value) -> MockLlmServer {
    let script = MockScript::from_json_str(&script.to_string()).expect("valid script");
    MockLlmServer::start(script).await.expect("mock server starts")
}

/// An access token shaped like ChatGPT's: an unsigned JWT whose payload is
/// `{"https://api.openai.com/auth":{"chatgpt_account_id":"acct-e2e"},"exp":4102444800}`.
const CODEX_TOKEN: &str = "eyJhbGciOiJub25lIn0.eyJodHRwczovL2FwaS5vcGVuYWkuY29tL2F1dGgiOnsiY2hhdGdwdF9hY2NvdW50X2lkIjoiYWNjdC1lMmUifSwiZXhwIjo0MTAyNDQ0ODAwfQ.sig";

/// A Copilot token as GitHub issues them (fields separated by `;`).
const COPILOT_TOKEN: &str = "tid=e2e;exp=4102444800;proxy-ep=proxy.individual.githubcopilot.com;";

/// A sandbox logged in to ChatGPT (auth.json, as pi's /login writes it) whose built-in `provider` is re-routed
/// to the mock by models.json.
fn sandbox_for(provider: &str, mock: &MockLlmServer, logged_in: bool) -> Sandbox {
    let sandbox = Sandbox::new(&mock.base_url());
    let base_url = format!("http://127.0.0.1:{}", mock.addr().port());
    std::fs::write(
        sandbox.agent_dir().join("models.json"),
        json!({"providers": {provider: {"baseUrl": base_url}}}).to_string(),
    )
    .expect("models.json");
    if logged_in {
        let auth = json!({"openai-codex": {"type": "oauth", "access": CODEX_TOKEN, "refresh": "refresh-e2e",
            "expires": 4_102_444_800_000u64, "accountId": "acct-e2e"}});
        std::fs::write(sandbox.agent_dir().join("auth.json"), auth.to_string()).expect("auth.json");
    }
    sandbox
}

fn round_trip_script() -> Value {
    json!([
        {"thinking": "I should read the file.",
         "toolCalls": [{"id": "call_1", "name": "read", "arguments": {"path": "hello.txt"}}]},
        {"text": "The file says hello."}
    ])
}

fn assert_codex_request(request: &RecordedRequest) {
    assert_eq!(request.path, "/codex/responses");
    assert_eq!(request.header("authorization"), Some(format!("Bearer {CODEX_TOKEN}").as_str()));
    assert_eq!(request.header("chatgpt-account-id"), Some("acct-e2e"));
    assert_eq!(request.header("originator"), Some("pi"));
    assert_eq!(request.header("openai-beta"), Some("responses=experimental"));
    assert_eq!(request.header("accept"), Some("text/event-stream"));
    let session = request.header("session_id");
    assert!(session.is_some_and(|id| !id.is_empty()), "the session id is sent");
    assert_eq!(request.header("x-client-request-id"), session);
    let body = &request.body;
    assert_eq!((body["model"].as_str(), body["store"].as_bool()), (Some("gpt-5.5"), Some(false)));
    assert!(body["instructions"].as_str().is_some_and(|text| !text.is_empty()), "the system prompt is instructions");
    assert_eq!(body["prompt_cache_key"].as_str(), session);
    assert_eq!(body["text"], json!({"verbosity": "low"}));
    assert_eq!(body["tools"][0]["strict"], Value::Null);
}

#[tokio::test(flavor = "multi_thread")]
async fn codex_thinks_reads_a_file_and_answers() {
    let binary = agent_binary("pi");
    let mock = server(round_trip_script()).await;
    let sandbox = sandbox_for("openai-codex", &mock, true);
    sandbox.write("hello.txt", "Hello from the fixture file.\n");
    let args =
        ["--provider", "openai-codex", "--model", "gpt-5.5", "--thinking", "high", "-p", "What does hello.txt say?"];
    let output = sandbox.run(&binary, &args).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert_eq!(stdout(&output), "The file says hello.\n");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_codex_request(request);
        assert_eq!(request.body["reasoning"], json!({"effort": "high", "summary": "auto"}));
    }
    let input = requests[1].body["input"].as_array().cloned().unwrap_or_default();
    let reasoning = input.iter().find(|item| item["type"] == "reasoning").cloned().unwrap_or_default();
    assert!(reasoning["encrypted_content"].is_string(), "the reasoning item is replayed: {input:?}");
    let output_item = input.iter().find(|item| item["type"] == "function_call_output").cloned().unwrap_or_default();
    assert_eq!(output_item["call_id"], "call_1");
    assert!(output_item["output"].as_str().is_some_and(|text| text.starts_with("Hello from the fixture file.")));
}

#[tokio::test(flavor = "multi_thread")]
async fn codex_failures_end_print_mode_and_a_503_is_retried_by_the_provider() {
    let binary = agent_binary("pi");
    let unavailable = json!({"error": {"status": 503, "body": "Service Unavailable"}});
    let mock = server(json!([
        {"text": "partial", "streamError": "the model broke"},
        unavailable,
        {"text": "Back again."}
    ]))
    .await;
    let sandbox = sandbox_for("openai-codex", &mock, true);
    // The session layer's retry stays out of it: the 503 is retried by pi's Codex loop itself.
    std::fs::write(sandbox.agent_dir().join("settings.json"), r#"{"retry": {"enabled": false}}"#).expect("settings");
    let args = ["--provider", "openai-codex", "--model", "gpt-5.5", "-p", "hi"];

    let failed = sandbox.run(&binary, &args).await;
    assert_eq!(failed.status.code(), Some(1), "{}", stdout(&failed));
    assert!(stderr(&failed).contains("the model broke"), "{}", stderr(&failed));

    let recovered = sandbox.run(&binary, &args).await;
    assert!(recovered.status.success(), "stderr: {}", stderr(&recovered));
    assert_eq!(stdout(&recovered), "Back again.\n");
    let requests = mock.requests();
    assert_eq!(requests.len(), 3);
    requests.iter().for_each(assert_codex_request);
    assert_eq!(requests[1].body, requests[2].body, "the retry sends the same request");
    assert!(requests[1].body.get("reasoning").is_some(), "thinking defaults to on");
}

#[tokio::test(flavor = "multi_thread")]
async fn codex_models_are_listed_once_logged_in() {
    let binary = agent_binary("pi");
    let mock = server(json!([])).await;
    let logged_in = sandbox_for("openai-codex", &mock, true);
    let listed = logged_in.run(&binary, &["--list-models", "openai-codex"]).await;
    let listing = stdout(&listed);
    assert!(listing.contains("openai-codex") && listing.contains("gpt-5.5"), "{listing}");
    assert_eq!(listing.lines().filter(|line| line.starts_with("openai-codex")).count(), 10, "{listing}");
    let logged_out = sandbox_for("openai-codex", &mock, false);
    let listed = logged_out.run(&binary, &["--list-models", "openai-codex"]).await;
    assert!(!stdout(&listed).contains("gpt-5.5"), "{}", stdout(&listed));
}

fn assert_copilot_headers(request: &RecordedRequest, initiator: &str) {
    assert_eq!(request.header("authorization"), Some(format!("Bearer {COPILOT_TOKEN}").as_str()));
    assert_eq!(request.header("user-agent"), Some("GitHubCopilotChat/0.35.0"));
    assert_eq!(request.header("editor-version"), Some("vscode/1.107.0"));
    assert_eq!(request.header("editor-plugin-version"), Some("copilot-chat/0.35.0"));
    assert_eq!(request.header("copilot-integration-id"), Some("vscode-chat"));
    assert_eq!(request.header("openai-intent"), Some("conversation-edits"));
    assert_eq!(request.header("x-initiator"), Some(initiator));
    assert_eq!(request.header("copilot-vision-request"), None);
}

#[tokio::test(flavor = "multi_thread")]
async fn copilot_models_of_each_api_read_a_file_with_copilots_headers() {
    let binary = agent_binary("pi");
    for (model, path) in
        [("gpt-5.4", "/responses"), ("claude-sonnet-4.6", "/v1/messages"), ("gpt-4.1", "/chat/completions")]
    {
        let mock = server(round_trip_script()).await;
        let sandbox = sandbox_for("github-copilot", &mock, false);
        sandbox.write("hello.txt", "Hello from the fixture file.\n");
        let args = ["--provider", "github-copilot", "--model", model, "-p", "What does hello.txt say?"];
        let output = sandbox.run_env(&binary, &args, &[("COPILOT_GITHUB_TOKEN", COPILOT_TOKEN)]).await;
        assert!(output.status.success(), "{model}: stderr: {}", stderr(&output));
        assert_eq!(stdout(&output), "The file says hello.\n", "{model}");
        let requests = mock.requests();
        assert_eq!(requests.len(), 2, "{model}");
        for (request, initiator) in requests.iter().zip(["user", "agent"]) {
            assert_eq!(request.path, path, "{model}");
            assert_copilot_headers(request, initiator);
            assert_eq!(request.header("x-api-key"), None, "{model}: Copilot takes a bearer token");
            assert_eq!(request.body["model"], model);
        }
    }

    let mock = server(json!([])).await;
    let sandbox = sandbox_for("github-copilot", &mock, false);
    let listed = sandbox.run_env(&binary, &["--list-models", "github-copilot"], &[("GH_TOKEN", COPILOT_TOKEN)]).await;
    assert_eq!(stdout(&listed).lines().filter(|line| line.starts_with("github-copilot")).count(), 26);
}
