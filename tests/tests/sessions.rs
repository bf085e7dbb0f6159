//! Sessions end to end with the generated pi binary and the scripted server: the session file a print run
//! writes, `-c` continuing it, a session file written by pi 0.73.1 loading, auto-retry after a 503, and
//! compaction when a small context window fills.

use std::path::{Path, PathBuf};

use pi_gen_tests::{Sandbox, agent_binary, stderr, stdout, workspace_root};
use pi_runtime::testing::{MockLlmServer, MockScript};
use serde_json::{Value, json};

const MODEL_ARGS: [&str; 4] = ["--provider", "mock", "--model", "m"];

async fn server(responses: Value) -> MockLlmServer {
    let script = MockScript::from_json_str(&json!({ "responses": responses }).to_string()).expect("script");
    MockLlmServer::start(script).await.expect("mock starts")
}

/// Every session file under the sandbox's agent dir.
fn session_files(sandbox: &Sandbox) -> Vec<PathBuf> {
    sandbox.session_files()
}

fn lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("session file");
    text.lines().map(|line| serde_json::from_str(line).expect("json line")).collect()
}

/// The `role: text` pairs of a chat-completions request body (system prompt left out).
fn conversation(body: &Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|message| message["role"] != "system")
        .map(|message| {
            let content = match &message["content"] {
                Value::String(text) => text.clone(),
                Value::Array(parts) => parts.iter().filter_map(|part| part["text"].as_str()).collect(),
                _ => String::new(),
            };
            (message["role"].as_str().unwrap_or_default().to_owned(), content)
        })
        .collect()
}

fn pair(role: &str, text: &str) -> (String, String) {
    (role.to_owned(), text.to_owned())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_print_run_writes_pis_session_file_and_continue_picks_it_up() {
    let binary = agent_binary("pi");
    let mock = server(json!([{"text": "First answer."}, {"text": "Second answer."}])).await;
    let sandbox = Sandbox::new(&mock.base_url());

    let first = sandbox.run(&binary, &[&MODEL_ARGS[..], &["-p", "Remember the word kiwi"]].concat()).await;
    assert!(first.status.success(), "{}", stderr(&first));
    let files = session_files(&sandbox);
    assert_eq!(files.len(), 1, "{files:?}");
    let folder = files[0].parent().and_then(Path::file_name).map(|name| name.to_string_lossy().into_owned());
    let cwd = sandbox.work_dir().canonicalize().expect("cwd");
    let expected_folder = format!("--{}--", cwd.to_string_lossy().trim_start_matches('/').replace('/', "-"));
    assert_eq!(folder.as_deref(), Some(expected_folder.as_str()));
    let written = lines(&files[0]);
    let types: Vec<&str> = written.iter().map(|line| line["type"].as_str().unwrap_or_default()).collect();
    assert_eq!(types, ["session", "model_change", "thinking_level_change", "message", "message"]);
    assert_eq!(written[0]["version"], 3);
    assert_eq!(written[1]["provider"], "mock");
    assert_eq!(written[1]["modelId"], "m");
    assert_eq!(written[1]["parentId"], Value::Null);
    for window in written[1..].windows(2) {
        assert_eq!(window[1]["parentId"], window[0]["id"], "entries chain to their predecessor");
    }
    assert!(written[1..].iter().all(|line| line["id"].as_str().is_some_and(|id| id.len() == 8)));
    assert_eq!(written[4]["message"]["role"], "assistant");

    let second = sandbox.run(&binary, &[&MODEL_ARGS[..], &["-c", "-p", "Which word?"]].concat()).await;
    assert!(second.status.success(), "{}", stderr(&second));
    assert_eq!(stdout(&second), "Second answer.\n");
    let requests = mock.requests();
    assert_eq!(
        conversation(&requests[1].body),
        [pair("user", "Remember the word kiwi"), pair("assistant", "First answer."), pair("user", "Which word?")]
    );
    assert_eq!(session_files(&sandbox), files, "-c appends to the same file");
    let types: Vec<String> =
        lines(&files[0]).iter().map(|line| line["type"].as_str().unwrap_or_default().to_owned()).collect();
    assert_eq!(types.len(), 7, "{types:?}");

    let memory = sandbox.run(&binary, &[&MODEL_ARGS[..], &["--no-session", "-p", "hi"]].concat()).await;
    assert_eq!(memory.status.code(), Some(1), "the script is used up, the run fails");
    assert_eq!(session_files(&sandbox), files, "--no-session writes nothing");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_written_by_pi_loads_and_the_next_request_carries_it() {
    let binary = agent_binary("pi");
    let mock = server(json!([{"text": "Continuing."}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let recorded = workspace_root().join("runtime/fixtures/pi-0.73.1/session-lines.jsonl");
    let session = sandbox.root.path().join("from-pi.jsonl");
    // The recording holds three sessions one after another; the first one is a complete file.
    let text = std::fs::read_to_string(&recorded).expect("recording");
    let first_session: Vec<&str> = text
        .lines()
        .take_while({
            let mut headers = 0;
            move |line| {
                headers += usize::from(line.starts_with(r#"{"type":"session""#));
                headers < 2
            }
        })
        .collect();
    std::fs::write(&session, first_session.join("\n") + "\n").expect("session file");
    let before = lines(&session);

    let path = session.to_string_lossy().into_owned();
    let output = sandbox.run(&binary, &[&MODEL_ARGS[..], &["--session", &path, "-p", "And now?"]].concat()).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let sent = conversation(&mock.requests()[0].body);
    let earlier: Vec<(String, String)> = before
        .iter()
        .filter(|line| line["type"] == "message")
        .filter(|line| line["message"]["role"] == "user")
        .map(|line| pair("user", line["message"]["content"][0]["text"].as_str().unwrap_or_default()))
        .collect();
    assert!(!earlier.is_empty());
    for message in &earlier {
        assert!(sent.contains(message), "{message:?} missing from {sent:#?}");
    }
    assert_eq!(sent.last(), Some(&pair("user", "And now?")));
    let after = lines(&session);
    assert_eq!(&after[..before.len()], &before[..], "pi's lines stay as they were");
    assert_eq!(after.last().map(|line| line["message"]["role"].clone()), Some(json!("assistant")));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_of_a_newer_version_is_continued_with_a_warning() {
    let binary = agent_binary("pi");
    let mock = server(json!([{"text": "Still here."}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let session = sandbox.root.path().join("newer.jsonl");
    let header = json!({"type": "session", "version": 4, "id": "s4", "timestamp": "2026-11-25T10:00:00.000Z",
        "cwd": sandbox.root.path().to_string_lossy()});
    let user = json!({"type": "message", "id": "00000001", "parentId": null, "timestamp": "2026-11-25T10:00:01.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": "Earlier question"}], "timestamp": 1}});
    std::fs::write(&session, format!("{header}\n{user}\n")).expect("session file");

    let path = session.to_string_lossy().into_owned();
    let output = sandbox.run(&binary, &[&MODEL_ARGS[..], &["--session", &path, "-p", "And now?"]].concat()).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let warning = stderr(&output);
    assert!(warning.contains(&format!("Warning: session file {path} is version 4, newer than version 3")), "{warning}");
    let sent = conversation(&mock.requests()[0].body);
    assert_eq!(sent, [pair("user", "Earlier question"), pair("user", "And now?")]);
    assert_eq!(lines(&session)[0]["version"], 4, "the header is left as it was");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_503_then_success_is_retried_with_backoff() {
    let binary = agent_binary("pi");
    let unavailable = json!({"error": {"status": 503, "body": {"error": {"message": "upstream overloaded"}},
        "headers": {"retry-after-ms": "10", "x-should-retry": "false"}}});
    let mock = server(json!([unavailable, {"text": "Recovered."}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    std::fs::write(sandbox.agent_dir().join("settings.json"), r#"{"retry": {"baseDelayMs": 20}}"#).expect("settings");

    let output = sandbox.run(&binary, &[&MODEL_ARGS[..], &["--mode", "json", "hi"]].concat()).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let events: Vec<Value> =
        stdout(&output).lines().map(|line| serde_json::from_str(line).expect("json event")).collect();
    let retry_events: Vec<&Value> =
        events.iter().filter(|event| event["type"].as_str().is_some_and(|t| t.starts_with("auto_retry"))).collect();
    assert_eq!(retry_events.len(), 2, "{retry_events:#?}");
    assert_eq!(retry_events[0]["type"], "auto_retry_start");
    assert_eq!(retry_events[0]["attempt"], 1);
    assert_eq!(retry_events[0]["maxAttempts"], 3);
    assert_eq!(retry_events[0]["delayMs"], 20);
    assert!(retry_events[0]["errorMessage"].as_str().is_some_and(|text| text.contains("503")));
    assert_eq!(*retry_events[1], json!({"type": "auto_retry_end", "success": true, "attempt": 1}));
    let last_end = events.iter().rev().find(|event| event["type"] == "agent_end").expect("agent_end");
    let final_messages = last_end["messages"].as_array().expect("messages");
    assert_eq!(final_messages.last().map(|m| m["stopReason"].clone()), Some(json!("stop")));
    // The failed answer stays in the session file.
    let written = lines(&session_files(&sandbox)[0]);
    let stop_reasons: Vec<Value> = written
        .iter()
        .filter(|l| l["message"]["role"] == "assistant")
        .map(|l| l["message"]["stopReason"].clone())
        .collect();
    assert_eq!(stop_reasons, [json!("error"), json!("stop")]);
    assert_eq!(conversation(&mock.requests()[1].body), [pair("user", "hi")], "the error left the context");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_context_window_is_compacted_and_the_next_request_carries_the_summary() {
    let binary = agent_binary("pi");
    let long_answer = "The plan has many steps. ".repeat(80);
    let mock = server(json!([
        {"text": long_answer, "usage": {"input": 3500, "output": 500}},
        {"text": "## Goal\nShip the plan."},
        {"text": "Done."}
    ]))
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    let models = json!({"providers": {"mock": {"baseUrl": mock.base_url(), "api": "openai-completions",
        "apiKey": "mock-key", "models": [{"id": "m", "contextWindow": 4000, "maxTokens": 1000}]}}});
    std::fs::write(sandbox.agent_dir().join("models.json"), models.to_string()).expect("models.json");
    let settings = r#"{"compaction": {"reserveTokens": 1000, "keepRecentTokens": 100}}"#;
    std::fs::write(sandbox.agent_dir().join("settings.json"), settings).expect("settings");

    let output =
        sandbox.run(&binary, &[&MODEL_ARGS[..], &["--mode", "json", "Make a plan", "Carry on"]].concat()).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let events: Vec<Value> =
        stdout(&output).lines().map(|line| serde_json::from_str(line).expect("json event")).collect();
    let starts: Vec<&Value> = events.iter().filter(|event| event["type"] == "compaction_start").collect();
    assert_eq!(starts.len(), 1, "the answer from before the compaction does not trigger another: {starts:?}");
    let start = starts[0];
    assert_eq!(start["reason"], "threshold");
    // pi 0.73 names them compaction_start / compaction_end, the end repeating the reason.
    let end = events.iter().find(|event| event["type"] == "compaction_end").expect("compaction ended");
    assert_eq!(end["reason"], "threshold");
    assert_eq!(end["willRetry"], false);
    assert!(end["result"]["summary"].as_str().is_some_and(|s| s.contains("Ship the plan.")), "{end}");

    let requests = mock.requests();
    assert_eq!(requests.len(), 3);
    let last = conversation(&requests[2].body);
    assert!(last[0].1.starts_with("The conversation history before this point was compacted"), "{last:#?}");
    assert!(last[0].1.contains("Ship the plan."), "{last:#?}");
    assert!(last.contains(&pair("assistant", &long_answer)), "the kept answer follows the summary");
    assert_eq!(last.last(), Some(&pair("user", "Carry on")));
    let written = lines(&session_files(&sandbox)[0]);
    let compaction = written.iter().find(|line| line["type"] == "compaction").expect("compaction entry");
    assert!(compaction["firstKeptEntryId"].as_str().is_some_and(|id| id.len() == 8));
    assert!(compaction["tokensBefore"].as_u64().is_some_and(|tokens| tokens >= 4000), "{compaction}");
}

#[tokio::test(flavor = "multi_thread")]
async fn export_writes_a_session_file_as_a_page_and_exits() {
    let mock = server(json!([{"text": "Exported <answer> & more."}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let binary = agent_binary("pi");
    let output = sandbox.run(&binary, &[&MODEL_ARGS[..], &["-p", "Write a page"]].concat()).await;
    assert!(output.status.success(), "{}", stderr(&output));
    let file = session_files(&sandbox).pop().expect("a session file");
    let file = file.to_string_lossy().into_owned();

    let exported = sandbox.run(&binary, &["--export", &file, "page.html"]).await;
    assert!(exported.status.success(), "{}", stderr(&exported));
    assert!(stdout(&exported).contains("page.html"), "{}", stdout(&exported));
    let page = std::fs::read_to_string(sandbox.work_dir().join("page.html")).expect("the page");
    assert!(page.contains("Write a page") && page.contains("Exported &lt;answer&gt; &amp; more."), "{page}");
    assert_eq!(mock.requests().len(), 1, "exporting calls no model");

    let default = sandbox.run(&binary, &["--export", &file]).await;
    assert!(default.status.success(), "{}", stderr(&default));
    let stem = Path::new(&file).file_stem().expect("stem").to_string_lossy().into_owned();
    assert!(sandbox.work_dir().join(format!("pi-session-{stem}.html")).is_file(), "pi's default name");

    let missing = sandbox.run(&binary, &["--export", "/nonexistent/session.jsonl"]).await;
    assert_eq!(missing.status.code(), Some(1));
    assert!(stderr(&missing).contains("/nonexistent/session.jsonl"), "{}", stderr(&missing));
}

#[tokio::test(flavor = "multi_thread")]
async fn fork_copies_a_session_into_a_new_one_and_continues_there() {
    let binary = agent_binary("pi");
    let mock = server(json!([{"text": "First answer."}, {"text": "Answer in the fork."}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let first = sandbox.run(&binary, &[&MODEL_ARGS[..], &["-p", "first question"]].concat()).await;
    assert!(first.status.success(), "{}", stderr(&first));
    let source = session_files(&sandbox).remove(0);
    let source_lines = lines(&source);
    let id = source_lines[0]["id"].as_str().expect("session id").to_owned();

    let conflict = sandbox.run(&binary, &[&MODEL_ARGS[..], &["--fork", &id[..8], "-c", "-p", "x"]].concat()).await;
    assert_eq!(conflict.status.code(), Some(1));
    assert!(stderr(&conflict).contains("--fork") && stderr(&conflict).contains("--continue"), "{}", stderr(&conflict));

    let forked =
        sandbox.run(&binary, &[&MODEL_ARGS[..], &["--fork", &id[..8], "-p", "second question"]].concat()).await;
    assert!(forked.status.success(), "{}", stderr(&forked));
    assert_eq!(stdout(&forked), "Answer in the fork.\n");
    assert_eq!(lines(&source), source_lines, "the source is not touched");
    let fork = session_files(&sandbox).into_iter().find(|path| *path != source).expect("a new session file");
    let fork_lines = lines(&fork);
    assert_eq!(fork_lines[0]["parentSession"], source.to_string_lossy().as_ref());
    assert_ne!(fork_lines[0]["id"], source_lines[0]["id"]);
    assert_eq!(fork_lines[1..source_lines.len()], source_lines[1..], "every entry copied as it was");
    assert_eq!(
        conversation(&mock.requests()[1].body),
        [pair("user", "first question"), pair("assistant", "First answer."), pair("user", "second question")]
    );
}

/// `-r` in print mode lists this directory's sessions on the terminal; `a` lists every project's, and the
/// chosen one (another project's here) is continued.
#[tokio::test(flavor = "multi_thread")]
async fn resume_in_print_mode_can_pick_a_session_of_another_project() {
    let binary = agent_binary("pi");
    let mock = server(json!([{"text": "Here."}, {"text": "Continued elsewhere."}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let first = sandbox.run(&binary, &[&MODEL_ARGS[..], &["-p", "question here"]].concat()).await;
    assert!(first.status.success(), "{}", stderr(&first));
    // The same conversation as a session of another project, with its own id and words.
    let mut other = lines(&session_files(&sandbox)[0]);
    other[0]["id"] = json!("0199aaaa-0000-7000-8000-000000000001");
    other[0]["cwd"] = json!("/elsewhere/project");
    for entry in other.iter_mut().filter(|entry| entry["message"]["role"] == "user") {
        entry["message"]["content"] = json!([{"type": "text", "text": "question elsewhere"}]);
    }
    let folder = sandbox.agent_dir().join("sessions").join("--elsewhere-project--");
    std::fs::create_dir_all(&folder).expect("mkdir");
    let text: Vec<String> = other.iter().map(Value::to_string).collect();
    std::fs::write(folder.join("2030-01-01T00-00-00-000Z_other.jsonl"), text.join("\n") + "\n").expect("write");

    let mut agent = sandbox.spawn_pty(&binary, &[&MODEL_ARGS[..], &["-r", "-p", "and now?"]].concat(), 30, 120);
    let mine = agent.wait_for_text("Session number (a: every project)");
    assert!(!mine.contains("/elsewhere/project"), "{mine}");
    agent.send("a\r");
    let all = agent.wait_for_text("/elsewhere/project");
    let number = all
        .lines()
        .find(|line| line.contains("/elsewhere/project"))
        .and_then(|line| line.trim().split('.').next())
        .expect("a numbered line")
        .to_owned();
    agent.send(&format!("{number}\r"));
    agent.wait_for_text("Continued elsewhere.");
    assert_eq!(agent.wait_exit(), 0);
    let sent = conversation(&mock.requests()[1].body);
    assert_eq!(sent.first(), Some(&pair("user", "question elsewhere")), "{sent:?}");
}
