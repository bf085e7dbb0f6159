//! End to end: the example agents in agents/ (and one made by `pi-gen new`) built by pi-gen and driven by
//! the scripted mock server through their own tools, prompts and settings.

use std::process::Command;

use pi_gen_tests::{Sandbox, agent_binary, stderr, stdout, workspace_root};
use pi_runtime::testing::{MockLlmServer, MockScript};
use serde_json::Value;

#[path = "agents/sf.rs"]
mod sf;
#[path = "agents/subagents.rs"]
mod subagents;

async fn server(script: &str) -> MockLlmServer {
    let script = MockScript::from_json_str(script).expect("valid script");
    MockLlmServer::start(script).await.expect("mock server starts")
}

const MODEL_ARGS: [&str; 4] = ["--provider", "mock", "--model", "m"];

fn git(dir: &std::path::Path, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(status.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&status.stderr));
}

/// A work tree with one committed file and an uncommitted change to it.
fn repository_with_a_change(sandbox: &Sandbox) {
    let work = sandbox.work_dir();
    sandbox.write("calc.py", "def add(a, b):\n    return a + b\n");
    git(&work, &["init", "-q"]);
    git(&work, &["add", "."]);
    git(&work, &["commit", "-q", "-m", "first"]);
    sandbox.write("calc.py", "def add(a, b):\n    return a - b\n");
}

/// Runs an agent in print mode with `prompt`, its agent directory given through `env_var`; asserts success.
async fn run_print(sandbox: &Sandbox, binary: &std::path::Path, env_var: &str, prompt: &str) -> String {
    let agent_dir = sandbox.agent_dir();
    let env = [(env_var, agent_dir.to_str().expect("utf-8"))];
    let output = sandbox.run_env(binary, &[&MODEL_ARGS[..], &["-p", prompt]].concat(), &env).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    stdout(&output)
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn reviewer_reads_the_diff_through_its_command_tool_and_reports() {
    let binary = agent_binary("reviewer");
    let mock = server(
        r#"{"responses": [
            {"toolCalls": [{"id": "call_1", "name": "git_diff", "arguments": {"paths": ["calc.py"]}}]},
            {"text": "calc.py:2 bug: add subtracts."}
        ]}"#,
    )
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    repository_with_a_change(&sandbox);
    let answer = run_print(&sandbox, &binary, "REVIEWER_AGENT_DIR", "/review focus on arithmetic").await;
    assert_eq!(answer, "calc.py:2 bug: add subtracts.\n");

    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let first = &requests[0].body;
    assert_eq!(tool_names(first), ["read", "grep", "find", "ls", "git_diff"]);
    let git_diff = &first["tools"][4]["function"];
    assert_eq!(git_diff["parameters"]["properties"]["paths"]["type"], "array");
    let system = first["messages"][0]["content"].as_str().expect("system prompt");
    assert!(system.starts_with("You are reviewer, a meticulous code reviewer."), "{system}");
    assert!(system.contains("- git_diff: Show uncommitted changes, or the changes since a base revision"), "{system}");
    assert!(system.contains("Use git_diff before reading files"), "{system}");
    assert!(system.contains("Report each finding as path:line"), "{system}");
    // The inline prompt template expanded the /review command.
    let user = first["messages"][1]["content"][0]["text"].as_str().expect("user text");
    assert_eq!(user, "Review the uncommitted changes with git_diff and report your findings. focus on arithmetic");
    // The YAML's `thinking: high` is clamped away for a model without reasoning, so no effort is sent.
    assert!(first.get("reasoning_effort").is_none(), "{first}");

    let result = &requests[1].body["messages"][3];
    assert_eq!(result["role"], "tool");
    let diff = result["content"].as_str().expect("diff text");
    assert!(diff.contains("-    return a + b\n+    return a - b"), "{diff}");
    assert!(diff.contains("diff --git a/calc.py b/calc.py"), "{diff}");
}

#[tokio::test(flavor = "multi_thread")]
async fn reviewers_focus_command_expands_its_prompt_with_the_arguments() {
    let binary = agent_binary("reviewer");
    let mock = server(r#"{"responses": [{"text": "calc.py:2 bug: add subtracts."}]}"#).await;
    let sandbox = Sandbox::new(&mock.base_url());
    repository_with_a_change(&sandbox);
    let answer = run_print(&sandbox, &binary, "REVIEWER_AGENT_DIR", "/focus calc.py \"the arithmetic\" only").await;
    assert_eq!(answer, "calc.py:2 bug: add subtracts.\n");
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    let user = requests[0].body["messages"][1]["content"][0]["text"].as_str().expect("user text");
    assert_eq!(
        user,
        "Review the file calc.py in depth: read all of it and the code it calls, then report your findings. \
         the arithmetic only"
    );

    // A missing required argument is an error that names it, and nothing reaches the model.
    let agent_dir = sandbox.agent_dir();
    let env = [("REVIEWER_AGENT_DIR", agent_dir.to_str().expect("utf-8"))];
    let output = sandbox.run_env(&binary, &[&MODEL_ARGS[..], &["-p", "/focus"]].concat(), &env).await;
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stderr(&output), "Error: /focus needs the argument <file>; usage: /focus <file> [focus]\n");
    assert_eq!(mock.requests().len(), 1, "no second request");
}

#[tokio::test(flavor = "multi_thread")]
async fn reviewers_changed_command_prints_its_output_without_asking_the_model() {
    let binary = agent_binary("reviewer");
    let mock = server(r#"{"responses": [{"text": "unused"}]}"#).await;
    let sandbox = Sandbox::new(&mock.base_url());
    repository_with_a_change(&sandbox);
    sandbox.write("notes.txt", "new\n");
    let answer = run_print(&sandbox, &binary, "REVIEWER_AGENT_DIR", "/changed").await;
    assert_eq!(answer, " M calc.py\n?? notes.txt\n");
    // The arguments are the shell's "$@": a path limits the listing, a hostile one stays a path.
    let answer = run_print(&sandbox, &binary, "REVIEWER_AGENT_DIR", "/changed calc.py").await;
    assert_eq!(answer, " M calc.py\n");
    let answer = run_print(&sandbox, &binary, "REVIEWER_AGENT_DIR", "/changed '$(touch pwned)'").await;
    assert_eq!(answer, "");
    assert!(!sandbox.work_dir().join("pwned").exists(), "the argument ran as a command");
    // json mode shows the output as pi's `notify` request.
    let agent_dir = sandbox.agent_dir();
    let env = [("REVIEWER_AGENT_DIR", agent_dir.to_str().expect("utf-8"))];
    let args = [&MODEL_ARGS[..], &["--mode", "json", "/changed calc.py"]].concat();
    let output = sandbox.run_env(&binary, &args, &env).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let lines: Vec<Value> = stdout(&output).lines().map(|line| serde_json::from_str(line).expect("json")).collect();
    let notify = lines.iter().find(|line| line["type"] == "extension_ui_request").expect("a notify line");
    assert_eq!((notify["method"].as_str(), notify["message"].as_str()), (Some("notify"), Some(" M calc.py")));
    assert!(mock.requests().is_empty(), "no model request: {:?}", mock.requests().len());
}

#[tokio::test(flavor = "multi_thread")]
async fn reviewers_commands_are_listed_and_run_over_rpc() {
    let binary = agent_binary("reviewer");
    let mock = server(r#"{"responses": [{"text": "Looked at calc.py."}]}"#).await;
    let sandbox = Sandbox::new(&mock.base_url());
    repository_with_a_change(&sandbox);
    let agent_dir = sandbox.agent_dir();
    let env = [("REVIEWER_AGENT_DIR", agent_dir.to_str().expect("utf-8"))];
    let mut rpc = sandbox.spawn_rpc_env(&binary, &[&MODEL_ARGS[..], &["--no-session"]].concat(), &env);
    let reply = rpc.call("1", serde_json::json!({"type": "get_commands"})).await;
    let commands = reply["data"]["commands"].as_array().expect("commands").clone();
    let focus = commands.iter().find(|command| command["name"] == "focus").expect("focus listed");
    assert_eq!(focus["description"], "<file> [focus] — Review one file in depth");
    assert_eq!(focus["source"], "extension");
    assert_eq!(focus["sourceInfo"]["path"], "commands[0]");
    assert!(commands.iter().any(|command| command["name"] == "review" && command["source"] == "prompt"));

    let reply = rpc.call("2", serde_json::json!({"type": "prompt", "message": "/changed"})).await;
    assert_eq!(reply["success"], true, "{reply}");
    let notify = rpc.until(|line| line["type"] == "extension_ui_request").await;
    assert_eq!((notify["method"].as_str(), notify["message"].as_str()), (Some("notify"), Some(" M calc.py")));

    let reply = rpc.call("3", serde_json::json!({"type": "steer", "message": "/changed"})).await;
    assert_eq!(reply["success"], false, "a command is not queued: {reply}");
    let reply = rpc.call("4", serde_json::json!({"type": "prompt", "message": "/focus"})).await;
    assert_eq!(reply["error"], "/focus needs the argument <file>; usage: /focus <file> [focus]");

    let reply = rpc.call("5", serde_json::json!({"type": "prompt", "message": "/focus calc.py"})).await;
    assert_eq!(reply["success"], true, "{reply}");
    rpc.until(|line| line["type"] == "agent_end").await;
    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    let user = requests[0].body["messages"][1]["content"][0]["text"].as_str().expect("user text");
    assert!(user.starts_with("Review the file calc.py in depth"), "{user}");
    let (code, _) = rpc.close().await;
    assert_eq!(code, Some(0));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hostile_argument_to_a_command_tool_runs_no_second_command() {
    let binary = agent_binary("reviewer");
    let mock = server(
        r#"{"responses": [
            {"toolCalls": [{"id": "call_1", "name": "git_diff", "arguments": {"base": "x; touch pwned", "paths": ["$(touch pwned2)", "`touch pwned3`"]}}]},
            {"text": "That revision does not exist."}
        ]}"#,
    )
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    repository_with_a_change(&sandbox);
    let answer = run_print(&sandbox, &binary, "REVIEWER_AGENT_DIR", "review against x").await;
    assert_eq!(answer, "That revision does not exist.\n");
    for name in ["pwned", "pwned2", "pwned3"] {
        assert!(!sandbox.work_dir().join(name).exists(), "{name} was created: the argument ran as a command");
    }
    let requests = mock.requests();
    let result = requests[1].body["messages"][3]["content"].as_str().expect("tool result").to_owned();
    // git saw the whole argument as one revision name and rejected it.
    assert!(result.contains("x; touch pwned"), "{result}");
    assert!(result.contains("exited with code"), "{result}");
}

#[tokio::test(flavor = "multi_thread")]
async fn scout_answers_with_its_read_only_tools_and_identity() {
    let binary = agent_binary("scout");
    let mock = server(
        r#"{"responses": [
            {"toolCalls": [{"id": "call_1", "name": "grep", "arguments": {"pattern": "needle"}}]},
            {"text": "notes.txt:1 has the needle."}
        ]}"#,
    )
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    sandbox.write("notes.txt", "a needle here\n");
    let answer = run_print(&sandbox, &binary, "SCOUT_AGENT_DIR", "Where is the needle?").await;
    assert_eq!(answer, "notes.txt:1 has the needle.\n");
    let requests = mock.requests();
    assert_eq!(tool_names(&requests[0].body), ["read", "grep", "find", "ls"]);
    let result = requests[1].body["messages"][3]["content"].as_str().expect("grep result");
    assert!(result.contains("notes.txt:1: a needle here"), "{result}");
}

/// `pi-gen new`, then `pi-gen build` of the result: the scaffold is a working agent whose skill and
/// command tool reach the model. Also reports the time to build a second agent with the runtime compiled.
#[tokio::test(flavor = "multi_thread")]
async fn a_new_agent_builds_and_uses_its_command_tool_and_skill() {
    agent_binary("pi"); // the runtime is compiled in the shared target directory first
    let scratch = tempfile::tempdir().expect("tempdir");
    let yaml = pi_codegen::scaffold::create_agent(&scratch.path().join("helper"), "helper").expect("scaffold");
    let started = std::time::Instant::now();
    let request = pi_codegen::BuildRequest::new(&yaml).with_output(workspace_root().join("target/e2e/helper"));
    let binary = pi_codegen::build_agent(&request).unwrap_or_else(|error| panic!("building the new agent: {error}"));
    eprintln!("second agent built in {:.1} s", started.elapsed().as_secs_f64());

    let mock = server(
        r#"{"responses": [
            {"toolCalls": [{"id": "call_1", "name": "todo_scan", "arguments": {}}]},
            {"text": "One TODO in main.rs."}
        ]}"#,
    )
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    sandbox.write("main.rs", "fn main() {} // TODO: say hello\n");
    let answer = run_print(&sandbox, &binary, "HELPER_AGENT_DIR", "Any TODOs?").await;
    assert_eq!(answer, "One TODO in main.rs.\n");
    let requests = mock.requests();
    let system = requests[0].body["messages"][0]["content"].as_str().expect("system prompt");
    assert!(system.contains("<name>changelog</name>"), "the embedded skill is listed: {system}");
    let location =
        system.split("<location>").nth(1).and_then(|rest| rest.split("</location>").next()).expect("location");
    assert!(std::path::Path::new(location).is_file(), "the skill was unpacked to {location}");
    assert!(location.starts_with(sandbox.agent_dir().to_str().expect("utf-8")), "{location}");
    let result = requests[1].body["messages"][3]["content"].as_str().expect("tool result");
    assert!(result.contains("./main.rs:1:fn main() {} // TODO: say hello"), "{result}");
}
