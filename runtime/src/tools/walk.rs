//! The ignore-aware directory walk shared by `grep` and `find`, configured the way pi's `rg` and `fd`
//! invocations walk: hidden files included, `.gitignore`/`.ignore` (plus `.rgignore` or `.fdignore`) respected,
//! symlinks not followed, the tree visited by a parallel walker that stops when asked.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use ignore::overrides::OverrideBuilder;
use ignore::{WalkBuilder, WalkParallel, WalkState};
use tokio_util::sync::CancellationToken;

use super::{ToolError, aborted_error};

/// Which tool's walking rules to copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WalkFlavor {
    /// `rg --hidden`: `.gitignore` only counts inside a git repository; `.rgignore` is read.
    Ripgrep,
    /// `fd --hidden --no-require-git`: `.gitignore` counts everywhere; `.fdignore` and fd's global ignore
    /// file are read.
    Fd,
}

/// Builds the parallel walker over `root`. `glob` is an rg `--glob` filter, matched (like rg does) relative to
/// `cwd`, the directory rg would have been started in.
pub(crate) fn build_walker(
    root: &Path,
    flavor: WalkFlavor,
    glob: Option<&str>,
    cwd: &Path,
) -> Result<WalkParallel, ToolError> {
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(false)
        .ignore(true)
        .parents(true)
        .git_ignore(true)
        .git_global(true)
        .git_exclude(true)
        .follow_links(false)
        .current_dir(cwd);
    match flavor {
        WalkFlavor::Ripgrep => {
            builder.require_git(true).add_custom_ignore_filename(".rgignore");
        }
        WalkFlavor::Fd => {
            builder.require_git(false).add_custom_ignore_filename(".fdignore");
            if let Some(global) = fd_global_ignore_file().filter(|path| path.is_file()) {
                // Like fd, a partly malformed global ignore file still applies its valid lines.
                let _partial = builder.add_ignore(global);
            }
        }
    }
    if let Some(glob) = glob {
        let mut overrides = OverrideBuilder::new(cwd);
        overrides.add(glob).map_err(|err| ToolError::new(err.to_string()))?;
        builder.overrides(overrides.build().map_err(|err| ToolError::new(err.to_string()))?);
    }
    Ok(builder.build_parallel())
}

/// fd's user-wide ignore file, `$XDG_CONFIG_HOME/fd/ignore` (default `~/.config/fd/ignore`).
fn fd_global_ignore_file() -> Option<PathBuf> {
    let config =
        std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from).filter(|dir| dir.is_absolute()).or_else(|| {
            std::env::var_os("HOME").filter(|home| !home.is_empty()).map(|home| PathBuf::from(home).join(".config"))
        })?;
    Some(config.join("fd").join("ignore"))
}

/// A flag every walker thread polls: set when the search has enough results or the call was cancelled.
#[derive(Debug, Clone, Default)]
pub(crate) struct StopFlag(Arc<AtomicBool>);

impl StopFlag {
    pub(crate) fn stop(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub(crate) fn is_stopped(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// The walker's answer for the next entry: quit once stopped.
    pub(crate) fn walk_state(&self) -> WalkState {
        if self.is_stopped() { WalkState::Quit } else { WalkState::Continue }
    }
}

/// Runs a blocking search on tokio's blocking pool. Cancelling `cancel` stops the search through its
/// [`StopFlag`] and fails the call at once with pi's abort error, without waiting for the walker threads.
pub(crate) async fn run_cancellable<T, F>(cancel: &CancellationToken, search: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce(StopFlag) -> Result<T, ToolError> + Send + 'static,
{
    if cancel.is_cancelled() {
        return Err(aborted_error());
    }
    let stop = StopFlag::default();
    let task = tokio::task::spawn_blocking({
        let stop = stop.clone();
        move || search(stop)
    });
    tokio::select! {
        biased;
        _ = cancel.cancelled() => {
            stop.stop();
            Err(aborted_error())
        }
        joined = task => joined.map_err(|err| ToolError::new(format!("Search failed: {err}")))?,
    }
}
