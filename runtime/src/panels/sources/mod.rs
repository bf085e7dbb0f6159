//! Panel sources that touch the outside world: the directory tree, open files, command output, git status
//! and background consoles (seed 003's "Panel Content Sources"). Each one produces a panel's text and says
//! when it changed; the panels extension decides when to refresh them and how to show them.
//!
//! Every process started here runs in a process group of its own, registered with
//! [`crate::tools::process_groups`] while it runs, so nothing outlives the agent.

mod command;
mod console;
mod console_output;
mod files;
mod git;
mod tree;
mod tree_cache;

#[cfg(test)]
mod test_support;

pub use command::{CommandPanel, CommandPanelOutput, run_panel_command};
pub use console::{
    CONSOLE_MAX_BYTES, CONSOLE_MAX_LINES, CONSOLE_STOP_GRACE, ConsoleError, ConsoleProcess, ConsoleStatus,
};
pub use files::{DELETED_FILE_TEXT, FilePanel, FilePanelError, FileStamp};
pub use git::{GIT_LOG_COMMITS, GIT_STATUS_MAX_BYTES, GIT_STATUS_MAX_LINES, git_status};
pub use tree::render_tree;
pub use tree_cache::{RACY_WINDOW, TREE_MAX_AGE_MS, TreeCache};
