//! Compaction as pi does it: estimate the context size, pick a cut point that keeps the most recent
//! turns, have the model summarize everything before it (with a file manifest appended), and the
//! related branch summary used when `/tree` leaves a branch behind.

pub mod branch_summary;
pub mod cut_point;
pub mod estimate;
pub mod file_ops;
pub mod prepare;
pub mod prompts;
pub mod serialize;
pub mod summarize;

pub use branch_summary::{
    BRANCH_SUMMARY_MAX_TOKENS, BRANCH_SUMMARY_PREAMBLE, BranchPreparation, BranchSummaryOptions, BranchSummaryResult,
    BranchSummarySettings, CollectedBranch, collect_branch_entries, generate_branch_summary, prepare_branch_entries,
};
pub use cut_point::{CutPoint, find_cut_point, find_turn_start_index};
pub use estimate::{
    CompactionSettings, ContextTokenEstimate, estimate_context_tokens, estimate_tokens, should_compact,
    usage_context_tokens,
};
pub use file_ops::{FileLists, FileOperations, format_file_tags};
pub use prepare::{CompactionPreparation, entry_to_message, prepare_compaction};
pub use serialize::{serialize_agent_messages, serialize_conversation, to_llm_messages};
pub use summarize::{
    CompactionError, CompactionResult, NO_PRIOR_HISTORY, SummaryModel, compact, generate_summary,
    generate_turn_prefix_summary,
};

#[cfg(test)]
mod tests_cut_point;
#[cfg(test)]
mod tests_estimate;
#[cfg(test)]
mod tests_prepare;
#[cfg(test)]
mod tests_summarize;
#[cfg(test)]
mod tests_support;
