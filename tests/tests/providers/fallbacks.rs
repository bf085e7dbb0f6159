//! Fallback models, end to end with agents/careful.yaml (`model.fallbacks: [anthropic/claude-haiku-4-5:low]`,
//! with the anthropic provider pointed at the mock): a 400 moves the same request to the fallback at once, a
//! 503 does after the retries are used up (`--fallback-model` first); a `model_fallback` event and `custom`
//! entry record it, no `model_change`, and `-c` resumes on the model the user chose.

use super::*;

/// A sandbox whose `mock` provider has models `m` and `m2` (openai-completions) and whose built-in
/// `anthropic` provider answers from the same mock server.
fn fallback_sandbox(mock: &MockLlmServer) -> Sandbox {
    let sandbox = Sandbox::new(&mock.base_url());
    let models = json!({"providers": {
        "mock": {
            "baseUrl": mock.base_url(),
            "api": "openai-completions",
            "apiKey": "mock-key",
            "models": [{"id": "m"}, {"id": "m2"}]
        },
        "anthropic": {"baseUrl": base_url("anthropic-messages", mock), "apiKey": "anthropic-mock-key"}
    }});
    std::fs::write(sandbox.agent_dir().join("models.json"), models.to_string()).expect("models.json");
    sandbox
}

async fn careful(sandbox: &Sandbox, args: &[&str]) -> std::process::Output {
    let agent_dir = sandbox.agent_dir().to_string_lossy().into_owned();
    sandbox.run_env(&agent_binary("careful"), args, &[("CAREFUL_AGENT_DIR", &agent_dir)]).await
}

fn json_lines(text: &str) -> Vec<Value> {
    text.lines().map(|line| serde_json::from_str(line).expect("a JSON line")).collect()
}

fn session_entries(sandbox: &Sandbox) -> Vec<Value> {
    let files = sandbox.session_files();
    assert_eq!(files.len(), 1, "{files:?}");
    json_lines(&std::fs::read_to_string(&files[0]).expect("the session file"))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_400_sends_the_same_request_to_the_fallback_and_resuming_keeps_the_chosen_model() {
    let mock = server(json!([
        {"error": {"status": 400, "body": {"error": {"message": "this model is gone"}}}},
        {"text": "Answered by the fallback."},
        {"text": "Answered by the chosen model again."}
    ]))
    .await;
    let sandbox = fallback_sandbox(&mock);
    let output = careful(&sandbox, &["--provider", "mock", "--model", "m", "--mode", "json", "Say hello"]).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let events = json_lines(&stdout(&output));
    let fallback = events.iter().find(|event| event["type"] == "model_fallback").expect("a model_fallback event");
    assert_eq!(fallback["from"], "mock/m");
    assert_eq!(fallback["to"], "anthropic/claude-haiku-4-5");
    assert!(fallback["errorMessage"].as_str().is_some_and(|text| text.contains("this model is gone")), "{fallback}");
    let last = events.iter().rev().find(|event| event["type"] == "message_end").expect("an answer");
    assert_eq!(last["message"]["content"][0]["text"], "Answered by the fallback.");
    assert_eq!(last["message"]["provider"], "anthropic");

    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "a 400 is not retried: the fallback gets the next request");
    assert_eq!((requests[0].path.as_str(), &requests[0].body["model"]), ("/v1/chat/completions", &json!("m")));
    assert_eq!(requests[1].path, "/v1/messages");
    assert_eq!(requests[1].body["model"], "claude-haiku-4-5");
    assert_eq!(requests[1].header("x-api-key"), Some("anthropic-mock-key"));
    // The same request: the user's prompt is there, the failed answer is not.
    let messages = requests[1].body["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert_eq!(messages[0]["content"][0]["text"], "Say hello");

    let entries = session_entries(&sandbox);
    let custom = entries.iter().find(|entry| entry["type"] == "custom").expect("the fallback's entry");
    assert_eq!(custom["customType"], "model_fallback");
    assert_eq!(custom["data"]["from"], "mock/m");
    assert_eq!(custom["data"]["to"], "anthropic/claude-haiku-4-5");
    assert_eq!(custom["data"]["thinkingLevel"], "low");
    let model_changes: Vec<&Value> = entries.iter().filter(|entry| entry["type"] == "model_change").collect();
    assert_eq!(model_changes.len(), 1, "only the session's start records a model: {model_changes:?}");
    assert_eq!(model_changes[0]["modelId"], "m");

    let resumed = careful(&sandbox, &["-c", "-p", "Again"]).await;
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    assert_eq!(stdout(&resumed), "Answered by the chosen model again.\n");
    let third = &mock.requests()[2];
    assert_eq!((third.path.as_str(), &third.body["model"]), ("/v1/chat/completions", &json!("m")));
}

#[tokio::test(flavor = "multi_thread")]
async fn after_the_retries_are_used_up_the_flags_fallback_comes_first() {
    let unavailable = json!({"error": {"status": 503, "body": {"error": {"message": "overloaded"}}}});
    let mock = server(json!([unavailable.clone(), unavailable, {"text": "The second mock model answers."}])).await;
    let sandbox = fallback_sandbox(&mock);
    let settings = json!({"retry": {"maxRetries": 1, "baseDelayMs": 1, "provider": {"maxRetries": 0}}});
    std::fs::write(sandbox.agent_dir().join("settings.json"), settings.to_string()).expect("settings");
    let args = ["--provider", "mock", "--model", "m", "--fallback-model", "mock/m2", "--no-session", "-p", "hi"];
    let output = careful(&sandbox, &args).await;
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(stdout(&output), "The second mock model answers.\n");
    let models: Vec<Value> = mock.requests().iter().map(|request| request.body["model"].clone()).collect();
    assert_eq!(models, [json!("m"), json!("m"), json!("m2")], "one retry on m, then the fallback");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_usable_fallback_the_error_stands() {
    let mock = server(json!([{"error": {"status": 400, "body": {"error": {"message": "bad request"}}}}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    // The YAML's anthropic fallback has no key here: it is skipped with a reason, and the run fails as before.
    let output =
        careful(&sandbox, &["--provider", "mock", "--model", "m", "--no-session", "--mode", "json", "hi"]).await;
    let events = json_lines(&stdout(&output));
    let skipped = events.iter().find(|event| event["type"] == "model_fallback").expect("the skipped fallback");
    assert_eq!(skipped["to"], "anthropic/claude-haiku-4-5:low");
    assert!(skipped["skipped"].as_str().is_some_and(|reason| !reason.is_empty()), "{skipped}");
    assert_eq!(mock.requests().len(), 1);
}
