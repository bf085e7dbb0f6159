//! End to end over every LLM API: the generated pi binary with a models.json provider of each api
//! completes a read-then-answer round trip against the mock server with the API's request shapes,
//! and a dropped connection, a 503 or a stalled stream ends print mode with a clear error and exit 1.

use pi_gen_tests::{Sandbox, agent_binary, stderr, stdout};
use pi_runtime::testing::{MockLlmServer, MockScript, RecordedRequest};
use serde_json::{Value, json};

async fn server(script: Value) -> MockLlmServer {
    let script = MockScript::from_json_str(&script.to_string()).expect("valid script");
    MockLlmServer::start(script).await.expect("mock server starts")
}

/// The base URL a user would write in models.json for `api` at the mock server.
fn base_url(api: &str, mock: &MockLlmServer) -> String {
    let port = mock.addr().port();
    match api {
        "anthropic-messages" => format!("http://127.0.0.1:{port}"),
        "google-generative-ai" => format!("http://127.0.0.1:{port}/v1beta"),
        _ => mock.base_url(),
    }
}

/// A scripted 503 with each vendor's own error body (Google's carries the code; pi shows Google errors as that
/// JSON), asking for a 10 ms wait.
fn unavailable(api: &str) -> Value {
    let body = match api {
        "google-generative-ai" => {
            json!({"error": {"code": 503, "message": "upstream overloaded", "status": "UNAVAILABLE"}})
        }
        "anthropic-messages" => {
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "upstream overloaded"}})
        }
        _ => json!({"error": {"message": "upstream overloaded"}}),
    };
    json!({"error": {"status": 503, "body": body, "headers": {"retry-after-ms": "10"}}})
}

const APIS: [&str; 4] = ["openai-completions", "anthropic-messages", "openai-responses", "google-generative-ai"];
const MODEL_ARGS: [&str; 4] = ["--provider", "mock", "--model", "m"];

/// What each API's request must look like: path, auth header, where the system prompt and tools go.
fn assert_request_shape(api: &str, request: &RecordedRequest) {
    let body = &request.body;
    let keys: Vec<&str> = body.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
    match api {
        "openai-completions" => {
            assert_eq!(request.path, "/v1/chat/completions");
            assert_eq!(request.header("authorization"), Some("Bearer mock-key"));
            assert_eq!(body["messages"][0]["role"], "system");
            assert_eq!(body["tools"][0]["type"], "function");
        }
        "anthropic-messages" => {
            assert_eq!(request.path, "/v1/messages");
            assert_eq!(request.header("x-api-key"), Some("mock-key"));
            assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
            assert_eq!(keys[..4], ["model", "messages", "max_tokens", "stream"], "{keys:?}");
            assert_eq!(body["system"][0]["cache_control"], json!({"type": "ephemeral"}));
            assert!(body["tools"][0]["input_schema"].is_object(), "{body}");
        }
        "openai-responses" => {
            assert_eq!(request.path, "/v1/responses");
            assert_eq!(request.header("authorization"), Some("Bearer mock-key"));
            assert_eq!(keys[..2], ["model", "input"], "{keys:?}");
            assert_eq!(body["stream"], true);
            assert_eq!(body["tools"][0]["type"], "function");
            assert!(body["tools"][0]["name"].is_string(), "{body}");
        }
        "google-generative-ai" => {
            assert!(request.path.starts_with("/v1beta/models/m:streamGenerateContent"), "{}", request.path);
            assert!(request.path.contains("alt=sse"), "{}", request.path);
            assert_eq!(request.header("x-goog-api-key"), Some("mock-key"));
            assert!(body["contents"].is_array(), "{body}");
            assert!(body["systemInstruction"].is_object(), "{body}");
            assert!(body["tools"][0]["functionDeclarations"].is_array(), "{body}");
        }
        other => panic!("unknown api {other}"),
    }
}

/// Where the second request carries the file's content back to the model.
fn tool_result_text(api: &str, body: &Value) -> String {
    let found = match api {
        "openai-completions" => body["messages"][3]["content"].clone(),
        "anthropic-messages" => body["messages"][2]["content"][0]["content"].clone(),
        "openai-responses" => body["input"]
            .as_array()
            .and_then(|items| items.iter().find(|i| i["type"] == "function_call_output"))
            .map(|item| item["output"].clone())
            .unwrap_or(Value::Null),
        _ => body["contents"][2]["parts"][0]["functionResponse"]["response"]["output"].clone(),
    };
    found.as_str().map(str::to_owned).unwrap_or_else(|| found.to_string())
}

#[tokio::test(flavor = "multi_thread")]
async fn read_round_trip_over_every_api() {
    let binary = agent_binary("pi");
    for api in APIS {
        let mock = server(json!([
            {"toolCalls": [{"id": "call_1", "name": "read", "arguments": {"path": "hello.txt"}}]},
            {"text": "The file says hello."}
        ]))
        .await;
        let sandbox = Sandbox::with_api(api, &base_url(api, &mock));
        sandbox.write("hello.txt", "Hello from the fixture file.\nSecond line.\n");
        let output = sandbox.run(&binary, &[&MODEL_ARGS[..], &["-p", "What does hello.txt say?"]].concat()).await;
        assert!(output.status.success(), "{api}: stderr: {}", stderr(&output));
        assert_eq!(stdout(&output), "The file says hello.\n", "{api}");
        let requests = mock.requests();
        assert_eq!(requests.len(), 2, "{api}");
        for request in &requests {
            assert_request_shape(api, request);
        }
        let returned = tool_result_text(api, &requests[1].body);
        assert!(returned.contains("Hello from the fixture file."), "{api}: {}", requests[1].body);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn faults_end_print_mode_with_a_clear_error_and_exit_code_1() {
    let binary = agent_binary("pi");
    for api in APIS {
        let unavailable = unavailable(api);
        let mock = server(json!([
            {"text": "This answer is cut off in the middle of", "disconnectAfter": 3},
            unavailable, unavailable, unavailable,
            {"text": "This answer stalls", "stallAfter": 2}
        ]))
        .await;
        let sandbox = Sandbox::with_api(api, &base_url(api, &mock));
        // Each fault on its own: the session layer's auto-retry is covered in tests/tests/sessions.rs.
        std::fs::write(sandbox.agent_dir().join("settings.json"), r#"{"retry": {"enabled": false}}"#)
            .expect("settings");
        let args = [&MODEL_ARGS[..], &["-p", "hi"]].concat();

        let cut = sandbox.run(&binary, &args).await;
        assert_eq!(cut.status.code(), Some(1), "{api}: a dropped connection fails");
        assert!(!stderr(&cut).trim().is_empty(), "{api}: the error is printed");

        let unavailable = sandbox.run(&binary, &args).await;
        assert_eq!(unavailable.status.code(), Some(1), "{api}");
        let said = stderr(&unavailable);
        assert!(said.contains("503") && said.contains("upstream overloaded"), "{api}: {said}");

        // Skip the 503s the SDK rules did not retry, so the stall comes next for every API.
        while mock.remaining_responses() > 1 {
            let _ = sandbox.run(&binary, &args).await;
        }
        let started = std::time::Instant::now();
        let stalled = sandbox.run_env(&binary, &args, &[("PI_GEN_STREAM_IDLE_TIMEOUT_MS", "500")]).await;
        assert_eq!(stalled.status.code(), Some(1), "{api}");
        assert_eq!(stderr(&stalled), "Request timed out.\n", "{api}");
        assert!(started.elapsed().as_secs() < 10, "{api}: the stall was not cut short");
    }
}

mod azure_mistral;
mod bedrock;
mod codex_copilot;
mod fallbacks;
mod new_apis;
mod proxy;
mod retry_settings;
mod structured_output;
mod subscriptions;
mod vertex;

#[tokio::test(flavor = "multi_thread")]
async fn a_200_answer_that_is_not_an_event_stream_is_an_error_naming_it() {
    let binary = agent_binary("pi");
    for api in APIS {
        let mock = server(json!([
            {"error": {"status": 200, "body": {"error": {"message": "quota exhausted"}}}},
            {"error": {"status": 200, "body": "<html>proxy login page</html>"}}
        ]))
        .await;
        let sandbox = Sandbox::with_api(api, &base_url(api, &mock));
        std::fs::write(sandbox.agent_dir().join("settings.json"), r#"{"retry": {"enabled": false}}"#)
            .expect("settings");
        let args = [&MODEL_ARGS[..], &["-p", "hi"]].concat();
        for (wanted_type, wanted_body) in [("application/json", "quota exhausted"), ("text/plain", "proxy login page")]
        {
            let output = sandbox.run(&binary, &args).await;
            assert_eq!(output.status.code(), Some(1), "{api}: {}", stdout(&output));
            let said = stderr(&output);
            assert!(said.contains("200") && said.contains(wanted_type) && said.contains(wanted_body), "{api}: {said}");
            assert!(said.contains("127.0.0.1"), "{api}: the URL is named: {said}");
        }
    }
}
