//! Writing sessions: the lazy first flush, one line per later entry, `--no-session`, continuing a file (also
//! after a torn last line), the writer lock, and forked sessions.

use std::fs;
use std::path::Path;

use serde_json::json;

use super::*;

/// Entry builders shared with the crash test.
pub(super) fn entry(kind: serde_json::Value, parent: Option<&SessionEntry>, taken: &[SessionEntry]) -> SessionEntry {
    let id = new_entry_id(|candidate| taken.iter().any(|entry| entry.id == candidate));
    let mut value = json!({"id": id, "parentId": parent.map(|p| p.id.clone()), "timestamp": iso_timestamp_now()});
    if let (Some(fields), serde_json::Value::Object(own)) = (value.as_object_mut(), kind) {
        fields.extend(own);
    }
    SessionEntry::from_json(value).unwrap()
}

pub(super) fn model_change() -> serde_json::Value {
    json!({"type":"model_change","provider":"mock","modelId":"mock-model"})
}

pub(super) fn user(text: &str) -> serde_json::Value {
    json!({"type":"message","message":{"role":"user","content":[{"type":"text","text":text}],"timestamp":1}})
}

pub(super) fn assistant(text: &str) -> serde_json::Value {
    json!({"type":"message","message":{"role":"assistant","content":[{"type":"text","text":text}],
        "api":"openai-completions","provider":"mock","model":"mock-model",
        "usage":{"input":10,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":12,
            "cost":{"input":0.00003,"output":0.0000015,"cacheRead":0,"cacheWrite":0,"total":0.0000315}},
        "stopReason":"stop","timestamp":2}})
}

pub(super) fn tool_result(text: &str) -> serde_json::Value {
    json!({"type":"message","message":{"role":"toolResult","toolCallId":"call_1","toolName":"read",
        "content":[{"type":"text","text":text}],"isError":false,"timestamp":3}})
}

/// Appends a new entry to `entries` and records it.
pub(super) fn add(store: &mut SessionStore, entries: &mut Vec<SessionEntry>, kind: serde_json::Value) {
    let new = entry(kind, entries.last(), entries);
    entries.push(new);
    store.record(entries.last().unwrap(), entries).unwrap();
}

fn line_count(path: &Path) -> usize {
    fs::read_to_string(path).unwrap().lines().count()
}

#[test]
fn nothing_is_written_until_an_assistant_message_then_everything_then_one_line_each() {
    let root = tempfile::tempdir().unwrap();
    let dir = session_dir_for_cwd(root.path(), Path::new("/home/u/p"));
    let mut store = SessionStore::create(&dir, Path::new("/home/u/p"), NewSessionOptions::default());
    let path = store.path().unwrap().to_owned();
    assert_eq!(path.parent(), Some(dir.as_path()));
    let name = session_file_name(&store.header().timestamp, &store.header().id);
    assert_eq!(path.file_name().unwrap().to_str(), Some(name.as_str()));
    assert_eq!(uuid::Uuid::parse_str(&store.header().id).unwrap().get_version_num(), 7);

    let mut entries = Vec::new();
    add(&mut store, &mut entries, model_change());
    add(&mut store, &mut entries, user("hi"));
    assert!(!dir.exists(), "no folder before the first assistant message");
    assert!(!store.is_persisted());

    add(&mut store, &mut entries, assistant("hello"));
    assert!(store.is_persisted());
    assert_eq!(line_count(&path), 4);
    add(&mut store, &mut entries, tool_result("file contents"));
    add(&mut store, &mut entries, assistant("done"));
    assert_eq!(line_count(&path), 6);

    let loaded = load_session_file(&path).unwrap();
    assert_eq!(&loaded.header, store.header());
    assert_eq!(loaded.entries, entries);
    assert_eq!(loaded.skipped_lines, 0);
    assert_eq!(loaded.header.cwd, "/home/u/p");
}

#[test]
fn an_in_memory_session_writes_nothing() {
    let mut store = SessionStore::in_memory(Path::new("/w"), NewSessionOptions::default());
    let mut entries = Vec::new();
    add(&mut store, &mut entries, user("hi"));
    add(&mut store, &mut entries, assistant("hello"));
    assert_eq!(store.path(), None);
    assert!(!store.is_persisted());
}

#[test]
fn continuing_a_file_appends_after_a_torn_last_line() {
    let root = tempfile::tempdir().unwrap();
    let mut store = SessionStore::create(root.path(), Path::new("/w"), NewSessionOptions::default());
    let mut entries = Vec::new();
    add(&mut store, &mut entries, user("hi"));
    add(&mut store, &mut entries, assistant("hello"));
    let path = store.path().unwrap().to_owned();
    drop(store);

    // A crash in the middle of a line.
    let mut file = fs::File::options().append(true).open(&path).unwrap();
    std::io::Write::write_all(&mut file, br#"{"type":"message","id":"dead"#).unwrap();
    drop(file);

    let loaded = load_session_file(&path).unwrap();
    assert_eq!(loaded.skipped_lines, 1);
    let mut store = SessionStore::open(&path, &loaded).unwrap();
    assert!(store.is_persisted());
    let mut entries = loaded.entries;
    add(&mut store, &mut entries, user("again"));
    // The torn line is cut, not left as a broken line in the middle of the file.
    let reloaded = load_session_file(&path).unwrap();
    assert_eq!(reloaded.skipped_lines, 0);
    assert_eq!(reloaded.entries, entries);
    let text = fs::read_to_string(&path).unwrap();
    assert!(!text.contains("dead") && text.ends_with('\n'), "{text}");
    assert!(text.lines().all(|line| serde_json::from_str::<serde_json::Value>(line).is_ok()), "{text}");
}

#[test]
fn continuing_a_file_keeps_a_whole_last_entry_that_lacks_its_newline() {
    let root = tempfile::tempdir().unwrap();
    let mut store = SessionStore::create(root.path(), Path::new("/w"), NewSessionOptions::default());
    let mut entries = Vec::new();
    add(&mut store, &mut entries, user("hi"));
    add(&mut store, &mut entries, assistant("hello"));
    let path = store.path().unwrap().to_owned();
    drop(store);
    // A writer that stopped right before the newline; the line is as long as several read blocks.
    let last = entry(tool_result(&"t".repeat(200_000)), entries.last(), &entries);
    let mut file = fs::File::options().append(true).open(&path).unwrap();
    std::io::Write::write_all(&mut file, last.to_line().unwrap().as_bytes()).unwrap();
    drop(file);
    entries.push(last);

    let loaded = load_session_file(&path).unwrap();
    assert_eq!(loaded.entries, entries, "loading takes the unterminated line");
    let mut store = SessionStore::open(&path, &loaded).unwrap();
    add(&mut store, &mut entries, assistant("after"));
    let reloaded = load_session_file(&path).unwrap();
    assert_eq!(reloaded.skipped_lines, 0);
    assert_eq!(reloaded.entries, entries);
}

#[test]
fn continuing_a_file_that_is_one_torn_line_after_the_header_cuts_to_the_header() {
    let root = tempfile::tempdir().unwrap();
    let mut store = SessionStore::create(root.path(), Path::new("/w"), NewSessionOptions::default());
    let mut entries = Vec::new();
    add(&mut store, &mut entries, assistant("hello"));
    let path = store.path().unwrap().to_owned();
    drop(store);
    let header_line = fs::read_to_string(&path).unwrap().lines().next().unwrap().to_owned();
    // Torn across many read blocks.
    fs::write(&path, format!("{header_line}\n{{\"type\":\"message\",\"x\":\"{}", "y".repeat(300_000))).unwrap();

    let loaded = load_session_file(&path).unwrap();
    assert!(loaded.entries.is_empty());
    let mut store = SessionStore::open(&path, &loaded).unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), format!("{header_line}\n"));
    let mut entries = Vec::new();
    add(&mut store, &mut entries, user("again"));
    let reloaded = load_session_file(&path).unwrap();
    assert_eq!((reloaded.skipped_lines, reloaded.entries), (0, entries));
}

#[test]
fn the_first_flush_never_replaces_an_existing_file_and_leaves_no_temporary_file() {
    let root = tempfile::tempdir().unwrap();
    let mut store = SessionStore::create(root.path(), Path::new("/w"), NewSessionOptions::default());
    let path = store.path().unwrap().to_owned();
    fs::write(&path, "someone else's\n").unwrap();
    let mut entries = Vec::new();
    let first = entry(assistant("hello"), None, &entries);
    entries.push(first);
    assert!(store.record(entries.last().unwrap(), &entries).is_err());
    assert_eq!(fs::read_to_string(&path).unwrap(), "someone else's\n");
    let names: Vec<String> = fs::read_dir(root.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[test]
fn a_second_writer_is_refused_until_the_first_is_gone() {
    let root = tempfile::tempdir().unwrap();
    let mut store = SessionStore::create(root.path(), Path::new("/w"), NewSessionOptions::default());
    let mut entries = Vec::new();
    add(&mut store, &mut entries, assistant("hello"));
    let path = store.path().unwrap().to_owned();
    let loaded = load_session_file(&path).unwrap();

    let error = SessionStore::open(&path, &loaded).unwrap_err();
    assert!(matches!(&error, SessionError::Locked { path: locked } if *locked == path), "{error:?}");
    let message = error.to_string();
    assert!(message.contains(&path.display().to_string()) && message.contains("--no-session"), "{message}");

    drop(store);
    let mut second = SessionStore::open(&path, &loaded).unwrap();
    let mut entries = loaded.entries;
    add(&mut second, &mut entries, user("mine now"));
    assert_eq!(load_session_file(&path).unwrap().entries, entries);
}

#[test]
fn a_forked_session_is_written_whole() {
    let root = tempfile::tempdir().unwrap();
    let mut entries = Vec::new();
    for kind in [user("hi"), assistant("hello")] {
        let new = entry(kind, entries.last(), &entries);
        entries.push(new);
    }
    let mut header = SessionHeader::new(new_session_id(), iso_timestamp_now(), "/w");
    header.parent_session = Some("/sessions/original.jsonl".to_owned());
    let path = root.path().join("nested").join(session_file_name(&header.timestamp, &header.id));
    write_forked_session(&path, &header, &entries).unwrap();
    let loaded = load_session_file(&path).unwrap();
    assert_eq!(loaded.header, header);
    assert_eq!(loaded.entries, entries);
    assert!(fs::read_to_string(&path).unwrap().contains(r#""parentSession":"/sessions/original.jsonl""#));
    assert_eq!(fs::read_dir(path.parent().unwrap()).unwrap().count(), 1, "no temporary file left behind");
}

#[test]
fn a_branched_session_names_its_parent_and_holds_the_path() {
    use crate::session::{SessionManager, load_session_file};
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("sessions");
    let mut manager = SessionManager::create(&sessions, dir.path()).unwrap();
    let user = crate::protocol::AgentMessage::User(crate::protocol::UserMessage {
        content: crate::protocol::MessageContent::Text("hi".into()),
        timestamp: 1,
    });
    let first = manager.append_message(user.clone()).unwrap();
    assert_eq!(manager.create_branched_session(&first, &sessions).unwrap(), None, "no answer on the path yet");
    let answer: crate::protocol::AgentMessage = serde_json::from_value(serde_json::json!({
        "role": "assistant", "content": [{"type": "text", "text": "hello"}], "api": "openai-completions",
        "provider": "mock", "model": "m", "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0,
        "totalTokens": 2, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        "stopReason": "stop", "timestamp": 2
    }))
    .unwrap();
    let answered = manager.append_message(answer).unwrap();
    manager.append_message(user).unwrap();
    let forked = manager.create_branched_session(&answered, &sessions).unwrap().expect("written");
    let loaded = load_session_file(&forked).unwrap();
    assert_eq!(loaded.header.parent_session.as_deref(), manager.path().and_then(|p| p.to_str()));
    assert_eq!(loaded.entries.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(), [first.as_str(), answered.as_str()]);
}
