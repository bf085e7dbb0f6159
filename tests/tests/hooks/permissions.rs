//! End to end: agents/careful.yaml's permissions. A denied call never runs and the model learns which rule
//! refused it; `ask` is refused in print mode (the model is told about `--approve-all`), allowed with
//! `--approve-all` (denials stay), answered by RPC clients through a confirm; settings.json's rules come
//! before the YAML's. Files on disk prove what ran.

use std::path::PathBuf;

use pi_gen_tests::{Sandbox, agent_binary, stderr, stdout, tool_results};
use pi_runtime::testing::{MockLlmServer, MockScript};
use serde_json::{Value, json};

async fn server(script: Value) -> MockLlmServer {
    let script = MockScript::from_json_str(&script.to_string()).expect("valid script");
    MockLlmServer::start(script).await.expect("mock server starts")
}

fn careful() -> PathBuf {
    agent_binary("careful")
}

/// A model that makes `calls` in one answer, then says "done".
fn script(calls: Value) -> Value {
    json!({"responses": [{"toolCalls": calls}, {"text": "done"}]})
}

async fn run(sandbox: &Sandbox, extra: &[&str], prompt: &str) -> std::process::Output {
    let agent_dir = sandbox.agent_dir().to_string_lossy().into_owned();
    let args = [&["--provider", "mock", "--model", "m", "--no-session", "-p"], extra, &[prompt]].concat();
    sandbox.run_env(&careful(), &args, &[("CAREFUL_AGENT_DIR", &agent_dir)]).await
}

fn results_of(mock: &MockLlmServer) -> Vec<(String, String)> {
    let requests = mock.requests();
    assert_eq!(requests.len(), 2, "one round of tool calls, then the answer");
    tool_results(&requests[1].body)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_denied_call_never_runs_and_the_model_is_told_which_rule_refused_it() {
    let mock = server(script(json!([
        {"id": "push", "name": "bash", "arguments": {"command": "touch pushed.txt && git push origin main"}},
        {"id": "secret", "name": "read", "arguments": {"path": "config/.env"}},
        {"id": "look", "name": "read", "arguments": {"path": "README.md"}}
    ])))
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    sandbox.write("README.md", "hello from the readme\n");
    sandbox.write("config/.env", "TOKEN=hunter2\n");
    // `--approve-all` approves what would be asked; it never overrides a denial.
    let output = run(&sandbox, &["--approve-all"], "push it").await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert_eq!(stdout(&output), "done\n");
    assert!(!sandbox.work_dir().join("pushed.txt").exists(), "the denied command never ran");
    let results = results_of(&mock);
    assert_eq!(
        results[0],
        (
            "push".to_owned(),
            "Permission denied by permission rule \"no-push\"; the call did not run. Pushing is left to the people \
             who review the work."
                .to_owned()
        )
    );
    assert!(results[1].1.starts_with("Permission denied by permission rule \"no-secrets\""), "{results:?}");
    assert!(!results[1].1.contains("hunter2"));
    // The default (allow) lets reading run.
    assert!(results[2].1.contains("hello from the readme"), "{results:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn ask_is_refused_in_print_mode_and_allowed_with_approve_all() {
    let calls = json!([
        {"id": "write", "name": "write", "arguments": {"path": "notes.md", "content": "written\n"}},
        {"id": "cmd", "name": "bash", "arguments": {"command": "echo ran > ran.txt"}}
    ]);
    let mock = server(script(calls.clone())).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let output = run(&sandbox, &[], "write the notes").await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert!(!sandbox.work_dir().join("notes.md").exists(), "the refused write never ran");
    assert!(!sandbox.work_dir().join("ran.txt").exists(), "the refused command never ran");
    let results = results_of(&mock);
    for ((_, text), rule) in results.iter().zip(["changes", "commands"]) {
        assert!(text.starts_with(&format!("Not run: permission rule \"{rule}\" requires approval")), "{text}");
        assert!(text.contains("--approve-all"), "{text}");
    }

    let mock = server(script(calls)).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let output = run(&sandbox, &["--approve-all"], "write the notes").await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert_eq!(std::fs::read_to_string(sandbox.work_dir().join("notes.md")).expect("written"), "written\n");
    assert_eq!(std::fs::read_to_string(sandbox.work_dir().join("ran.txt")).expect("ran"), "ran\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn settings_rules_come_before_the_yamls() {
    let mock = server(script(json!([
        {"id": "write", "name": "write", "arguments": {"path": "notes.md", "content": "allowed\n"}},
        {"id": "look", "name": "read", "arguments": {"path": "README.md"}}
    ])))
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    sandbox.write("README.md", "readme\n");
    let settings = json!({"permissions": {"rules": [
        {"tool": "write", "match": {"path": "*.md"}, "action": "allow"},
        {"tool": "read", "action": "deny", "name": "no-reading", "reason": "Not today."}
    ]}});
    std::fs::write(sandbox.agent_dir().join("settings.json"), settings.to_string()).expect("settings");
    let output = run(&sandbox, &[], "write").await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert_eq!(std::fs::read_to_string(sandbox.work_dir().join("notes.md")).expect("written"), "allowed\n");
    let results = results_of(&mock);
    assert_eq!(results[1].1, "Permission denied by permission rule \"no-reading\"; the call did not run. Not today.");
}

/// Over RPC an `ask` becomes an `extension_ui_request` confirm: a refusal keeps the file away, an approval
/// writes it.
#[tokio::test(flavor = "multi_thread")]
async fn rpc_clients_approve_or_refuse_through_a_confirm() {
    let write = |content: &str| json!({"toolCalls": [{"name": "write", "arguments": {"path": "notes.md", "content": content}}]});
    let mock =
        server(json!({"responses": [write("first\n"), {"text": "refused"}, write("second\n"), {"text": "written"}]}))
            .await;
    let sandbox = Sandbox::new(&mock.base_url());
    let agent_dir = sandbox.agent_dir().to_string_lossy().into_owned();
    let args = ["--provider", "mock", "--model", "m", "--no-session"];
    let mut rpc = sandbox.spawn_rpc_env(&careful(), &args, &[("CAREFUL_AGENT_DIR", &agent_dir)]);
    for (number, confirmed) in [false, true].into_iter().enumerate() {
        rpc.send(json!({"type": "prompt", "id": format!("p{number}"), "message": "write the notes"})).await;
        let request = rpc.until(|line| line["type"] == "extension_ui_request" && line["method"] == "confirm").await;
        assert_eq!(request["title"], "Allow this tool call?");
        assert_eq!(request["message"], "write: notes.md\n(permission rule \"changes\")");
        assert!(!sandbox.work_dir().join("notes.md").exists(), "nothing runs before the answer");
        rpc.send(json!({"type": "extension_ui_response", "id": request["id"].clone(), "confirmed": confirmed})).await;
        rpc.until(|line| line["type"] == "agent_end").await;
    }
    assert_eq!(std::fs::read_to_string(sandbox.work_dir().join("notes.md")).expect("written"), "second\n");
    let requests = mock.requests();
    assert_eq!(
        tool_results(&requests[1].body)[0].1,
        "Denied by the user: permission rule \"changes\" asked for approval and it was refused."
    );
}
