//! End to end over the azure-openai-responses and mistral-conversations APIs: the generated pi binary
//! completes a read-then-answer round trip against the mock server, once through a models.json provider of
//! each api and once through the built-in provider (Azure configured by its environment variables, Mistral
//! re-routed by a models.json `baseUrl`), lists their models when a key is set, and retries a 429.

use pi_gen_tests::{Sandbox, agent_binary, stderr, stdout};
use pi_runtime::testing::{MockLlmServer, MockScript, RecordedRequest};
use serde_json::{Value, json};

async fn server(script: Value) -> MockLlmServer {
    let script = MockScript::from_json_str(&script.to_string()).expect("valid script");
    MockLlmServer::start(script).await.expect("mock server starts")
}

fn round_trip_script() -> Value {
    json!([
        {"toolCalls": [{"id": "abcDEF123", "name": "read", "arguments": {"path": "hello.txt"}}]},
        {"text": "The file says hello."}
    ])
}

/// The tool result the second request carries back.
fn tool_result_text(api: &str, body: &Value) -> String {
    let found = match api {
        "mistral-conversations" => body["messages"]
            .as_array()
            .and_then(|messages| messages.iter().find(|m| m["role"] == "tool"))
            .map(|message| message["content"][0]["text"].clone()),
        _ => body["input"]
            .as_array()
            .and_then(|items| items.iter().find(|i| i["type"] == "function_call_output"))
            .map(|item| item["output"].clone()),
    };
    found.and_then(|text| text.as_str().map(str::to_owned)).unwrap_or_default()
}

fn assert_azure_request(request: &RecordedRequest, deployment: &str) {
    assert_eq!(request.path, "/openai/v1/responses?api-version=v1");
    assert_eq!((request.header("api-key"), request.header("authorization")), (Some("mock-key"), None));
    assert_eq!(request.body["model"], deployment);
    assert_eq!(request.body["stream"], true);
    assert!(request.body.get("store").is_none(), "{}", request.body);
    assert_eq!(request.body["tools"][0]["type"], "function");
}

fn assert_mistral_request(request: &RecordedRequest, model: &str) {
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.header("authorization"), Some("Bearer mock-key"));
    assert_eq!(request.header("accept"), Some("text/event-stream"));
    assert!(request.header("x-affinity").is_some_and(|id| !id.is_empty()), "the session id routes the cache");
    let keys: Vec<&str> = request.body.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
    assert_eq!(keys[..4], ["model", "max_tokens", "stream", "messages"], "{keys:?}");
    assert_eq!(request.body["model"], model);
    assert_eq!(request.body["messages"][0]["role"], "system");
    assert!(request.body["tools"][0]["function"]["parameters"].is_object(), "{}", request.body);
}

#[tokio::test(flavor = "multi_thread")]
async fn models_json_providers_of_both_apis_complete_a_read_round_trip() {
    let binary = agent_binary("pi");
    for api in ["azure-openai-responses", "mistral-conversations"] {
        let mock = server(round_trip_script()).await;
        let port = mock.addr().port();
        let base_url = match api {
            "azure-openai-responses" => format!("http://127.0.0.1:{port}/openai/v1"),
            _ => format!("http://127.0.0.1:{port}"),
        };
        let sandbox = Sandbox::with_api(api, &base_url);
        sandbox.write("hello.txt", "Hello from the fixture file.\nSecond line.\n");
        let args = ["--provider", "mock", "--model", "m", "-p", "What does hello.txt say?"];
        let output = sandbox.run(&binary, &args).await;
        assert!(output.status.success(), "{api}: stderr: {}", stderr(&output));
        assert_eq!(stdout(&output), "The file says hello.\n", "{api}");
        let requests = mock.requests();
        assert_eq!(requests.len(), 2, "{api}");
        for request in &requests {
            match api {
                "azure-openai-responses" => assert_azure_request(request, "m"),
                _ => assert_mistral_request(request, "m"),
            }
        }
        let returned = tool_result_text(api, &requests[1].body);
        assert!(returned.starts_with("Hello from the fixture file."), "{api}: {}", requests[1].body);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn built_in_azure_reads_its_environment() {
    let binary = agent_binary("pi");
    let mock = server(round_trip_script()).await;
    let sandbox = Sandbox::new(&mock.base_url());
    sandbox.write("hello.txt", "Hello from the fixture file.\n");
    let base_url = format!("http://127.0.0.1:{}/openai/v1/", mock.addr().port());
    let env = [
        ("AZURE_OPENAI_API_KEY", "mock-key"),
        ("AZURE_OPENAI_BASE_URL", base_url.as_str()),
        ("AZURE_OPENAI_DEPLOYMENT_NAME_MAP", "gpt-4.1=prod-41"),
    ];
    let args = ["--provider", "azure-openai-responses", "--model", "gpt-4.1", "-p", "What does hello.txt say?"];
    let output = sandbox.run_env(&binary, &args, &env).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert_eq!(stdout(&output), "The file says hello.\n");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_azure_request(request, "prod-41");
        assert!(request.body.get("reasoning").is_none(), "gpt-4.1 does not reason: {}", request.body);
    }

    let listed = sandbox.run_env(&binary, &["--list-models", "azure gpt-4.1"], &env).await;
    let listing = stdout(&listed);
    assert!(listing.contains("azure-openai-responses  gpt-4.1 "), "{listing}");
    let keyless = sandbox.run(&binary, &["--list-models", "azure"]).await;
    assert!(!stdout(&keyless).contains("azure-openai-responses"), "{}", stdout(&keyless));
}

#[tokio::test(flavor = "multi_thread")]
async fn built_in_mistral_rerouted_by_models_json_retries_a_429_then_answers() {
    let binary = agent_binary("pi");
    let rate_limited = json!({"error": {"status": 429, "body": {"object": "error", "message": "Requests rate limit exceeded",
        "type": "rate_limited", "param": null, "code": "1300"}}});
    let mock = server(json!([rate_limited, {"thinking": "Short answer.", "text": "Hi!"}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let base_url = format!("http://127.0.0.1:{}", mock.addr().port());
    std::fs::write(
        sandbox.agent_dir().join("models.json"),
        json!({"providers": {"mistral": {"baseUrl": base_url}}}).to_string(),
    )
    .expect("models.json");
    std::fs::write(sandbox.agent_dir().join("settings.json"), r#"{"retry": {"baseDelayMs": 10}}"#).expect("settings");
    let env = [("MISTRAL_API_KEY", "mock-key")];
    let args = ["--provider", "mistral", "--model", "magistral-medium-latest", "--thinking", "medium", "-p", "hi"];
    let output = sandbox.run_env(&binary, &args, &env).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    // As pi 0.73.1 prints it: the empty text block Mistral's first chunk opens, then the answer.
    assert_eq!(stdout(&output), "\nHi!\n");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "the session retried the 429 once");
    for request in &requests {
        assert_mistral_request(request, "magistral-medium-latest");
        assert_eq!(request.body["prompt_mode"], "reasoning");
        assert_eq!(request.body["max_tokens"], 16384);
    }

    let listed = sandbox.run_env(&binary, &["--list-models", "mistral magistral-medium"], &env).await;
    assert!(stdout(&listed).contains("mistral   magistral-medium-latest"), "{}", stdout(&listed));
}
