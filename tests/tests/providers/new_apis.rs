//! The four APIs added for issue 22 side by side, each through a models.json provider of its own at the
//! mock: thinking streamed and stored, a 400 ending the run with the vendor's message (not retried), and a
//! 503 retried into an answer. (Each API's read round trip is in its own module.)

use pi_runtime::testing::{MOCK_AWS_ACCESS_KEY_ID, MOCK_AWS_SECRET_ACCESS_KEY};

use super::*;

/// An API with the provider entry and environment a user would give it.
struct Setup {
    api: &'static str,
    base_url: String,
    env: Vec<(&'static str, String)>,
}

fn setups(mock: &MockLlmServer, sandbox: &Sandbox) -> Vec<Setup> {
    let origin = format!("http://{}", mock.addr());
    let key = sandbox.root.path().join("service-account.json");
    std::fs::write(&key, mock.service_account_json().to_string()).expect("key file");
    vec![
        Setup { api: "azure-openai-responses", base_url: format!("{origin}/openai/v1"), env: Vec::new() },
        Setup { api: "mistral-conversations", base_url: origin.clone(), env: Vec::new() },
        Setup {
            api: "google-vertex",
            base_url: origin.clone(),
            env: vec![
                ("GOOGLE_APPLICATION_CREDENTIALS", key.to_string_lossy().into_owned()),
                ("GOOGLE_CLOUD_PROJECT", "my-proj".to_owned()),
                ("GOOGLE_CLOUD_LOCATION", "us-central1".to_owned()),
                ("HOME", sandbox.root.path().to_string_lossy().into_owned()),
            ],
        },
        Setup {
            api: "bedrock-converse-stream",
            base_url: origin,
            env: vec![
                ("AWS_ACCESS_KEY_ID", MOCK_AWS_ACCESS_KEY_ID.to_owned()),
                ("AWS_SECRET_ACCESS_KEY", MOCK_AWS_SECRET_ACCESS_KEY.to_owned()),
                ("AWS_REGION", "us-west-2".to_owned()),
            ],
        },
    ]
}

/// A models.json provider `mock` of `setup.api` whose model `m` reasons.
fn write_models(sandbox: &Sandbox, setup: &Setup) {
    let api_key = if setup.api == "google-vertex" { "gcp-vertex-credentials" } else { "mock-key" };
    let models = json!({"providers": {"mock": {
        "baseUrl": setup.base_url, "api": setup.api, "apiKey": api_key,
        "models": [{"id": "m", "name": "Mock model", "reasoning": true}]
    }}});
    std::fs::write(sandbox.agent_dir().join("models.json"), models.to_string()).expect("models.json");
}

/// The vendor's error body for `status` with `message`.
fn vendor_error(api: &str, status: u16, message: &str) -> Value {
    let body = match api {
        "google-vertex" => json!({"error": {"code": status, "message": message, "status": "INVALID_ARGUMENT"}}),
        "bedrock-converse-stream" => json!({"message": message}),
        "mistral-conversations" => json!({"object": "error", "message": message, "type": "invalid_request_error"}),
        _ => json!({"error": {"message": message, "type": "invalid_request_error"}}),
    };
    let mut headers = json!({"retry-after-ms": "10"});
    if api == "bedrock-converse-stream" {
        let kind = if status == 400 { "ValidationException" } else { "ServiceUnavailableException" };
        headers["x-amzn-errortype"] = json!(kind);
    }
    json!({"error": {"status": status, "body": body, "headers": headers}})
}

async fn run(sandbox: &Sandbox, setup: &Setup, args: &[&str]) -> std::process::Output {
    let env: Vec<(&str, &str)> = setup.env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    sandbox.run_env(&agent_binary("pi"), &[&MODEL_ARGS[..], args].concat(), &env).await
}

#[tokio::test(flavor = "multi_thread")]
async fn thinking_errors_and_retries_over_each_new_api() {
    let apis = ["azure-openai-responses", "mistral-conversations", "google-vertex", "bedrock-converse-stream"];
    for (index, api) in apis.into_iter().enumerate() {
        let mock = server(json!([
            {"thinking": "Weighing the question.", "text": "Forty-two."},
            vendor_error(api, 400, "the request is malformed"),
            vendor_error(api, 503, "busy right now"),
            {"text": "Answered after the retry."}
        ]))
        .await;
        let sandbox = Sandbox::new(&mock.base_url());
        let setup = setups(&mock, &sandbox).swap_remove(index);
        assert_eq!(setup.api, api);
        write_models(&sandbox, &setup);

        let thought = run(&sandbox, &setup, &["--thinking", "high", "--mode", "json", "hi"]).await;
        assert!(thought.status.success(), "{api}: {}", stderr(&thought));
        let events = stdout(&thought);
        let end = events
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .find(|event| event["type"] == "message_end" && event["message"]["role"] == "assistant")
            .unwrap_or_else(|| panic!("{api}: no assistant message_end in {events}"));
        // Mistral's first chunk carries `content: ""`, which opens an empty text block in pi as here.
        let content = end["message"]["content"].as_array().cloned().unwrap_or_default();
        let thinking = content.iter().position(|block| block["type"] == "thinking");
        let thinking = thinking.unwrap_or_else(|| panic!("{api}: no thinking block in {content:?}"));
        assert_eq!(content[thinking]["thinking"], "Weighing the question.", "{api}");
        assert_eq!(content.last().map(|block| block["text"].clone()), Some(json!("Forty-two.")), "{api}");
        assert!(events.contains("thinking_delta"), "{api}: thinking is streamed");

        let refused = run(&sandbox, &setup, &["-p", "hi"]).await;
        assert_eq!(refused.status.code(), Some(1), "{api}: {}", stdout(&refused));
        assert!(stderr(&refused).contains("the request is malformed"), "{api}: {}", stderr(&refused));
        assert_eq!(mock.model_requests().len(), 2, "{api}: a 400 is not retried");

        let retried = run(&sandbox, &setup, &["-p", "hi"]).await;
        assert!(retried.status.success(), "{api}: {}", stderr(&retried));
        assert_eq!(stdout(&retried), "Answered after the retry.\n", "{api}");
        assert_eq!(mock.model_requests().len(), 4, "{api}: the 503 was asked again");
    }
}
