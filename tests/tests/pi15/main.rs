//! End to end at both compatibility levels: agents/pi.yaml run in json mode with `--pi-compat 1.5` shows pi
//! 1.5's event and message shapes, and without it (or with `0.73`) exactly pi 0.73's.

use pi_gen_tests::{Sandbox, agent_binary, stderr, stdout};
use pi_runtime::testing::{MockLlmServer, MockScript};
use serde_json::Value;

async fn server(script: &str) -> MockLlmServer {
    let script = MockScript::from_json_str(script).expect("valid script");
    MockLlmServer::start(script).await.expect("mock server starts")
}

const MODEL_ARGS: [&str; 4] = ["--provider", "mock", "--model", "m"];

/// A text, a bash call and a read call, then a closing answer.
const TWO_TOOLS: &str = r#"{"responses": [
    {"text": "Let me look.", "toolCalls": [
        {"id": "call_1", "name": "bash", "arguments": {"command": "echo hi"}},
        {"id": "call_2", "name": "read", "arguments": {"path": "a.txt"}}
    ]},
    {"text": "All done."}
]}"#;

/// Runs the pi agent in json mode with `extra` flags against `script` and returns its JSON lines.
async fn json_run(script: &str, extra: &[&str], files: &[(&str, &str)]) -> Vec<Value> {
    let mock = server(script).await;
    let sandbox = Sandbox::new(&mock.base_url());
    for (path, content) in files {
        sandbox.write(path, content);
    }
    let binary = agent_binary("pi");
    let output = sandbox.run(&binary, &[&MODEL_ARGS[..], extra, &["--mode", "json", "look"]].concat()).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    stdout(&output).lines().map(|line| serde_json::from_str(line).expect("every line is JSON")).collect()
}

fn of_type<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|line| line["type"] == kind).collect()
}

fn keys(value: &Value) -> Vec<&str> {
    value.as_object().map(|object| object.keys().map(String::as_str).collect()).unwrap_or_default()
}

fn message_ends<'a>(lines: &'a [Value], role: &str) -> Vec<&'a Value> {
    of_type(lines, "message_end").into_iter().map(|line| &line["message"]).filter(|m| m["role"] == role).collect()
}

fn tool_end<'a>(lines: &'a [Value], tool: &str) -> &'a Value {
    of_type(lines, "tool_execution_end").into_iter().find(|line| line["toolName"] == tool).expect("tool end")
}

#[tokio::test(flavor = "multi_thread")]
async fn level_1_5_streams_pieces_and_stamps_durations_levels_and_raw_stop_reasons() {
    let lines = json_run(TWO_TOOLS, &["--pi-compat", "1.5"], &[("a.txt", "hello\n")]).await;

    let updates = of_type(&lines, "message_update");
    assert!(!updates.is_empty());
    for update in &updates {
        assert_eq!(keys(update), ["type", "usage", "assistantMessageEvent"], "{update}");
        assert!(update["assistantMessageEvent"].get("partial").is_none(), "{update}");
    }
    let starts: Vec<&Value> = updates
        .iter()
        .map(|update| &update["assistantMessageEvent"])
        .filter(|event| event["type"] == "toolcall_start")
        .collect();
    assert_eq!(starts.len(), 2);
    assert_eq!((&starts[0]["id"], &starts[0]["toolName"]), (&Value::from("call_1"), &Value::from("bash")));
    assert_eq!((&starts[1]["id"], &starts[1]["toolName"]), (&Value::from("call_2"), &Value::from("read")));

    let first_start = of_type(&lines, "message_start").into_iter().find(|line| line["message"]["role"] == "assistant");
    assert_eq!(first_start.expect("assistant start")["message"]["stopReason"], "pending");
    let answers = message_ends(&lines, "assistant");
    assert_eq!(answers.len(), 2);
    assert_eq!(answers[0]["rawStopReason"], "tool_calls");
    assert_eq!(answers[1]["rawStopReason"], "stop");
    for answer in &answers {
        assert!(answer["durationMs"].is_u64(), "{answer}");
        assert_eq!(answer["thinkingLevel"], "off");
        assert_eq!(answer["usage"]["reasoning"], 0);
        assert_eq!(answer["usage"]["cost"]["totalFromProvider"], false);
    }
    let tail = keys(answers[0]).into_iter().rev().take(4).collect::<Vec<_>>();
    assert_eq!(tail, ["thinkingLevel", "durationMs", "rawStopReason", "responseId"]);

    let bash = tool_end(&lines, "bash");
    assert!(bash["durationMs"].is_u64(), "{bash}");
    let record = &bash["result"]["structuredContent"];
    assert_eq!(
        (&record["output"], &record["truncated"], &record["exit_code"]),
        (&"hi\n".into(), &false.into(), &0.into())
    );
    assert!(record["wall_time_seconds"].is_number(), "{record}");
    assert_eq!(tool_end(&lines, "read")["result"]["structuredContent"], "hello\n");
    for result in message_ends(&lines, "toolResult") {
        assert!(result["durationMs"].is_u64(), "{result}");
        assert!(result.get("structuredContent").is_none(), "the record stays out of the message: {result}");
    }

    let end = of_type(&lines, "agent_end");
    assert_eq!(end.len(), 1);
    assert_eq!(end[0]["willRetry"], false);
    assert_eq!(lines.last().expect("a last line"), &serde_json::json!({"type": "agent_settled", "aborted": false}));
}

#[tokio::test(flavor = "multi_thread")]
async fn level_0_73_is_the_default_and_keeps_pi_0_73_shapes() {
    for extra in [&[][..], &["--pi-compat", "0.73"][..]] {
        let lines = json_run(TWO_TOOLS, extra, &[("a.txt", "hello\n")]).await;
        for update in of_type(&lines, "message_update") {
            assert_eq!(keys(update), ["type", "assistantMessageEvent", "message"], "{update}");
            assert!(update["assistantMessageEvent"].get("partial").is_some());
            assert!(update["assistantMessageEvent"].get("toolName").is_none());
            assert_ne!(update["message"]["stopReason"], "pending");
        }
        for answer in message_ends(&lines, "assistant") {
            for field in ["rawStopReason", "durationMs", "thinkingLevel"] {
                assert!(answer.get(field).is_none(), "{field} in {answer}");
            }
            assert!(answer["usage"].get("reasoning").is_none());
            assert!(answer["usage"]["cost"].get("totalFromProvider").is_none());
        }
        for tool in ["bash", "read"] {
            let end = tool_end(&lines, tool);
            assert!(end.get("durationMs").is_none() && end["result"].get("structuredContent").is_none(), "{end}");
        }
        for result in message_ends(&lines, "toolResult") {
            assert!(result.get("durationMs").is_none(), "{result}");
        }
        assert!(of_type(&lines, "agent_end")[0].get("willRetry").is_none());
        assert!(of_type(&lines, "agent_settled").is_empty());
        assert_eq!(lines.last().expect("a last line")["type"], "agent_end");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_command_is_a_flagged_result_at_1_5_and_an_error_at_0_73() {
    let script = r#"{"responses": [
        {"toolCalls": [{"id": "c1", "name": "bash", "arguments": {"command": "echo oops; exit 3"}}]},
        {"text": "ok"}
    ]}"#;
    let current = json_run(script, &["--pi-compat", "1.5"], &[]).await;
    let end = tool_end(&current, "bash");
    let text = "oops\n\n\nCommand exited with code 3";
    assert_eq!(end["isError"], true);
    assert_eq!(end["result"]["isError"], true);
    assert_eq!(end["result"]["content"][0]["text"], text);
    assert_eq!(end["result"]["structuredContent"]["exit_code"], 3);
    assert_eq!(end["result"]["structuredContent"]["output"], "oops\n");
    assert!(end["result"].get("details").is_none(), "{end}");

    let old = json_run(script, &[], &[]).await;
    let end = tool_end(&old, "bash");
    assert_eq!(end["isError"], true);
    assert_eq!(end["result"], serde_json::json!({"content": [{"type": "text", "text": text}], "details": {}}));
}

#[tokio::test(flavor = "multi_thread")]
async fn edit_reports_a_unified_patch_and_write_no_byte_count_at_1_5() {
    let script = r#"{"responses": [
        {"toolCalls": [
            {"id": "c1", "name": "edit", "arguments": {"path": "a.txt", "edits": [{"oldText": "hello", "newText": "bye"}]}},
            {"id": "c2", "name": "write", "arguments": {"path": "b.txt", "content": "x\n"}}
        ]},
        {"text": "ok"}
    ]}"#;
    let current = json_run(script, &["--pi-compat", "1.5"], &[("a.txt", "hello\n")]).await;
    let details = &tool_end(&current, "edit")["result"]["details"];
    assert_eq!(details["patch"], "--- a.txt\n+++ a.txt\n@@ -1,1 +1,1 @@\n-hello\n+bye\n");
    assert_eq!(details["diff"], "-1 hello\n+1 bye");
    assert_eq!(tool_end(&current, "write")["result"]["content"][0]["text"], "Successfully wrote to b.txt");

    let old = json_run(script, &[], &[("a.txt", "hello\n")]).await;
    assert!(tool_end(&old, "edit")["result"]["details"].get("patch").is_none());
    assert_eq!(tool_end(&old, "write")["result"]["content"][0]["text"], "Successfully wrote 2 bytes to b.txt");
}

#[tokio::test(flavor = "multi_thread")]
async fn agent_end_says_whether_the_session_retries_and_agent_settled_comes_once_at_the_end() {
    let script = r#"{"responses": [
        {"error": {"status": 503, "body": "overloaded", "headers": {"x-should-retry": "false"}}},
        {"text": "fine"}
    ]}"#;
    let mock = server(script).await;
    let sandbox = Sandbox::new(&mock.base_url());
    std::fs::write(sandbox.agent_dir().join("settings.json"), r#"{"retry": {"baseDelayMs": 1}, "piCompat": "1.5"}"#)
        .expect("settings");
    let binary = agent_binary("pi");
    let output = sandbox.run(&binary, &[&MODEL_ARGS[..], &["--mode", "json", "hi"]].concat()).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let lines: Vec<Value> = stdout(&output).lines().map(|line| serde_json::from_str(line).expect("JSON")).collect();
    let ends: Vec<&Value> = of_type(&lines, "agent_end").into_iter().map(|end| &end["willRetry"]).collect();
    assert_eq!(ends, [&Value::Bool(true), &Value::Bool(false)], "the piCompat setting chose level 1.5");
    let kinds: Vec<&str> = lines.iter().filter_map(|line| line["type"].as_str()).collect();
    let retry = kinds.iter().position(|kind| *kind == "auto_retry_start").expect("a retry");
    assert_eq!(kinds[retry - 1], "agent_end", "{kinds:?}");
    assert_eq!(of_type(&lines, "agent_settled").len(), 1);
    assert_eq!(kinds.last(), Some(&"agent_settled"));

    // The failed answer leaves the context through a context_edit entry, announced right after the retry
    // starts; the file keeps the answer itself.
    assert_eq!(kinds[retry + 1], "entry_appended", "{kinds:?}");
    let edit = &of_type(&lines, "entry_appended")[0]["entry"];
    assert_eq!((&edit["type"], &edit["replacement"]), (&Value::from("context_edit"), &Value::Null));
    let entries = session_lines(&sandbox);
    let failed = entries.iter().find(|entry| entry["message"]["stopReason"] == "error").expect("the failed answer");
    assert_eq!(edit["targetId"], failed["id"]);
    assert_eq!(edit["parentId"], failed["id"]);
    let saved = entries.iter().find(|entry| entry["type"] == "context_edit").expect("the edit is saved");
    assert_eq!(saved, edit);
}

/// The request's system prompt and `user-agent` at each level.
async fn first_request(extra: &[&str]) -> (String, Option<String>) {
    let mock = server(r#"{"responses": [{"text": "ok"}]}"#).await;
    let sandbox = Sandbox::new(&mock.base_url());
    sandbox.write("AGENTS.md", "Always answer in French.\n");
    let binary = agent_binary("pi");
    let output = sandbox.run(&binary, &[&MODEL_ARGS[..], extra, &["-p", "hi"]].concat()).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let request = mock.requests().into_iter().next().expect("one request");
    let system = request.body["messages"][0]["content"].as_str().expect("a system message").to_owned();
    (system, request.header("user-agent").map(str::to_owned))
}

#[tokio::test(flavor = "multi_thread")]
async fn level_1_5_sends_the_system_prompt_in_blocks_and_names_the_agent_in_the_user_agent() {
    let (system, agent) = first_request(&["--pi-compat", "1.5"]).await;
    let blocks: Vec<usize> = ["<tools>\n", "<rules>\n", "<project_context>\n", "<cwd>\n"]
        .iter()
        .map(|tag| system.find(tag).unwrap_or_else(|| panic!("{tag} in {system}")))
        .collect();
    assert!(blocks.windows(2).all(|pair| pair[0] < pair[1]), "blocks out of order: {system}");
    assert!(system.contains("Always answer in French."), "{system}");
    assert!(system.trim_end().ends_with("</cwd>"), "{system}");
    assert!(!system.contains("Current date:"), "{system}");
    let agent = agent.expect("a user-agent");
    assert!(agent.starts_with("pi/") && agent.contains(" (") && agent.ends_with(')'), "{agent}");

    let (system, agent) = first_request(&[]).await;
    assert!(!system.contains("<tools>") && system.contains("Current date:"), "{system}");
    assert!(agent.as_deref().is_none_or(|agent| !agent.starts_with("pi/")), "{agent:?}");
}

/// The lines of the one session file the sandbox holds.
fn session_lines(sandbox: &Sandbox) -> Vec<Value> {
    let files = sandbox.session_files();
    assert_eq!(files.len(), 1, "{files:?}");
    let text = std::fs::read_to_string(&files[0]).expect("session file");
    text.lines().map(|line| serde_json::from_str(line).expect("JSON line")).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn level_1_5_opens_the_conversation_with_a_system_message_once() {
    let mock = server(r#"{"responses": [{"text": "one"}, {"text": "two"}, {"text": "three"}]}"#).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let binary = agent_binary("pi");
    let output =
        sandbox.run(&binary, &[&MODEL_ARGS[..], &["--pi-compat", "1.5", "--mode", "json", "hi"]].concat()).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let lines: Vec<Value> = stdout(&output).lines().map(|line| serde_json::from_str(line).expect("JSON")).collect();
    let order: Vec<String> = lines
        .iter()
        .take(7)
        .map(|line| {
            format!("{} {}", line["type"].as_str().unwrap_or("?"), line["message"]["role"].as_str().unwrap_or(""))
        })
        .collect();
    let expected = [
        "session ",
        "agent_start ",
        "turn_start ",
        "message_start system",
        "message_end system",
        "message_start user",
        "message_end user",
    ];
    assert_eq!(order, expected);
    let system = &lines[4]["message"];
    assert_eq!(keys(system), ["role", "content", "sections", "timestamp", "toolsAdded"]);
    assert_eq!(system["content"], "");
    let sections = keys(&system["sections"]);
    assert_eq!((sections.first(), sections.last()), (Some(&"preamble"), Some(&"cwd")), "{sections:?}");
    assert!(sections.contains(&"tools") && sections.contains(&"rules"), "{sections:?}");
    let tools: Vec<&str> =
        system["toolsAdded"].as_array().expect("tools").iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(tools, ["read", "bash", "edit", "write"]);
    assert_eq!(
        system["toolsAdded"][0]["constrainedSampling"],
        serde_json::json!({"type": "json_schema", "strict": "prefer"})
    );
    let request = &mock.requests()[0].body;
    let joined: Vec<&str> =
        system["sections"].as_object().expect("sections").values().filter_map(Value::as_str).collect();
    assert_eq!(request["messages"][0]["content"], joined.join("\n\n"), "the sections are the prompt sent");
    assert_eq!(request["messages"].as_array().map(Vec::len), Some(2), "the record itself is not sent");
    let end = of_type(&lines, "agent_end");
    assert_eq!(end[0]["messages"][0]["role"], "system");

    // Saved as the first message entry; a continued conversation does not add another.
    let again = sandbox.run(&binary, &[&MODEL_ARGS[..], &["--pi-compat", "1.5", "-c", "-p", "again"]].concat()).await;
    assert!(again.status.success(), "stderr: {}", stderr(&again));
    let entries = session_lines(&sandbox);
    let roles: Vec<&str> = entries
        .iter()
        .filter(|entry| entry["type"] == "message")
        .filter_map(|entry| entry["message"]["role"].as_str())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "user", "assistant"]);
    // Other tools make another prompt: a new, complete record comes before the next question.
    let fewer = sandbox
        .run(&binary, &[&MODEL_ARGS[..], &["--pi-compat", "1.5", "-c", "--tools", "read", "-p", "3"]].concat())
        .await;
    assert!(fewer.status.success(), "stderr: {}", stderr(&fewer));
    let entries = session_lines(&sandbox);
    let records: Vec<&Value> = entries.iter().filter(|entry| entry["message"]["role"] == "system").collect();
    assert_eq!(records.len(), 2);
    assert_eq!(records[1]["message"]["toolsAdded"].as_array().map(Vec::len), Some(1));
    assert_eq!(entries.last().expect("entries")["message"]["role"], "assistant");
    let second = &mock.requests()[1].body["messages"];
    assert_eq!(
        second.as_array().map(Vec::len),
        Some(4),
        "system prompt, then the four turns minus the record: {second}"
    );
}

mod thinking;
mod trust;
