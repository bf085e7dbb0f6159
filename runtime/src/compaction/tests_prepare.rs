//! prepareCompaction: ranges after a previous compaction, split turns, token estimates and file operations.

use serde_json::json;

use super::estimate::CompactionSettings;
use super::prepare::{entry_to_message, prepare_compaction};
use super::tests_support::*;
use crate::protocol::{AgentMessage, StopReason, Usage};
use crate::session::EntryKind;

fn settings(keep: u64) -> CompactionSettings {
    CompactionSettings { keep_recent_tokens: keep, ..CompactionSettings::default() }
}

fn compaction(details: Option<serde_json::Value>, from_hook: Option<bool>) -> EntryKind {
    EntryKind::Compaction {
        summary: "OLD SUMMARY".into(),
        first_kept_entry_id: "e1".into(),
        tokens_before: 9000,
        details,
        from_hook,
    }
}

fn with_usage(message: AgentMessage, total: u64, stop: StopReason) -> AgentMessage {
    let AgentMessage::Assistant(mut assistant) = message else { panic!("not an assistant") };
    assistant.usage = Usage { total_tokens: total, ..Usage::default() };
    assistant.stop_reason = stop;
    AgentMessage::Assistant(assistant)
}

#[test]
fn the_range_starts_after_the_previous_compaction() {
    let entries = chain(vec![
        message(user("early")),
        message(tool_call("read", json!({"path": "early.rs"}))),
        compaction(Some(json!({"readFiles": ["old.rs"], "modifiedFiles": ["m.rs"]})), None),
        message(user(chars(400))),
        message(with_usage(tool_call("edit", json!({"path": "x.rs"})), 1000, StopReason::ToolUse)),
        message(user(chars(400))),
        message(with_usage(assistant(chars(400)), 50_000, StopReason::Aborted)),
    ]);
    let prep = prepare_compaction(&entries, &settings(150)).unwrap();
    assert_eq!(prep.first_kept_entry_id, "e5");
    assert!(!prep.is_split_turn);
    assert_eq!(
        prep.messages_to_summarize,
        vec![entries[3].message().unwrap().clone(), entries[4].message().unwrap().clone()]
    );
    assert!(prep.turn_prefix_messages.is_empty());
    assert_eq!(prep.previous_summary.as_deref(), Some("OLD SUMMARY"));
    // The edit's usage (1000) plus the estimates after it (100 + 100); the aborted reply's usage is ignored.
    assert_eq!(prep.tokens_before, 1200);
    let lists = prep.file_ops.file_lists();
    assert_eq!(lists.read_files, ["old.rs"]);
    assert_eq!(lists.modified_files, ["m.rs", "x.rs"]);
}

#[test]
fn details_of_an_extension_compaction_are_ignored() {
    let entries = chain(vec![
        compaction(Some(json!({"readFiles": ["old.rs"], "modifiedFiles": []})), Some(true)),
        message(user(chars(400))),
        message(user(chars(400))),
        message(user(chars(400))),
    ]);
    let prep = prepare_compaction(&entries, &settings(50)).unwrap();
    assert!(prep.file_ops.file_lists().read_files.is_empty());
    // Without any usage, the estimate covers the summary message too: 3 + 3 × 100.
    assert_eq!(prep.tokens_before, 303);
}

#[test]
fn nothing_to_do_after_a_compaction_or_on_an_empty_path() {
    let entries = chain(vec![message(user("a")), compaction(None, None)]);
    assert_eq!(prepare_compaction(&entries, &settings(10)), None);
    assert_eq!(prepare_compaction(&[], &settings(10)), None);
}

#[test]
fn a_split_turn_separates_history_from_the_turn_prefix() {
    let entries = case_16_entries();
    let prep = prepare_compaction(&entries, &settings(100)).unwrap();
    assert!(prep.is_split_turn);
    assert_eq!(prep.first_kept_entry_id, "e5");
    let messages = |range: std::ops::Range<usize>| -> Vec<AgentMessage> {
        entries[range].iter().filter_map(|e| e.message().cloned()).collect()
    };
    assert_eq!(prep.messages_to_summarize, messages(0..2));
    assert_eq!(prep.turn_prefix_messages, messages(2..5));
    assert_eq!(prep.previous_summary, None);
    assert_eq!(prep.file_ops.file_lists().read_files, ["a.txt"]);
}

#[test]
fn case_17_has_no_history_before_the_split_turn() {
    let entries = case_17_entries();
    let prep = prepare_compaction(&entries, &settings(150)).unwrap();
    assert!(prep.is_split_turn);
    assert_eq!(prep.first_kept_entry_id, "e2");
    assert!(prep.messages_to_summarize.is_empty());
    assert_eq!(prep.turn_prefix_messages.len(), 2);
}

#[test]
fn entries_become_agent_messages() {
    let entries = chain(vec![
        EntryKind::BranchSummary { from_id: "root".into(), summary: "B".into(), details: None, from_hook: None },
        compaction(None, None),
        model_change(),
    ]);
    let Some(AgentMessage::BranchSummary(branch)) = entry_to_message(&entries[0]) else { panic!() };
    assert_eq!((branch.summary.as_str(), branch.from_id.as_str(), branch.timestamp), ("B", "root", 1_773_614_418_123));
    let Some(AgentMessage::CompactionSummary(summary)) = entry_to_message(&entries[1]) else { panic!() };
    assert_eq!((summary.summary.as_str(), summary.tokens_before), ("OLD SUMMARY", 9000));
    assert_eq!(entry_to_message(&entries[2]), None);
}
