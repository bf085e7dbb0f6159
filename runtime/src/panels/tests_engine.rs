//! Tests of the panels engine over whole requests: built-in panels and their tools, message summaries and
//! deletions by number, detachment into history panels (and its reset when the context changes under it),
//! the Spine waking once, and the report's cache accounting.

use serde_json::{Value, json};

use super::engine::{PanelsCore, RequestInput};
use super::state::PanelState;
use super::{BuiltinPanel, DetachLimits, PanelsDefinition, tools_panels, tools_state};
use crate::ai::Model;
use crate::protocol::{
    AgentMessage, AssistantContent, AssistantMessage, MessageContent, ToolCall, ToolResultMessage, UserContent,
    UserMessage,
};
use crate::tools::ToolEnvironment;

fn user(text: &str, timestamp: i64) -> AgentMessage {
    AgentMessage::User(UserMessage { content: MessageContent::Blocks(vec![UserContent::text(text)]), timestamp })
}

fn answer(text: &str, timestamp: i64) -> AgentMessage {
    AgentMessage::Assistant(AssistantMessage {
        content: vec![AssistantContent::text(text)],
        timestamp,
        ..AssistantMessage::default()
    })
}

fn call(id: &str, timestamp: i64) -> AgentMessage {
    AgentMessage::Assistant(AssistantMessage {
        content: vec![AssistantContent::ToolCall(ToolCall {
            id: id.into(),
            name: "read".into(),
            arguments: json!({"path": "a.txt"}),
            thought_signature: None,
        })],
        timestamp,
        ..AssistantMessage::default()
    })
}

fn result(id: &str, timestamp: i64) -> AgentMessage {
    AgentMessage::ToolResult(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: "read".into(),
        content: vec![UserContent::text("contents of a")],
        details: None,
        is_error: false,
        timestamp,
        duration_ms: None,
    })
}

/// A core over a temporary working directory with only the state-derived panels (no tree or git).
fn core(dir: &std::path::Path, detach: DetachLimits) -> PanelsCore {
    let definition = PanelsDefinition {
        builtin: vec![BuiltinPanel::Todo, BuiltinPanel::Memories, BuiltinPanel::Spine, BuiltinPanel::Scratchpad],
        detach,
        ..PanelsDefinition::default()
    };
    PanelsCore::new(definition, Vec::new(), ToolEnvironment::new(dir))
}

fn never_detach() -> DetachLimits {
    DetachLimits { chunk_min_messages: usize::MAX, ..DetachLimits::default() }
}

async fn prepare(core: &mut PanelsCore, messages: &[AgentMessage], now: i64) -> Vec<Value> {
    let model = Model::new("mock", "m", "anthropic-messages", "http://127.0.0.1:1");
    let input = RequestInput {
        messages,
        system_prompt: "Be brief.",
        model: Some(&model),
        all_tools: &[],
        active_tools: &[],
        now_ms: now,
    };
    let (request, _) = core.prepare(&input).await;
    request.iter().map(|message| serde_json::to_value(message).unwrap()).collect()
}

/// The panel results of a request, as `(id, text)`.
fn panels(request: &[Value]) -> Vec<(String, String)> {
    request
        .iter()
        .filter(|message| message["toolName"] == "dynamic_panel" && message["toolCallId"] != "panel_footer")
        .map(|message| {
            let id = message["toolCallId"].as_str().unwrap().trim_start_matches("panel_").to_owned();
            (id, message["content"][0]["text"].as_str().unwrap().to_owned())
        })
        .collect()
}

fn panel<'a>(request: &'a [(String, String)], id: &str) -> &'a str {
    &request.iter().find(|(panel_id, _)| panel_id == id).unwrap_or_else(|| panic!("no panel {id}")).1
}

/// The conversation after the repeated system prompt.
fn conversation(request: &[Value]) -> Vec<Value> {
    let start = request.iter().position(|m| m["content"][0]["text"] == "Understood. I will follow these instructions.");
    request[start.unwrap() + 1..].to_vec()
}

fn run(core: &mut PanelsCore, spec: super::tools::PanelToolSpec, args: Value) -> Result<String, String> {
    (spec.action)(core, &args, 1_000).map_err(|error| error.message)
}

#[tokio::test]
async fn todo_memory_and_scratchpad_tools_show_in_their_panels() {
    let dir = tempfile::tempdir().unwrap();
    let mut core = core(dir.path(), never_detach());
    let added = run(&mut core, tools_state::todo_tool(), json!({"add": [{"text": "write tests"}]})).unwrap();
    assert_eq!(added, "Added T1.");
    let nested = json!({"add": [{"text": "unit", "parent": "T1", "status": "in_progress"}]});
    assert_eq!(run(&mut core, tools_state::todo_tool(), nested).unwrap(), "Added T2.");
    let memory = json!({"add": [{"text": "uses tabs", "importance": "high"}, {"text": "CI is slow"}]});
    assert_eq!(run(&mut core, tools_state::memory_tool(), memory).unwrap(), "Added M1, M2.");
    let cell = json!({"write": [{"title": "plan", "content": "1. read\n2. write"}]});
    assert_eq!(run(&mut core, tools_state::scratchpad_tool(), cell).unwrap(), "Added C1.");
    let unknown = run(&mut core, tools_state::todo_tool(), json!({"remove": ["T9"]})).unwrap_err();
    assert_eq!(unknown, "no todo with id T9; nothing was changed");
    assert!(core.dirty);

    let request = prepare(&mut core, &[user("go", 10)], 2_000).await;
    let shown = panels(&request);
    assert_eq!(
        panel(&shown, "P1"),
        "======= [P1] Todo List =======\n[ ] T1 write tests\n  [~] T2 unit\n\n0 of 2 done."
    );
    assert_eq!(panel(&shown, "P6"), "======= [P6] Memories =======\nM1 [high] uses tabs\nM2 [medium] CI is slow");
    assert_eq!(panel(&shown, "P9"), "======= [P9] Scratchpad =======\n--- C1 plan ---\n1. read\n2. write");

    // Removing a todo removes what is nested under it.
    assert_eq!(run(&mut core, tools_state::todo_tool(), json!({"remove": ["T1"]})).unwrap(), "Removed T1, T2.");
    assert!(core.state.todos.is_empty());
}

#[tokio::test]
async fn a_changed_panel_moves_last_and_unchanged_ones_keep_their_place_and_cache() {
    let dir = tempfile::tempdir().unwrap();
    let mut core = core(dir.path(), never_detach());
    let messages = [user("go", 10)];
    let first = panels(&prepare(&mut core, &messages, 1_000).await);
    let order = |shown: &[(String, String)]| shown.iter().map(|(id, _)| id.clone()).collect::<Vec<_>>();
    // On a tie (the first request) the kinds that change least come first; the Spine changes most.
    assert_eq!(order(&first), ["P6", "P9", "P1", "P7"]);
    run(&mut core, tools_state::todo_tool(), json!({"add": [{"text": "x"}]})).unwrap();
    let second = panels(&prepare(&mut core, &messages, 2_000).await);
    assert_eq!(order(&second), ["P6", "P9", "P7", "P1"], "the changed todo panel goes last");
    let report = core.report.clone().unwrap();
    let hits: Vec<bool> = report.panels.iter().map(|panel| panel.cache_hit).collect();
    // The prefix holds until position 2, which held P1 last time.
    assert_eq!(hits, [true, true, false, false]);
    let third = panels(&prepare(&mut core, &messages, 3_000).await);
    assert_eq!(order(&third), ["P6", "P9", "P7", "P1"]);
    let report = core.report.clone().unwrap();
    assert!(report.panels.iter().all(|panel| panel.cache_hit), "{report:?}");
    assert_eq!(report.cache_miss_tokens, 0);
    assert_eq!(report.requests, 3);
}

#[tokio::test]
async fn summarized_and_deleted_messages_by_number() {
    let dir = tempfile::tempdir().unwrap();
    let mut core = core(dir.path(), never_detach());
    let messages = [user("a long question", 10), call("c1", 20), result("c1", 30), answer("the answer", 40)];
    prepare(&mut core, &messages, 1_000).await;
    let summarize = json!({"summaries": [{"message": "#2", "tl_dr": "read a.txt"}]});
    assert_eq!(run(&mut core, tools_state::summarize_messages_tool(), summarize).unwrap(), "Summarized #2.");
    assert_eq!(run(&mut core, tools_state::delete_messages_tool(), json!({"messages": [4]})).unwrap(), "Deleted #4.");
    let missing = run(&mut core, tools_state::delete_messages_tool(), json!({"messages": [9]})).unwrap_err();
    assert_eq!(missing, "there is no message #9; the conversation's messages are #1 to #4");

    let sent = conversation(&prepare(&mut core, &messages, 2_000).await);
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert_eq!(sent[0]["content"][0]["text"], "a long question");
    // The summary replaced the tool call, so its result became an orphan and was skipped; the answer is gone.
    assert_eq!(sent[1]["role"], "assistant");
    assert_eq!(sent[1]["content"], json!([{"type": "text", "text": "[#2 summarized] read a.txt"}]));

    // The edits hold only while the message at the number is the same one.
    let other = [user("a long question", 10), answer("another branch", 99)];
    let sent = conversation(&prepare(&mut core, &other, 3_000).await);
    assert_eq!(sent[1]["content"][0]["text"], "another branch");
    assert!(core.state.message_edits.is_empty());
}

/// 30 turns of a user message and an answer of ~200 tokens each.
fn long_conversation() -> Vec<AgentMessage> {
    let words = "word ".repeat(160);
    (0..30).flat_map(|turn| [user(&format!("question {turn}"), turn * 10), answer(&words, turn * 10 + 5)]).collect()
}

#[tokio::test]
async fn old_turns_detach_into_a_frozen_history_panel_and_reset_when_the_context_changes() {
    let dir = tempfile::tempdir().unwrap();
    let limits =
        DetachLimits { chunk_min_messages: 10, chunk_min_tokens: 1_000, keep_min_messages: 10, keep_min_tokens: 1_000 };
    let mut core = core(dir.path(), limits);
    let messages = long_conversation();
    let request = prepare(&mut core, &messages, 5_000).await;
    let chunks: Vec<(usize, usize)> = core.state.detached.iter().map(|chunk| (chunk.start, chunk.end)).collect();
    // Each chunk is the first turn start with >= 10 messages and >= 1000 tokens; 10 messages stay live at least.
    assert_eq!(chunks, [(1, 10), (11, 20), (21, 30), (31, 40), (41, 50)]);
    let shown = panels(&request);
    assert_eq!(shown[0].0, "P11", "history chunks are the most stable panels");
    assert!(
        shown[0].1.starts_with("======= [P11] Conversation History #1-#10 =======\nMessages #1 to #10"),
        "{}",
        shown[0].1
    );
    assert!(shown[0].1.contains("\n#1 user: question 0\n"), "{}", shown[0].1);
    let sent = conversation(&request);
    assert_eq!(sent.len(), 10);
    assert_eq!(sent[0]["content"][0]["text"], "question 25");
    let footer = request.iter().find_map(|m| m["content"][0]["text"].as_str().filter(|t| t.starts_with("End of")));
    assert!(footer.unwrap().contains("- #60 assistant: "), "the footer numbers messages from the start");
    let report = core.report.clone().unwrap();
    assert_eq!((report.detached_messages, report.conversation_messages), (50, 10));

    // A compaction (another first message) invalidates the chunks: everything is live again, then re-detached.
    let mut compacted = messages.clone();
    compacted[0] = user("summary of earlier work", 1);
    prepare(&mut core, &compacted, 6_000).await;
    assert_eq!(core.state.detached.first().map(|chunk| chunk.first_timestamp), Some(1));
}

#[tokio::test]
async fn the_spine_wakes_once_for_a_console_that_exited_after_the_last_request() {
    let dir = tempfile::tempdir().unwrap();
    let mut core = core(dir.path(), never_detach());
    let started = run(&mut core, tools_panels::console_tool(), json!({"action": "start", "command": "echo built"}));
    assert!(started.unwrap().starts_with("Started 'echo built' as P11 (pid "));
    let console = &core.sources.consoles[0].process;
    tokio::time::timeout(std::time::Duration::from_secs(10), console.wait()).await.unwrap();
    core.poll_consoles(2_000);
    let wake = core.spine.take_wake_up(3).expect("woken for the exit");
    assert!(wake.contains("process exited: console P11 (echo built) exited with code 0"), "{wake}");
    assert_eq!(core.spine.take_wake_up(3), Some(wake.clone()), "still pending until a request shows it");
    let request = prepare(&mut core, &[user("go", 10)], 3_000).await;
    let shown = panels(&request);
    assert!(panel(&shown, "P11").contains("[exited with code 0]\nbuilt"), "{}", panel(&shown, "P11"));
    assert!(panel(&shown, "P7").contains("[new]"), "{}", panel(&shown, "P7"));
    assert_eq!(core.spine.take_wake_up(3), None, "not twice");
    let request = prepare(&mut core, &[user("go", 10)], 4_000).await;
    assert!(panel(&panels(&request), "P7").contains("[seen]"));
}

#[tokio::test]
async fn open_shows_a_file_that_follows_the_disk_and_close_removes_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "first\n").unwrap();
    let mut core = core(dir.path(), never_detach());
    assert_eq!(
        run(&mut core, tools_panels::open_tool(), json!({"path": "notes.txt"})).unwrap(),
        "Opened 'notes.txt' as P11"
    );
    let again = run(&mut core, tools_panels::open_tool(), json!({"path": "notes.txt"})).unwrap();
    assert_eq!(again, "'notes.txt' is already open as P11");
    let missing = run(&mut core, tools_panels::open_tool(), json!({"path": "nope.txt"})).unwrap_err();
    assert!(missing.contains("nope.txt"), "{missing}");
    let request = prepare(&mut core, &[user("go", 10)], 1_000).await;
    assert_eq!(panel(&panels(&request), "P11"), "======= [P11] File: notes.txt =======\nfirst\n");
    std::fs::write(dir.path().join("notes.txt"), "second, longer\n").unwrap();
    let request = prepare(&mut core, &[user("go", 10)], 2_000).await;
    let shown = panels(&request);
    let order: Vec<&str> = shown.iter().map(|(id, _)| id.as_str()).collect();
    // The file changed, and the Spine with it (it notes the change): both move after the unchanged panels.
    assert_eq!(order, ["P6", "P9", "P1", "P11", "P7"]);
    assert!(panel(&shown, "P11").ends_with("second, longer\n"));
    assert!(panel(&shown, "P7").contains("file changed"), "{}", panel(&shown, "P7"));
    assert_eq!(run(&mut core, tools_panels::close_tool(), json!({"ids": ["P11", "P6"]})).unwrap(), "Closed P11, P6.");
    let shown = panels(&prepare(&mut core, &[user("go", 10)], 3_000).await);
    assert!(!shown.iter().any(|(id, _)| id == "P11" || id == "P6"), "{shown:?}");
    let state: PanelState = serde_json::from_value(serde_json::to_value(&core.state).unwrap()).unwrap();
    assert_eq!(state, core.state, "the state survives a save and a restore");
    assert_eq!(state.closed, ["P6"]);
}

#[tokio::test]
async fn a_skill_opened_from_the_library_is_headed_by_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let skill_dir = dir.path().join("skills").join("review");
    std::fs::create_dir_all(&skill_dir).unwrap();
    let skill_file = skill_dir.join("SKILL.md");
    std::fs::write(&skill_file, "---\nname: review\n---\nRead the diff first.\n").unwrap();
    let mut core = core(dir.path(), never_detach());
    let path = skill_file.display().to_string();
    core.library.push(super::LibraryEntry {
        kind: super::LibraryKind::Skill,
        name: "review".into(),
        description: "Reviews a change".into(),
        path: Some(path.clone()),
    });
    let opened = run(&mut core, tools_panels::open_tool(), json!({"path": path})).unwrap();
    assert_eq!(opened, format!("Opened '{path}' as P11"));
    let shown = panels(&prepare(&mut core, &[user("go", 10)], 1_000).await);
    assert!(panel(&shown, "P11").starts_with("======= [P11] Skill: review =======\n---\nname: review"), "{shown:?}");
}
