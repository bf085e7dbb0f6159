//! End to end: the generated pi agent in `--mode rpc`, driven line by line through its stdin against the
//! scripted mock server: replies in pi's shapes, events streamed while a prompt runs, steering and
//! follow-ups queued mid-stream, settings, compaction, the session file, and the end of stdin.

use pi_gen_tests::{RpcClient, Sandbox, agent_binary};
use pi_runtime::testing::{MockLlmServer, MockScript};
use serde_json::{Value, json};

async fn server(script: Value) -> MockLlmServer {
    let script = MockScript::from_json_str(&script.to_string()).expect("valid script");
    MockLlmServer::start(script).await.expect("mock server starts")
}

fn start(sandbox: &Sandbox) -> RpcClient {
    sandbox.spawn_rpc(&agent_binary("pi"), &["--provider", "mock", "--model", "m"])
}

fn is_event(kind: &'static str) -> impl Fn(&Value) -> bool {
    move |line| line["type"] == kind
}

/// The entries of the only session file under the sandbox's agent directory.
fn session_entries(sandbox: &Sandbox) -> Vec<Value> {
    let dir = sandbox.agent_dir().join("sessions");
    let folder = std::fs::read_dir(&dir).expect("sessions dir").flatten().next().expect("cwd folder").path();
    let file = std::fs::read_dir(folder).expect("folder").flatten().next().expect("a session file").path();
    let text = std::fs::read_to_string(file).expect("session file");
    text.lines().map(|line| serde_json::from_str(line).expect("json line")).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_is_acknowledged_then_streamed_and_the_state_reads_back() {
    let mock = server(json!([
        {"toolCalls": [{"id": "call_1", "name": "read", "arguments": {"path": "README.md"}}]},
        {"text": "The README says hello."}
    ]))
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    sandbox.write("README.md", "hello\n");
    let mut rpc = start(&sandbox);

    let state = rpc.call("s0", json!({"type": "get_state"})).await;
    assert_eq!(rpc.seen.len(), 1, "no session header line before the first reply: {:?}", rpc.seen);
    assert_eq!(state["command"], "get_state");
    assert_eq!(state["success"], true);
    let data = &state["data"];
    assert_eq!(data["model"]["provider"], "mock");
    assert_eq!(data["model"]["id"], "m");
    assert_eq!(data["model"]["cost"]["input"], json!(0), "numbers as JavaScript prints them (0, not 0.0)");
    assert_eq!(data["isStreaming"], false);
    assert_eq!(data["messageCount"], 0);
    assert_eq!(data["steeringMode"], "one-at-a-time");
    let keys: Vec<&str> = data.as_object().expect("object").keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "model",
            "thinkingLevel",
            "isStreaming",
            "isCompacting",
            "steeringMode",
            "followUpMode",
            "sessionFile",
            "sessionId",
            "autoCompactionEnabled",
            "messageCount",
            "pendingMessageCount"
        ]
    );

    rpc.send(json!({"id": "p1", "type": "prompt", "message": "What does the README say?"})).await;
    let ack = rpc.next().await.expect("a line");
    assert_eq!(ack, json!({"id": "p1", "type": "response", "command": "prompt", "success": true}));
    rpc.until(is_event("agent_end")).await;
    let kinds: Vec<&str> = rpc.seen.iter().filter_map(|line| line["type"].as_str()).collect();
    for kind in
        ["agent_start", "turn_start", "message_update", "tool_execution_start", "tool_execution_end", "turn_end"]
    {
        assert!(kinds.contains(&kind), "{kind} missing in {kinds:?}");
    }

    let messages = rpc.call("m", json!({"type": "get_messages"})).await;
    let roles: Vec<&str> =
        messages["data"]["messages"].as_array().expect("messages").iter().filter_map(|m| m["role"].as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "toolResult", "assistant"]);
    let last = rpc.call("t", json!({"type": "get_last_assistant_text"})).await;
    assert_eq!(last["data"], json!({"text": "The README says hello."}));
    let stats = rpc.call("st", json!({"type": "get_session_stats"})).await;
    assert_eq!(stats["data"]["userMessages"], 1);
    assert_eq!(stats["data"]["assistantMessages"], 2);
    assert_eq!(stats["data"]["toolCalls"], 1);
    assert_eq!(stats["data"]["toolResults"], 1);
    assert_eq!(stats["data"]["totalMessages"], 4);
    assert_eq!(stats["data"]["cost"], json!(0));
    assert!(stats["data"]["contextUsage"]["contextWindow"].is_u64(), "{stats}");
    let forks = rpc.call("f", json!({"type": "get_fork_messages"})).await;
    assert_eq!(forks["data"]["messages"][0]["text"], "What does the README say?");

    let named = rpc.call("n", json!({"type": "set_session_name", "name": "  readme  "})).await;
    assert_eq!(named["success"], true);
    let changed = rpc.seen.iter().rev().nth(1).expect("the event before the reply");
    assert_eq!(changed, &json!({"type": "session_info_changed", "name": "readme"}));
    let empty = rpc.call("n2", json!({"type": "set_session_name", "name": " "})).await;
    assert_eq!(empty["success"], false);
    let state = rpc.call("s1", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["sessionName"], "readme");
    assert_eq!(state["data"]["messageCount"], 4);

    let exported = rpc.call("e", json!({"type": "export_html"})).await;
    let name = exported["data"]["path"].as_str().expect("a path").to_owned();
    assert!(name.starts_with("pi-session-") && name.ends_with(".html"), "{name}");
    let page = std::fs::read_to_string(sandbox.work_dir().join(&name)).expect("the page is in the working directory");
    assert!(page.contains("What does the README say?") && page.contains("The README says hello."), "{page}");
    // Written from the running session: its tree, its system prompt and tools, and its file for download.
    assert!(page.contains("<script type=\"application/json\" id=\"tree-index\">"), "{page}");
    assert!(page.contains("<summary>System prompt (") && page.contains("<dt>read</dt>"), "{page}");
    let stem = sandbox.session_files()[0].file_stem().expect("stem").to_string_lossy().into_owned();
    assert!(page.contains(&format!("id=\"session-jsonl\" data-name=\"{stem}.jsonl\">")), "{page}");
    let chosen = sandbox.root.path().join("out.html");
    let exported = rpc.call("e2", json!({"type": "export_html", "outputPath": chosen})).await;
    assert_eq!(exported["data"]["path"], chosen.to_string_lossy().as_ref());
    assert!(chosen.is_file());

    let (code, rest) = rpc.close().await;
    assert_eq!(code, Some(0), "{rest:?}");
    let entries = session_entries(&sandbox);
    assert!(entries.iter().any(|e| e["type"] == "session_info" && e["name"] == "readme"), "{entries:#?}");
    let saved = entries.iter().filter(|entry| entry["type"] == "message").count();
    assert_eq!(saved, 4, "every message is in the session file");
}

#[tokio::test(flavor = "multi_thread")]
async fn messages_sent_while_streaming_are_queued_and_delivered_in_the_same_run() {
    let mock = server(json!([
        {"text": "A slow first answer, word by word, so the client can talk meanwhile.", "delayMs": 150},
        {"text": "Steered."},
        {"text": "Followed up."}
    ]))
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    let mut rpc = start(&sandbox);
    rpc.call("p1", json!({"type": "prompt", "message": "Start"})).await;
    rpc.until(is_event("message_update")).await;

    let refused = rpc.call("p2", json!({"type": "prompt", "message": "Another"})).await;
    assert_eq!(refused["success"], false, "a prompt while streaming needs a streamingBehavior: {refused}");
    rpc.send(json!({"id": "s", "type": "steer", "message": "Change course"})).await;
    let update = rpc.until(is_event("queue_update")).await;
    assert_eq!(update, json!({"type": "queue_update", "steering": ["Change course"], "followUp": []}));
    assert_eq!(rpc.reply("s").await["success"], true);
    let bogus = rpc.call("p4", json!({"type": "prompt", "message": "?", "streamingBehavior": "later"})).await;
    assert_eq!(bogus["success"], false, "{bogus}");
    let queued =
        rpc.call("p3", json!({"type": "prompt", "message": "And then", "streamingBehavior": "followUp"})).await;
    assert_eq!(queued["success"], true);
    let state = rpc.call("st", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["isStreaming"], true);
    assert_eq!(state["data"]["pendingMessageCount"], 2);

    rpc.until(|line| line["type"] == "queue_update" && line["followUp"] == json!([])).await;
    rpc.until(is_event("agent_end")).await;
    let starts = rpc.seen.iter().filter(|line| line["type"] == "agent_start").count();
    assert_eq!(starts, 1, "the queued messages run inside the same run");
    let requests = mock.requests();
    assert_eq!(requests.len(), 3, "one model call per delivered message");
    let last = requests[2].body["messages"].as_array().expect("messages");
    let texts: Vec<String> = last.iter().filter(|m| m["role"] == "user").map(|m| m["content"].to_string()).collect();
    assert!(texts.iter().any(|t| t.contains("Change course")), "{texts:?}");
    assert!(texts.iter().any(|t| t.contains("And then")), "{texts:?}");
    let (code, _) = rpc.close().await;
    assert_eq!(code, Some(0));
}

#[tokio::test(flavor = "multi_thread")]
async fn settings_change_and_bad_commands_are_answered_not_fatal() {
    let mock = server(json!([])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let models = json!({"providers": {"mock": {
        "baseUrl": mock.base_url(), "api": "openai-completions", "apiKey": "mock-key",
        "models": [{"id": "m", "reasoning": true}]
    }}});
    std::fs::write(sandbox.agent_dir().join("models.json"), models.to_string()).expect("models.json");
    let mut rpc = start(&sandbox);

    assert_eq!(rpc.call("t1", json!({"type": "set_thinking_level", "level": "high"})).await["success"], true);
    assert_eq!(rpc.seen[rpc.seen.len() - 2], json!({"type": "thinking_level_changed", "level": "high"}));
    let cycled = rpc.call("t2", json!({"type": "cycle_thinking_level"})).await;
    assert_eq!(cycled["data"], json!({"level": "off"}), "after the highest level comes off");
    let bogus = rpc.call("t3", json!({"type": "set_thinking_level", "level": "bogus"})).await;
    assert_eq!(bogus["success"], false);
    assert_eq!(rpc.call("q", json!({"type": "set_steering_mode", "mode": "all"})).await["success"], true);
    assert_eq!(rpc.call("q2", json!({"type": "set_follow_up_mode", "mode": "sometimes"})).await["success"], false);
    assert_eq!(rpc.call("c", json!({"type": "set_auto_compaction", "enabled": false})).await["success"], true);
    let state = rpc.call("s", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["thinkingLevel"], "off");
    assert_eq!(state["data"]["steeringMode"], "all");
    assert_eq!(state["data"]["followUpMode"], "one-at-a-time");
    assert_eq!(state["data"]["autoCompactionEnabled"], false);

    rpc.send_raw("{\"id\": \"broken\", ").await;
    let parse = rpc.next().await.expect("a reply");
    assert_eq!(parse["command"], "parse");
    assert_eq!(parse["success"], false);
    let unknown = rpc.call("u", json!({"type": "frobnicate"})).await;
    assert_eq!(unknown["command"], "frobnicate");
    assert_eq!(unknown["success"], false);
    let nothing = rpc.call("x", json!({"type": "export_html"})).await;
    assert_eq!(nothing["success"], false, "nothing to export before the first prompt: {nothing}");
    let empty = rpc.call("compact", json!({"type": "compact"})).await;
    assert_eq!(empty["success"], false, "nothing to compact in an empty session: {empty}");
    rpc.send(json!({"type": "extension_ui_response", "id": "dialog-1", "cancelled": true})).await;
    rpc.send_raw("{\"type\":\"get_state\"}\r").await;
    let untagged = rpc.next().await.expect("a reply");
    assert_eq!(untagged["command"], "get_state", "an extension_ui_response gets no reply: {untagged}");
    assert!(untagged.get("id").is_none());
    assert_eq!(untagged["success"], true, "a trailing carriage return is fine and no id gives no id");

    let (code, _) = rpc.close().await;
    assert_eq!(code, Some(0));
}

#[tokio::test(flavor = "multi_thread")]
async fn compact_summarizes_on_request_and_the_end_of_stdin_stops_a_running_prompt() {
    let long = "word ".repeat(400);
    let mock = server(json!([
        {"text": long},
        {"text": "Second answer."},
        {"text": "## Goal\nKeep going."},
        {"text": "This answer never finishes.", "stallAfter": 2}
    ]))
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    let mut rpc = start(&sandbox);
    for (id, text) in [("p1", "First"), ("p2", "Second")] {
        rpc.call(id, json!({"type": "prompt", "message": text})).await;
        rpc.until(is_event("agent_end")).await;
    }
    let compacted = rpc.call("c", json!({"type": "compact", "customInstructions": "Focus on goals"})).await;
    assert_eq!(compacted["success"], true, "{compacted}");
    assert!(compacted["data"]["summary"].as_str().is_some_and(|s| s.contains("Keep going.")), "{compacted}");
    let start = rpc.seen.iter().find(|line| line["type"] == "compaction_start").expect("compaction_start");
    assert_eq!(start["reason"], "manual");
    let end = rpc.seen.iter().find(|line| line["type"] == "compaction_end").expect("compaction_end");
    assert_eq!(end["reason"], "manual");
    let summary_request = &mock.requests()[2].body;
    assert!(summary_request.to_string().contains("Focus on goals"), "the instructions reach the summary request");

    rpc.call("p3", json!({"type": "prompt", "message": "Third"})).await;
    rpc.until(is_event("message_update")).await;
    // `close` gives the agent 30 s to exit; the stalled stream alone would hold it for the 10-minute idle timeout.
    let (code, _) = rpc.close().await;
    assert_eq!(code, Some(0));
    let entries = session_entries(&sandbox);
    assert!(entries.iter().any(|entry| entry["type"] == "compaction"), "{entries:#?}");
    let last = entries.iter().rev().find(|entry| entry["type"] == "message").expect("a message");
    assert_eq!(last["message"]["stopReason"], "aborted", "the interrupted answer is saved as aborted");
}

#[tokio::test(flavor = "multi_thread")]
async fn models_switch_by_name_and_by_cycling_and_the_next_request_uses_the_new_one() {
    let mock = server(json!([{"text": "From the second model."}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let models = json!({"providers": {"mock": {
        "baseUrl": mock.base_url(), "api": "openai-completions", "apiKey": "mock-key",
        "models": [{"id": "m", "reasoning": true}, {"id": "m2", "name": "Second"}]
    }}});
    std::fs::write(sandbox.agent_dir().join("models.json"), models.to_string()).expect("models.json");
    let mut rpc = start(&sandbox);

    let available = rpc.call("a", json!({"type": "get_available_models"})).await;
    let names: Vec<String> = available["data"]["models"]
        .as_array()
        .expect("models")
        .iter()
        .map(|m| format!("{}/{}", m["provider"].as_str().unwrap_or(""), m["id"].as_str().unwrap_or("")))
        .collect();
    assert_eq!(names, ["mock/m", "mock/m2"], "only models with a key (no built-in provider has one here)");

    let set = rpc.call("s", json!({"type": "set_model", "provider": "mock", "modelId": "m2"})).await;
    assert_eq!(set["data"]["id"], "m2");
    assert_eq!(set["data"]["name"], "Second");
    let changed = &rpc.seen[rpc.seen.len() - 2];
    assert_eq!(changed, &json!({"type": "thinking_level_changed", "level": "off"}), "m2 does not reason");
    let unknown = rpc.call("u", json!({"type": "set_model", "provider": "mock", "modelId": "nope"})).await;
    assert_eq!(unknown["success"], false);
    let keyless =
        rpc.call("k", json!({"type": "set_model", "provider": "anthropic", "modelId": "claude-sonnet-4-5"})).await;
    assert_eq!(keyless["success"], false, "a model without a key is refused: {keyless}");

    rpc.call("p", json!({"type": "prompt", "message": "Hi"})).await;
    rpc.until(is_event("agent_end")).await;
    assert_eq!(mock.requests()[0].body["model"], "m2");

    let ignored = rpc.call("t", json!({"type": "set_thinking_level", "level": "high"})).await;
    assert_eq!(ignored["success"], true, "accepted, though m2 cannot think");
    let cycled = rpc.call("c", json!({"type": "cycle_model"})).await;
    assert_eq!(cycled["data"]["model"]["id"], "m", "after the last available model comes the first");
    assert_eq!(cycled["data"]["thinkingLevel"], "medium", "the level chosen before comes back on a reasoning model");
    assert_eq!(cycled["data"]["isScoped"], false);
    let state = rpc.call("st", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["model"]["id"], "m");

    let (code, _) = rpc.close().await;
    assert_eq!(code, Some(0));
    let entries = session_entries(&sandbox);
    let switches: Vec<&Value> = entries.iter().filter(|e| e["type"] == "model_change").map(|e| &e["modelId"]).collect();
    assert_eq!(switches, [&json!("m"), &json!("m2"), &json!("m")], "{entries:#?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_users_own_commands_run_can_be_aborted_and_reach_the_model() {
    let mock = server(json!([{"text": "I saw the output."}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let mut rpc = start(&sandbox);

    let hi = rpc.call("b1", json!({"type": "bash", "command": "echo hi"})).await;
    assert_eq!(
        hi,
        json!({"id": "b1", "type": "response", "command": "bash", "success": true,
               "data": {"output": "hi\n", "exitCode": 0, "cancelled": false, "truncated": false}})
    );
    let failed = rpc.call("b2", json!({"type": "bash", "command": "echo err >&2; exit 3"})).await;
    assert_eq!(failed["success"], true, "a failing command is still a result");
    assert_eq!(failed["data"]["exitCode"], 3);
    assert_eq!(failed["data"]["output"], "err\n");

    rpc.send(json!({"id": "b3", "type": "bash", "command": "sleep 30; echo late"})).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let aborted = rpc.call("ab", json!({"type": "abort_bash"})).await;
    assert_eq!(aborted["success"], true);
    let cancelled = rpc.reply("b3").await;
    assert_eq!(cancelled["data"]["cancelled"], true, "{cancelled}");
    assert!(cancelled["data"].get("exitCode").is_none(), "a cancelled command has no exit code: {cancelled}");

    let messages = rpc.call("m", json!({"type": "get_messages"})).await;
    let kept: Vec<&Value> = messages["data"]["messages"].as_array().expect("messages").iter().collect();
    assert_eq!(kept.len(), 3, "{kept:#?}");
    assert_eq!(kept[0]["role"], "bashExecution");
    assert_eq!(kept[0]["command"], "echo hi");
    rpc.call("p", json!({"type": "prompt", "message": "What did you see?"})).await;
    rpc.until(is_event("agent_end")).await;
    let body = mock.requests()[0].body.to_string();
    assert!(body.contains("echo hi") && body.contains("hi\\n"), "the command and its output reach the model: {body}");

    let (code, _) = rpc.close().await;
    assert_eq!(code, Some(0));
    let entries = session_entries(&sandbox);
    let kinds: Vec<&str> = entries.iter().filter_map(|e| e["message"]["role"].as_str()).collect();
    assert_eq!(kinds, ["bashExecution", "bashExecution", "bashExecution", "user", "assistant"]);
}

fn header_of(path: &str) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{path}: {error}"));
    serde_json::from_str(text.lines().next().expect("a header")).expect("json header")
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_fork_clone_switch_and_start_anew() {
    let mock = server(json!([
        {"text": "First answer."},
        {"text": "Second answer."},
        {"text": "Answer in the new session."}
    ]))
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    let mut rpc = start(&sandbox);
    for (id, text) in [("p1", "First question"), ("p2", "Second question")] {
        rpc.call(id, json!({"type": "prompt", "message": text})).await;
        rpc.until(is_event("agent_end")).await;
    }
    let original = rpc.call("s0", json!({"type": "get_state"})).await["data"]["sessionFile"].clone();
    let original = original.as_str().expect("a session file").to_owned();

    let forks = rpc.call("fm", json!({"type": "get_fork_messages"})).await;
    let second = forks["data"]["messages"][1].clone();
    assert_eq!(second["text"], "Second question");
    let bad = rpc.call("f0", json!({"type": "fork", "entryId": "nope"})).await;
    assert_eq!(bad["success"], false);
    let forked = rpc.call("f1", json!({"type": "fork", "entryId": second["entryId"]})).await;
    assert_eq!(forked["data"], json!({"text": "Second question", "cancelled": false}));
    let state = rpc.call("s1", json!({"type": "get_state"})).await;
    let fork_file = state["data"]["sessionFile"].as_str().expect("fork file").to_owned();
    assert_ne!(fork_file, original);
    assert_eq!(state["data"]["messageCount"], 2, "the branch before the second question");
    assert_eq!(header_of(&fork_file)["parentSession"], original.as_str(), "written at once: it holds an answer");

    let cloned = rpc.call("c", json!({"type": "clone"})).await;
    assert_eq!(cloned["data"], json!({"cancelled": false}));
    let clone_file = rpc.call("s2", json!({"type": "get_state"})).await["data"]["sessionFile"].clone();
    assert_ne!(clone_file.as_str(), Some(fork_file.as_str()));

    let back = rpc.call("sw", json!({"type": "switch_session", "sessionPath": original})).await;
    assert_eq!(back["data"], json!({"cancelled": false}));
    let state = rpc.call("s3", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["sessionFile"], original.as_str());
    assert_eq!(state["data"]["messageCount"], 4);
    let missing = rpc.call("sw2", json!({"type": "switch_session", "sessionPath": "/nonexistent/x.jsonl"})).await;
    assert_eq!(missing["success"], false, "{missing}");

    let fresh = rpc.call("n", json!({"type": "new_session", "parentSession": original})).await;
    assert_eq!(fresh["data"], json!({"cancelled": false}));
    let state = rpc.call("s4", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["messageCount"], 0);
    let new_file = state["data"]["sessionFile"].as_str().expect("new file").to_owned();
    rpc.call("p3", json!({"type": "prompt", "message": "Hello again"})).await;
    rpc.until(is_event("agent_end")).await;
    let last = mock.requests()[2].body["messages"].as_array().expect("messages").len();
    assert_eq!(last, 2, "the new session starts from nothing but the system prompt");
    let (code, _) = rpc.close().await;
    assert_eq!(code, Some(0));
    assert_eq!(header_of(&new_file)["parentSession"], original.as_str());
    let original_lines = std::fs::read_to_string(&original).expect("original").lines().count();
    assert_eq!(original_lines, 7, "header, model, thinking, four messages: the original is untouched");
}

/// Settings changed over RPC are written to the agent dir's settings.json as pi 0.73.1 writes them (the same
/// commands against pi give this file byte for byte), and the next run starts from them.
#[tokio::test(flavor = "multi_thread")]
async fn settings_changed_over_rpc_are_saved_as_pi_saves_them_and_the_next_run_uses_them() {
    let mock = server(json!([])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let models = json!({"providers": {"mock": {
        "baseUrl": mock.base_url(), "api": "openai-completions", "apiKey": "mock-key",
        "models": [{"id": "m", "name": "M", "reasoning": true}, {"id": "m2", "name": "M2", "reasoning": true}]
    }}});
    std::fs::write(sandbox.agent_dir().join("models.json"), models.to_string()).expect("models.json");
    let settings_path = sandbox.agent_dir().join("settings.json");
    std::fs::write(&settings_path, r#"{"theme":"dark","retry":{"maxRetries":5}}"#).expect("settings");
    let mut rpc = start(&sandbox);
    for (id, command) in [
        ("t", json!({"type": "set_thinking_level", "level": "high"})),
        ("s", json!({"type": "set_steering_mode", "mode": "all"})),
        ("f", json!({"type": "set_follow_up_mode", "mode": "all"})),
        ("c", json!({"type": "set_auto_compaction", "enabled": false})),
        ("r", json!({"type": "set_auto_retry", "enabled": false})),
        ("m", json!({"type": "set_model", "provider": "mock", "modelId": "m2"})),
    ] {
        let reply = rpc.call(id, command).await;
        assert_eq!(reply["success"], true, "{reply}");
    }
    let (code, _) = rpc.close().await;
    assert_eq!(code, Some(0));
    let written = std::fs::read_to_string(&settings_path).expect("settings");
    let pi_wrote = "{\n  \"theme\": \"dark\",\n  \"retry\": {\n    \"maxRetries\": 5,\n    \"enabled\": false\n  },\n  \
                    \"defaultThinkingLevel\": \"high\",\n  \"steeringMode\": \"all\",\n  \"followUpMode\": \"all\",\n  \
                    \"compaction\": {\n    \"enabled\": false\n  },\n  \"defaultProvider\": \"mock\",\n  \
                    \"defaultModel\": \"m2\"\n}";
    assert_eq!(written, pi_wrote);

    // Without --model the next run takes the saved model, thinking level and queue modes.
    let mut next = sandbox.spawn_rpc(&agent_binary("pi"), &[]);
    let state = next.call("g", json!({"type": "get_state"})).await;
    let data = &state["data"];
    assert_eq!((data["model"]["id"].clone(), data["thinkingLevel"].clone()), (json!("m2"), json!("high")));
    assert_eq!((data["steeringMode"].clone(), data["followUpMode"].clone()), (json!("all"), json!("all")));
    assert_eq!(data["autoCompactionEnabled"], false);
    let (code, _) = next.close().await;
    assert_eq!(code, Some(0));
}

/// `--models` scopes cycling as in pi: the first scoped model starts, `cycle_model` goes through the scope
/// only (`isScoped: true`), and a `:<level>` in a pattern sets the thinking level on the way.
#[tokio::test(flavor = "multi_thread")]
async fn scoped_models_choose_the_start_model_and_what_cycling_goes_through() {
    let mock = server(json!([])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let models = json!({"providers": {"mock": {
        "baseUrl": mock.base_url(), "api": "openai-completions", "apiKey": "mock-key",
        "models": [{"id": "m", "reasoning": true}, {"id": "m2"}, {"id": "m3", "reasoning": true}]
    }}});
    std::fs::write(sandbox.agent_dir().join("models.json"), models.to_string()).expect("models.json");
    let mut rpc = sandbox.spawn_rpc(&agent_binary("pi"), &["--models", "m3,mock/m:high"]);
    let state = rpc.call("g", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["model"]["id"], "m3", "the first scoped model starts");
    let cycled = rpc.call("c1", json!({"type": "cycle_model"})).await;
    let data = &cycled["data"];
    assert_eq!((data["model"]["id"].clone(), data["thinkingLevel"].clone()), (json!("m"), json!("high")));
    assert_eq!(data["isScoped"], true);
    let again = rpc.call("c2", json!({"type": "cycle_model"})).await;
    assert_eq!(again["data"]["model"]["id"], "m3", "m2 is not in the scope");
    let (code, _) = rpc.close().await;
    assert_eq!(code, Some(0));
}
