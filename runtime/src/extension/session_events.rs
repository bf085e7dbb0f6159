//! The events extensions receive about the session itself: start and shutdown, switching, forking, tree
//! navigation, compaction, resource discovery and the session directory.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Why a session started, or why one is shut down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum SessionChangeReason {
    /// The process started (`session_start` only).
    Startup,
    /// The process exits (`session_shutdown` only).
    Quit,
    Reload,
    New,
    Resume,
    Fork,
}

/// `session_start`: the session is open and about to take prompts.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStartEvent {
    pub reason: SessionChangeReason,
    /// The session active before (for `new`, `resume` and `fork`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_session_file: Option<PathBuf>,
}

/// `session_shutdown`: the session's extensions are about to stop (the process exits, or another session
/// replaces this one).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionShutdownEvent {
    pub reason: SessionChangeReason,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_session_file: Option<PathBuf>,
}

/// Why the session is being switched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum SwitchReason {
    New,
    Resume,
}

/// `session_before_switch`: another session (new or resumed) is about to replace this one.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionBeforeSwitchEvent {
    pub reason: SwitchReason,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_session_file: Option<PathBuf>,
}

/// `session_switch`: the switch happened.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSwitchEvent {
    pub reason: SwitchReason,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_session_file: Option<PathBuf>,
}

/// `session_before_fork`: a new session is about to be forked from `entry_id`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionBeforeForkEvent {
    pub entry_id: String,
    /// `before`: the new session ends before the entry (to edit and resend it); `at`: it includes it.
    pub position: ForkPosition,
}

/// Where a fork cuts the branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ForkPosition {
    Before,
    At,
}

/// `session_fork`: the fork happened.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionForkEvent {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_session_file: Option<PathBuf>,
}

/// `session_before_compact`: the older part of the branch is about to be summarized.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionBeforeCompactEvent {
    /// What would be summarized and kept: `firstKeptEntryId`, `tokensBefore`, `isSplitTurn`.
    pub preparation: Value,
    /// The entries of the current branch, as they are stored.
    pub branch_entries: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom_instructions: Option<String>,
}

/// `session_compact`: a compaction entry was written.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionCompactEvent {
    pub compaction_entry: Value,
    pub from_extension: bool,
}

/// `session_before_tree`: the leaf is about to move.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionBeforeTreeEvent {
    pub preparation: TreePreparation,
}

/// What a tree navigation would do.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TreePreparation {
    pub target_id: String,
    pub old_leaf_id: Option<String>,
    pub common_ancestor_id: Option<String>,
    /// The entries of the branch being left, as stored.
    pub entries_to_summarize: Vec<Value>,
    pub user_wants_summary: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom_instructions: Option<String>,
}

/// `session_tree`: the leaf moved.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionTreeEvent {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_leaf_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_leaf_id: Option<String>,
}

/// Why resources are being discovered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum DiscoverReason {
    Startup,
    Reload,
}

/// `resources_discover`: extensions may add skill and prompt-template paths.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResourcesDiscoverEvent {
    pub cwd: PathBuf,
    pub reason: DiscoverReason,
}

/// `session_directory`: extensions may choose where session files live.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionDirectoryEvent {
    pub cwd: PathBuf,
}
