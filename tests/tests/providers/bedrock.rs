//! Amazon Bedrock end to end: the generated pi binary with a models.json provider of api
//! `bedrock-converse-stream` (and pi's built-in `amazon-bedrock` provider re-routed by `baseUrl`) at the
//! mock server, which checks every request's SigV4 signature against the mock AWS key pair.

use pi_runtime::testing::{MOCK_AWS_ACCESS_KEY_ID, MOCK_AWS_BEARER_TOKEN, MOCK_AWS_SECRET_ACCESS_KEY};

use super::*;

const SONNET: &str = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";

/// The mock key pair and a region, as a user would export them.
fn aws_keys() -> Vec<(&'static str, &'static str)> {
    vec![
        ("AWS_ACCESS_KEY_ID", MOCK_AWS_ACCESS_KEY_ID),
        ("AWS_SECRET_ACCESS_KEY", MOCK_AWS_SECRET_ACCESS_KEY),
        ("AWS_REGION", "us-west-2"),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn a_custom_bedrock_provider_completes_a_read_round_trip() {
    let binary = agent_binary("pi");
    let mock = server(json!([
        {"toolCalls": [{"id": "tooluse_1", "name": "read", "arguments": {"path": "hello.txt"}}]},
        {"text": "The file says hello."}
    ]))
    .await;
    let sandbox = Sandbox::with_api("bedrock-converse-stream", &format!("http://{}", mock.addr()));
    sandbox.write("hello.txt", "Hello from the fixture file.\n");
    let args = [&MODEL_ARGS[..], &["-p", "What does hello.txt say?"]].concat();
    let output = sandbox.run_env(&binary, &args, &aws_keys()).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert_eq!(stdout(&output), "The file says hello.\n");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(request.path, "/model/m/converse-stream");
        let authorization = request.header("authorization").unwrap_or_default();
        assert!(authorization.contains(&format!("{MOCK_AWS_ACCESS_KEY_ID}/")), "{authorization}");
        assert!(authorization.contains("/us-west-2/bedrock/aws4_request"), "{authorization}");
        assert!(request.body["system"][0]["text"].is_string(), "{}", request.body);
        assert!(request.body["toolConfig"]["tools"][0]["toolSpec"]["inputSchema"]["json"].is_object());
    }
    let result = &requests[1].body["messages"][2]["content"][0]["toolResult"];
    assert_eq!(result["toolUseId"], "tooluse_1");
    assert_eq!(result["content"][0]["text"], "Hello from the fixture file.\n");
    // The API key models.json gives is not used: the request is signed, never sent with the key.
    assert!(requests.iter().all(|r| r.headers.iter().all(|(_, value)| !value.contains("mock-key"))));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_builtin_provider_rerouted_by_base_url_with_profile_or_bearer_auth() {
    let binary = agent_binary("pi");
    let mock =
        server(json!([{"text": "From the profile."}, {"text": "With a bearer token."}, {"text": "never"}])).await;
    let sandbox = Sandbox::new("http://127.0.0.1:9/v1");
    let models = json!({"providers": {"amazon-bedrock": {"baseUrl": format!("http://{}", mock.addr())}}});
    std::fs::write(sandbox.agent_dir().join("models.json"), models.to_string()).expect("models.json");
    std::fs::write(sandbox.agent_dir().join("settings.json"), r#"{"retry": {"enabled": false}}"#).expect("settings");
    let aws = sandbox.root.path().join("aws");
    std::fs::create_dir_all(&aws).expect("aws dir");
    let credentials = format!(
        "[bedrock]\naws_access_key_id = {MOCK_AWS_ACCESS_KEY_ID}\naws_secret_access_key = {MOCK_AWS_SECRET_ACCESS_KEY}\n"
    );
    std::fs::write(aws.join("credentials"), credentials).expect("credentials");
    std::fs::write(aws.join("config"), "[profile bedrock]\nregion = eu-central-1\n").expect("config");
    let (credentials, config) = (aws.join("credentials"), aws.join("config"));
    let files = [
        ("AWS_SHARED_CREDENTIALS_FILE", credentials.to_str().unwrap_or_default()),
        ("AWS_CONFIG_FILE", config.to_str().unwrap_or_default()),
    ];
    let args = ["--provider", "amazon-bedrock", "--model", SONNET, "--thinking", "off", "-p", "hi"];

    let profile = sandbox.run_env(&binary, &args, &[&files[..], &[("AWS_PROFILE", "bedrock")]].concat()).await;
    assert!(profile.status.success(), "stderr: {}", stderr(&profile));
    assert_eq!(stdout(&profile), "From the profile.\n");
    let bearer = sandbox.run_env(&binary, &args, &[("AWS_BEARER_TOKEN_BEDROCK", MOCK_AWS_BEARER_TOKEN)]).await;
    assert_eq!(stdout(&bearer), "With a bearer token.\n", "stderr: {}", stderr(&bearer));
    let wrong = [("AWS_ACCESS_KEY_ID", MOCK_AWS_ACCESS_KEY_ID), ("AWS_SECRET_ACCESS_KEY", "wrong-secret")];
    let refused = sandbox.run_env(&binary, &args, &wrong).await;
    assert_eq!(refused.status.code(), Some(1));
    let said = stderr(&refused);
    assert!(said.starts_with("InvalidSignatureException: "), "{said}");
    assert!(!said.contains("wrong-secret"), "{said}");

    let requests = mock.requests();
    assert_eq!(requests.len(), 3, "the refused request is not retried");
    let path = "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream";
    assert!(requests.iter().all(|r| r.path == path));
    let authorization = requests[0].header("authorization").unwrap_or_default();
    assert!(authorization.contains("/eu-central-1/bedrock/aws4_request"), "{authorization}");
    assert_eq!(requests[1].header("authorization"), Some(format!("Bearer {MOCK_AWS_BEARER_TOKEN}").as_str()));
    assert_eq!(requests[0].body["inferenceConfig"], json!({"maxTokens": 32000}));
    assert_eq!(mock.remaining_responses(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn list_models_shows_bedrock_models_only_with_aws_credentials() {
    let binary = agent_binary("pi");
    let sandbox = Sandbox::new("http://127.0.0.1:9/v1");
    let without = sandbox.run(&binary, &["--list-models", "amazon-bedrock"]).await;
    assert!(!stdout(&without).contains(SONNET), "{}", stdout(&without));
    for env in [aws_keys(), vec![("AWS_PROFILE", "anything")], vec![("AWS_BEARER_TOKEN_BEDROCK", "t")]] {
        let with = sandbox.run_env(&binary, &["--list-models", "amazon-bedrock"], &env).await;
        let listed = stdout(&with);
        assert!(listed.lines().any(|line| line.starts_with("amazon-bedrock") && line.contains(SONNET)), "{listed}");
    }
}
