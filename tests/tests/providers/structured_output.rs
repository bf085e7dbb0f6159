//! Structured output, end to end with agents/triage.yaml (`output.schema`): OpenAI chat completions gets the
//! schema as `response_format`, Anthropic (no native form) gets it in the system prompt; a valid answer is
//! printed as the JSON alone; an invalid one is sent back once with the validation errors; one still invalid
//! after that fails print mode.

use super::*;

const VALID: &str = r#"{"severity": "minor", "area": "cli", "summary": "Typo in --help.", "files": ["src/cli.rs"]}"#;

async fn triage(sandbox: &Sandbox, args: &[&str]) -> std::process::Output {
    let agent_dir = sandbox.agent_dir().to_string_lossy().into_owned();
    sandbox.run_env(&agent_binary("triage"), args, &[("TRIAGE_AGENT_DIR", &agent_dir)]).await
}

const PRINT: [&str; 7] = ["--provider", "mock", "--model", "m", "--no-session", "-p", "Triage: the help has a typo"];

#[tokio::test(flavor = "multi_thread")]
async fn a_valid_answer_is_printed_as_the_json_alone_and_chat_completions_gets_the_schema() {
    let mock = server(json!([{"text": format!("```json\n{VALID}\n```")}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let output = triage(&sandbox, &PRINT).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let printed: Value = serde_json::from_str(stdout(&output).trim()).expect("the JSON alone");
    assert_eq!(printed, serde_json::from_str::<Value>(VALID).expect("valid JSON"));
    assert_eq!(stdout(&output).lines().count(), 1);
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    let format = &requests[0].body["response_format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["json_schema"]["schema"]["required"], json!(["severity", "area", "summary", "files"]));
    let system = requests[0].body["messages"][0]["content"].as_str().expect("system prompt");
    assert!(system.contains("must be a single JSON value"), "{system}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_invalid_answer_is_corrected_once_with_the_validation_errors() {
    let mock = server(json!([
        {"text": r#"{"severity": "urgent", "area": "cli", "summary": "Typo."}"#},
        {"text": VALID}
    ]))
    .await;
    let sandbox = Sandbox::with_api("anthropic-messages", &base_url("anthropic-messages", &mock));
    let output = triage(&sandbox, &PRINT).await;
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        serde_json::from_str::<Value>(stdout(&output).trim()).expect("the JSON alone"),
        serde_json::from_str::<Value>(VALID).expect("valid JSON")
    );
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "one correction");
    assert!(requests[0].body.get("response_format").is_none(), "Anthropic has no native form");
    let system = requests[0].body["system"][0]["text"].as_str().expect("system prompt");
    assert!(system.contains("\"not-a-bug\""), "the schema is in the system prompt: {system}");
    let messages = requests[1].body["messages"].as_array().expect("messages");
    let correction = messages.last().expect("the correction");
    let text = correction["content"][0]["text"].as_str().expect("text");
    assert!(text.contains("does not match the required output schema"), "{text}");
    assert!(text.contains("at /severity: "), "{text}");
    assert!(text.contains("\"files\" is a required property"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_still_invalid_after_the_correction_fails_print_mode() {
    let mock = server(json!([{"text": "It is a minor bug."}, {"text": "Really, a minor one."}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let output = triage(&sandbox, &PRINT).await;
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    assert_eq!(stdout(&output), "");
    assert!(
        stderr(&output).contains("the final answer does not match the output schema: the answer is not JSON"),
        "{}",
        stderr(&output)
    );
    assert_eq!(mock.requests().len(), 2, "one correction, no more");
}
