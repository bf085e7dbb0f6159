//! findCutPoint: pi's acceptance cases 16 and 17 and the edges around them.

use serde_json::json;

use super::cut_point::{CutPoint, find_cut_point, find_turn_start_index};
use super::tests_support::*;
use crate::session::EntryKind;

fn cut(first: usize, turn_start: Option<usize>, split: bool) -> CutPoint {
    CutPoint { first_kept_entry_index: first, turn_start_index: turn_start, is_split_turn: split }
}

#[test]
fn case_16_cut_points() {
    let entries = case_16_entries();
    assert_eq!(find_cut_point(&entries, 0, entries.len(), 100), cut(5, Some(2), true));
    assert_eq!(find_cut_point(&entries, 0, entries.len(), 250), cut(2, None, false));
    assert_eq!(find_cut_point(&entries, 0, entries.len(), 10_000), cut(0, None, false));
}

#[test]
fn case_17_pulls_in_the_model_change_and_splits_the_turn() {
    let entries = case_17_entries();
    assert_eq!(find_cut_point(&entries, 0, entries.len(), 150), cut(2, Some(0), true));
}

#[test]
fn tool_results_are_never_cut_points() {
    // Budget reached at the tool result (index 4): the next valid cut is the assistant after it.
    let entries = case_16_entries();
    assert_eq!(find_cut_point(&entries, 0, entries.len(), 200), cut(5, Some(2), true));
}

#[test]
fn the_extension_stops_at_a_compaction_and_at_the_range_start() {
    let entries = chain(vec![
        EntryKind::Compaction {
            summary: "s".into(),
            first_kept_entry_id: "x".into(),
            tokens_before: 1,
            details: None,
            from_hook: None,
        },
        model_change(),
        message(user(chars(400))),
    ]);
    assert_eq!(find_cut_point(&entries, 0, entries.len(), 50), cut(1, None, false));
    assert_eq!(find_cut_point(&entries, 1, entries.len(), 50), cut(1, None, false));
    let no_messages = chain(vec![model_change(), model_change()]);
    assert_eq!(find_cut_point(&no_messages, 0, 2, 10), cut(0, None, false));
    assert_eq!(find_cut_point(&[], 0, 0, 10), cut(0, None, false));
}

#[test]
fn branch_summaries_and_custom_messages_start_turns() {
    let entries = chain(vec![
        EntryKind::BranchSummary { from_id: "root".into(), summary: chars(40), details: None, from_hook: None },
        message(tool_call("bash", json!({"command": "ls"}))),
        message(assistant(chars(400))),
    ]);
    assert_eq!(find_turn_start_index(&entries, 2, 0), Some(0));
    assert_eq!(find_turn_start_index(&entries, 2, 1), None);
    assert_eq!(find_cut_point(&entries, 0, entries.len(), 100), cut(2, Some(0), true));
}
