//! The `google-vertex` API end to end: the generated pi binary reaches a Vertex model at the mock with a
//! service-account key (one token for the whole run), with the built-in provider re-routed by models.json
//! as a user would for a proxy, lists the Vertex models once credentials exist, and retries a 503.

use super::*;

const VERTEX_MODEL: &str = "gemini-2.5-flash";
const VERTEX_PATH: &str = "/v1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse";

/// The test service-account key (token endpoint: the mock) written into the sandbox, and the variables that
/// select it with a project and location.
fn adc_env(sandbox: &Sandbox, mock: &MockLlmServer) -> Vec<(&'static str, String)> {
    let key = sandbox.root.path().join("service-account.json");
    std::fs::write(&key, mock.service_account_json().to_string()).expect("key file");
    vec![
        ("GOOGLE_APPLICATION_CREDENTIALS", key.to_string_lossy().into_owned()),
        ("GOOGLE_CLOUD_PROJECT", "my-proj".to_owned()),
        ("GOOGLE_CLOUD_LOCATION", "us-central1".to_owned()),
        // No gcloud files of the developer's.
        ("HOME", sandbox.root.path().to_string_lossy().into_owned()),
    ]
}

fn write_models(sandbox: &Sandbox, models: Value) {
    std::fs::write(sandbox.agent_dir().join("models.json"), models.to_string()).expect("models.json");
}

async fn run(sandbox: &Sandbox, args: &[&str], env: &[(&'static str, String)]) -> std::process::Output {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    sandbox.run_env(&agent_binary("pi"), args, &env).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_models_json_vertex_provider_with_a_service_account_reads_and_answers() {
    let mock = server(json!([
        {"toolCalls": [{"name": "read", "arguments": {"path": "hello.txt"}}]},
        {"text": "The file says hello."}
    ]))
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    sandbox.write("hello.txt", "Hello from the fixture file.\n");
    write_models(
        &sandbox,
        json!({"providers": {"corp-vertex": {
            "baseUrl": format!("http://127.0.0.1:{}", mock.addr().port()),
            "api": "google-vertex",
            "apiKey": "gcp-vertex-credentials",
            "models": [{"id": VERTEX_MODEL, "reasoning": true, "contextWindow": 1048576, "maxTokens": 65536}]
        }}}),
    );
    let env = adc_env(&sandbox, &mock);
    let args = ["--provider", "corp-vertex", "--model", VERTEX_MODEL, "-p", "What does hello.txt say?"];
    let output = run(&sandbox, &args, &env).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert_eq!(stdout(&output), "The file says hello.\n");

    assert_eq!(mock.token_requests(), 1, "one token serves both model requests");
    let calls = mock.model_requests();
    assert_eq!(calls.len(), 2);
    for call in &calls {
        assert_eq!(call.path, VERTEX_PATH);
        assert_eq!(call.header("authorization"), Some("Bearer mock-access-token-1"));
        assert_eq!(call.header("x-goog-api-key"), None);
    }
    let response = &calls[1].body["contents"][2]["parts"][0]["functionResponse"];
    assert_eq!(response["name"], "read");
    assert!(response["response"]["output"].as_str().is_some_and(|text| text.contains("Hello from the fixture")));
    let session = std::fs::read_to_string(sandbox.session_files().first().expect("a session")).expect("session");
    assert!(session.contains(r#""api":"google-vertex""#), "{session}");
    assert!(!session.contains("mock-access-token") && !session.contains("PRIVATE KEY"), "no secret is saved");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_built_in_provider_is_listed_with_credentials_and_retries_a_503() {
    let overloaded = json!({"error": {"status": 503, "body": {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}}});
    let mock = server(json!([overloaded, {"text": "Recovered."}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    write_models(&sandbox, json!({"providers": {"google-vertex": {"baseUrl": format!("http://{}", mock.addr())}}}));
    std::fs::write(sandbox.agent_dir().join("settings.json"), r#"{"retry": {"baseDelayMs": 10}}"#).expect("settings");
    let env = adc_env(&sandbox, &mock);

    let listed = run(&sandbox, &["--list-models", "vertex"], &env).await;
    assert!(stdout(&listed).contains("google-vertex  gemini-2.5-flash"), "{}", stdout(&listed));
    let without = run(&sandbox, &["--list-models", "vertex"], &env[..1]).await;
    assert!(!stdout(&without).contains("google-vertex"), "no location, no Vertex models: {}", stdout(&without));

    let output = run(&sandbox, &["--provider", "google-vertex", "--model", VERTEX_MODEL, "-p", "hi"], &env).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert_eq!(stdout(&output), "Recovered.\n");
    let calls = mock.model_requests();
    assert_eq!(calls.len(), 2, "the agent retried the 503 once");
    assert!(
        calls.iter().all(|call| call.path == VERTEX_PATH),
        "{:?}",
        calls.iter().map(|c| &c.path).collect::<Vec<_>>()
    );
    assert_eq!(mock.token_requests(), 1, "the retry reused the token");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_api_key_and_missing_settings() {
    let mock = server(json!([{"text": "Express."}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    write_models(&sandbox, json!({"providers": {"google-vertex": {"baseUrl": format!("http://{}", mock.addr())}}}));
    let args = ["--provider", "google-vertex", "--model", VERTEX_MODEL, "-p", "hi"];
    let keyed = [("GOOGLE_CLOUD_API_KEY", "AIza-test".to_owned())];
    let output = run(&sandbox, &args, &keyed).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert_eq!(stdout(&output), "Express.\n");
    let calls = mock.requests();
    assert_eq!((calls.len(), calls[0].path.as_str()), (1, VERTEX_PATH));
    assert_eq!(calls[0].header("x-goog-api-key"), Some("AIza-test"));
    assert_eq!(mock.token_requests(), 0);

    // Credentials without a location: the request fails before anything is sent, saying what to set.
    let mut env = adc_env(&sandbox, &mock);
    env.retain(|(name, _)| *name != "GOOGLE_CLOUD_LOCATION");
    write_models(
        &sandbox,
        json!({"providers": {"corp": {"baseUrl": format!("http://{}", mock.addr()), "api": "google-vertex",
               "apiKey": "gcp-vertex-credentials", "models": [{"id": VERTEX_MODEL}]}}}),
    );
    std::fs::write(sandbox.agent_dir().join("settings.json"), r#"{"retry": {"enabled": false}}"#).expect("settings");
    let failed = run(&sandbox, &["--provider", "corp", "--model", VERTEX_MODEL, "-p", "hi"], &env).await;
    assert_eq!(failed.status.code(), Some(1));
    assert!(stderr(&failed).contains("GOOGLE_CLOUD_LOCATION"), "{}", stderr(&failed));
    assert_eq!(mock.requests().len(), 1, "nothing more was sent");
}
