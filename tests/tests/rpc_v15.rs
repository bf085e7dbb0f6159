//! End to end: what pi 1.5 added to RPC mode, in the generated pi agent against the scripted mock server, at
//! both compatibility levels: prompt, steer and follow-up replies saying what became of each input,
//! `clear_queue`, `get_entries`, `get_tree`, `get_available_thinking_levels`, the user's `bash` streaming its
//! output and staying out of the context, and the new tool flags (`--tools +x,-y`, patterns, `-xt`).

use pi_gen_tests::{RpcClient, Sandbox, agent_binary, stderr};
use pi_runtime::testing::{MockLlmServer, MockScript};
use serde_json::{Value, json};

async fn server(script: Value) -> MockLlmServer {
    let script = MockScript::from_json_str(&script.to_string()).expect("valid script");
    MockLlmServer::start(script).await.expect("mock server starts")
}

fn start(sandbox: &Sandbox, level: &str, extra: &[&str]) -> RpcClient {
    let args = [&["--provider", "mock", "--model", "m", "--pi-compat", level][..], extra].concat();
    sandbox.spawn_rpc(&agent_binary("pi"), &args)
}

fn is_event(kind: &'static str) -> impl Fn(&Value) -> bool {
    move |line| line["type"] == kind
}

/// Where the first line of `kind` is among the lines seen (panics when there is none).
fn position(rpc: &RpcClient, matches: impl Fn(&Value) -> bool) -> usize {
    rpc.seen.iter().position(matches).unwrap_or_else(|| panic!("not seen: {:#?}", rpc.seen))
}

/// A first answer slow enough for the client to talk while it streams, then quick ones.
fn slow_then_quick() -> Value {
    json!([
        {"text": "A slow first answer, piece by piece, so the client can talk meanwhile.", "delayMs": 120},
        {"text": "Second."},
        {"text": "Third."},
        {"text": "Fourth."}
    ])
}

#[tokio::test(flavor = "multi_thread")]
async fn at_1_5_each_input_is_answered_with_what_became_of_it() {
    let mock = server(slow_then_quick()).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let mut rpc = start(&sandbox, "1.5", &[]);

    let started = rpc.call("p1", json!({"type": "prompt", "message": "Start"})).await;
    assert_eq!(
        started,
        json!({"id": "p1", "type": "response", "command": "prompt", "success": true,
               "data": {"disposition": "started"}})
    );
    rpc.until(is_event("message_update")).await;
    let reply_at = position(&rpc, |line| line["id"] == "p1");
    assert!(reply_at < position(&rpc, is_event("agent_start")), "the reply comes just before agent_start");

    let refused = rpc.call("p2", json!({"type": "prompt", "message": "Another"})).await;
    assert_eq!(refused["success"], false, "{refused}");
    assert!(refused.get("data").is_none(), "{refused}");
    let queued =
        rpc.call("p3", json!({"type": "prompt", "message": "Then this", "streamingBehavior": "followUp"})).await;
    assert_eq!(queued["data"], json!({"disposition": "queued"}), "{queued}");
    let steer = rpc.call("s", json!({"type": "steer", "message": "Change course"})).await;
    assert_eq!(
        steer,
        json!({"id": "s", "type": "response", "command": "steer", "success": true,
                             "data": {"disposition": "queued"}})
    );
    let follow_up = rpc.call("f", json!({"type": "follow_up", "message": "And finally"})).await;
    assert_eq!(follow_up["data"], json!({"disposition": "queued"}), "{follow_up}");

    rpc.until(is_event("agent_settled")).await;
    assert_eq!(mock.requests().len(), 4, "every queued message reached the model");
    // Idle again: a prompt starts a run of its own, answered the same way.
    let again = rpc.call("p4", json!({"type": "prompt", "message": "Once more", "streamingBehavior": "steer"})).await;
    assert_eq!(again["data"], json!({"disposition": "started"}), "{again}");
    let (code, _) = rpc.close().await;
    assert_eq!(code, Some(0));
}

#[tokio::test(flavor = "multi_thread")]
async fn at_0_73_replies_keep_their_shape_and_the_new_commands_work_too() {
    let mock = server(slow_then_quick()).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let mut rpc = start(&sandbox, "0.73", &[]);

    rpc.send(json!({"id": "p1", "type": "prompt", "message": "Start"})).await;
    assert_eq!(
        rpc.next().await.expect("a line"),
        json!({"id": "p1", "type": "response", "command": "prompt", "success": true}),
        "acknowledged at once, before any event"
    );
    rpc.until(is_event("message_update")).await;
    let steer = rpc.call("s", json!({"type": "steer", "message": "Change course"})).await;
    assert_eq!(steer, json!({"id": "s", "type": "response", "command": "steer", "success": true}));
    let queued = rpc.call("p2", json!({"type": "prompt", "message": "Later", "streamingBehavior": "followUp"})).await;
    assert_eq!(queued, json!({"id": "p2", "type": "response", "command": "prompt", "success": true}));
    let cleared = rpc.call("c", json!({"type": "clear_queue"})).await;
    assert_eq!(cleared["data"], json!({"steering": ["Change course"], "followUp": ["Later"]}), "{cleared}");
    rpc.until(is_event("agent_end")).await;
    assert!(!rpc.seen.iter().any(|line| line["type"] == "agent_settled"), "no pi 1.5 events at 0.73");

    rpc.send(json!({"id": "b", "type": "bash", "command": "echo hi"})).await;
    let bash = rpc.reply("b").await;
    assert_eq!(bash["data"]["output"], "hi\n");
    assert!(!rpc.seen.iter().any(|line| line["type"] == "bash_execution_update"), "output streams only at 1.5");
    let levels = rpc.call("l", json!({"type": "get_available_thinking_levels"})).await;
    assert_eq!(levels["data"], json!({"levels": ["off"]}));
    let (code, _) = rpc.close().await;
    assert_eq!(code, Some(0));
}

#[tokio::test(flavor = "multi_thread")]
async fn clear_queue_hands_back_what_waits_and_it_never_reaches_the_model() {
    let mock = server(slow_then_quick()).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let mut rpc = start(&sandbox, "1.5", &[]);

    let empty = rpc.call("c0", json!({"type": "clear_queue"})).await;
    assert_eq!(empty["data"], json!({"steering": [], "followUp": []}));
    rpc.call("p1", json!({"type": "prompt", "message": "Start"})).await;
    rpc.until(is_event("message_update")).await;
    rpc.call("s1", json!({"type": "steer", "message": "Steer one"})).await;
    rpc.call("s2", json!({"type": "prompt", "message": "Steer two", "streamingBehavior": "steer"})).await;
    rpc.call("f1", json!({"type": "follow_up", "message": "Follow up"})).await;
    let state = rpc.call("st", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["pendingMessageCount"], 3);

    rpc.send(json!({"id": "c", "type": "clear_queue"})).await;
    let update = rpc.next().await.expect("a line");
    assert_eq!(update, json!({"type": "queue_update", "steering": [], "followUp": []}));
    let cleared = rpc.reply("c").await;
    assert_eq!(
        cleared,
        json!({"id": "c", "type": "response", "command": "clear_queue", "success": true,
               "data": {"steering": ["Steer one", "Steer two"], "followUp": ["Follow up"]}})
    );
    rpc.until(is_event("agent_settled")).await;
    assert_eq!(mock.requests().len(), 1, "nothing queued was delivered");
    let state = rpc.call("st2", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["pendingMessageCount"], 0);
    let (code, _) = rpc.close().await;
    assert_eq!(code, Some(0));
}

/// A session file with a branch (two children of the first user message) and a label on that message.
fn branched_session(sandbox: &Sandbox) -> std::path::PathBuf {
    let cwd = sandbox.work_dir();
    let user = |id: &str, parent: &str, at: &str, text: &str| {
        json!({"type": "message", "id": id, "parentId": parent, "timestamp": format!("2026-01-01T00:00:0{at}.000Z"),
               "message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1767225600000_u64}})
    };
    let lines = [
        json!({"type": "session", "version": 3, "id": "0190f1f0-0000-7000-8000-000000000001",
               "timestamp": "2026-01-01T00:00:00.000Z", "cwd": cwd}),
        json!({"type": "model_change", "id": "a0000001", "parentId": null, "timestamp": "2026-01-01T00:00:01.000Z",
               "provider": "mock", "modelId": "m"}),
        user("a0000002", "a0000001", "2", "first"),
        user("a0000003", "a0000002", "3", "left"),
        user("a0000004", "a0000002", "4", "right"),
        json!({"type": "label", "id": "a0000005", "parentId": "a0000004", "timestamp": "2026-01-01T00:00:05.000Z",
               "targetId": "a0000002", "label": "start here"}),
    ];
    let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
    let path = sandbox.root.path().join("branched.jsonl");
    std::fs::write(&path, text).expect("session file");
    path
}

#[tokio::test(flavor = "multi_thread")]
async fn entries_and_the_tree_show_every_branch_as_the_file_has_it() {
    let mock = server(json!([])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let path = branched_session(&sandbox);
    let file = std::fs::read_to_string(&path).expect("read");
    let mut rpc = start(&sandbox, "1.5", &["--session", path.to_str().expect("utf-8")]);

    let entries = rpc.call("e", json!({"type": "get_entries"})).await;
    let listed = entries["data"]["entries"].as_array().expect("entries").clone();
    let written: Vec<Value> = file.lines().skip(1).map(|line| serde_json::from_str(line).expect("json")).collect();
    assert_eq!(listed[..written.len()], written[..], "entries as the file has them, without the header");
    let leaf = entries["data"]["leafId"].as_str().expect("a leaf").to_owned();
    assert_eq!(listed.last().and_then(|entry| entry["id"].as_str()), Some(leaf.as_str()));

    let after = rpc.call("e2", json!({"type": "get_entries", "since": "a0000003"})).await;
    let ids: Vec<&str> =
        after["data"]["entries"].as_array().expect("entries").iter().filter_map(|e| e["id"].as_str()).collect();
    assert_eq!(ids[..2], ["a0000004", "a0000005"]);
    for since in [json!("nope"), json!(null)] {
        let unknown = rpc.call("e3", json!({"type": "get_entries", "since": since})).await;
        assert_eq!(unknown["success"], false, "{unknown}");
    }

    let tree = rpc.call("t", json!({"type": "get_tree"})).await;
    assert_eq!(tree["data"]["leafId"], json!(leaf));
    let roots = tree["data"]["tree"].as_array().expect("roots");
    assert_eq!(roots.len(), 1);
    let first = &roots[0]["children"][0];
    assert_eq!(first["entry"], written[1]);
    assert_eq!(
        (first["label"].as_str(), first["labelTimestamp"].as_str()),
        (Some("start here"), Some("2026-01-01T00:00:05.000Z"))
    );
    let keys: Vec<&str> = first.as_object().expect("node").keys().map(String::as_str).collect();
    assert_eq!(keys, ["entry", "children", "label", "labelTimestamp"]);
    let branches: Vec<&str> = first["children"]
        .as_array()
        .expect("children")
        .iter()
        .filter_map(|child| child["entry"]["id"].as_str())
        .collect();
    assert_eq!(branches, ["a0000003", "a0000004"]);
    assert!(roots[0].get("label").is_none(), "no label, no label fields");
    let (code, _) = rpc.close().await;
    assert_eq!(code, Some(0));
}

#[tokio::test(flavor = "multi_thread")]
async fn thinking_levels_follow_the_model() {
    let mock = server(json!([])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let models = json!({"providers": {"mock": {"baseUrl": mock.base_url(), "api": "openai-completions",
        "apiKey": "mock-key", "models": [{"id": "m", "name": "Mock"}, {"id": "r", "name": "Thinker", "reasoning": true}]}}});
    std::fs::write(sandbox.agent_dir().join("models.json"), models.to_string()).expect("models.json");
    let mut rpc = start(&sandbox, "1.5", &[]);
    let plain = rpc.call("l1", json!({"type": "get_available_thinking_levels"})).await;
    assert_eq!(
        plain,
        json!({"id": "l1", "type": "response", "command": "get_available_thinking_levels",
                             "success": true, "data": {"levels": ["off"]}})
    );
    let set = rpc.call("m", json!({"type": "set_model", "provider": "mock", "modelId": "r"})).await;
    assert_eq!(set["success"], true, "{set}");
    let thinking = rpc.call("l2", json!({"type": "get_available_thinking_levels"})).await;
    assert_eq!(thinking["data"]["levels"], json!(["off", "minimal", "low", "medium", "high"]));
    let (code, _) = rpc.close().await;
    assert_eq!(code, Some(0));
}

#[tokio::test(flavor = "multi_thread")]
async fn at_1_5_the_users_command_streams_and_can_stay_out_of_the_context() {
    let mock = server(json!([{"text": "Seen."}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let mut rpc = start(&sandbox, "1.5", &[]);

    let command = "echo one; sleep 0.3; echo two >&2; sleep 0.3; printf three";
    let hidden = rpc.call("b1", json!({"type": "bash", "command": command, "excludeFromContext": true})).await;
    assert_eq!(hidden["data"]["output"], "one\ntwo\nthree");
    let updates: Vec<&Value> = rpc.seen.iter().filter(|line| line["type"] == "bash_execution_update").collect();
    assert!(updates.len() >= 2, "the output arrives in pieces as it is printed: {updates:#?}");
    let keys: Vec<&str> = updates[0].as_object().expect("event").keys().map(String::as_str).collect();
    assert_eq!(keys, ["type", "id", "delta"]);
    assert!(updates.iter().all(|update| update["id"] == "b1"));
    let joined: String = updates.iter().filter_map(|update| update["delta"].as_str()).collect();
    assert_eq!(joined, "one\ntwo\nthree");

    rpc.send(json!({"type": "bash", "command": "echo visible-output"})).await;
    let shown = rpc.until(|line| line["type"] == "response" && line["command"] == "bash").await;
    assert!(shown.get("id").is_none());
    let update = rpc.seen.iter().rev().find(|line| line["type"] == "bash_execution_update").expect("an update");
    assert_eq!(update, &json!({"type": "bash_execution_update", "delta": "visible-output\n"}), "no id, no id field");

    let messages = rpc.call("m", json!({"type": "get_messages"})).await;
    let kept = messages["data"]["messages"].as_array().expect("messages");
    assert_eq!(kept[0]["excludeFromContext"], true);
    assert!(kept[1].get("excludeFromContext").is_none(), "{}", kept[1]);

    rpc.call("p", json!({"type": "prompt", "message": "What did you see?"})).await;
    rpc.until(is_event("agent_settled")).await;
    let body = mock.requests()[0].body.to_string();
    assert!(body.contains("visible-output"), "{body}");
    assert!(!body.contains("three"), "an excluded command stays out of the context: {body}");
    let (code, _) = rpc.close().await;
    assert_eq!(code, Some(0));
}

/// The tool names of the first request the model got.
fn tools_sent(mock: &MockLlmServer) -> Vec<String> {
    let body = &mock.requests()[0].body;
    body["tools"].as_array().map_or_else(Vec::new, |tools| {
        tools.iter().filter_map(|tool| tool["function"]["name"].as_str().map(str::to_owned)).collect()
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_change_the_defaults_match_patterns_and_exclude() {
    for (level, flags, expected) in [
        ("1.5", &["--tools", "+grep,-bash"][..], &["read", "edit", "write", "grep"][..]),
        ("0.73", &["--tools", "+ls"][..], &["read", "bash", "edit", "write", "ls"][..]),
        ("1.5", &["--tools", "*"][..], &["read", "bash", "edit", "write", "grep", "find", "ls"][..]),
        ("1.5", &["--tools", "ls,re*"][..], &["ls", "read"][..]),
        ("1.5", &["--exclude-tools", "bash,e*"][..], &["read", "write"][..]),
        ("0.73", &["-xt", "write", "--tools", "*"][..], &["read", "bash", "edit", "grep", "find", "ls"][..]),
    ] {
        let mock = server(json!([{"text": "Done."}])).await;
        let sandbox = Sandbox::new(&mock.base_url());
        let mut rpc = start(&sandbox, level, flags);
        rpc.call("p", json!({"type": "prompt", "message": "Hi"})).await;
        rpc.until(is_event("agent_end")).await;
        assert_eq!(tools_sent(&mock), expected, "{level} {flags:?}");
        let (code, _) = rpc.close().await;
        assert_eq!(code, Some(0));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tools_list_that_mixes_names_and_changes_stops_the_agent() {
    let mock = server(json!([])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let binary = agent_binary("pi");
    for list in ["read,+grep", "+gr*"] {
        let output = sandbox.run(&binary, &["--provider", "mock", "--model", "m", "--tools", list, "-p", "Hi"]).await;
        assert_eq!(output.status.code(), Some(1), "{list}: {}", stderr(&output));
        assert!(stderr(&output).contains("--tools"), "{list}: {}", stderr(&output));
    }
    assert!(mock.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_of_the_yaml_that_only_shows_output_is_handled_at_1_5() {
    let binary = agent_binary("reviewer");
    let mock = server(json!([])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let status = std::process::Command::new("git").args(["init", "-q"]).current_dir(sandbox.work_dir()).status();
    assert!(status.is_ok_and(|status| status.success()), "git init");
    let agent_dir = sandbox.agent_dir();
    let env = [("REVIEWER_AGENT_DIR", agent_dir.to_str().expect("utf-8"))];
    for (level, expected) in [("1.5", Some(json!({"disposition": "handled"}))), ("0.73", None)] {
        let args = ["--provider", "mock", "--model", "m", "--pi-compat", level];
        let mut rpc = sandbox.spawn_rpc_env(&binary, &args, &env);
        let reply = rpc.call("c", json!({"type": "prompt", "message": "/changed"})).await;
        assert_eq!(reply["success"], true, "{reply}");
        assert_eq!(reply.get("data").cloned(), expected, "{level}: {reply}");
        let (code, rest) = rpc.close().await;
        assert_eq!(code, Some(0));
        assert!(!rest.iter().any(|line| line["type"] == "agent_start"), "no run: {rest:#?}");
    }
    assert!(mock.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn session_id_opens_or_starts_that_session_and_name_names_it() {
    let mock = server(json!([{"text": "One."}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let mut rpc = start(&sandbox, "1.5", &["--session-id", "my-work.1", "-n", "  Fix the parser "]);
    let state = rpc.call("s", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["sessionId"], "my-work.1");
    assert_eq!(state["data"]["sessionName"], "Fix the parser");
    let file = state["data"]["sessionFile"].as_str().expect("a session file").to_owned();
    assert!(file.ends_with("_my-work.1.jsonl"), "{file}");
    let entries = rpc.call("e", json!({"type": "get_entries"})).await;
    assert_eq!(entries["data"]["entries"][0]["type"], "session_info", "the name comes first: {entries}");
    rpc.call("p", json!({"type": "prompt", "message": "Hi"})).await;
    rpc.until(is_event("agent_settled")).await;
    assert_eq!(rpc.close().await.0, Some(0));

    let mut rpc = start(&sandbox, "1.5", &["--session-id", "my-work.1"]);
    let state = rpc.call("s", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["sessionFile"], json!(file), "the same session continues");
    let messages = rpc.call("m", json!({"type": "get_messages"})).await;
    assert!(messages["data"]["messages"].as_array().is_some_and(|m| !m.is_empty()), "{messages}");
    assert_eq!(rpc.close().await.0, Some(0));
}
