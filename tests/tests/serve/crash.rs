//! `serve` killed with SIGKILL in the middle of a turn, then started again: the session is loaded, a model
//! call that was running is made once more and answered once, and a tool call that was running is not run
//! again but gets an "interrupted" result.

use std::path::Path;
use std::time::Duration;

use pi_gen_tests::Sandbox;
use serde_json::{Value, json};

use super::client::{Server, WAIT};
use super::{mock, serve};

/// Kills the server at once, as a crash would.
async fn kill_hard(server: &mut Server) {
    let pid = server.child.id().expect("running");
    // SAFETY: kill(2) on the server's own child process id.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGKILL) }, 0);
    server.child.wait().await.expect("reaped");
}

/// Waits until `ready` holds for the only session file's entries; returns them.
async fn session_entries_when(sandbox: &Sandbox, ready: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let read = || -> Vec<Value> {
        let files = sandbox.session_files();
        let Some(file) = files.first() else { return Vec::new() };
        let text = std::fs::read_to_string(file).unwrap_or_default();
        text.lines().filter_map(|line| serde_json::from_str(line).ok()).collect()
    };
    let found = tokio::time::timeout(WAIT, async {
        loop {
            let entries = read();
            if ready(&entries) {
                return entries;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    found.unwrap_or_else(|_| panic!("the session never got there: {:#?}", read()))
}

fn messages(entries: &[Value]) -> Vec<&Value> {
    entries.iter().filter(|entry| entry["type"] == "message").map(|entry| &entry["message"]).collect()
}

fn markers_left(sandbox: &Sandbox) -> usize {
    std::fs::read_dir(sandbox.agent_dir().join("serve").join("turns")).map_or(0, |dir| dir.flatten().count())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_call_cut_short_by_a_crash_is_made_again_and_answered_once() {
    let mock = mock(json!([
        {"text": "this answer is cut short by the crash", "stallAfter": 2},
        {"text": "Answered after the restart."}
    ]))
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    let mut server = serve(&sandbox, &[]).await;
    let id = server.create_session(&sandbox).await;
    let mut events = server.events(&id, None).await;
    let (status, _) = server.post(&format!("/v1/sessions/{id}/prompt"), json!({"message": "hello"})).await;
    assert_eq!(status, 202);
    events.until("message_update").await;
    kill_hard(&mut server).await;
    assert!(sandbox.session_files().is_empty(), "nothing is written before the first answer, as in pi");
    assert_eq!(markers_left(&sandbox), 1);

    let server = serve(&sandbox, &[]).await;
    let entries = session_entries_when(&sandbox, |entries| {
        messages(entries).iter().any(|message| message["content"][0]["text"] == "Answered after the restart.")
    })
    .await;
    assert_eq!(entries[0]["id"], id.as_str(), "the same session");
    let roles: Vec<&str> = messages(&entries).iter().filter_map(|message| message["role"].as_str()).collect();
    assert_eq!(roles, ["user", "assistant"], "{entries:#?}");
    assert_eq!(mock.requests().len(), 2, "one call cut short, one answered");
    let (_, state) = server.get(&format!("/v1/sessions/{id}")).await;
    assert_eq!(state["messageCount"], 2, "{state}");
    tokio::time::timeout(WAIT, async {
        while markers_left(&sandbox) > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the marker goes once the turn ends");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_call_cut_short_by_a_crash_is_not_run_again_but_marked_interrupted() {
    let mock = mock(json!([
        {"toolCalls": [{"id": "call_1", "name": "bash", "arguments": {"command": "echo ran >> log.txt; sleep 20"}}]},
        {"text": "The command was interrupted; I will check log.txt."}
    ]))
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    let mut server = serve(&sandbox, &[]).await;
    let id = server.create_session(&sandbox).await;
    let mut events = server.events(&id, None).await;
    let (status, _) = server.post(&format!("/v1/sessions/{id}/prompt"), json!({"message": "log it"})).await;
    assert_eq!(status, 202);
    events.until("tool_execution_start").await;
    let log = sandbox.work_dir().join("log.txt");
    wait_for_file(&log).await;
    kill_hard(&mut server).await;

    let server = serve(&sandbox, &[]).await;
    let entries = session_entries_when(&sandbox, |entries| {
        messages(entries)
            .last()
            .is_some_and(|message| message["role"] == "assistant" && message["stopReason"] == "stop")
    })
    .await;
    // A client of the restarted server sees the inserted result as an event, then the answer to it.
    let mut events = server.events(&id, None).await;
    events.until("agent_end").await;
    let ended: Vec<&Value> =
        events.seen.iter().filter(|(_, event)| event["type"] == "message_end").map(|(_, event)| event).collect();
    let ended_roles: Vec<&str> = ended.iter().filter_map(|event| event["message"]["role"].as_str()).collect();
    assert_eq!(ended_roles, ["toolResult", "assistant"], "{:#?}", events.seen);
    assert_eq!(ended[0]["message"]["toolCallId"], "call_1");
    let messages = messages(&entries);
    let roles: Vec<&str> = messages.iter().filter_map(|message| message["role"].as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "toolResult", "assistant"], "{entries:#?}");
    let result = messages[2];
    assert_eq!(result["toolCallId"], "call_1");
    assert_eq!(result["isError"], true);
    assert!(result["content"][0]["text"].as_str().is_some_and(|text| text.starts_with("Tool interrupted")), "{result}");
    assert_eq!(std::fs::read_to_string(&log).expect("log.txt"), "ran\n", "the command ran once");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[1].body.to_string().contains("Tool interrupted"), "the model hears of it");
}

async fn wait_for_file(path: &Path) {
    tokio::time::timeout(WAIT, async {
        while std::fs::read_to_string(path).map_or(true, |text| text.is_empty()) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the tool wrote its line");
}
