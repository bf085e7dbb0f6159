//! Subscription logins end to end: a pi-written auth.json with an expired Claude login is renewed at the
//! mock's token endpoint before the request (the file keeps its other entries), and `pi login` / `pi logout`
//! run Anthropic's browser login (the test plays the browser) and GitHub's device login for Copilot.

use pi_gen_tests::{Sandbox, agent_binary, stderr, stdout};
use pi_runtime::testing::{MockLlmServer, MockScript, TEST_GITHUB_TOKEN, TEST_OAUTH_REFRESH_TOKEN};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

async fn server(script: Value) -> MockLlmServer {
    let script = MockScript::from_json_str(&script.to_string()).expect("valid script");
    MockLlmServer::start(script).await.expect("mock server starts")
}

fn auth_json(sandbox: &Sandbox) -> Value {
    let text = std::fs::read_to_string(sandbox.agent_dir().join("auth.json")).expect("auth.json");
    serde_json::from_str(&text).expect("auth.json is JSON")
}

fn write_auth_json(sandbox: &Sandbox, value: &Value) {
    let text = serde_json::to_string_pretty(value).expect("json");
    std::fs::write(sandbox.agent_dir().join("auth.json"), text).expect("auth.json");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_expired_claude_login_written_by_pi_is_renewed_and_used() {
    let mock = server(json!([{"text": "Hello from Claude."}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let models = json!({"providers": {"anthropic": {"baseUrl": mock.oauth_origin()}}});
    std::fs::write(sandbox.agent_dir().join("models.json"), models.to_string()).expect("models.json");
    let original = json!({
        "openai": {"type": "api_key", "key": "sk-openai-kept"},
        "anthropic": {"type": "oauth", "refresh": TEST_OAUTH_REFRESH_TOKEN, "access": "sk-ant-oat01-expired", "expires": 1_000},
    });
    write_auth_json(&sandbox, &original);
    let args = ["--provider", "anthropic", "--model", "claude-sonnet-4-5", "-p", "hi"];
    let output = sandbox.run_env(&agent_binary("pi"), &args, &[("PI_GEN_OAUTH_SERVER", &mock.oauth_origin())]).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert_eq!(stdout(&output), "Hello from Claude.\n");

    let logins = mock.login_requests();
    assert_eq!(logins.len(), 1, "one renewal");
    assert_eq!(logins[0].body["grant_type"], "refresh_token");
    let model_requests = mock.model_requests();
    assert_eq!(model_requests.len(), 1);
    assert_eq!(model_requests[0].header("authorization"), Some("Bearer sk-ant-oat01-mock-1"));
    assert_eq!(model_requests[0].header("x-api-key"), None);

    let stored = auth_json(&sandbox);
    assert_eq!(stored["openai"], original["openai"], "other entries are kept");
    assert_eq!(stored["anthropic"]["access"], "sk-ant-oat01-mock-1");
    assert_eq!(stored["anthropic"]["refresh"], "mock-oauth-refresh-1");
    assert!(!stderr(&output).contains("sk-ant-oat01"), "no token on stderr");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_login_that_cannot_be_renewed_fails_the_request_and_says_to_log_in_again() {
    let mock = server(json!([{"text": "never sent"}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let models = json!({"providers": {"anthropic": {"baseUrl": mock.oauth_origin()}}});
    std::fs::write(sandbox.agent_dir().join("models.json"), models.to_string()).expect("models.json");
    let entry = json!({"type": "oauth", "refresh": "revoked", "access": "sk-ant-oat01-expired", "expires": 1_000});
    write_auth_json(&sandbox, &json!({"anthropic": entry}));
    let args = ["--provider", "anthropic", "--model", "claude-sonnet-4-5", "-p", "hi"];
    let output = sandbox.run_env(&agent_binary("pi"), &args, &[("PI_GEN_OAUTH_SERVER", &mock.oauth_origin())]).await;
    assert_eq!(output.status.code(), Some(1));
    let said = stderr(&output);
    assert!(said.contains("/login anthropic") && said.contains("\"anthropic\""), "{said}");
    assert!(mock.model_requests().is_empty(), "no model request with a dead token");
    assert_eq!(auth_json(&sandbox)["anthropic"], entry, "the file is left as it was");
}

/// Reads the child's stderr until a line holds an address, and returns it.
async fn address_from(reader: &mut (impl AsyncBufReadExt + Unpin)) -> String {
    let mut line = String::new();
    loop {
        line.clear();
        let read = reader.read_line(&mut line).await.expect("stderr");
        assert!(read > 0, "the login ended before showing an address");
        if let Some(url) = line.split_whitespace().find(|word| word.starts_with("http")) {
            return url.to_owned();
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn login_and_logout_from_the_shell_store_and_remove_a_claude_login() {
    let mock = server(json!([])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    write_auth_json(&sandbox, &json!({"openai": {"type": "api_key", "key": "sk-openai-kept"}}));
    let binary = agent_binary("pi");
    let env = [("PI_GEN_OAUTH_SERVER", mock.oauth_origin())];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut child = sandbox.spawn_piped_env(&binary, &["login", "anthropic"], &env);
    let mut errors = BufReader::new(child.stderr.take().expect("stderr"));
    let address = address_from(&mut errors).await;
    assert!(address.starts_with(&format!("{}/oauth/authorize?", mock.oauth_origin())), "{address}");
    for needed in
        ["code_challenge_method=S256", "response_type=code", "redirect_uri=http%3A%2F%2Flocalhost%3A53692%2Fcallback"]
    {
        assert!(address.contains(needed), "{needed} in {address}");
    }
    // The browser: the mock's authorize page sends it back to the login's callback on 127.0.0.1.
    let page = reqwest::get(&address).await.expect("the callback answers").text().await.expect("page");
    assert!(page.contains("login complete"), "{page}");
    let output = child.wait_with_output().await.expect("login ends");
    assert!(output.status.success(), "stdout: {}", stdout(&output));
    assert!(stdout(&output).contains("Logged in to Anthropic"), "{}", stdout(&output));
    let stored = auth_json(&sandbox);
    assert_eq!(stored["anthropic"]["type"], "oauth");
    assert_eq!(stored["anthropic"]["access"], "sk-ant-oat01-mock-1");
    assert!(stored["anthropic"]["expires"].as_i64().expect("expires") > 0);
    assert_eq!(stored["openai"]["key"], "sk-openai-kept");
    let exchange = mock.login_requests().into_iter().find(|r| r.method == "POST").expect("token exchange");
    assert_eq!(exchange.body["grant_type"], "authorization_code");
    assert_eq!(exchange.body["redirect_uri"], "http://localhost:53692/callback");

    let output = sandbox.run(&binary, &["logout", "anthropic"]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(auth_json(&sandbox), json!({"openai": {"type": "api_key", "key": "sk-openai-kept"}}));

    // No provider named and nobody to answer the question; a provider without a login.
    let unnamed = sandbox.run(&binary, &["login"]).await;
    assert_eq!(unnamed.status.code(), Some(1));
    assert!(stderr(&unnamed).contains("pi login <provider>"), "{}", stderr(&unnamed));
    let unknown = sandbox.run(&binary, &["login", "openai"]).await;
    assert_eq!(unknown.status.code(), Some(2));
    assert!(stderr(&unknown).contains("\"openai\" has no login"), "{}", stderr(&unknown));
}

#[tokio::test(flavor = "multi_thread")]
async fn copilot_logs_in_with_a_device_code_and_enables_its_models() {
    let mock = server(json!([])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let env = [("PI_GEN_OAUTH_SERVER", mock.oauth_origin())];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut child = sandbox.spawn_piped_env(&agent_binary("pi"), &["login", "github-copilot"], &env);
    // github.com, not an Enterprise server.
    let mut input = child.stdin.take().expect("stdin");
    input.write_all(b"\n").await.expect("answer");
    drop(input);
    let mut errors = BufReader::new(child.stderr.take().expect("stderr"));
    assert_eq!(address_from(&mut errors).await, "https://github.com/login/device");
    let mut rest = String::new();
    errors.read_line(&mut rest).await.expect("stderr");
    errors.read_line(&mut rest).await.expect("stderr");
    assert!(rest.contains("MOCK-CODE"), "the user code is shown: {rest}");
    let output = child.wait_with_output().await.expect("login ends");
    assert!(output.status.success(), "{}", stdout(&output));
    let stored = auth_json(&sandbox);
    assert_eq!(stored["github-copilot"]["refresh"], TEST_GITHUB_TOKEN);
    assert!(stored["github-copilot"]["access"].as_str().is_some_and(|t| t.starts_with("tid=mock-")), "{stored}");
    let paths: Vec<String> = mock.login_requests().into_iter().map(|r| r.path).collect();
    assert_eq!(paths[..3], ["/login/device/code", "/login/oauth/access_token", "/copilot_internal/v2/token"]);
    let enabled = paths.iter().filter(|path| path.starts_with("/models/") && path.ends_with("/policy")).count();
    let models = pi_runtime::ai::catalog::builtin_provider_models("github-copilot").count();
    assert_eq!(enabled, models, "each Copilot model's policy is accepted: {paths:?}");
}
