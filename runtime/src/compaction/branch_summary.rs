//! Branch summaries for `/tree`: when the leaf moves to another branch, the abandoned stretch (from the old
//! leaf back to the common ancestor) is summarized so its work is not lost.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::estimate::estimate_tokens;
use super::file_ops::{FileLists, FileOperations};
use super::prepare::entry_to_message;
use super::prompts::{BRANCH_SUMMARY_PROMPT, summarization_request, with_focus};
use super::serialize::serialize_agent_messages;
use super::summarize::{CallFailure, CompactionError, SummaryCall, SummaryModel, complete_text};
use crate::ai::{Model, ProviderRegistry};
use crate::protocol::AgentMessage;
use crate::session::{EntryKind, SessionEntry};

/// Put before every generated branch summary.
pub const BRANCH_SUMMARY_PREAMBLE: &str =
    "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n";

/// `maxTokens` of a branch summary call.
pub const BRANCH_SUMMARY_MAX_TOKENS: u64 = 2048;

/// The `branchSummary` object of settings.json.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct BranchSummarySettings {
    /// Subtracted from the context window to give the budget of summarized messages.
    pub reserve_tokens: u64,
    /// Summarize without asking first.
    pub skip_prompt: bool,
}

impl Default for BranchSummarySettings {
    fn default() -> Self {
        Self { reserve_tokens: 16_384, skip_prompt: false }
    }
}

/// The entries a branch change leaves behind.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CollectedBranch {
    /// From just after the common ancestor to the old leaf, oldest first.
    pub entries: Vec<SessionEntry>,
    /// The deepest entry shared by the old and the new path (`None` when they share nothing).
    pub common_ancestor_id: Option<String>,
}

/// Ids from `id` up to its root, leaf first (stops at a missing parent or a cycle).
fn path_ids<'a>(by_id: &HashMap<&'a str, &'a SessionEntry>, id: &str) -> Vec<&'a str> {
    let mut ids = Vec::new();
    let mut seen = HashSet::new();
    let mut current = by_id.get(id).copied();
    while let Some(entry) = current {
        if !seen.insert(entry.id.as_str()) {
            break;
        }
        ids.push(entry.id.as_str());
        current = entry.parent_id.as_deref().and_then(|parent| by_id.get(parent).copied());
    }
    ids
}

/// pi's `collectEntriesForBranchSummary`: the entries of `all_entries` from the old leaf back to the common
/// ancestor with `target_id`'s path.
pub fn collect_branch_entries(
    all_entries: &[SessionEntry],
    old_leaf_id: Option<&str>,
    target_id: &str,
) -> CollectedBranch {
    let Some(old_leaf_id) = old_leaf_id else { return CollectedBranch::default() };
    let by_id: HashMap<&str, &SessionEntry> = all_entries.iter().map(|entry| (entry.id.as_str(), entry)).collect();
    let old_path: HashSet<&str> = path_ids(&by_id, old_leaf_id).into_iter().collect();
    let common_ancestor_id = path_ids(&by_id, target_id).into_iter().find(|id| old_path.contains(id));
    let mut entries: Vec<SessionEntry> = path_ids(&by_id, old_leaf_id)
        .into_iter()
        .take_while(|id| Some(*id) != common_ancestor_id)
        .filter_map(|id| by_id.get(id).map(|entry| (*entry).clone()))
        .collect();
    entries.reverse();
    CollectedBranch { entries, common_ancestor_id: common_ancestor_id.map(str::to_owned) }
}

/// The messages of a branch that fit the budget, and every file the branch touched.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BranchPreparation {
    /// Oldest first.
    pub messages: Vec<AgentMessage>,
    pub file_ops: FileOperations,
    pub total_tokens: u64,
}

/// The message a branch entry contributes to its summary (tool results are left out: the calls carry enough).
fn branch_message(entry: &SessionEntry) -> Option<AgentMessage> {
    match &entry.kind {
        EntryKind::Message { message: AgentMessage::ToolResult(_) } => None,
        _ => entry_to_message(entry),
    }
}

/// pi's `prepareBranchEntries`: walks the entries newest first, keeping messages while they fit in
/// `token_budget` (0 means no limit); a summary that does not fit is still kept while under 90 % of the budget.
pub fn prepare_branch_entries(entries: &[SessionEntry], token_budget: u64) -> BranchPreparation {
    let mut file_ops = FileOperations::default();
    for entry in entries {
        if let EntryKind::BranchSummary { details: Some(details), from_hook, .. } = &entry.kind
            && *from_hook != Some(true)
        {
            file_ops.add_details(details);
        }
    }
    let mut messages = Vec::new();
    let mut total_tokens = 0u64;
    for entry in entries.iter().rev() {
        let Some(message) = branch_message(entry) else { continue };
        file_ops.add_message(&message);
        let tokens = estimate_tokens(&message);
        if token_budget > 0 && total_tokens + tokens > token_budget {
            let is_summary = matches!(entry.kind, EntryKind::Compaction { .. } | EntryKind::BranchSummary { .. });
            if is_summary && (total_tokens as f64) < token_budget as f64 * 0.9 {
                messages.push(message);
                total_tokens += tokens;
            }
            break;
        }
        messages.push(message);
        total_tokens += tokens;
    }
    messages.reverse();
    BranchPreparation { messages, file_ops, total_tokens }
}

/// Options of [`generate_branch_summary`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BranchSummaryOptions {
    /// Subtracted from the model's context window to give the message budget.
    pub reserve_tokens: u64,
    pub custom_instructions: Option<String>,
    /// Use `custom_instructions` instead of the built-in prompt rather than in addition to it.
    pub replace_instructions: bool,
}

/// A generated branch summary.
#[derive(Debug, Clone, PartialEq)]
pub struct BranchSummaryResult {
    /// Preamble, summary and file manifest.
    pub summary: String,
    pub files: FileLists,
}

/// Summarizes the collected branch `entries` with `maxTokens` 2048.
pub async fn generate_branch_summary(
    entries: &[SessionEntry],
    model: &Model,
    registry: &ProviderRegistry,
    api_key: Option<&str>,
    options: &BranchSummaryOptions,
    cancel: &CancellationToken,
) -> Result<BranchSummaryResult, CompactionError> {
    let window = if model.context_window > 0 { model.context_window } else { 128_000 };
    let budget = window.saturating_sub(options.reserve_tokens);
    let prepared = prepare_branch_entries(entries, budget);
    let files = prepared.file_ops.file_lists();
    if prepared.messages.is_empty() {
        return Ok(BranchSummaryResult { summary: "No content to summarize".to_owned(), files });
    }
    let custom = options.custom_instructions.as_deref();
    let instructions = match custom {
        Some(custom) if options.replace_instructions => custom.to_owned(),
        _ => with_focus(BRANCH_SUMMARY_PROMPT, custom),
    };
    let prompt = summarization_request(&serialize_agent_messages(&prepared.messages), None, &instructions);
    let target = SummaryModel { model, registry, api_key, cancel };
    let call = SummaryCall { target, max_tokens: BRANCH_SUMMARY_MAX_TOKENS, reasoning: None };
    let text = complete_text(&call, prompt).await.map_err(|failure| match failure {
        CallFailure::Aborted => CompactionError::Aborted,
        CallFailure::Error(message) => CompactionError::Summarization(message),
    })?;
    let summary = format!("{BRANCH_SUMMARY_PREAMBLE}{text}{}", files.format_tags());
    Ok(BranchSummaryResult { summary, files })
}
