//! Loading session files: pi's own lines, malformed and torn lines, missing headers, and the v1/v2 fixtures
//! migrated and rewritten as v3.

use std::fs;
use std::path::{Path, PathBuf};

use super::*;
use crate::protocol::AgentMessage;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures").join(name)
}

/// A copy of a fixture in a temporary folder (loading may rewrite it).
fn copied_fixture(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    fs::copy(fixture(name), &path).unwrap();
    (dir, path)
}

fn assert_linear_chain(entries: &[SessionEntry]) {
    assert_eq!(entries[0].parent_id, None);
    for pair in entries.windows(2) {
        assert_eq!(pair[1].parent_id.as_deref(), Some(pair[0].id.as_str()));
    }
}

fn assert_no_unrecognized(entries: &[SessionEntry]) {
    for entry in entries {
        assert!(!matches!(entry.kind, EntryKind::Unrecognized { .. }), "{entry:?}");
    }
}

#[test]
fn pis_own_session_lines_load_and_write_back_byte_for_byte() {
    let text = fs::read_to_string(fixture("pi-0.73.1/session-lines.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let second_header = lines.iter().skip(1).position(|line| line.starts_with(r#"{"type":"session""#)).unwrap() + 1;
    let first_session = lines[..second_header].join("\n") + "\n";
    let loaded = parse_session_text(&first_session).unwrap();
    assert!(!loaded.migrated);
    assert_eq!(loaded.skipped_lines, 0);
    assert_eq!(loaded.header.version, Some(3));
    assert_eq!(loaded.entries.len(), second_header - 1);
    assert_linear_chain(&loaded.entries);
    assert_no_unrecognized(&loaded.entries);
    assert_eq!(session_text(&loaded.header, &loaded.entries).unwrap(), first_session);
}

#[test]
fn malformed_lines_are_skipped_and_counted() {
    let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
    let first =
        r#"{"type":"model_change","id":"00000001","parentId":null,"timestamp":"t","provider":"p","modelId":"m"}"#;
    let second = r#"{"type":"thinking_level_change","id":"00000002","parentId":"00000001","timestamp":"t","thinkingLevel":"off"}"#;
    let text = format!(
        "not json\n{header}\n\n{first}\n{{\"broken\": \n42\n{header}\n{second}\n   \n{}",
        &second[..second.len() / 2]
    );
    let loaded = parse_session_text(&text).unwrap();
    assert_eq!(loaded.entries.len(), 2);
    // `not json`, the broken object, `42`, the second header and the torn last line.
    assert_eq!(loaded.skipped_lines, 5);
    assert_linear_chain(&loaded.entries);
}

#[test]
fn files_without_a_header_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("empty.jsonl", ""),
        ("garbage.jsonl", "garbage\n"),
        (
            "entry-first.jsonl",
            "{\"type\":\"label\",\"id\":\"1\",\"parentId\":null,\"timestamp\":\"t\",\"targetId\":\"x\"}\n",
        ),
    ] {
        let path = dir.path().join(name);
        fs::write(&path, text).unwrap();
        let error = load_session_file(&path).unwrap_err();
        assert!(matches!(&error, SessionError::NoHeader { path: p } if *p == path), "{error:?}");
        assert!(error.to_string().contains(name), "{error}");
    }
    let missing = dir.path().join("missing.jsonl");
    let error = load_session_file(&missing).unwrap_err();
    assert!(matches!(error, SessionError::Io { .. }), "{error:?}");
    assert!(error.to_string().contains("missing.jsonl"), "{error}");
}

#[test]
fn a_v1_file_is_migrated_and_rewritten_as_v3() {
    let (_dir, path) = copied_fixture("sessions/v1.jsonl");
    let loaded = load_session_file(&path).unwrap();
    assert!(loaded.migrated);
    assert_eq!(loaded.skipped_lines, 0);
    assert_eq!(loaded.header.version, Some(3));
    assert_eq!(loaded.header.cwd, "/home/dev/project");
    assert_eq!(loaded.entries.len(), 12);
    assert_linear_chain(&loaded.entries);
    assert_no_unrecognized(&loaded.entries);
    for entry in &loaded.entries {
        assert_eq!(entry.id.len(), 8);
        assert!(entry.id.chars().all(|c| c.is_ascii_hexdigit()));
    }
    // firstKeptEntryIndex 7 counted the header as line 0: it named "Now add a --verbose flag", entry 6.
    let EntryKind::Compaction { first_kept_entry_id, tokens_before, .. } = &loaded.entries[9].kind else {
        panic!("expected a compaction, got {:?}", loaded.entries[9]);
    };
    assert_eq!(first_kept_entry_id, &loaded.entries[6].id);
    assert_eq!(*tokens_before, 48211);
    let Some(AgentMessage::User(kept)) = loaded.entries[6].message() else { panic!("expected a user message") };
    assert_eq!(kept.content.text(), "Now add a --verbose flag");

    let rewritten = fs::read_to_string(&path).unwrap();
    assert!(rewritten.starts_with(r#"{"type":"session","version":3,"#), "{rewritten}");
    assert!(!rewritten.contains("firstKeptEntryIndex"));
    assert_rewritten_file_loads_identically(&path, &loaded);
}

#[test]
fn a_v2_file_turns_hook_messages_into_custom_messages() {
    let (dir, path) = copied_fixture("sessions/v2.jsonl");
    let original_ids: Vec<String> = fs::read_to_string(&path)
        .unwrap()
        .lines()
        .skip(1)
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap()["id"].as_str().unwrap().to_owned())
        .collect();
    let loaded = load_session_file(&path).unwrap();
    assert!(loaded.migrated);
    assert_eq!(loaded.header.version, Some(3));
    assert_eq!(loaded.entries.iter().map(|e| e.id.clone()).collect::<Vec<_>>(), original_ids);
    assert_linear_chain(&loaded.entries);
    assert_no_unrecognized(&loaded.entries);
    let Some(AgentMessage::Custom(custom)) = loaded.entries[3].message() else {
        panic!("expected a custom message, got {:?}", loaded.entries[3]);
    };
    assert_eq!(custom.custom_type, "git-status");
    assert!(!custom.display);
    assert!(!fs::read_to_string(&path).unwrap().contains("hookMessage"));
    assert_rewritten_file_loads_identically(&path, &loaded);
    // The rewrite went through a temporary file that is gone now.
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
}

fn assert_rewritten_file_loads_identically(path: &Path, loaded: &LoadedSession) {
    let before = fs::read(path).unwrap();
    let again = load_session_file(path).unwrap();
    assert!(!again.migrated);
    assert_eq!(again.header, loaded.header);
    assert_eq!(again.entries, loaded.entries);
    assert_eq!(fs::read(path).unwrap(), before, "a current file is not rewritten");
}

#[test]
fn the_newest_session_with_a_header_is_continued() {
    let dir = tempfile::tempdir().unwrap();
    let (_fixture_dir, v2) = copied_fixture("sessions/v2.jsonl");
    let good = dir.path().join(session_file_name("2026-01-01T00:00:00.000Z", "a"));
    fs::copy(&v2, &good).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    fs::write(dir.path().join(session_file_name("2026-01-02T00:00:00.000Z", "b")), "oops\n").unwrap();
    assert_eq!(find_most_recent_session(dir.path()), Some(good));
}

#[test]
fn a_newer_version_loads_with_a_warning_and_the_current_one_without() {
    let line = |version: u32| {
        format!(
            "{{\"type\":\"session\",\"version\":{version},\"id\":\"s\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\
             \"cwd\":\"/w\"}}\n{{\"type\":\"model_change\",\"id\":\"00000001\",\"parentId\":null,\"timestamp\":\"t\",\
             \"provider\":\"p\",\"modelId\":\"m\"}}\n{{\"type\":\"future_kind\",\"id\":\"00000002\",\
             \"parentId\":\"00000001\",\"timestamp\":\"t\"}}\n"
        )
    };
    let path = Path::new("/w/s.jsonl");
    let newer = parse_session_text(&line(4)).unwrap();
    assert!(!newer.migrated);
    assert_eq!(newer.entries.len(), 2, "the unknown kind is kept for writing back");
    let warning = newer.version_warning(path).unwrap();
    assert!(warning.contains("/w/s.jsonl is version 4, newer than version 3"), "{warning}");
    assert_eq!(parse_session_text(&line(3)).unwrap().version_warning(path), None);
}

#[test]
fn message_lines_read_the_same_whatever_the_order_of_their_fields() {
    let tag_first = r#"{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"hi \"there\""}],"timestamp":1}}"#;
    let tag_last = r#"{"message":{"timestamp":1,"content":[{"text":"hi \"there\"","type":"text"}],"role":"user"},"timestamp":"t","parentId":null,"id":"a1","type":"message"}"#;
    let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;
    let first = parse_session_text(&format!("{header}\n{tag_first}\n")).unwrap();
    let last = parse_session_text(&format!("{header}\n{tag_last}\n")).unwrap();
    assert_eq!(first.skipped_lines + last.skipped_lines, 0);
    assert_eq!(first.entries, last.entries);
    assert!(matches!(&first.entries[0].kind, EntryKind::Message { message: AgentMessage::User(_) }));
    assert_eq!(session_text(&first.header, &first.entries).unwrap(), format!("{header}\n{tag_first}\n"));
}
