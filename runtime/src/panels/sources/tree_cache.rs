//! The Tree panel's cache: the last listing of the working directory, walked again only when something says
//! it may be out of date.
//!
//! Policy: [`TreeCache::get`] walks the directory again when
//! - nothing was walked yet, or [`TreeCache::invalidate`] was called (after a tool wrote files, say);
//! - the listing is [`TREE_MAX_AGE_MS`] old or more (this catches what the check below cannot see: edits to
//!   ignore files, changes in directories deeper than the listing shows);
//! - one of the directories the listing shows (or the root) has a new modification time: adding, removing or
//!   renaming an entry in a directory changes its time, and checking it is one `stat` per shown directory;
//! - a shown directory changed less than [`RACY_WINDOW`] before the last walk began, so a second change in the
//!   same clock tick could go unseen (git's "racily clean" problem): such a listing is not trusted and the
//!   next call walks again.
//!
//! Everything here does blocking file-system work; call it from a blocking-friendly place.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::tree::render_tree_watched;

/// The oldest listing [`TreeCache::get`] returns without walking again, in milliseconds.
pub const TREE_MAX_AGE_MS: i64 = 30_000;

/// A directory whose modification time is this close to (or after) the start of a walk may change again
/// without its time changing, so the walk is not trusted.
pub const RACY_WINDOW: Duration = Duration::from_secs(1);

/// The directory times a listing was drawn from.
#[derive(Debug)]
struct TreeSnapshot {
    walked_at_ms: i64,
    dir_times: Vec<(PathBuf, Option<SystemTime>)>,
    /// A directory changed too close to the walk for its time to prove anything.
    racy: bool,
}

impl TreeSnapshot {
    fn is_current(&self, now_ms: i64) -> bool {
        let age = now_ms.saturating_sub(self.walked_at_ms);
        !self.racy
            && (0..TREE_MAX_AGE_MS).contains(&age)
            && self.dir_times.iter().all(|(dir, time)| modified(dir) == *time)
    }
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|meta| meta.modified()).ok()
}

/// The rendered tree of one directory, re-walked only as the module's policy says.
#[derive(Debug)]
pub struct TreeCache {
    root: PathBuf,
    max_entries: usize,
    text: String,
    /// `None`: walk on the next [`TreeCache::get`].
    snapshot: Option<TreeSnapshot>,
    /// The text changed since the last [`TreeCache::get`] returned it.
    unseen_change: bool,
}

impl TreeCache {
    /// A cache of [`super::render_tree`]`(root, max_entries)`; nothing is walked until the first `get`.
    pub fn new(root: impl Into<PathBuf>, max_entries: usize) -> Self {
        Self { root: root.into(), max_entries, text: String::new(), snapshot: None, unseen_change: true }
    }

    /// The directory listed.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Makes the next [`TreeCache::get`] walk the directory again.
    pub fn invalidate(&mut self) {
        self.snapshot = None;
    }

    /// The listing, walked again first if the policy asks for it (`now_ms`: milliseconds since the epoch, the
    /// caller's clock), and whether its text differs from what the previous call returned (always true on the
    /// first call).
    pub fn get(&mut self, now_ms: i64) -> (&str, bool) {
        if !self.snapshot.as_ref().is_some_and(|snapshot| snapshot.is_current(now_ms)) {
            self.walk(now_ms);
        }
        (&self.text, std::mem::take(&mut self.unseen_change))
    }

    fn walk(&mut self, now_ms: i64) {
        let started = SystemTime::now();
        let rendered = render_tree_watched(&self.root, self.max_entries);
        let trusted_before = started.checked_sub(RACY_WINDOW);
        let dir_times: Vec<(PathBuf, Option<SystemTime>)> = rendered
            .watched_dirs
            .into_iter()
            .map(|dir| {
                let time = modified(&dir);
                (dir, time)
            })
            .collect();
        let racy = trusted_before
            .is_some_and(|limit| dir_times.iter().any(|(_, time)| time.is_some_and(|time| time >= limit)));
        if rendered.text != self.text {
            self.text = rendered.text;
            self.unseen_change = true;
        }
        self.snapshot = Some(TreeSnapshot { walked_at_ms: now_ms, dir_times, racy });
    }
}

#[cfg(test)]
#[path = "tests_tree_cache.rs"]
mod tests;
