//! Sessions: pi's JSONL session files, the entry tree, and the context a session gives the agent.

mod context;
mod entries;
mod ids;
mod load;
mod lock;
mod manager;
mod migrate;
mod paths;
mod store;
#[cfg(test)]
mod tests_context;
#[cfg(test)]
mod tests_crash;
#[cfg(test)]
mod tests_load;
#[cfg(test)]
mod tests_store;
#[cfg(test)]
mod tests_tree;
mod tree;

pub use context::{
    BRANCH_SUMMARY_PREFIX, BRANCH_SUMMARY_SUFFIX, COMPACTION_SUMMARY_PREFIX, COMPACTION_SUMMARY_SUFFIX,
    DEFAULT_THINKING_LEVEL, MODEL_FALLBACK_ENTRY, SessionContext, bash_execution_to_text, build_session_context,
    coding_agent_convert_to_llm, convert_to_llm, entry_message, iso_to_ms,
};
pub use entries::{CURRENT_SESSION_VERSION, EntryKind, SessionEntry, SessionHeader, SessionTag};
pub use ids::{iso_timestamp, iso_timestamp_now, new_entry_id, new_session_id};
pub use load::{LoadedSession, SessionError, load_session_file, parse_session_text, session_text};
pub use lock::LockedSessionFile;
pub use manager::{PlannedIds, SessionManager, sessions_dir};
pub use migrate::{header_version, migrate_to_current};
pub use paths::{
    find_most_recent_session, has_session_header, list_session_files, read_session_header, session_dir_for_cwd,
    session_file_name,
};
pub use store::{
    NewSessionOptions, SessionStore, create_session_file, open_session_file_for_append, write_forked_session,
};
pub use tree::{EntryIdGenerator, SessionTree, SessionTreeError, TimestampSource, TreeNode, holds_assistant_message};
