//! Where a compaction cuts: walk back from the end until `keep_recent_tokens` worth of messages are
//! kept, snap to an entry a context may start with, and note whether the cut splits a turn.

use super::estimate::estimate_tokens;
use crate::protocol::AgentMessage;
use crate::session::{EntryKind, SessionEntry};

/// The result of [`find_cut_point`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CutPoint {
    /// Index of the first entry kept verbatim.
    pub first_kept_entry_index: usize,
    /// Index of the entry that started the turn the cut falls in (pi's `-1` is `None`). Only set when the
    /// cut entry is not a user message.
    pub turn_start_index: Option<usize>,
    /// The cut falls inside a turn: the kept part starts with that turn's later messages.
    pub is_split_turn: bool,
}

/// Whether the kept context may start at this entry: any message but a tool result, a branch summary or
/// a custom message.
fn is_valid_cut(entry: &SessionEntry) -> bool {
    match &entry.kind {
        EntryKind::Message { message } => !matches!(message, AgentMessage::ToolResult(_)),
        EntryKind::BranchSummary { .. } | EntryKind::CustomMessage { .. } => true,
        _ => false,
    }
}

/// Whether a turn begins at this entry: a user or bash execution message, a branch summary or a custom
/// message.
fn is_turn_start(entry: &SessionEntry) -> bool {
    match &entry.kind {
        EntryKind::Message { message } => matches!(message, AgentMessage::User(_) | AgentMessage::BashExecution(_)),
        EntryKind::BranchSummary { .. } | EntryKind::CustomMessage { .. } => true,
        _ => false,
    }
}

/// The nearest turn start at or before `entry_index`, not looking before `start`.
pub fn find_turn_start_index(entries: &[SessionEntry], entry_index: usize, start: usize) -> Option<usize> {
    if entries.is_empty() || entry_index < start {
        return None;
    }
    let last = entry_index.min(entries.len() - 1);
    (start..=last).rev().find(|&i| is_turn_start(&entries[i]))
}

/// pi's `findCutPoint` over `entries[start..end]`.
pub fn find_cut_point(entries: &[SessionEntry], start: usize, end: usize, keep_recent_tokens: u64) -> CutPoint {
    let end = end.min(entries.len());
    let start = start.min(end);
    let cut_points: Vec<usize> = (start..end).filter(|&i| is_valid_cut(&entries[i])).collect();
    let Some(&first_cut) = cut_points.first() else {
        return CutPoint { first_kept_entry_index: start, turn_start_index: None, is_split_turn: false };
    };

    let mut cut = first_cut;
    let mut kept_tokens = 0u64;
    for i in (start..end).rev() {
        let Some(message) = entries[i].message() else { continue };
        kept_tokens += estimate_tokens(message);
        if kept_tokens >= keep_recent_tokens {
            if let Some(&c) = cut_points.iter().find(|&&c| c >= i) {
                cut = c;
            }
            break;
        }
    }

    // Settings changes, labels and the like just before the cut stay with the kept part.
    while cut > start {
        let previous = &entries[cut - 1];
        if matches!(previous.kind, EntryKind::Compaction { .. } | EntryKind::Message { .. }) {
            break;
        }
        cut -= 1;
    }

    let cut_is_user = matches!(entries[cut].message(), Some(AgentMessage::User(_)));
    let turn_start_index = if cut_is_user { None } else { find_turn_start_index(entries, cut, start) };
    CutPoint { first_kept_entry_index: cut, turn_start_index, is_split_turn: turn_start_index.is_some() }
}
