//! End to end: agents/notes, whose tools are Rust methods behind `#[agent]`, built by cargo and run as a
//! process against the scripted mock server. The tools must really change NOTES.md, and their results must
//! reach the model.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use pi_gen_tests::{Sandbox, stderr, stdout, tool_results, workspace_root};
use pi_runtime::testing::{MockLlmServer, MockScript};
use serde_json::{Value, json};

/// The `notes` binary `cargo test --workspace` built next to this test (agents/notes has an integration
/// test, so cargo builds its binary), when it is newer than every source it is made from.
fn workspace_built_notes() -> Option<PathBuf> {
    let profile_dir = std::env::current_exe().ok()?.parent()?.parent()?.to_path_buf();
    let binary = profile_dir.join("notes");
    let built = std::fs::metadata(&binary).and_then(|meta| meta.modified()).ok()?;
    let root = workspace_root();
    let sources = ["agents/notes", "runtime/src", "macros/src", "codegen/src", "Cargo.lock"];
    let newest = sources.iter().filter_map(|source| newest_mtime(&root.join(source))).max()?;
    (built >= newest).then_some(binary)
}

fn newest_mtime(path: &std::path::Path) -> Option<std::time::SystemTime> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_dir() {
        return meta.modified().ok();
    }
    std::fs::read_dir(path).ok()?.flatten().filter_map(|entry| newest_mtime(&entry.path())).max()
}

/// The `notes` binary: the workspace's own build when it is fresh, else a cargo build (once per test
/// process) into the target directory generated agents share (`pi_codegen::default_target_dir`), never
/// the one the enclosing `cargo test` may still hold; cargo's JSON messages name the binary.
fn notes_binary() -> PathBuf {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY
        .get_or_init(|| {
            if let Some(binary) = workspace_built_notes() {
                return binary;
            }
            let root = workspace_root();
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let mut command = Command::new(cargo);
            command
                .args(["build", "-p", "notes", "--message-format=json-render-diagnostics", "--manifest-path"])
                .arg(root.join("Cargo.toml"))
                .env("CARGO_TARGET_DIR", pi_codegen::default_target_dir())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit());
            for variable in [
                "CARGO_MANIFEST_DIR",
                "CARGO_PKG_NAME",
                "CARGO_PRIMARY_PACKAGE",
                "RUSTFLAGS",
                "CARGO_ENCODED_RUSTFLAGS",
            ] {
                command.env_remove(variable);
            }
            let output = command.output().expect("cargo runs");
            assert!(output.status.success(), "cargo build -p notes failed");
            String::from_utf8_lossy(&output.stdout)
                .lines()
                .filter_map(|line| serde_json::from_str::<Value>(line).ok())
                .filter(|message| message["reason"] == "compiler-artifact" && message["target"]["name"] == "notes")
                .find_map(|message| message["executable"].as_str().map(PathBuf::from))
                .expect("cargo reports the notes binary")
        })
        .clone()
}

async fn server(script: Value) -> MockLlmServer {
    let script = MockScript::from_json_str(&script.to_string()).expect("valid script");
    MockLlmServer::start(script).await.expect("mock server starts")
}

/// Runs `notes -p <prompt>` in the sandbox against the mock model.
async fn run_notes(sandbox: &Sandbox, prompt: &str) -> std::process::Output {
    let agent_dir = sandbox.agent_dir();
    let agent_dir = agent_dir.to_string_lossy();
    let args = ["--provider", "mock", "--model", "m", "--no-session", "-p", prompt];
    sandbox.run_env(&notes_binary(), &args, &[("NOTES_AGENT_DIR", &agent_dir)]).await
}

#[tokio::test(flavor = "multi_thread")]
async fn rust_tools_write_the_notes_file_and_report_to_the_model() {
    let mock = server(json!({"responses": [
        {"toolCalls": [
            {"id": "call_add1", "name": "add_note", "arguments": {"text": "Ship v2 on Friday", "tags": ["release"]}},
            {"id": "call_add2", "name": "add_note", "arguments": {"text": "Ask Bob about the logo"}}
        ]},
        {"toolCalls": [{"id": "call_list", "name": "list_notes", "arguments": {"tag": "release"}}]},
        {"text": "Saved two notes; one is tagged release."}
    ]}))
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    let output = run_notes(&sandbox, "Remember: ship v2 on Friday (release), and ask Bob about the logo").await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert_eq!(stdout(&output), "Saved two notes; one is tagged release.\n");

    let notes = std::fs::read_to_string(sandbox.work_dir().join("NOTES.md")).expect("NOTES.md written");
    assert_eq!(notes, "# Notes\n\n- Ship v2 on Friday #release\n- Ask Bob about the logo\n");

    let requests = mock.requests();
    assert_eq!(requests.len(), 3);
    let first = &requests[0].body;
    let tools: Vec<&str> =
        first["tools"].as_array().expect("tools").iter().filter_map(|t| t["function"]["name"].as_str()).collect();
    assert_eq!(tools, ["read", "add_note", "list_notes", "remove_note"]);
    let add_note = &first["tools"][1]["function"];
    assert_eq!(add_note["description"], "Append a note to NOTES.md in the current directory.");
    assert_eq!(add_note["parameters"]["required"], json!(["text"]));
    let system = first["messages"][0]["content"].as_str().expect("system prompt");
    assert!(system.contains("add_note"), "{system}");
    assert!(system.contains("Call list_notes before remove_note so the number is current"), "{system}");
    assert!(system.contains("<name>tidy-notes</name>"), "the embedded skill is offered: {system}");
    let location = system.split("<location>").nth(1).and_then(|rest| rest.split("</location>").next());
    let skill_file = location.expect("the skill's location");
    let skill = std::fs::read_to_string(skill_file).expect("the skill is unpacked where the prompt says");
    assert!(skill.starts_with("---\nname: tidy-notes\n"), "{skill}");

    assert_eq!(
        tool_results(&requests[1].body),
        [
            ("call_add1".to_owned(), "Saved note 1: Ship v2 on Friday #release".to_owned()),
            ("call_add2".to_owned(), "Saved note 2: Ask Bob about the logo".to_owned()),
        ]
    );
    let last = tool_results(&requests[2].body);
    assert_eq!(last.last(), Some(&("call_list".to_owned(), "1. Ship v2 on Friday #release".to_owned())));
}

#[tokio::test(flavor = "multi_thread")]
async fn tool_errors_and_bad_arguments_reach_the_model_as_error_results() {
    let mock = server(json!({"responses": [
        {"toolCalls": [
            {"id": "call_gone", "name": "remove_note", "arguments": {"number": 9}},
            // Some models write integers as `1.0`; the Rust tool's integer argument still gets 1.
            {"id": "call_ok", "name": "remove_note", "arguments": {"number": 1.0}},
            {"id": "call_bad", "name": "add_note", "arguments": {"tags": ["x"]}}
        ]},
        {"text": "Removed the first note."}
    ]}))
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    sandbox.write("NOTES.md", "# Notes\n\n- old idea #maybe\n- keep this\n");
    let output = run_notes(&sandbox, "Remove the first note").await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert_eq!(stdout(&output), "Removed the first note.\n");

    let notes = std::fs::read_to_string(sandbox.work_dir().join("NOTES.md")).expect("NOTES.md");
    assert_eq!(notes, "# Notes\n\n- keep this\n");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let results = tool_results(&requests[1].body);
    assert_eq!(results.len(), 3, "{results:?}");
    assert_eq!(results[0].0, "call_gone");
    assert!(results[0].1.contains("there is no note 9; list_notes shows the numbers"), "{results:?}");
    assert_eq!(results[1], ("call_ok".to_owned(), "Removed note 1: old idea #maybe".to_owned()));
    assert_eq!(results[2].0, "call_bad");
    assert!(results[2].1.contains("text"), "a missing required argument is named: {results:?}");
}

/// A Rust extension's command asks in a dialog before it acts: `/clear-notes` in interactive mode, in a real
/// pseudo-terminal; No keeps the notes, Yes removes them.
#[tokio::test(flavor = "multi_thread")]
async fn clear_notes_asks_in_a_dialog_and_only_yes_removes_the_notes() {
    use pi_gen_tests::keys;
    let mock = server(json!({"responses": []})).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let notes = "# Notes\n\n- Ship v2 on Friday #release\n- Call the printer\n";
    sandbox.write("NOTES.md", notes);
    let agent_dir = sandbox.agent_dir().to_string_lossy().into_owned();
    let args = ["--provider", "mock", "--model", "m", "--no-session"];
    let mut agent = sandbox.spawn_pty_env(&notes_binary(), &args, &[("NOTES_AGENT_DIR", &agent_dir)], 30, 100);
    agent.wait_for_text("%/");
    for answer in ["no", "yes"] {
        agent.type_text("/clear-notes");
        agent.wait_for_text("Remove every note");
        agent.send(keys::ESCAPE);
        agent.wait_for_absence("Remove every note");
        agent.send(keys::ENTER);
        let dialog = agent.wait_for_text("Remove all 2 notes");
        assert!(dialog.contains("→ Yes") && dialog.contains("No"), "{dialog}");
        if answer == "no" {
            agent.send(keys::DOWN);
            agent.wait_for_text("→ No");
            agent.send(keys::ENTER);
            agent.wait_for_text("The notes were kept.");
            let kept = std::fs::read_to_string(sandbox.work_dir().join("NOTES.md")).expect("notes");
            assert_eq!(kept, notes);
        } else {
            agent.send(keys::ENTER);
            agent.wait_for_text("Removed 2 notes.");
        }
    }
    let left = std::fs::read_to_string(sandbox.work_dir().join("NOTES.md")).expect("notes");
    assert_eq!(left, "# Notes\n\n");
    assert!(mock.requests().is_empty(), "the command never reached the model");
    agent.send(&keys::CTRL_C.repeat(2));
    assert_eq!(agent.wait_exit(), 0);
}

/// The same dialog over RPC: the client gets pi's `extension_ui_request` (confirm) and answers with an
/// `extension_ui_response`; a cancelled answer keeps the notes, a confirmed one removes them and sets a status.
#[tokio::test(flavor = "multi_thread")]
async fn clear_notes_over_rpc_asks_the_client_and_follows_its_answer() {
    let mock = server(json!({"responses": []})).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let notes = "# Notes\n\n- Ship v2 on Friday #release\n- Call the printer\n";
    sandbox.write("NOTES.md", notes);
    let agent_dir = sandbox.agent_dir().to_string_lossy().into_owned();
    let args = ["--provider", "mock", "--model", "m", "--no-session"];
    let mut rpc = sandbox.spawn_rpc_env(&notes_binary(), &args, &[("NOTES_AGENT_DIR", &agent_dir)]);
    for (number, answer) in [json!({"cancelled": true}), json!({"confirmed": true})].into_iter().enumerate() {
        rpc.send(json!({"type": "prompt", "id": format!("p{number}"), "message": "/clear-notes"})).await;
        let request = rpc.until(|line| line["type"] == "extension_ui_request" && line["method"] == "confirm").await;
        assert_eq!(request["title"], "Clear notes");
        assert!(request["message"].as_str().is_some_and(|text| text.contains("Remove all 2 notes")), "{request}");
        let mut response = json!({"type": "extension_ui_response", "id": request["id"].clone()});
        for (key, value) in answer.as_object().expect("an object") {
            response[key] = value.clone();
        }
        rpc.send(response).await;
        let said = rpc.until(|line| line["method"] == "notify").await;
        let left = std::fs::read_to_string(sandbox.work_dir().join("NOTES.md")).expect("notes");
        if number == 0 {
            assert_eq!(said["message"], "The notes were kept.");
            assert_eq!(left, notes);
        } else {
            assert_eq!(
                (said["message"].clone(), said["notifyType"].clone()),
                (json!("Removed 2 notes."), json!("warning"))
            );
            let status = rpc.until(|line| line["method"] == "setStatus").await;
            assert_eq!(
                (status["statusKey"].clone(), status["statusText"].clone()),
                (json!("notes"), json!("notes: none"))
            );
            assert_eq!(left, "# Notes\n\n");
        }
    }
    // A dialog still open when stdin ends is cancelled: the agent exits and keeps the notes.
    sandbox.write("NOTES.md", notes);
    rpc.send(json!({"type": "prompt", "id": "p2", "message": "/clear-notes"})).await;
    rpc.until(|line| line["method"] == "confirm").await;
    let (code, _) = rpc.close().await;
    assert_eq!(code, Some(0));
    assert_eq!(std::fs::read_to_string(sandbox.work_dir().join("NOTES.md")).expect("notes"), notes);
    assert!(mock.requests().is_empty(), "the command never reached the model");
}

/// A Rust extension's command acting on the session: `/review-notes` starts a new session (the screen
/// empties, the earlier one stays on disk) whose first prompt holds the notes.
#[tokio::test(flavor = "multi_thread")]
async fn review_notes_starts_a_new_session_that_sends_the_notes() {
    use pi_gen_tests::keys;
    let mock =
        server(json!({"responses": [{"text": "Hello there."}, {"text": "Merge nothing; call the printer first."}]}))
            .await;
    let sandbox = Sandbox::new(&mock.base_url());
    sandbox.write("NOTES.md", "# Notes\n\n- Ship v2 on Friday #release\n- Call the printer\n");
    let agent_dir = sandbox.agent_dir().to_string_lossy().into_owned();
    let args = ["--provider", "mock", "--model", "m"];
    let mut agent = sandbox.spawn_pty_env(&notes_binary(), &args, &[("NOTES_AGENT_DIR", &agent_dir)], 30, 100);
    agent.wait_for_text("%/");
    agent.type_text("hello");
    agent.send(keys::ENTER);
    agent.wait_for_text("Hello there.");
    agent.wait_for_absence("Working...");
    agent.type_text("/review-notes");
    agent.send(keys::ESCAPE);
    agent.send(keys::ENTER);
    let screen = agent.wait_for_text("call the printer first.");
    assert!(!screen.contains("Hello there."), "the new session starts empty: {screen}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let messages = requests[1].body["messages"].as_array().expect("messages");
    let users: Vec<&Value> = messages.iter().filter(|message| message["role"] == "user").collect();
    assert_eq!(users.len(), 1, "the review starts from nothing: {messages:?}");
    let text = users[0]["content"].to_string();
    assert!(text.contains("1. Ship v2 on Friday #release") && text.contains("2. Call the printer"), "{text}");
    agent.send(&keys::CTRL_C.repeat(2));
    assert_eq!(agent.wait_exit(), 0);
    let sessions = std::fs::read_dir(sandbox.agent_dir().join("sessions")).expect("sessions").flatten();
    let files: usize = sessions.map(|dir| std::fs::read_dir(dir.path()).expect("dir").count()).sum();
    assert_eq!(files, 2, "the first session stays on disk");
}
