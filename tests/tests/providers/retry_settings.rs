//! pi's `retry.provider` settings reach the SDK-level retries of every API: `maxRetries` 0 costs one request
//! per 503, 2 costs three (the Gemini SDK keeps its own rule, as in pi); with agent-level retry on, each
//! failure is then reported as pi reports it (`auto_retry_*` events, the error answer in the session).

use super::*;

fn write_settings(sandbox: &Sandbox, settings: Value) {
    std::fs::write(sandbox.agent_dir().join("settings.json"), settings.to_string()).expect("settings");
}

#[tokio::test(flavor = "multi_thread")]
async fn provider_max_retries_sets_how_many_requests_a_503_costs() {
    let binary = agent_binary("pi");
    let args = [&MODEL_ARGS[..], &["-p", "hi"]].concat();
    for api in APIS {
        let mock = server(json!([unavailable(api), unavailable(api), {"text": "Third time."}])).await;
        let sandbox = Sandbox::with_api(api, &base_url(api, &mock));
        write_settings(&sandbox, json!({"retry": {"enabled": false, "provider": {"maxRetries": 0}}}));
        let once = sandbox.run(&binary, &args).await;
        assert_eq!(once.status.code(), Some(1), "{api}: {}", stderr(&once));
        assert_eq!(mock.requests().len(), 1, "{api}: maxRetries 0 sends the request once");

        let mock = server(json!([unavailable(api), unavailable(api), {"text": "Third time."}])).await;
        let sandbox = Sandbox::with_api(api, &base_url(api, &mock));
        write_settings(&sandbox, json!({"retry": {"enabled": false, "provider": {"maxRetries": 2}}}));
        let thrice = sandbox.run(&binary, &args).await;
        if api == "google-generative-ai" {
            assert_eq!(thrice.status.code(), Some(1), "{api}: the Gemini SDK does not retry");
            assert_eq!(mock.requests().len(), 1, "{api}");
        } else {
            assert!(thrice.status.success(), "{api}: {}", stderr(&thrice));
            assert_eq!(stdout(&thrice), "Third time.\n", "{api}");
            assert_eq!(mock.requests().len(), 3, "{api}: two retries");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn without_sdk_retries_the_agent_retry_reports_each_failure() {
    let binary = agent_binary("pi");
    let api = "openai-completions";
    let mock = server(json!([unavailable(api), {"text": "Recovered."}])).await;
    let sandbox = Sandbox::with_api(api, &base_url(api, &mock));
    write_settings(&sandbox, json!({"retry": {"baseDelayMs": 10, "provider": {"maxRetries": 0}}}));
    let output = sandbox.run(&binary, &[&MODEL_ARGS[..], &["--mode", "json", "hi"]].concat()).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let events: Vec<Value> =
        stdout(&output).lines().map(|line| serde_json::from_str(line).expect("a JSON event")).collect();
    let types: Vec<&str> = events
        .iter()
        .filter_map(|event| event["type"].as_str())
        .filter(|kind| kind.starts_with("auto_retry"))
        .collect();
    assert_eq!(types, ["auto_retry_start", "auto_retry_end"]);
    let failed = events
        .iter()
        .find(|event| event["type"] == "message_end" && event["message"]["stopReason"] == "error")
        .expect("the failed answer is reported");
    assert!(failed["message"]["errorMessage"].as_str().is_some_and(|text| text.contains("503")), "{failed}");
    assert_eq!(mock.requests().len(), 2, "one request per attempt");
}
