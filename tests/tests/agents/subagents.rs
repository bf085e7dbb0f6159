//! Sub-agents end to end, with agents/lead.yaml (whose `explore` tool runs agents/scout.yaml in-process):
//! the sub-agent's own request (its system prompt, tools and the task), its answer as the parent's tool
//! result, its events as json tool updates, its session file beside the parent's and reopenable with
//! `--session`, two sub-agents running at the same time, usage added to the parent's, and an abort that
//! reaches a sub-agent mid-answer.

use std::path::{Path, PathBuf};

use pi_gen_tests::{Sandbox, agent_binary, stderr, stdout, tool_results};
use pi_runtime::testing::MockLlmServer;
use serde_json::{Value, json};

use super::{MODEL_ARGS, server};

const LEAD_DIR: &str = "LEAD_AGENT_DIR";

fn lead_env(sandbox: &Sandbox) -> [(&'static str, String); 1] {
    [(LEAD_DIR, sandbox.agent_dir().to_string_lossy().into_owned())]
}

async fn run_lead(sandbox: &Sandbox, args: &[&str]) -> std::process::Output {
    let env = lead_env(sandbox);
    let env: Vec<(&str, &str)> = env.iter().map(|(key, value)| (*key, value.as_str())).collect();
    sandbox.run_env(&agent_binary("lead"), &[&MODEL_ARGS[..], args].concat(), &env).await
}

/// The lead's session file (directly in the project's session folder) and the sub-agents' (in the folder
/// named after it).
fn session_files(sandbox: &Sandbox) -> (PathBuf, Vec<PathBuf>) {
    let sessions = sandbox.agent_dir().join("sessions");
    let (top, nested): (Vec<PathBuf>, Vec<PathBuf>) = sandbox
        .session_files()
        .into_iter()
        .partition(|path| path.parent().and_then(Path::parent) == Some(sessions.as_path()));
    assert_eq!(top.len(), 1, "one top-level session: {top:?}");
    (top[0].clone(), nested)
}

fn entries(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("session file");
    text.lines().map(|line| serde_json::from_str(line).expect("a JSON line")).collect()
}

/// A lead that calls `explore`, whose answer starts streaming and then stalls (for the abort tests).
async fn stalling_explore() -> MockLlmServer {
    server(
        r#"{"responses": [
            {"toolCalls": [{"id": "call_1", "name": "explore", "arguments": {"task": "Read everything"}}]},
            {"text": "I am still reading the whole", "deltaChars": 4, "stallAfter": 3}
        ]}"#,
    )
    .await
}

fn system_prompt(body: &Value) -> String {
    body["messages"][0]["content"].as_str().expect("system prompt").to_owned()
}

fn user_texts(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|message| message["role"] == "user")
        .map(|message| match &message["content"] {
            Value::String(text) => text.clone(),
            other => other[0]["text"].as_str().unwrap_or_default().to_owned(),
        })
        .collect()
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap_or("").to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_sub_agent_runs_with_its_own_prompt_and_its_answer_is_the_tool_result() {
    let mock = server(
        r#"{"responses": [
            {"toolCalls": [{"id": "call_1", "name": "explore", "arguments": {"task": "Where is add defined?"}}],
             "usage": {"input": 1000, "output": 10}},
            {"toolCalls": [{"id": "call_s1", "name": "read", "arguments": {"path": "calc.py"}}],
             "usage": {"input": 100, "output": 5}},
            {"text": "add is defined in calc.py:1.", "usage": {"input": 200, "output": 7}},
            {"text": "Scout says: calc.py:1.", "usage": {"input": 2000, "output": 20}},
            {"text": "It reads calc.py.", "usage": {"input": 300, "output": 3}},
            {"text": "Nothing more."}
        ]}"#,
    )
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    sandbox.write("calc.py", "def add(a, b):\n    return a + b\n");
    let output = run_lead(&sandbox, &["--mode", "json", "-p", "Find add"]).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let requests = mock.requests();
    assert_eq!(requests.len(), 4);

    // The lead offers its sub-agents as tools.
    let lead = &requests[0].body;
    assert!(system_prompt(lead).starts_with("You are lead, a senior developer."));
    assert_eq!(tool_names(lead), ["read", "bash", "edit", "write", "explore", "review"]);
    let explore = &lead["tools"][4]["function"];
    assert!(explore["description"].as_str().expect("description").starts_with("Explores the codebase"), "{explore}");
    assert_eq!(explore["parameters"]["required"], json!(["task"]));

    // The sub-agent's request: scout's prompt and tools, the task as its only user message.
    let scout = &requests[1].body;
    assert!(system_prompt(scout).starts_with("You are scout, an assistant that explains codebases."), "{scout}");
    assert_eq!(tool_names(scout), ["read", "grep", "find", "ls"]);
    assert_eq!(user_texts(scout), ["Where is add defined?"]);
    assert_eq!(requests[1].body["model"], "m", "the parent's model");
    assert_eq!(tool_results(&requests[2].body)[0].1, "def add(a, b):\n    return a + b\n");

    // Its final answer is the lead's tool result.
    assert_eq!(tool_results(&requests[3].body), [("call_1".to_owned(), "add is defined in calc.py:1.".to_owned())]);

    // json mode shows the sub-agent's events as updates of the lead's tool call.
    let lines: Vec<Value> = stdout(&output).lines().map(|line| serde_json::from_str(line).expect("json")).collect();
    let updates: Vec<&Value> =
        lines.iter().filter(|line| line["type"] == "tool_execution_update" && line["toolCallId"] == "call_1").collect();
    let kinds: Vec<&str> =
        updates.iter().filter_map(|update| update["partialResult"]["details"]["event"]["type"].as_str()).collect();
    for kind in ["agent_start", "tool_execution_start", "tool_execution_end", "message_end", "agent_end"] {
        assert!(kinds.contains(&kind), "{kind} in {kinds:?}");
    }
    assert!(updates.iter().all(|update| update["partialResult"]["details"]["subagent"] == "explore"));
    let last = updates.last().expect("updates");
    assert_eq!(last["partialResult"]["content"][0]["text"], "→ read\nadd is defined in calc.py:1.");

    // The result's details: the sub-agent's session file (in a folder named after the lead's), its usage.
    let end = lines
        .iter()
        .find(|line| line["type"] == "tool_execution_end" && line["toolCallId"] == "call_1")
        .expect("the tool's end");
    let details = &end["result"]["details"];
    assert_eq!(details["agent"], "scout");
    assert_eq!(details["model"], "mock/m");
    assert_eq!(details["stopReason"], "stop");
    assert_eq!(details["subagentUsage"]["input"], 300);
    assert_eq!(details["subagentUsage"]["output"], 12);
    let (lead_file, nested) = session_files(&sandbox);
    assert_eq!(nested.len(), 1, "{nested:?}");
    let scout_file = &nested[0];
    assert_eq!(scout_file.parent(), Some(lead_file.with_extension("").as_path()));
    assert_eq!(details["sessionFile"], scout_file.to_string_lossy().as_ref());

    // The lead's session links the run; the sub-agent's session says whose it is and holds its work.
    let link = entries(&lead_file)
        .into_iter()
        .find(|entry| entry["type"] == "custom" && entry["customType"] == "subagent_run")
        .expect("a subagent_run entry");
    assert_eq!(link["data"]["sessionFile"], scout_file.to_string_lossy().as_ref());
    assert_eq!(link["data"]["toolCallId"], "call_1");
    let scout_entries = entries(scout_file);
    assert_eq!(scout_entries[1]["customType"], "subagent_session");
    assert_eq!(scout_entries[1]["data"]["chain"], json!(["explore"]));
    let roles: Vec<&str> = scout_entries.iter().filter_map(|entry| entry["message"]["role"].as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "toolResult", "assistant"]);

    // `--session` reopens the sub-agent's session as scout, with its conversation.
    let scout_path = scout_file.to_string_lossy().into_owned();
    let output = run_lead(&sandbox, &["--session", &scout_path, "-p", "Which file did you read?"]).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert_eq!(stdout(&output), "It reads calc.py.\n");
    let resumed = &mock.requests()[4].body;
    assert!(system_prompt(resumed).starts_with("You are scout,"), "{resumed}");
    assert_eq!(user_texts(resumed), ["Where is add defined?", "Which file did you read?"]);
    // `--continue` picks the lead's session (the newer sub-agent file is not listed), and the link entry between
    // the tool call and its result leaves the conversation as it was.
    let output = run_lead(&sandbox, &["-c", "-p", "Anything else?"]).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let continued = &mock.requests()[5].body;
    assert!(system_prompt(continued).starts_with("You are lead,"), "{continued}");
    assert_eq!(user_texts(continued), ["Find add", "Anything else?"]);
    assert_eq!(tool_results(continued), [("call_1".to_owned(), "add is defined in calc.py:1.".to_owned())]);
    assert_eq!(session_files(&sandbox).0, lead_file);
}

#[tokio::test(flavor = "multi_thread")]
async fn two_sub_agents_run_at_the_same_time_and_their_usage_counts_for_the_parent() {
    // Neither sub-agent is answered before both have asked (3 requests in all): run one after the other,
    // the first would get an error after waiting in vain.
    let mock = server(
        r#"{"responses": [
            {"toolCalls": [{"id": "call_a", "name": "explore", "arguments": {"task": "Task A"}},
                           {"id": "call_b", "name": "explore", "arguments": {"task": "Task B"}}],
             "usage": {"input": 1000, "output": 10}},
            {"text": "first answer", "waitForRequests": 3, "usage": {"input": 100, "output": 1}},
            {"text": "second answer", "waitForRequests": 3, "usage": {"input": 200, "output": 2}},
            {"text": "Both done.", "usage": {"input": 2000, "output": 20}}
        ]}"#,
    )
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    let env = lead_env(&sandbox);
    let env: Vec<(&str, &str)> = env.iter().map(|(key, value)| (*key, value.as_str())).collect();
    let mut rpc = sandbox.spawn_rpc_env(&agent_binary("lead"), &MODEL_ARGS, &env);
    let reply = rpc.call("1", json!({"type": "prompt", "message": "Explore twice"})).await;
    assert_eq!(reply["success"], true, "{reply}");
    rpc.until(|line| line["type"] == "agent_end").await;

    let requests = mock.requests();
    assert_eq!(requests.len(), 4);
    let mut tasks: Vec<String> = requests[1..3].iter().flat_map(|request| user_texts(&request.body)).collect();
    tasks.sort();
    assert_eq!(tasks, ["Task A", "Task B"]);
    let mut answers: Vec<String> = tool_results(&requests[3].body).into_iter().map(|(_, text)| text).collect();
    answers.sort();
    assert_eq!(answers, ["first answer", "second answer"]);

    let stats = rpc.call("2", json!({"type": "get_session_stats"})).await;
    let tokens = &stats["data"]["tokens"];
    assert_eq!(tokens["input"], 1000 + 100 + 200 + 2000, "{stats}");
    assert_eq!(tokens["output"], 10 + 1 + 2 + 20, "{stats}");
    let (_, nested) = session_files(&sandbox);
    assert_eq!(nested.len(), 2, "a session per run: {nested:?}");
    rpc.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_abort_reaches_the_sub_agent_and_its_session_keeps_what_happened() {
    let mock = stalling_explore().await;
    let sandbox = Sandbox::new(&mock.base_url());
    let env = lead_env(&sandbox);
    let env: Vec<(&str, &str)> = env.iter().map(|(key, value)| (*key, value.as_str())).collect();
    let mut rpc = sandbox.spawn_rpc_env(&agent_binary("lead"), &MODEL_ARGS, &env);
    let reply = rpc.call("1", json!({"type": "prompt", "message": "Explore"})).await;
    assert_eq!(reply["success"], true, "{reply}");
    // The sub-agent is streaming its answer (and then stalls): abort the lead.
    rpc.until(|line| {
        line["type"] == "tool_execution_update" && line["partialResult"]["details"]["event"]["type"] == "message_update"
    })
    .await;
    rpc.send(json!({"id": "2", "type": "abort"})).await;
    // The abort's reply and the end of the run come in either order.
    let mut after = Vec::new();
    let is_reply = |line: &Value| line["type"] == "response" && line["id"] == "2";
    while !(after.iter().any(is_reply) && after.iter().any(|line: &Value| line["type"] == "agent_end")) {
        after.push(rpc.next().await.expect("the agent answers the abort"));
    }
    assert_eq!(after.iter().find(|line| is_reply(line)).expect("reply")["success"], true);
    let end = after.iter().find(|line| line["type"] == "tool_execution_end").expect("the tool call ends");
    assert_eq!(end["isError"], true, "{end}");
    assert_eq!(end["result"]["content"][0]["text"], "Sub-agent explore was aborted");
    assert_eq!(end["result"]["details"]["stopReason"], "aborted");
    assert_eq!(mock.requests().len(), 2, "the lead does not go on after the abort");

    let (_, nested) = session_files(&sandbox);
    assert_eq!(nested.len(), 1, "{nested:?}");
    let answer = entries(&nested[0])
        .into_iter()
        .rev()
        .find(|entry| entry["message"]["role"] == "assistant")
        .expect("the sub-agent's partial answer is saved");
    assert_eq!(answer["message"]["stopReason"], "aborted");
    rpc.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_session_the_sub_agent_runs_in_memory_too() {
    let mock = server(
        r#"{"responses": [
            {"toolCalls": [{"id": "call_1", "name": "explore", "arguments": {"task": "Look"}}]},
            {"text": "Looked."},
            {"text": "Done."}
        ]}"#,
    )
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    let output = run_lead(&sandbox, &["--no-session", "--mode", "json", "-p", "Go"]).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert_eq!(tool_results(&mock.requests()[2].body), [("call_1".to_owned(), "Looked.".to_owned())]);
    let end = stdout(&output)
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("json"))
        .find(|line| line["type"] == "tool_execution_end")
        .expect("the tool's end");
    assert_eq!(end["result"]["details"]["sessionFile"], Value::Null, "{end}");
    assert_eq!(sandbox.session_files(), Vec::<PathBuf>::new());
}

#[tokio::test(flavor = "multi_thread")]
async fn sigint_in_json_mode_stops_the_sub_agent_and_its_answer_is_saved_aborted() {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let mock = stalling_explore().await;
    let sandbox = Sandbox::new(&mock.base_url());
    let env = lead_env(&sandbox);
    let env: Vec<(&str, &str)> = env.iter().map(|(key, value)| (*key, value.as_str())).collect();
    let args = [&MODEL_ARGS[..], &["--mode", "json", "Explore"]].concat();
    let mut child = sandbox.spawn_piped_env(&agent_binary("lead"), &args, &env);
    // Nothing more comes on stdin (json mode reads piped stdin to its end before it starts).
    drop(child.stdin.take());
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    // A hang fails the test instead of blocking it.
    let within = std::time::Duration::from_secs(30);
    // Once the sub-agent streams its answer (which then stalls), interrupt the lead.
    loop {
        let line = tokio::time::timeout(within, lines.next_line()).await.expect("a line within 30 s").expect("read");
        let line = line.expect("the run goes on until the sub-agent streams");
        let event: Value = serde_json::from_str(&line).expect("json");
        if event["type"] == "tool_execution_update"
            && event["partialResult"]["details"]["event"]["type"] == "message_update"
        {
            break;
        }
    }
    let pid = i32::try_from(child.id().expect("running")).expect("pid");
    // SAFETY: kill(2) on the child this test started; no memory is involved.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let mut rest = Vec::new();
    while let Some(line) =
        tokio::time::timeout(within, lines.next_line()).await.expect("ends within 30 s").expect("read")
    {
        rest.push(line);
    }
    let status = child.wait().await.expect("exits");
    assert_eq!(status.code(), Some(130));
    let (_, nested) = session_files(&sandbox);
    assert_eq!(nested.len(), 1, "{nested:?}");
    let answer = entries(&nested[0])
        .into_iter()
        .rev()
        .find(|entry| entry["message"]["role"] == "assistant")
        .expect("the sub-agent's partial answer is saved");
    assert_eq!(answer["message"]["stopReason"], "aborted", "after the signal: {rest:?}");
}
