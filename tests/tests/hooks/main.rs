//! End to end: YAML hooks in generated agents. agents/guarded.yaml refuses a recursive delete (the command
//! never runs), audits every tool call through a shell script, redacts a tool result through a command hook,
//! appends to the system prompt for one prompt only and rewrites input; the shaper fixture's command hooks
//! prune the context every turn and edit the request body, and a failing hook does not stop the run.

mod permissions;

use std::path::Path;

use pi_gen_tests::{Sandbox, agent_binary, build_yaml, stderr, stdout, tool_results, workspace_root};
use pi_runtime::testing::{MockLlmServer, MockScript};
use serde_json::Value;

async fn server(script: &str) -> MockLlmServer {
    let script = MockScript::from_json_str(script).expect("valid script");
    MockLlmServer::start(script).await.expect("mock server starts")
}

const MODEL_ARGS: [&str; 4] = ["--provider", "mock", "--model", "m"];

async fn run(sandbox: &Sandbox, binary: &Path, env_var: &str, prompts: &[&str]) -> std::process::Output {
    let agent_dir = sandbox.agent_dir();
    let env = [(env_var, agent_dir.to_str().expect("utf-8"))];
    let args = [&MODEL_ARGS[..], &["-p"], prompts].concat();
    sandbox.run_env(binary, &args, &env).await
}

fn system_prompt(body: &Value) -> &str {
    body["messages"][0]["content"].as_str().expect("system prompt")
}

fn audit_log(sandbox: &Sandbox) -> Vec<Value> {
    let text = std::fs::read_to_string(sandbox.work_dir().join(".guarded/audit.jsonl")).unwrap_or_default();
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).expect("json line"))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_blocking_hook_refuses_the_dangerous_call_and_the_command_never_runs() {
    let binary = agent_binary("guarded");
    let mock = server(
        r#"{"responses": [
            {"toolCalls": [{"id": "call_rm", "name": "bash", "arguments": {"command": "rm -rf data"}}]},
            {"text": "I was not allowed to delete it."}
        ]}"#,
    )
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    sandbox.write("data/keep.txt", "precious\n");
    let output = run(&sandbox, &binary, "GUARDED_AGENT_DIR", &["Delete the data directory"]).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert_eq!(stdout(&output), "I was not allowed to delete it.\n");
    assert!(sandbox.work_dir().join("data/keep.txt").exists(), "rm -rf never ran");

    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let results = tool_results(&requests[1].body);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].0, "call_rm");
    assert_eq!(
        results[0].1,
        "Refused by the project's guard: recursive deletes are not allowed. Delete single files instead."
    );
    // The audit hook comes first in the YAML, so it saw the call before the guard refused it.
    let audit = audit_log(&sandbox);
    assert_eq!(audit.len(), 1, "{audit:?}");
    assert_eq!(audit[0]["type"], "tool_call");
    assert_eq!(audit[0]["toolName"], "bash");
    assert_eq!(audit[0]["toolCallId"], "call_rm");
    assert_eq!(audit[0]["input"]["command"], "rm -rf data");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_hook_sees_every_tool_call_and_rewrites_a_result() {
    let binary = agent_binary("guarded");
    let mock = server(
        r#"{"responses": [
            {"toolCalls": [
                {"id": "call_env", "name": "bash", "arguments": {"command": "echo API_KEY=abc123 ok"}},
                {"id": "call_read", "name": "read", "arguments": {"path": "notes.txt"}}
            ]},
            {"toolCalls": [{"id": "call_ls", "name": "bash", "arguments": {"command": "ls"}}]},
            {"text": "Looked around."}
        ]}"#,
    )
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    sandbox.write("notes.txt", "TOKEN=kept-in-files-read-by-read\n");
    let output = run(&sandbox, &binary, "GUARDED_AGENT_DIR", &["Look around"]).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));

    let audit = audit_log(&sandbox);
    let seen: Vec<(&str, &str)> = audit
        .iter()
        .map(|event| (event["toolName"].as_str().unwrap(), event["toolCallId"].as_str().unwrap()))
        .collect();
    assert_eq!(seen, [("bash", "call_env"), ("read", "call_read"), ("bash", "call_ls")]);
    assert!(audit.iter().all(|event| event["cwd"].is_string() && event["sessionId"].is_string()), "{audit:?}");

    let requests = mock.requests();
    let results = tool_results(&requests[1].body);
    assert_eq!(results[0], ("call_env".to_owned(), "API_KEY=[redacted] ok\n".to_owned()));
    // The redact hook only matches bash: read's result is untouched.
    assert!(results[1].1.contains("TOKEN=kept-in-files-read-by-read"), "{results:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn system_prompt_changes_apply_to_one_prompt_only_and_input_is_rewritten() {
    let binary = agent_binary("guarded");
    let mock = server(r#"{"responses": [{"text": "1. look\n2. fix"}, {"text": "Fixed."}]}"#).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let output =
        run(&sandbox, &binary, "GUARDED_AGENT_DIR", &["Make a plan for the parser", "fix: crash on empty input"]).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let appended = "Before changing anything, write a short numbered plan and wait for approval.";
    let first = system_prompt(&requests[0].body);
    let second = system_prompt(&requests[1].body);
    assert!(first.ends_with(&format!("\n\n{appended}")), "{first}");
    assert!(!second.contains(appended), "{second}");
    assert_eq!(first, format!("{second}\n\n{appended}"), "only the hook's text differs");
    let last_user =
        requests[1].body["messages"].as_array().unwrap().iter().rev().find(|m| m["role"] == "user").unwrap();
    assert_eq!(last_user["content"][0]["text"], "Find the cause of this bug and fix it: crash on empty input");
}

#[tokio::test(flavor = "multi_thread")]
async fn command_hooks_prune_the_context_every_turn_and_edit_the_payload() {
    let yaml = workspace_root().join("tests/fixtures/shaper/shaper.yaml");
    let binary = build_yaml(&yaml, "shaper");
    let mock = server(
        r#"{"responses": [
            {"toolCalls": [{"id": "call_1", "name": "bash", "arguments": {"command": "echo one"}}]},
            {"toolCalls": [{"id": "call_2", "name": "bash", "arguments": {"command": "echo two"}}]},
            {"text": "Done."}
        ]}"#,
    )
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    let output = run(&sandbox, &binary, "SHAPER_AGENT_DIR", &["Run two commands"]).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert_eq!(stdout(&output), "Done.\n");
    let errors = stderr(&output);
    assert!(
        errors.contains("flaky") && errors.contains("agent_start") && errors.contains("the flaky hook gave up"),
        "{errors}"
    );

    let requests = mock.requests();
    assert_eq!(requests.len(), 3);
    for request in &requests {
        assert_eq!(request.body["temperature"], 0.25);
        assert_eq!(request.body["metadata"]["hooked"], "yes");
        let roles: Vec<&str> =
            request.body["messages"].as_array().unwrap().iter().filter_map(|m| m["role"].as_str()).collect();
        assert!(roles.len() <= 3, "system + at most two messages: {roles:?}");
    }
    let last: Vec<&Value> = requests[2].body["messages"].as_array().unwrap().iter().skip(1).collect();
    assert_eq!(last[0]["role"], "assistant");
    assert_eq!(last[1]["role"], "tool");
    assert_eq!(last[1]["content"], "two\n");
}
