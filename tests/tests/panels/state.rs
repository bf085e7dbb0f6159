//! The panel state across runs: `-c` restores todos, memories and open files (saved as `custom` entries), and
//! the model's summaries and deletions keep old messages out of later requests.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::wire::{self, Part, call, result, text};
use super::{conversation, footer, panel, panels, run, sandbox, server};
use pi_gen_tests::{Sandbox, stdout};

/// The entries of the only session file under the sandbox's agent directory.
fn session_entries(sandbox: &Sandbox) -> Vec<Value> {
    let mut files: Vec<PathBuf> = Vec::new();
    let folders = std::fs::read_dir(sandbox.agent_dir().join("sessions")).expect("sessions dir").flatten();
    for folder in folders {
        files.extend(std::fs::read_dir(folder.path()).expect("folder").flatten().map(|entry| entry.path()));
    }
    assert_eq!(files.len(), 1, "{files:?}");
    let text = std::fs::read_to_string(&files[0]).expect("session file");
    text.lines().map(|line| serde_json::from_str(line).expect("json line")).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn panel_state_survives_continue() {
    let api = "openai-completions";
    let mock = server(json!([
        {"toolCalls": [
            {"id": "call_1", "name": "todo", "arguments": {"add": [{"text": "Ship the release"}]}},
            {"id": "call_2", "name": "memory", "arguments": {"add": [{"text": "The user prefers tabs", "importance": "high"}]}},
            {"id": "call_3", "name": "open", "arguments": {"path": "notes.txt"}}
        ]},
        {"text": "Noted."},
        {"toolCalls": [{"id": "call_4", "name": "open", "arguments": {"path": "other.txt"}}]},
        {"text": "Still here."}
    ]))
    .await;
    let sandbox = sandbox(api, &mock);
    sandbox.write("notes.txt", "first version\n");
    sandbox.write("other.txt", "other\n");
    assert_eq!(stdout(&run(&sandbox, &["-p", "Prepare"]).await), "Noted.\n");

    let entries = session_entries(&sandbox);
    let saved: Vec<&Value> =
        entries.iter().filter(|e| e["type"] == "custom" && e["customType"] == "context-panels").collect();
    assert!(!saved.is_empty(), "the panel state is saved in the session: {entries:#?}");
    let state = &saved.last().expect("a state")["data"];
    assert_eq!(state["todos"], json!([{"id": "T1", "text": "Ship the release", "status": "pending"}]));
    assert_eq!(state["memories"], json!([{"id": "M1", "text": "The user prefers tabs", "importance": "high"}]));
    assert_eq!(state["openFiles"], json!([{"panelId": "P12", "path": "notes.txt"}]));

    // The file changed between the runs: the restored panel reads it again.
    sandbox.write("notes.txt", "second version\n");
    assert_eq!(stdout(&run(&sandbox, &["-c", "-p", "Go on"]).await), "Still here.\n");
    let requests = mock.requests();
    assert_eq!(requests.len(), 4);
    let fresh = panels(&wire::parts(api, &requests[0].body));
    assert!(panel(&fresh, "P1").shown.contains("No todos."), "{fresh:#?}");
    assert!(panel(&fresh, "P6").shown.contains("No memories."), "{fresh:#?}");

    let restored = panels(&wire::parts(api, &requests[2].body));
    assert!(panel(&restored, "P1").shown.contains("\n[ ] T1 Ship the release\n"), "{restored:#?}");
    assert!(panel(&restored, "P6").shown.ends_with("\nM1 [high] The user prefers tabs"), "{restored:#?}");
    assert_eq!(panel(&restored, "P12").shown, "======= [P12] File: notes.txt =======\nsecond version\n");
    let turn = conversation(api, &requests[3].body);
    assert_eq!(turn.last(), Some(&result("call_4", "Opened 'other.txt' as P13")), "panel numbers go on after P12");
    let entries = session_entries(&sandbox);
    let last = entries.iter().rev().find(|e| e["customType"] == "context-panels").expect("a state");
    let files = json!([{"panelId": "P12", "path": "notes.txt"}, {"panelId": "P13", "path": "other.txt"}]);
    assert_eq!(last["data"]["openFiles"], files, "the second run saved its state after the first one's");
    assert_eq!(last["data"]["todos"], state["todos"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn summarized_and_deleted_messages_leave_later_requests() {
    let api = "anthropic-messages";
    let summary = "The user asked something earlier.";
    let mock = server(json!([
        {"text": "first answer"},
        {"toolCalls": [
            {"id": "call_1", "name": "summarize_messages", "arguments": {"summaries": [{"message": 1, "tl_dr": summary}]}},
            {"id": "call_2", "name": "delete_messages", "arguments": {"messages": [2]}}
        ]},
        {"text": "Trimmed."}
    ]))
    .await;
    let sandbox = sandbox(api, &mock);
    assert_eq!(stdout(&run(&sandbox, &["-p", "first question"]).await), "first answer\n");
    assert_eq!(stdout(&run(&sandbox, &["-c", "-p", "second"]).await), "Trimmed.\n");
    let requests = mock.requests();
    assert_eq!(requests.len(), 3);
    let before = conversation(api, &requests[1].body);
    assert_eq!(
        before[..3],
        [text("user", "first question"), text("assistant", "first answer"), text("user", "second")],
        "the continued session starts with the whole conversation"
    );

    let body = &requests[2].body;
    wire::assert_tool_pairing(api, body);
    let serialized = body.to_string();
    assert!(!serialized.contains("first question") && !serialized.contains("first answer"), "{body:#}");
    let summarize = json!({"summaries": [{"message": 1, "tl_dr": summary}]});
    assert_eq!(
        conversation(api, body),
        [
            text("user", &format!("[#1 summarized] {summary}")),
            text("user", "second"),
            call("call_1", "summarize_messages", summarize),
            call("call_2", "delete_messages", json!({"messages": [2]})),
            result("call_1", "Summarized #1."),
            result("call_2", "Deleted #2."),
        ]
    );
    // #1 and #3 are merged into one user message, so roles still alternate.
    let messages = wire::messages(api, body);
    let user = &messages[messages.len() - 3];
    assert_eq!(user["role"], "user");
    assert_eq!(user["content"].as_array().map(Vec::len), Some(2), "{user}");
    let (footer_text, _) = footer(api, &wire::parts(api, body));
    for number in
        ["\n- #1 user: ", "\n- #3 user: ", "\n- #4 assistant: ", "\n- #5 tool result: ", "\n- #6 tool result: "]
    {
        assert!(footer_text.contains(number), "{number:?} in {footer_text}");
    }
    assert!(!footer_text.contains("#2"), "the deleted message is not numbered: {footer_text}");
    let history = wire::parts(api, body);
    let shown: Vec<&Part> =
        history.iter().filter(|p| matches!(p, Part::Text { text, .. } if text.contains("#1"))).collect();
    assert_eq!(shown.len(), 2, "only the footer and the summary mention #1: {shown:#?}");
}
