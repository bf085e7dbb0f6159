//! The Tree panel's listing (seed 003's P5): the working directory walked with the usual ignore rules and
//! drawn as an indented outline, directories before files.
//!
//! The walk uses `ignore`'s standard filters: hidden entries are skipped, and `.gitignore` (inside a git
//! repository or not), `.ignore`, `.git/info/exclude` and the global git excludes are respected, including
//! those of parent directories. Symbolic links are listed but not followed.
//!
//! When there are more entries than fit, the shallow ones win: every entry of depth 1 is shown before any of
//! depth 2, and so on (within the depth where the cut falls, earlier entries in tree order come first), so a
//! large project still shows its top-level layout. The kept entries are then drawn in tree order, and a last
//! line says how many were left out.

use std::cmp::Ordering;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use ignore::WalkBuilder;

/// Most entries one walk looks at; a tree bigger than this is listed from the entries seen so far.
const SCAN_LIMIT: usize = 100_000;

/// One file or directory under the root.
#[derive(Debug)]
struct TreeEntry {
    /// The path's components below the root.
    components: Vec<OsString>,
    is_dir: bool,
}

impl TreeEntry {
    fn depth(&self) -> usize {
        self.components.len()
    }

    /// Whether the `index`th component names a directory (every component but the last does).
    fn is_dir_at(&self, index: usize) -> bool {
        index + 1 < self.components.len() || self.is_dir
    }
}

/// Pre-order with directories before files and names in byte order at each level.
fn tree_order(a: &TreeEntry, b: &TreeEntry) -> Ordering {
    for (index, (name_a, name_b)) in a.components.iter().zip(&b.components).enumerate() {
        if name_a != name_b {
            // Directories first (`true` sorts before `false` once reversed).
            return b.is_dir_at(index).cmp(&a.is_dir_at(index)).then_with(|| name_a.cmp(name_b));
        }
    }
    // One is an ancestor of the other (or they are equal): the parent comes first.
    a.depth().cmp(&b.depth())
}

/// A rendered listing plus what [`super::TreeCache`] needs to notice changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RenderedTree {
    pub(crate) text: String,
    /// The root and every directory shown, absolute: adding, removing or renaming an entry in one of them
    /// changes its modification time.
    pub(crate) watched_dirs: Vec<PathBuf>,
}

/// Lists `root` as an indented outline of at most `max_entries` entries: `name/` for directories, `name` for
/// anything else, two spaces of indent per level below the root (the root itself is not a line). Past the
/// limit, a last line `… N more entries not shown` counts what was left out (`… more entries not shown
/// (stopped counting after N)` for a tree too big to walk whole). An empty directory gives
/// `(empty directory)`; a root that cannot be listed gives a line saying so.
pub fn render_tree(root: &Path, max_entries: usize) -> String {
    render_tree_watched(root, max_entries).text
}

/// [`render_tree`] that also reports which directories the listing depends on.
pub(crate) fn render_tree_watched(root: &Path, max_entries: usize) -> RenderedTree {
    render_tree_scanning(root, max_entries, SCAN_LIMIT)
}

/// [`render_tree_watched`] looking at no more than `scan_limit` entries.
pub(crate) fn render_tree_scanning(root: &Path, max_entries: usize, scan_limit: usize) -> RenderedTree {
    let mut watched_dirs = vec![root.to_path_buf()];
    if let Err(err) = std::fs::read_dir(root) {
        return RenderedTree { text: format!("(cannot list {}: {err})", root.display()), watched_dirs };
    }
    let (mut entries, complete) = walk(root, scan_limit);
    entries.sort_by(tree_order);
    let shown = shallow_first_selection(&entries, max_entries);

    let mut text = String::new();
    for (entry, _) in entries.iter().zip(&shown).filter(|(_, shown)| **shown) {
        let depth = entry.depth();
        let name = entry.components.last().map(|name| name.to_string_lossy()).unwrap_or_default();
        text.push_str(&"  ".repeat(depth.saturating_sub(1)));
        text.push_str(&name);
        if entry.is_dir {
            text.push('/');
            watched_dirs.push(entry.components.iter().fold(root.to_path_buf(), |path, name| path.join(name)));
        }
        text.push('\n');
    }
    let hidden = entries.len() - shown.iter().filter(|shown| **shown).count();
    if !complete {
        text.push_str(&format!("… more entries not shown (stopped counting after {scan_limit})\n"));
    } else if hidden > 0 {
        let noun = if hidden == 1 { "entry" } else { "entries" };
        text.push_str(&format!("… {hidden} more {noun} not shown\n"));
    } else if entries.is_empty() {
        text.push_str("(empty directory)\n");
    }
    if text.ends_with('\n') {
        text.pop();
    }
    RenderedTree { text, watched_dirs }
}

/// Every entry below `root` the ignore rules let through (at most `scan_limit`), and whether that was all.
fn walk(root: &Path, scan_limit: usize) -> (Vec<TreeEntry>, bool) {
    let mut builder = WalkBuilder::new(root);
    builder
        .standard_filters(true)
        .require_git(false)
        .follow_links(false)
        // A fixed order, so that the entries seen before the scan limit are the same every time.
        .sort_by_file_name(|a, b| a.cmp(b));
    let mut entries = Vec::new();
    for entry in builder.build().flatten() {
        if entry.depth() == 0 {
            continue;
        }
        if entries.len() == scan_limit {
            return (entries, false);
        }
        let Ok(relative) = entry.path().strip_prefix(root) else { continue };
        let components = relative.components().map(|c| c.as_os_str().to_os_string()).collect();
        let is_dir = entry.file_type().is_some_and(|kind| kind.is_dir());
        entries.push(TreeEntry { components, is_dir });
    }
    (entries, true)
}

/// Which of `sorted` (in tree order) to show: shallow entries before deep ones, ties in tree order.
fn shallow_first_selection(sorted: &[TreeEntry], max_entries: usize) -> Vec<bool> {
    let mut shown = vec![true; sorted.len()];
    if sorted.len() <= max_entries {
        return shown;
    }
    let mut by_depth: Vec<usize> = (0..sorted.len()).collect();
    // A stable sort keeps tree order within each depth.
    by_depth.sort_by_key(|&index| sorted[index].depth());
    for &index in &by_depth[max_entries..] {
        shown[index] = false;
    }
    shown
}

#[cfg(test)]
#[path = "tests_tree.rs"]
mod tests;
