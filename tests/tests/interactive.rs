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
