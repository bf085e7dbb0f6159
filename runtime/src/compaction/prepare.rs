//! pi's `prepareCompaction`: everything a compaction needs, computed from the entries of the current path
//! without calling the model.

use super::cut_point::find_cut_point;
use super::estimate::{CompactionSettings, estimate_context_tokens};
use super::file_ops::FileOperations;
use crate::protocol::AgentMessage;
use crate::session::{EntryKind, SessionEntry};

/// The input of [`super::compact`].
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionPreparation {
    /// Id of the first entry kept verbatim.
    pub first_kept_entry_id: String,
    /// The history to summarize: from after the previous compaction up to the cut (or, when the cut splits a
    /// turn, up to the start of that turn).
    pub messages_to_summarize: Vec<AgentMessage>,
    /// When the cut splits a turn: the turn's messages before the cut.
    pub turn_prefix_messages: Vec<AgentMessage>,
    pub is_split_turn: bool,
    /// Context size before compacting, estimated from the previous compaction onward.
    pub tokens_before: u64,
    /// The summary of the previous compaction on the path, which the new summary updates.
    pub previous_summary: Option<String>,
    pub file_ops: FileOperations,
    pub settings: CompactionSettings,
}

pub use crate::session::entry_message as entry_to_message;

fn messages_in(entries: &[SessionEntry]) -> Vec<AgentMessage> {
    entries.iter().filter_map(entry_to_message).collect()
}

/// pi's `prepareCompaction` over the entries of the current path (root first). `None` when there is nothing
/// to do: an empty path, or a path that already ends with a compaction.
pub fn prepare_compaction(
    path_entries: &[SessionEntry],
    settings: &CompactionSettings,
) -> Option<CompactionPreparation> {
    let last = path_entries.last()?;
    if matches!(last.kind, EntryKind::Compaction { .. }) {
        return None;
    }
    let previous_compaction = path_entries.iter().rposition(|entry| matches!(entry.kind, EntryKind::Compaction { .. }));
    let start = previous_compaction.map_or(0, |index| index + 1);
    let end = path_entries.len();

    let tokens_before = estimate_context_tokens(&messages_in(&path_entries[previous_compaction.unwrap_or(0)..])).tokens;

    let cut = find_cut_point(path_entries, start, end, settings.keep_recent_tokens);
    let first_kept_entry_id = path_entries.get(cut.first_kept_entry_index)?.id.clone();
    if first_kept_entry_id.is_empty() {
        return None;
    }
    let history_end = match cut.turn_start_index {
        Some(turn_start) if cut.is_split_turn => turn_start,
        _ => cut.first_kept_entry_index,
    };
    let messages_to_summarize = messages_in(&path_entries[start..history_end.max(start)]);
    let turn_prefix_messages = match cut.turn_start_index {
        Some(turn_start) if cut.is_split_turn => messages_in(&path_entries[turn_start..cut.first_kept_entry_index]),
        _ => Vec::new(),
    };

    let mut file_ops = FileOperations::default();
    let mut previous_summary = None;
    if let Some(EntryKind::Compaction { summary, details, from_hook, .. }) =
        previous_compaction.map(|index| &path_entries[index].kind)
    {
        previous_summary = Some(summary.clone());
        if let Some(details) = details.as_ref().filter(|_| *from_hook != Some(true)) {
            file_ops.add_details(details);
        }
    }
    for message in messages_to_summarize.iter().chain(&turn_prefix_messages) {
        file_ops.add_message(message);
    }

    Some(CompactionPreparation {
        first_kept_entry_id,
        messages_to_summarize,
        turn_prefix_messages,
        is_split_turn: cut.is_split_turn,
        tokens_before,
        previous_summary,
        file_ops,
        settings: *settings,
    })
}
