//! End to end: the generated pi agent in interactive mode, in a real pseudo-terminal, driven with keys against
//! the scripted mock server; what a person sees is read through a terminal emulator.

use pi_gen_tests::{PtyAgent, Sandbox, agent_binary, keys};
use pi_runtime::testing::{MockLlmServer, MockScript};
use serde_json::Value;

const MODEL_ARGS: [&str; 4] = ["--provider", "mock", "--model", "m"];

async fn server(script: &str) -> MockLlmServer {
    let script = MockScript::from_json_str(script).expect("valid script");
    MockLlmServer::start(script).await.expect("mock server starts")
}

fn start(sandbox: &Sandbox, extra: &[&str]) -> PtyAgent {
    let agent = sandbox.spawn_pty(&agent_binary("pi"), &[&MODEL_ARGS[..], extra].concat(), 30, 100);
    agent.wait_for_text("%/");
    agent
}

/// The texts of the user messages of a recorded OpenAI request.
fn user_texts(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|message| message["role"] == "user")
        .flat_map(|message| match &message["content"] {
            Value::String(text) => vec![text.clone()],
            Value::Array(parts) => parts.iter().filter_map(|part| part["text"].as_str().map(str::to_owned)).collect(),
            _ => Vec::new(),
        })
        .collect()
}

/// The session files the sandbox's agent wrote.
fn session_files(sandbox: &Sandbox) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let Ok(dirs) = std::fs::read_dir(sandbox.agent_dir().join("sessions")) else { return files };
    for dir in dirs.flatten() {
        for file in std::fs::read_dir(dir.path()).expect("session dir").flatten() {
            files.push(file.path());
        }
    }
    files.sort();
    files
}

/// Ctrl+C twice at once on an empty editor (two presses within half a second quit).
fn quit(agent: &mut PtyAgent) {
    agent.send(&keys::CTRL_C.repeat(2));
    assert_eq!(agent.wait_exit(), 0, "Ctrl+C twice exits with 0");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_streams_its_answer_with_a_tool_call_and_ctrl_c_twice_exits_with_the_session_saved() {
    let mock = server(
        r#"{"responses": [
            {"toolCalls": [{"id": "call_1", "name": "read", "arguments": {"path": "notes.txt"}}]},
            {"text": "The file says **hello from notes**.\n\n- one\n- two\n\n```rust\nfn main() {}\n```\n"}
        ]}"#,
    )
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    sandbox.write("notes.txt", "hello from notes\n");
    let mut agent = start(&sandbox, &[]);
    let start_screen = agent.screen_text();
    assert!(start_screen.contains("pi v"), "{start_screen}");
    assert!(start_screen.contains("─".repeat(100).as_str()), "the editor's rules span the width: {start_screen}");

    agent.type_text("What does notes.txt say?");
    agent.wait_for_text("What does notes.txt say?");
    agent.send(keys::ENTER);
    let screen = agent.wait_for_text("fn main() {}");
    assert!(screen.contains(" read notes.txt"), "{screen}");
    assert!(screen.contains(" hello from notes"), "the tool's output: {screen}");
    assert!(screen.contains("The file says hello from notes."), "markdown without its asterisks: {screen}");
    assert!(screen.contains(" - one") && screen.contains("```rust"), "{screen}");
    let footer = agent.wait_for("the footer's token counts", |screen| screen.contains('↑') && screen.contains('↓'));
    let footer_line = footer.lines().rfind(|line| line.contains('↑')).unwrap_or_default();
    assert!(footer_line.ends_with(" m"), "the model at the footer's end: {footer}");

    // Ctrl+C clears a draft first; twice on an empty editor exits.
    agent.type_text("draft");
    agent.wait_for_text("draft");
    agent.send(keys::CTRL_C);
    agent.wait_for_absence("draft");
    agent.wait_for_text("Press ctrl+c again to exit");
    quit(&mut agent);

    let files = session_files(&sandbox);
    assert_eq!(files.len(), 1, "{files:?}");
    let text = std::fs::read_to_string(&files[0]).expect("session file");
    let entries: Vec<Value> = text.lines().map(|line| serde_json::from_str(line).expect("a JSON line")).collect();
    assert_eq!(entries[0]["type"], "session");
    let roles: Vec<&str> = entries.iter().filter_map(|entry| entry["message"]["role"].as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "toolResult", "assistant"]);
    assert_eq!(mock.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn slash_lists_the_commands_and_escape_closes_the_list() {
    let mock = server(r#"{"responses": []}"#).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let mut agent = start(&sandbox, &[]);
    agent.send("/");
    let screen = agent.wait_for_text("→ model");
    assert!(screen.contains("compact") && screen.contains("(1/"), "{screen}");
    agent.type_text("hot");
    agent.wait_for_text("→ hotkeys");
    agent.send(keys::ESCAPE);
    agent.wait_for_absence("→ hotkeys");
    // Typing opens the list again; Enter takes the suggestion and runs it.
    agent.type_text("k");
    agent.wait_for_text("→ hotkeys");
    agent.send(keys::ENTER);
    agent.wait_for_text("Take queued messages back");
    assert!(mock.requests().is_empty(), "a built-in command never reaches the model");
    quit(&mut agent);
}

#[tokio::test(flavor = "multi_thread")]
async fn escape_aborts_a_slow_stream_and_the_next_prompt_works() {
    let mock = server(
        r#"{"responses": [
            {"text": "The first answer begins and then waits for a very long time", "stallAfter": 2},
            {"text": "Second answer arrived."}
        ]}"#,
    )
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    let mut agent = start(&sandbox, &[]);
    agent.type_text("first");
    agent.send(keys::ENTER);
    agent.wait_for_text("Working...");
    agent.wait_for_text("The first");
    agent.send(keys::ESCAPE);
    agent.wait_for_text("Aborted");
    agent.wait_for_absence("Working...");
    agent.type_text("second");
    agent.send(keys::ENTER);
    agent.wait_for_text("Second answer arrived.");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(user_texts(&requests[1].body), ["first", "second"]);
    quit(&mut agent);
    let text = std::fs::read_to_string(&session_files(&sandbox)[0]).expect("session");
    assert!(text.contains(r#""stopReason":"aborted""#), "the partial answer is saved as aborted: {text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_steering_message_typed_while_a_tool_runs_reaches_the_next_request() {
    let mock = server(
        r#"{"responses": [
            {"toolCalls": [{"id": "call_1", "name": "bash", "arguments": {"command": "sleep 1.5; echo slept"}}]},
            {"text": "Steered."}
        ]}"#,
    )
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    let mut agent = start(&sandbox, &[]);
    agent.type_text("run it");
    agent.send(keys::ENTER);
    agent.wait_for_text("$ sleep 1.5");
    agent.type_text("use the short version");
    agent.send(keys::ENTER);
    agent.wait_for_text("Steering: use the short version");
    agent.wait_for_text("Steered.");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(user_texts(&requests[1].body), ["run it", "use the short version"]);
    agent.wait_for_absence("Steering:");
    quit(&mut agent);
}

#[tokio::test(flavor = "multi_thread")]
async fn alt_enter_queues_a_follow_up_for_when_the_agent_is_done() {
    let mock = server(
        r#"{"responses": [
            {"text": "A slow first answer in several pieces.", "delayMs": 300},
            {"text": "Follow-up answered."}
        ]}"#,
    )
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    let mut agent = start(&sandbox, &[]);
    agent.type_text("first");
    agent.send(keys::ENTER);
    agent.wait_for_text("Working...");
    agent.type_text("and then this");
    agent.send(keys::ALT_ENTER);
    agent.wait_for_text("Follow-up: and then this");
    agent.wait_for_text("Follow-up answered.");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(user_texts(&requests[1].body), ["first", "and then this"]);
    let assistant_turns =
        requests[1].body["messages"].as_array().expect("messages").iter().filter(|m| m["role"] == "assistant").count();
    assert_eq!(assistant_turns, 1, "the follow-up waited for the first answer");
    quit(&mut agent);
}

#[tokio::test(flavor = "multi_thread")]
async fn continue_reopens_the_earlier_session_and_model_switches_the_next_request() {
    let mock = server(r#"{"responses": [{"text": "First run answer."}, {"text": "Second run answer."}]}"#).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let models = serde_json::json!({"providers": {"mock": {
        "baseUrl": mock.base_url(), "api": "openai-completions", "apiKey": "mock-key",
        "models": [{"id": "m", "name": "Mock"}, {"id": "other", "name": "Other mock"}]
    }}});
    std::fs::write(sandbox.agent_dir().join("models.json"), models.to_string()).expect("models.json");
    let mut agent = start(&sandbox, &[]);
    agent.type_text("remember this");
    agent.send(keys::ENTER);
    agent.wait_for_text("First run answer.");
    quit(&mut agent);

    let mut agent = start(&sandbox, &["-c"]);
    let screen = agent.wait_for_text("First run answer.");
    assert!(screen.contains("remember this"), "{screen}");
    agent.type_text("/model other");
    agent.send(keys::ENTER);
    agent.wait_for_text("Model: mock/other");
    agent.type_text("and now");
    agent.send(keys::ENTER);
    agent.wait_for_text("Second run answer.");
    let requests = mock.requests();
    assert_eq!(requests[1].body["model"], "other");
    assert_eq!(user_texts(&requests[1].body), ["remember this", "and now"]);
    quit(&mut agent);
    assert_eq!(session_files(&sandbox).len(), 1, "-c continued the same file");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_resize_lays_the_screen_out_again_and_40_columns_stay_usable() {
    let mock =
        server(r#"{"responses": [{"text": "An answer long enough to wrap on a narrow terminal, word by word."}]}"#)
            .await;
    let sandbox = Sandbox::new(&mock.base_url());
    let mut agent = start(&sandbox, &[]);
    agent.resize(30, 40);
    agent.wait_for("rules of 40 columns", |screen| screen.lines().any(|line| line == "─".repeat(40)));
    agent.type_text("hello");
    agent.send(keys::ENTER);
    let screen = agent.wait_for_text("word by word.");
    for line in screen.lines() {
        assert!(line.chars().count() <= 40, "{line:?} is wider than the terminal");
    }
    assert!(!screen.lines().any(|line| line == "─".repeat(100)), "no rule of the old width is left: {screen}");
    quit(&mut agent);
}

fn two_models(sandbox: &Sandbox, base_url: &str) {
    let models = serde_json::json!({"providers": {"mock": {
        "baseUrl": base_url, "api": "openai-completions", "apiKey": "mock-key",
        "models": [{"id": "m", "name": "Mock"}, {"id": "other", "name": "Other mock"}]
    }}});
    std::fs::write(sandbox.agent_dir().join("models.json"), models.to_string()).expect("models.json");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_model_selector_and_ctrl_p_switch_the_model_of_the_next_request() {
    let mock = server(r#"{"responses": [{"text": "From other."}, {"text": "From m again."}]}"#).await;
    let sandbox = Sandbox::new(&mock.base_url());
    two_models(&sandbox, &mock.base_url());
    let mut agent = start(&sandbox, &[]);
    agent.send("\x0c"); // Ctrl+L
    let screen = agent.wait_for_text("Select a model");
    assert!(screen.contains("[mock]") && screen.contains("✓"), "the current model is marked: {screen}");
    agent.type_text("oth");
    agent.wait_for_text("Model name: Other mock");
    agent.send(keys::ENTER);
    agent.wait_for_text("Model: mock/other");
    agent.type_text("hi");
    agent.send(keys::ENTER);
    agent.wait_for_text("From other.");
    agent.send("\x10"); // Ctrl+P: the next model with a key, m again
    agent.wait_for_text("Model: mock/m");
    agent.type_text("again");
    agent.send(keys::ENTER);
    agent.wait_for_text("From m again.");
    let requests = mock.requests();
    assert_eq!(requests[0].body["model"], "other");
    assert_eq!(requests[1].body["model"], "m");
    quit(&mut agent);
}

#[tokio::test(flavor = "multi_thread")]
async fn resume_and_dash_r_reopen_an_earlier_session_from_the_selector() {
    let mock = server(
        r#"{"responses": [{"text": "Answer in the first session."}, {"text": "Answer in the second session."},
            {"text": "Back in the first."}, {"text": "Picked with -r."}]}"#,
    )
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    let mut agent = start(&sandbox, &[]);
    agent.type_text("the first session");
    agent.send(keys::ENTER);
    agent.wait_for_text("Answer in the first session.");
    quit(&mut agent);
    // Distinct modification times order the sessions.
    std::thread::sleep(std::time::Duration::from_millis(1100));

    let mut agent = start(&sandbox, &[]);
    agent.type_text("the second session");
    agent.send(keys::ENTER);
    agent.wait_for_text("Answer in the second session.");
    agent.type_text("/resume");
    agent.send(keys::ENTER);
    let picker = agent.wait_for_text("Resume a session");
    assert!(picker.contains("the first session") && picker.contains("the second session"), "{picker}");
    agent.type_text("first");
    agent.wait_for_absence("the second session ");
    agent.send(keys::ENTER);
    agent.wait_for_text("Resumed");
    let screen = agent.wait_for_text("Answer in the first session.");
    assert!(!screen.contains("Answer in the second session."), "{screen}");
    agent.type_text("continue");
    agent.send(keys::ENTER);
    agent.wait_for_text("Back in the first.");
    assert_eq!(user_texts(&mock.requests()[2].body), ["the first session", "continue"]);
    quit(&mut agent);

    let mut agent = sandbox.spawn_pty(&agent_binary("pi"), &[&MODEL_ARGS[..], &["-r"]].concat(), 30, 100);
    agent.wait_for_text("Resume a session");
    agent.type_text("second");
    agent.send(keys::ENTER);
    agent.wait_for_text("Answer in the second session.");
    agent.type_text("more");
    agent.send(keys::ENTER);
    agent.wait_for_text("Picked with -r.");
    assert_eq!(user_texts(&mock.requests()[3].body), ["the second session", "more"]);
    quit(&mut agent);
    assert_eq!(session_files(&sandbox).len(), 2, "resuming wrote no new session files");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_tree_moves_the_leaf_and_the_next_prompt_continues_from_there() {
    let mock = server(r#"{"responses": [{"text": "Answer A."}, {"text": "Answer B."}, {"text": "Answer C."}]}"#).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let mut agent = start(&sandbox, &[]);
    agent.type_text("question A");
    agent.send(keys::ENTER);
    agent.wait_for_text("Answer A.");
    agent.type_text("question B");
    agent.send(keys::ENTER);
    agent.wait_for_text("Answer B.");
    agent.wait_for_absence("Working...");
    // Escape twice on the empty editor opens the tree (two presses, as a person makes them).
    agent.send(keys::ESCAPE);
    std::thread::sleep(std::time::Duration::from_millis(50));
    agent.send(keys::ESCAPE);
    let tree = agent.wait_for_text("Session tree");
    assert!(tree.contains("• user: question A") && tree.contains("• assistant: Answer B."), "{tree}");
    agent.type_text("Answer A");
    agent.wait_for_absence("• user: question B");
    agent.send(keys::ENTER);
    agent.wait_for_absence("Session tree");
    let screen = agent.wait_for_absence("Answer B.");
    assert!(screen.contains("Answer A."), "{screen}");
    agent.type_text("question C");
    agent.send(keys::ENTER);
    agent.wait_for_text("Answer C.");
    assert_eq!(user_texts(&mock.requests()[2].body), ["question A", "question C"]);
    // The branch left behind is still in the tree.
    agent.type_text("/tree");
    agent.send(keys::ENTER);
    let tree = agent.wait_for_text("Session tree");
    assert!(tree.contains("question B") && tree.contains("question C"), "{tree}");
    agent.send(keys::ESCAPE);
    agent.wait_for_absence("Session tree");
    quit(&mut agent);
}

#[tokio::test(flavor = "multi_thread")]
async fn fork_starts_a_new_session_before_the_chosen_message_with_its_text_in_the_editor() {
    let mock = server(r#"{"responses": [{"text": "One."}, {"text": "Two."}, {"text": "Forked answer."}]}"#).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let mut agent = start(&sandbox, &[]);
    for (prompt, answer) in [("first question", "One."), ("second question", "Two.")] {
        agent.type_text(prompt);
        agent.send(keys::ENTER);
        agent.wait_for_text(answer);
        agent.wait_for_absence("Working...");
    }
    agent.type_text("/fork");
    agent.send(keys::ENTER);
    agent.wait_for_text("Fork from a message");
    agent.type_text("second");
    agent.send(keys::ENTER);
    agent.wait_for_text("Forked into a new session.");
    let screen = agent.wait_for_absence("Two.");
    assert!(screen.contains("One."), "{screen}");
    agent.wait_for("the message back in the editor", |screen| {
        screen.lines().any(|line| line.starts_with("second question"))
    });
    agent.send(keys::ENTER);
    agent.wait_for_text("Forked answer.");
    assert_eq!(user_texts(&mock.requests()[2].body), ["first question", "second question"]);
    quit(&mut agent);
    let files = session_files(&sandbox);
    assert_eq!(files.len(), 2, "the fork is a session file of its own: {files:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn fullscreen_keeps_the_editor_at_the_bottom_and_page_up_scrolls_the_conversation() {
    let long: Vec<String> = (1..=60).map(|n| format!("- line {n} of a long answer")).collect();
    let script = serde_json::json!({"responses": [{"text": long.join("\n")}]}).to_string();
    let mock = server(&script).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let mut agent =
        sandbox.spawn_pty(&agent_binary("pi"), &[&MODEL_ARGS[..], &["--tui-mode", "fullscreen"]].concat(), 24, 80);
    agent.wait_for_text("%/");
    assert!(agent.screen().last().is_some_and(|line| line.ends_with(" m")), "the footer is the last row");
    agent.type_text("long please");
    agent.send(keys::ENTER);
    let screen = agent.wait_for_text("line 60 of a long answer");
    assert!(!screen.contains("line 1 of a long answer"), "the start scrolled out of view: {screen}");
    assert!(agent.screen().last().is_some_and(|line| line.ends_with(" m")), "{screen}");
    agent.send("\x1b[5~"); // PageUp
    agent.wait_for_absence("line 60 of a long answer");
    agent.send("\x1b[5~");
    agent.send("\x1b[5~");
    agent.wait_for_text("long please");
    assert!(agent.history().len() <= 24, "fullscreen leaves nothing in the scrollback");
    quit(&mut agent);
}

#[tokio::test(flavor = "multi_thread")]
async fn no_color_draws_without_colours() {
    let mock = server(r#"{"responses": [{"text": "Plain **bold** answer."}]}"#).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let mut agent = sandbox.spawn_pty_env(&agent_binary("pi"), &MODEL_ARGS, &[("NO_COLOR", "1")], 30, 100);
    agent.wait_for_text("%/");
    agent.type_text("hi");
    agent.send(keys::ENTER);
    agent.wait_for_text("Plain bold answer.");
    let raw = agent.raw_output();
    for colour in ["\x1b[38;", "\x1b[48;"] {
        assert!(!raw.contains(colour), "a colour escape under NO_COLOR: {colour:?}");
    }
    assert!(raw.contains("\x1b[1m"), "bold stays");
    quit(&mut agent);
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_g_edits_the_draft_in_the_external_editor() {
    let mock = server(r#"{"responses": [{"text": "Edited prompt received."}]}"#).await;
    let sandbox = Sandbox::new(&mock.base_url());
    // An "editor" that appends a line to the file it is given.
    let editor = sandbox.root.path().join("fake-editor.sh");
    std::fs::write(&editor, "#!/bin/sh\nprintf '%s\\n' \"$(cat \"$1\") and more from the editor\" > \"$1\"\n")
        .expect("editor");
    std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    let editor = editor.to_string_lossy().into_owned();
    let mut agent =
        sandbox.spawn_pty_env(&agent_binary("pi"), &MODEL_ARGS, &[("VISUAL", ""), ("EDITOR", &editor)], 30, 100);
    agent.wait_for_text("%/");
    agent.type_text("draft text");
    agent.wait_for_text("draft text");
    agent.send("\x07"); // Ctrl+G
    agent.wait_for_text("draft text and more from the editor");
    agent.send(keys::ENTER);
    agent.wait_for_text("Edited prompt received.");
    assert_eq!(user_texts(&mock.requests()[0].body), ["draft text and more from the editor"]);
    quit(&mut agent);
}

/// The YAML's `commands:` (agents/reviewer.yaml) in the `/` list and at work: a `command:` shows its output
/// without a model call, a `prompt:` one sends its expanded text.
#[tokio::test(flavor = "multi_thread")]
async fn yaml_commands_are_listed_and_run_in_interactive_mode() {
    let mock = server(r#"{"responses": [{"text": "Reviewed."}]}"#).await;
    let sandbox = Sandbox::new(&mock.base_url());
    sandbox.write("src/lib.rs", "pub fn f() {}\n");
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git").args(args).current_dir(sandbox.work_dir()).status();
        assert!(status.is_ok_and(|status| status.success()), "git {args:?}");
    };
    git(&["init", "-q"]);
    let agent_dir = sandbox.agent_dir().to_string_lossy().into_owned();
    let env = [("REVIEWER_AGENT_DIR", agent_dir.as_str())];
    let mut agent = sandbox.spawn_pty_env(&agent_binary("reviewer"), &MODEL_ARGS, &env, 30, 100);
    agent.wait_for_text("%/");
    agent.type_text("/cha");
    let list = agent.wait_for_text("→ changed");
    assert!(list.contains("List the files with uncommitted changes"), "{list}");
    agent.send(keys::ENTER);
    agent.wait_for_text("?? src/");
    assert!(mock.requests().is_empty(), "a command shown to the user makes no model call");
    agent.type_text("/focus src/lib.rs naming");
    agent.send(keys::ESCAPE);
    agent.wait_for_absence("→ focus");
    agent.send(keys::ENTER);
    agent.wait_for_text("Reviewed.");
    let texts = user_texts(&mock.requests()[0].body);
    assert_eq!(texts.len(), 1);
    assert!(texts[0].starts_with("Review the file src/lib.rs in depth") && texts[0].ends_with("naming"), "{texts:?}");
    quit(&mut agent);
}

mod export;
mod login;
mod permissions;
mod pi15;
mod reload;
mod tree;
