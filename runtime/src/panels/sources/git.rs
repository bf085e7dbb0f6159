//! The Git Status panel: `git status --short --branch` of the working directory and its last commits.
//!
//! git runs directly (no shell), with `GIT_OPTIONAL_LOCKS=0` so a status never takes the index lock a
//! concurrent `git commit` of the user needs, with no terminal prompts and no colors, in a process group of
//! its own that is registered while it runs and killed when the time limit passes.

use std::ffi::OsStr;
use std::process::Stdio;
use std::time::Duration;

use crate::tools::bash::GroupKiller;
use crate::tools::truncate::{TruncationOptions, truncate_head};
use crate::tools::{ToolEnvironment, js_number};

/// Most lines of `git status` shown (a tree full of untracked files would otherwise fill the context).
pub const GIT_STATUS_MAX_LINES: usize = 200;
/// Most bytes of `git status` shown.
pub const GIT_STATUS_MAX_BYTES: usize = 16 * 1024;
/// How many recent commits are listed.
pub const GIT_LOG_COMMITS: usize = 5;

/// The panel text for the working directory of `env`: the branch line and changed files, then the recent
/// commits (left out in a repository without commits). `None` when the directory is not inside a git work
/// tree or git cannot be run. When git takes longer than `timeout`, it is stopped and the text says so.
pub async fn git_status(env: &ToolEnvironment, timeout: Duration) -> Option<String> {
    git_status_with(OsStr::new("git"), env, timeout).await
}

/// [`git_status`] with the git program to run.
pub(crate) async fn git_status_with(program: &OsStr, env: &ToolEnvironment, timeout: Duration) -> Option<String> {
    let status = match run_git(program, env, &["status", "--short", "--branch"], timeout).await {
        GitRun::Ran(output) if output.status.success() => output,
        GitRun::Ran(_) | GitRun::NotRun => return None,
        GitRun::TimedOut => return Some(format!("[git status stopped after {} s]", js_number(timeout.as_secs_f64()))),
    };
    let options = TruncationOptions { max_lines: GIT_STATUS_MAX_LINES, max_bytes: GIT_STATUS_MAX_BYTES };
    let text = String::from_utf8_lossy(&status.stdout);
    let kept = truncate_head(text.trim_end(), options);
    let mut panel = kept.content;
    if kept.truncated {
        let more = kept.total_lines - kept.output_lines;
        panel.push_str(&format!("\n[... {more} more lines not shown]"));
    }
    let count = format!("-{GIT_LOG_COMMITS}");
    if let GitRun::Ran(log) = run_git(program, env, &["log", "--oneline", "--no-decorate", &count], timeout).await
        && log.status.success()
    {
        let commits = String::from_utf8_lossy(&log.stdout);
        if !commits.trim().is_empty() {
            panel.push_str("\n\nRecent commits:\n");
            panel.push_str(commits.trim_end());
        }
    }
    Some(panel)
}

/// How a git run went.
enum GitRun {
    Ran(std::process::Output),
    /// git could not be started (not installed, the directory is gone).
    NotRun,
    TimedOut,
}

/// Runs `program args…` in the environment's working directory, collecting its output.
async fn run_git(program: &OsStr, env: &ToolEnvironment, args: &[&str], timeout: Duration) -> GitRun {
    let mut command = tokio::process::Command::new(program);
    command
        .args(["-c", "color.ui=false", "-c", "core.pager=cat"])
        .args(args)
        .current_dir(&env.cwd)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let Ok(child) = command.spawn() else { return GitRun::NotRun };
    let mut killer = GroupKiller::for_child(&child);
    match tokio::time::timeout(timeout, child.wait_with_output()).await {
        Ok(Ok(output)) => {
            // git has exited: whatever it left running (an fsmonitor daemon) is not ours to kill.
            killer.disarm();
            GitRun::Ran(output)
        }
        Ok(Err(_)) => GitRun::NotRun,
        // Dropping the killer kills the group and forgets it.
        Err(_) => GitRun::TimedOut,
    }
}

#[cfg(test)]
#[path = "tests_git.rs"]
mod tests;
