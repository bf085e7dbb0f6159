//! Scale-out end to end: the pi agent's session workflows on a real Temporal dev server, two real workers
//! (`pi-scale worker`), sessions in a real PostgreSQL, the scripted mock model over HTTP. A prompt sent with
//! `submit` runs as model and tool activities, its events arrive through Postgres, and the stored session
//! is the file an embedded run writes (ids and timestamps aside).

use std::collections::HashMap;
use std::time::Duration;

use pi_gen_tests::temporal::{cluster_flags, history_replays, start_workers};
use pi_gen_tests::{Sandbox, scale_agent_bin, stderr, stdout};
use pi_runtime::testing::{MockLlmServer, MockScript};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(60);

async fn mock(script: Value) -> MockLlmServer {
    let script = MockScript::from_json_str(&script.to_string()).expect("valid script");
    MockLlmServer::start(script).await.expect("mock server starts")
}

fn cluster() -> Vec<String> {
    cluster_flags()
}

/// Where the workers of a test write their stderr (shown when `submit` fails).
fn worker_log(sandbox: &Sandbox) -> std::path::PathBuf {
    sandbox.root.path().join("workers.log")
}

/// Starts `count` workers on the cluster (killed when dropped).
fn workers(sandbox: &Sandbox, cluster: &[String], count: usize) -> Vec<tokio::process::Child> {
    start_workers(sandbox, cluster, count, &worker_log(sandbox))
}

/// `pi-scale submit` with the mock model; the event lines it printed.
async fn submit(sandbox: &Sandbox, cluster: &[String], messages: &[&str]) -> Vec<Value> {
    let work = sandbox.work_dir().to_string_lossy().into_owned();
    let mut args = vec!["submit", "--provider", "mock", "--model", "m", "--cwd", &work];
    args.extend(cluster.iter().map(String::as_str));
    args.extend(messages);
    let output = tokio::time::timeout(WAIT, sandbox.run(&scale_agent_bin(), &args)).await.expect("submit ends");
    assert!(output.status.success(), "submit failed: {}", stderr(&output));
    stdout(&output).lines().map(|line| serde_json::from_str(line).expect("a JSON line")).collect()
}

/// The stored session, exported with the `store` command.
async fn export(sandbox: &Sandbox, cluster: &[String], id: &str) -> String {
    let store = &cluster[3];
    let output = sandbox.run(&scale_agent_bin(), &["store", "export", id, "--store", store]).await;
    assert!(output.status.success(), "export failed: {}", stderr(&output));
    stdout(&output)
}

/// A session file with its ids, timestamps and durations replaced by placeholders (ids by their order
/// of appearance), so two runs of the same script compare equal.
fn normalized(text: &str) -> Vec<Value> {
    let mut ids: HashMap<String, String> = HashMap::new();
    text.lines()
        .map(|line| {
            let mut value: Value = serde_json::from_str(line).expect("a JSON line");
            normalize(&mut value, &mut ids, None);
            value
        })
        .collect()
}

fn normalize(value: &mut Value, ids: &mut HashMap<String, String>, key: Option<&str>) {
    match value {
        Value::Object(map) => {
            for (name, item) in map.iter_mut() {
                normalize(item, ids, Some(name));
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| normalize(item, ids, key)),
        Value::String(text) if matches!(key, Some("id" | "parentId" | "parentSession")) => {
            let next = format!("id-{}", ids.len());
            *text = ids.entry(text.clone()).or_insert(next).clone();
        }
        _ if matches!(key, Some("timestamp" | "durationMs" | "cwd" | "responseId")) => *value = json!("~"),
        _ => {}
    }
}

fn event_types(events: &[Value]) -> Vec<String> {
    events.iter().map(|event| event["type"].as_str().unwrap_or_default().to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_runs_on_temporal_and_the_session_equals_the_embedded_run() {
    prompt_equals_the_embedded_run(&[]).await;
}

/// At pi 1.5's level the session records its system prompt before the prompt: that entry gets an id of
/// its own, and the prompt and the answer keep theirs.
#[tokio::test(flavor = "multi_thread")]
async fn at_pi_1_5_the_opening_system_message_takes_an_id_of_its_own() {
    prompt_equals_the_embedded_run(&["--pi-compat", "1.5"]).await;
}

/// A prompt with the agent's `flags`, run embedded (`-p --mode json`) and on Temporal (`submit`): the same
/// events, the same `agent_end` messages, the same stored session (ids, times and cwd aside).
async fn prompt_equals_the_embedded_run(flags: &[&str]) {
    let answer = json!({"text": "Hello from the model."});
    let mock = mock(json!([answer, answer])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let embedded_args = [&["-p", "--mode", "json", "--provider", "mock", "--model", "m"], flags, &["hi"]].concat();
    let embedded = sandbox.run(&scale_agent_bin(), &embedded_args).await;
    assert!(embedded.status.success(), "{}", stderr(&embedded));
    let embedded_events: Vec<Value> =
        stdout(&embedded).lines().map(|line| serde_json::from_str(line).expect("JSON")).collect();
    let files = sandbox.session_files();
    assert_eq!(files.len(), 1);
    let embedded_file = std::fs::read_to_string(&files[0]).expect("the embedded session file");

    let cluster = cluster();
    let _workers = workers(&sandbox, &cluster, 2);
    let flag_args: Vec<String> = flags.iter().map(|flag| format!("--flag={flag}")).collect();
    let mut submit_args: Vec<&str> = flag_args.iter().map(String::as_str).collect();
    submit_args.push("hi");
    let events = submit(&sandbox, &cluster, &submit_args).await;
    assert_eq!(event_types(&events), event_types(&embedded_events), "the same events in the same order");
    let messages_at_end = |events: &[Value]| {
        let end = events.iter().find(|event| event["type"] == "agent_end").expect("agent_end");
        normalized(&end["messages"].to_string())
    };
    assert_eq!(messages_at_end(&events), messages_at_end(&embedded_events), "agent_end carries the run's messages");
    let id = events[0]["id"].as_str().expect("the header's session id");
    let stored = export(&sandbox, &cluster, id).await;
    let stored_lines = normalized(&stored);
    assert_eq!(stored_lines, normalized(&embedded_file), "the stored session is the embedded file");
    let ids: Vec<String> = stored
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok()?["id"].as_str().map(str::to_owned))
        .collect();
    let unique: std::collections::HashSet<&String> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len(), "every entry has an id of its own: {ids:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn tool_calls_run_once_on_the_workspace_worker_and_the_loop_goes_on() {
    let bash = |id: &str| json!({"toolCalls": [{"id": id, "name": "bash", "arguments": {"command": "echo ran >> marker.txt && echo done"}}]});
    let mock = mock(json!([bash("call_1"), bash("call_2"), {"text": "Both ran."}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let cluster = cluster();
    let _workers = workers(&sandbox, &cluster, 2);
    let events = submit(&sandbox, &cluster, &["run it twice"]).await;
    let types = event_types(&events);
    assert_eq!(types.iter().filter(|kind| *kind == "tool_execution_end").count(), 2, "{types:?}");
    assert_eq!(types.iter().filter(|kind| *kind == "turn_start").count(), 3, "three turns: {types:?}");
    assert_eq!(types.last().map(String::as_str), Some("agent_end"));
    let marker = std::fs::read_to_string(sandbox.work_dir().join("marker.txt")).expect("the tool ran in the work dir");
    assert_eq!(marker, "ran\nran\n", "each call ran exactly once");
    let id = events[0]["id"].as_str().expect("the session id");
    let stored = export(&sandbox, &cluster, id).await;
    let roles: Vec<String> = stored
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|entry| entry["message"]["role"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(roles, ["user", "assistant", "toolResult", "assistant", "toolResult", "assistant"]);
    let end = events.last().expect("agent_end");
    assert_eq!(end["messages"].as_array().map(Vec::len), Some(6), "agent_end carries the run's messages");
    history_replays(&sandbox, &cluster, id, "two-tool-turns").await;
}

/// Starts `pi-scale worker` with extra flags (killed when dropped).
fn worker(sandbox: &Sandbox, cluster: &[String], extra: &[&str]) -> tokio::process::Child {
    let mut args = vec!["worker"];
    args.extend(cluster.iter().map(String::as_str));
    args.extend(extra);
    sandbox.spawn_logged(&scale_agent_bin(), &args, &worker_log(sandbox))
}

/// Starts `pi-scale submit` in the background, steps taken as dead after 2 s without a heartbeat.
fn start_submit(sandbox: &Sandbox, cluster: &[String], message: &str) -> tokio::process::Child {
    let work = sandbox.work_dir().to_string_lossy().into_owned();
    let mut args = vec!["submit", "--provider", "mock", "--model", "m", "--cwd", &work, "--heartbeat-timeout", "2"];
    args.extend(cluster.iter().map(String::as_str));
    args.push(message);
    sandbox.spawn(&scale_agent_bin(), &args)
}

async fn finished(submit: tokio::process::Child) -> Vec<Value> {
    let output = tokio::time::timeout(WAIT, submit.wait_with_output()).await.expect("submit ends").expect("output");
    if !output.status.success() {
        eprintln!("{}", stderr(&output));
    }
    assert!(output.status.success(), "submit failed: {}", stderr(&output));
    stdout(&output).lines().map(|line| serde_json::from_str(line).expect("a JSON line")).collect()
}

async fn until(what: &str, mut done: impl FnMut() -> bool) {
    tokio::time::timeout(WAIT, async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("timed out waiting for {what}"));
}

/// The stored session's messages: (role, text of the first content block).
fn stored_messages(stored: &str) -> Vec<(String, String)> {
    stored
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|entry| entry["type"] == "message")
        .map(|entry| {
            let message = &entry["message"];
            let text = message["content"][0]["text"].as_str().unwrap_or_default().to_owned();
            (message["role"].as_str().unwrap_or_default().to_owned(), text)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_killed_during_a_model_call_leaves_one_answer() {
    // The first request never gets its answer in time: its worker is killed while it waits.
    let mock = mock(json!([{"text": "Too late.", "delayMs": 60000}, {"text": "The answer."}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let cluster = cluster();
    let mut doomed = worker(&sandbox, &cluster, &[]);
    let submit = start_submit(&sandbox, &cluster, "hi");
    until("the model call", || mock.requests().len() == 1).await;
    let _survivor = worker(&sandbox, &cluster, &[]);
    doomed.start_kill().expect("kill -9");
    let events = finished(submit).await;
    assert_eq!(mock.requests().len(), 2, "the call was retried once, on the other worker");
    let id = events[0]["id"].as_str().expect("the session id");
    let messages = stored_messages(&export(&sandbox, &cluster, id).await);
    assert_eq!(messages, [("user".to_owned(), "hi".to_owned()), ("assistant".to_owned(), "The answer.".to_owned())]);
    let answers: Vec<&Value> =
        events.iter().filter(|e| e["type"] == "message_end" && e["message"]["role"] == "assistant").collect();
    assert_eq!(answers.len(), 1, "one answer reached the client");
    assert_eq!(events.last().map(|e| e["type"].clone()), Some(json!("agent_end")));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_killed_during_a_tool_call_marks_it_interrupted_and_never_runs_it_again() {
    let slow = json!({"toolCalls": [{"id": "call_1", "name": "bash", "arguments": {"command": "echo start >> marker.txt; sleep 60"}}]});
    let mock = mock(json!([slow, {"text": "Noted."}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let cluster = cluster();
    // The workspace's tools run on one worker; the workflow and model calls on another.
    let mut tools = worker(&sandbox, &cluster, &["--tools-only"]);
    let _sessions = worker(&sandbox, &cluster, &["--workspace", "elsewhere"]);
    let submit = start_submit(&sandbox, &cluster, "run the slow thing");
    let marker = sandbox.work_dir().join("marker.txt");
    until("the tool to start", || marker.exists()).await;
    tools.start_kill().expect("kill -9");
    let events = finished(submit).await;
    assert_eq!(std::fs::read_to_string(&marker).expect("marker"), "start\n", "the command ran once");
    let id = events[0]["id"].as_str().expect("the session id");
    let stored = export(&sandbox, &cluster, id).await;
    let messages = stored_messages(&stored);
    assert_eq!(messages.len(), 4, "{messages:?}");
    assert_eq!(messages[2].0, "toolResult");
    assert_eq!(messages[2].1, pi_runtime::agent_session::TOOL_INTERRUPTED);
    assert_eq!(messages[3], ("assistant".to_owned(), "Noted.".to_owned()));
    assert!(stored.contains(r#""isError":true"#), "the interrupted result is an error");
    assert_eq!(mock.requests().len(), 2, "the model saw the interrupted result");
    history_replays(&sandbox, &cluster, id, "tool-interrupted").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_submit_continues_the_session_on_its_workflow_continued_as_new() {
    let mock = mock(json!([{"text": "First answer."}, {"text": "Second answer."}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let cluster = cluster();
    let _workers = workers(&sandbox, &cluster, 1);
    // One turn per workflow run: after the first run the workflow continues as new, carrying the session.
    let first = submit(&sandbox, &cluster, &["--turns-per-run", "1", "one"]).await;
    let id = first[0]["id"].as_str().expect("the session id").to_owned();
    let mut args = vec!["submit", "--session", &id];
    args.extend(cluster.iter().map(String::as_str));
    args.push("two");
    let output = tokio::time::timeout(WAIT, sandbox.run(&scale_agent_bin(), &args)).await.expect("submit ends");
    assert!(output.status.success(), "{}", stderr(&output));
    let second: Vec<Value> = stdout(&output).lines().map(|line| serde_json::from_str(line).expect("JSON")).collect();
    assert_eq!(second[0]["id"], first[0]["id"], "the same session's header");
    assert_eq!(event_types(&second)[1], "agent_start", "only the new run's events: {:?}", event_types(&second));
    let texts: Vec<String> =
        stored_messages(&export(&sandbox, &cluster, &id).await).into_iter().map(|(_, text)| text).collect();
    assert_eq!(texts, ["one", "First answer.", "two", "Second answer."]);
    // The history now is a continued run's: it starts from the runs before it.
    let output = sandbox.run(&scale_agent_bin(), &["history", &id, "--temporal-address", &cluster[1]]).await;
    assert!(output.status.success(), "history failed: {}", stderr(&output));
    let history: Value = serde_json::from_str(&stdout(&output)).expect("the history is JSON");
    let started = &history["events"][0]["attributes"]["WorkflowExecutionStartedEventAttributes"];
    let continued = started["continued_execution_run_id"].as_str().unwrap_or_default();
    assert!(!continued.is_empty(), "not a continued run: {started}");
    let input = started.pointer("/input/payloads/0/data");
    let input = input.and_then(Value::as_str).expect("the run's input");
    use base64::Engine as _;
    let input = base64::engine::general_purpose::STANDARD.decode(input).expect("base64");
    let input: Value = serde_json::from_slice(&input).expect("the input is JSON");
    // It continued after each run: the current workflow run carries both runs' count.
    assert_eq!(input["carried"]["runs"], 2, "the runs' count is carried: {input}");
    assert_eq!(input["turnsPerRun"], 1, "the session's setting is carried: {input}");
    // A continued run's history replays too (even one that holds only its start so far).
    let file = sandbox.root.path().join("continued.json");
    std::fs::write(&file, stdout(&output)).expect("history kept");
    let replay = ["history", "--replay", file.to_str().expect("utf-8")];
    let replayed = tokio::time::timeout(WAIT, sandbox.run(&scale_agent_bin(), &replay)).await.expect("in time");
    assert!(replayed.status.success(), "the continued history does not replay: {}", stderr(&replayed));
}

#[tokio::test(flavor = "multi_thread")]
async fn abort_stops_a_model_call_and_the_run_ends_aborted() {
    use tokio::io::AsyncBufReadExt as _;
    let mock = mock(json!([{"text": "Never finished.", "delayMs": 60000}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let cluster = cluster();
    let _workers = workers(&sandbox, &cluster, 1);
    let mut submit = start_submit(&sandbox, &cluster, "take your time");
    let mut lines = tokio::io::BufReader::new(submit.stdout.take().expect("stdout")).lines();
    let header: Value =
        serde_json::from_str(&lines.next_line().await.expect("read").expect("the header")).expect("JSON");
    let id = header["id"].as_str().expect("the session id").to_owned();
    until("the model call", || mock.requests().len() == 1).await;
    let mut args = vec!["submit", "--session", &id, "--abort"];
    args.extend(cluster.iter().map(String::as_str));
    let aborted = sandbox.run(&scale_agent_bin(), &args).await;
    assert!(aborted.status.success(), "abort failed: {}", stderr(&aborted));
    let mut events = Vec::new();
    tokio::time::timeout(WAIT, async {
        while let Some(line) = lines.next_line().await.expect("read") {
            events.push(serde_json::from_str::<Value>(&line).expect("JSON"));
        }
    })
    .await
    .unwrap_or_else(|_| {
        let log = std::fs::read_to_string(worker_log(&sandbox)).unwrap_or_default();
        panic!("submit did not end after the abort; the workers said:\n{log}")
    });
    assert!(submit.wait().await.expect("exit").success());
    let end = events.last().expect("events");
    assert_eq!(end["type"], "agent_end");
    let last = end["messages"].as_array().and_then(|messages| messages.last()).expect("the run's messages");
    assert_eq!(last["stopReason"], "aborted", "{last}");
    let stored = export(&sandbox, &cluster, &id).await;
    let entries: Vec<Value> = stored.lines().map(|line| serde_json::from_str(line).expect("JSON")).collect();
    let answer = entries.last().expect("entries");
    assert_eq!(answer["message"]["stopReason"], "aborted", "the aborted answer is stored");
    assert_eq!(mock.requests().len(), 1, "nothing was asked again");
}

#[tokio::test(flavor = "multi_thread")]
async fn abort_stops_a_tool_batch_and_the_model_is_not_asked_again() {
    let slow = json!({"toolCalls": [{"id": "call_1", "name": "bash", "arguments": {"command": "echo start >> marker.txt; sleep 60; echo end >> marker.txt"}}]});
    let mock = mock(json!([slow, {"text": "Should not be asked."}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let cluster = cluster();
    let _workers = workers(&sandbox, &cluster, 1);
    let submit = start_submit(&sandbox, &cluster, "run the slow thing");
    let marker = sandbox.work_dir().join("marker.txt");
    until("the tool to start", || marker.exists()).await;
    let id = {
        let list = sandbox.run(&scale_agent_bin(), &["store", "list", "--store", &cluster[3]]).await;
        stdout(&list).split_whitespace().next().expect("the session's id").to_owned()
    };
    let mut args = vec!["submit", "--session", &id, "--abort"];
    args.extend(cluster.iter().map(String::as_str));
    let aborted = sandbox.run(&scale_agent_bin(), &args).await;
    assert!(aborted.status.success(), "abort failed: {}", stderr(&aborted));
    let events = finished(submit).await;
    assert_eq!(events.last().map(|e| e["type"].clone()), Some(json!("agent_end")));
    assert_eq!(mock.requests().len(), 1, "the aborted run does not ask the model again");
    let stored = export(&sandbox, &cluster, &id).await;
    let messages = stored_messages(&stored);
    assert_eq!(
        messages.iter().map(|(role, _)| role.as_str()).collect::<Vec<_>>(),
        ["user", "assistant", "toolResult", "assistant"]
    );
    let last: Value = serde_json::from_str(stored.lines().last().expect("entries")).expect("JSON");
    assert_eq!(last["message"]["stopReason"], "aborted");
    assert_eq!(std::fs::read_to_string(&marker).expect("marker"), "start\n", "the command was stopped");
}
