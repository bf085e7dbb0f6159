//! Running one case and observing it: a scratch directory (the case's files, an agent directory with the mock
//! model), the agent in `--mode json`, and what came out: tool calls with their results, the final answer,
//! the exit code, the model requests and the files afterwards.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::case_file::TestCase;
use crate::mock_model::MockTarget;
use pi_runtime::testing::MockLlmServer;

/// One tool call as the agent reported it.
#[derive(Debug, Clone, PartialEq)]
pub struct ObservedCall {
    pub name: String,
    pub arguments: Value,
    /// The result's text blocks, joined.
    pub result: String,
    pub is_error: bool,
}

/// Everything a case's expectations are checked against.
#[derive(Debug, Default)]
pub struct Observed {
    pub calls: Vec<ObservedCall>,
    /// The text of the last assistant message.
    pub answer: String,
    /// `None` when the agent was killed (time-out or signal).
    pub exit_code: Option<i32>,
    pub stderr: String,
    pub timed_out: bool,
    /// Completion requests the model received.
    pub model_calls: usize,
    /// Files of the working directory before and after the run (relative path → bytes).
    pub files_before: BTreeMap<String, Vec<u8>>,
    pub files_after: BTreeMap<String, Vec<u8>>,
    pub duration: Duration,
}

/// The agent to run and how to point it at the mock.
#[derive(Debug, Clone)]
pub struct AgentUnderTest {
    pub binary: PathBuf,
    /// The environment variable naming the agent directory (e.g. `PI_CODING_AGENT_DIR`).
    pub agent_dir_env: String,
    pub target: MockTarget,
}

/// Runs `case` in `scratch` (which must exist and be empty): `scratch/work` is the working directory,
/// `scratch/agent` the agent directory, `scratch/requests.jsonl` the model's request log.
pub async fn run_case(agent: &AgentUnderTest, case: &TestCase, scratch: &Path) -> std::io::Result<Observed> {
    let work = scratch.join("work");
    std::fs::create_dir_all(&work)?;
    for (relative, content) in &case.files {
        let path = work.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, content)?;
    }
    let server = MockLlmServer::start(case.script.clone()).await?;
    server.set_log_file(scratch.join("requests.jsonl"));
    agent.target.write_agent_dir(&scratch.join("agent"), &server.base_url())?;
    let files_before = snapshot(&work);
    let mut command = tokio::process::Command::new(&agent.binary);
    command
        .args(agent.target.model_args(&case.args.iter().map(Into::into).collect::<Vec<_>>()))
        .arg("--mode")
        .arg("json")
        .args(&case.args)
        .args(&case.prompts)
        .current_dir(&work)
        .env(&agent.agent_dir_env, scratch.join("agent"))
        .envs(&case.env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let started = Instant::now();
    let child = command.spawn()?;
    let limit = Duration::from_secs(case.timeout_secs);
    let (output, timed_out) = match tokio::time::timeout(limit, child.wait_with_output()).await {
        Ok(output) => (Some(output?), false),
        // The child is dropped with the future, which kills it.
        Err(_) => (None, true),
    };
    let duration = started.elapsed();
    let model_calls = server.requests().iter().filter(|request| request.method == "POST").count();
    server.shutdown().await;
    let mut observed = Observed {
        timed_out,
        model_calls,
        files_before,
        files_after: snapshot(&work),
        duration,
        ..Observed::default()
    };
    if let Some(output) = output {
        observed.exit_code = output.status.code();
        observed.stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        read_events(&String::from_utf8_lossy(&output.stdout), &mut observed);
    }
    Ok(observed)
}

/// Tool calls and the final answer from the agent's `--mode json` lines.
pub fn read_events(stdout: &str, observed: &mut Observed) {
    let mut pending: Vec<(String, ObservedCall)> = Vec::new();
    for line in stdout.lines() {
        let Ok(event) = serde_json::from_str::<Value>(line) else { continue };
        match event["type"].as_str() {
            Some("tool_execution_start") => {
                let call = ObservedCall {
                    name: event["toolName"].as_str().unwrap_or_default().to_owned(),
                    arguments: event["args"].clone(),
                    result: String::new(),
                    is_error: false,
                };
                pending.push((event["toolCallId"].as_str().unwrap_or_default().to_owned(), call));
            }
            Some("tool_execution_end") => {
                let id = event["toolCallId"].as_str().unwrap_or_default();
                if let Some((_, call)) = pending.iter_mut().find(|(pending_id, _)| pending_id == id) {
                    call.result = text_of(&event["result"]["content"]);
                    call.is_error = event["isError"].as_bool().unwrap_or(false);
                }
            }
            Some("message_end") if event["message"]["role"] == "assistant" => {
                observed.answer = text_of(&event["message"]["content"]);
            }
            _ => {}
        }
    }
    observed.calls = pending.into_iter().map(|(_, call)| call).collect();
}

/// The `text` blocks of a content list, joined.
fn text_of(content: &Value) -> String {
    let texts: Vec<&str> = content
        .as_array()
        .into_iter()
        .flatten()
        .filter(|block| block["type"] == "text")
        .filter_map(|block| block["text"].as_str())
        .collect();
    texts.join("")
}

/// Every regular file under `root` (relative path with `/` → contents).
fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if let (Ok(relative), Ok(bytes)) = (path.strip_prefix(root), std::fs::read(&path)) {
                files.insert(relative.to_string_lossy().replace('\\', "/"), bytes);
            }
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn calls_and_the_answer_come_from_the_json_events() {
        let lines = [
            json!({"type": "session", "id": "x"}),
            json!({"type": "message_end", "message": {"role": "assistant", "content": [{"type": "toolCall"}]}}),
            json!({"type": "tool_execution_start", "toolCallId": "a", "toolName": "read", "args": {"path": "x"}}),
            json!({"type": "tool_execution_start", "toolCallId": "b", "toolName": "ls", "args": {}}),
            json!({"type": "tool_execution_end", "toolCallId": "b", "toolName": "ls",
                   "result": {"content": [{"type": "text", "text": "x\n"}]}, "isError": false}),
            json!({"type": "tool_execution_end", "toolCallId": "a", "toolName": "read",
                   "result": {"content": [{"type": "text", "text": "no such file"}]}, "isError": true}),
            json!({"type": "message_end", "message": {"role": "assistant",
                   "content": [{"type": "thinking", "thinking": "t"}, {"type": "text", "text": "Done."}]}}),
        ];
        let stdout = lines.iter().map(Value::to_string).collect::<Vec<_>>().join("\n") + "\nnot json\n";
        let mut observed = Observed::default();
        read_events(&stdout, &mut observed);
        assert_eq!(observed.answer, "Done.");
        let calls: Vec<(&str, &str, bool)> =
            observed.calls.iter().map(|c| (c.name.as_str(), c.result.as_str(), c.is_error)).collect();
        assert_eq!(calls, [("read", "no such file", true), ("ls", "x\n", false)]);
        assert_eq!(observed.calls[0].arguments, json!({"path": "x"}));
    }
}
