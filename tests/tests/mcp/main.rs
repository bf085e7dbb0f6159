//! End to end for MCP with agents/mcp.yaml: the YAML's stdio server (its `npx` command found on PATH as a shim
//! that runs the rmcp test server), servers added in `mcp.json` (the Python SDK's server over stdio and HTTP,
//! the rmcp server over HTTP), tool calls whose answers reach the model, schema errors, `isError`, a server
//! that fails to start, one that dies mid-call, a call that times out, `tools/list_changed`, `--no-mcp`,
//! `--tools`, `mcp list`, and no server left running after the agent.

use std::path::{Path, PathBuf};
use std::process::Output;

use pi_gen_tests::mcp_servers::{python_mcp, python_server_script, rmcp_server_bin};
use pi_gen_tests::{Sandbox, agent_binary, stderr, stdout};
use pi_runtime::testing::{MockLlmServer, MockScript, RecordedRequest};
use serde_json::{Value, json};

mod http;
mod interactive;
mod lifecycle;
mod stdio;

const MODEL_ARGS: [&str; 4] = ["--provider", "mock", "--model", "m"];

async fn server(script: Value) -> MockLlmServer {
    let script = MockScript::from_json_str(&script.to_string()).expect("valid script");
    MockLlmServer::start(script).await.expect("mock server starts")
}

/// A sandbox for the mcpdemo agent, with `npx` on PATH running the rmcp test server (logging its calls to
/// `<root>/files.log`), so the YAML's `files` server is the test server.
struct McpSandbox {
    sandbox: Sandbox,
    path: String,
}

impl McpSandbox {
    fn new(mock: &MockLlmServer) -> Self {
        let sandbox = Sandbox::new(&mock.base_url());
        let bin = sandbox.root.path().join("bin");
        std::fs::create_dir_all(&bin).expect("bin dir");
        let shim = bin.join("npx");
        let log = sandbox.root.path().join("files.log");
        let script = format!("#!/bin/sh\nexec '{}' --log '{}'\n", rmcp_server_bin().display(), log.display());
        std::fs::write(&shim, script).expect("shim");
        make_executable(&shim);
        let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
        Self { sandbox, path }
    }

    fn files_log(&self) -> PathBuf {
        self.sandbox.root.path().join("files.log")
    }

    /// Writes `<agent dir>/mcp.json` with these servers.
    fn user_servers(&self, servers: Value) {
        let text = json!({ "mcpServers": servers }).to_string();
        std::fs::write(self.sandbox.agent_dir().join("mcp.json"), text).expect("mcp.json");
    }

    async fn run(&self, args: &[&str]) -> Output {
        self.run_env(args, &[]).await
    }

    async fn run_env(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let agent_dir = self.sandbox.agent_dir();
        let agent_dir = agent_dir.to_string_lossy();
        let mut all_env = vec![("MCPDEMO_AGENT_DIR", agent_dir.as_ref()), ("PATH", self.path.as_str())];
        all_env.extend_from_slice(env);
        let args = [&MODEL_ARGS[..], &["--no-session"], args].concat();
        self.sandbox.run_env(&agent_binary("mcp"), &args, &all_env).await
    }
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// The Python SDK server over stdio, as an `mcp.json` entry.
fn python_stdio_entry(log: &Path) -> Value {
    json!({
        "command": python_mcp().to_string_lossy(),
        "args": [python_server_script().to_string_lossy(), "--log", log.to_string_lossy()],
    })
}

/// The rmcp test server over stdio, as an `mcp.json` entry, with extra arguments.
fn rmcp_stdio_entry(args: &[&str]) -> Value {
    json!({ "command": rmcp_server_bin().to_string_lossy(), "args": args })
}

/// The names of the tools a request offered.
fn tool_names(request: &RecordedRequest) -> Vec<String> {
    request.body["tools"]
        .as_array()
        .map(|tools| tools.iter().filter_map(|tool| tool["function"]["name"].as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

/// The declaration of tool `name` in a request.
fn tool_declaration(request: &RecordedRequest, name: &str) -> Value {
    request.body["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|tool| tool["function"]["name"] == name))
        .map(|tool| tool["function"].clone())
        .unwrap_or_else(|| panic!("no tool {name} in {:?}", tool_names(request)))
}

fn system_prompt(request: &RecordedRequest) -> String {
    request.body["messages"][0]["content"].as_str().unwrap_or_default().to_owned()
}

/// The text of the last tool result a request carries.
fn last_tool_result(request: &RecordedRequest) -> String {
    let messages = request.body["messages"].as_array().expect("messages");
    let message = messages.iter().rev().find(|message| message["role"] == "tool").expect("a tool result");
    match &message["content"] {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The json-mode lines of `output`.
fn events(output: &Output) -> Vec<Value> {
    stdout(output).lines().filter_map(|line| serde_json::from_str(line).ok()).collect()
}

/// The `tool_execution_end` event of the call `id`.
fn tool_end(events: &[Value], id: &str) -> Value {
    events
        .iter()
        .find(|event| event["type"] == "tool_execution_end" && event["toolCallId"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("no tool_execution_end for {id}"))
}

/// Lines of a server's JSON log (calls and headers).
fn log_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// Processes whose command line mentions `needle` (e.g. a server's unique log path).
fn processes_mentioning(needle: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else { continue };
        if String::from_utf8_lossy(&cmdline).contains(needle) {
            found.push(pid);
        }
    }
    found
}

fn assert_success(output: &Output) {
    assert!(
        output.status.success(),
        "status {:?}\nstdout: {}\nstderr: {}",
        output.status,
        stdout(output),
        stderr(output)
    );
}
