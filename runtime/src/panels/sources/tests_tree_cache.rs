//! Tests for the tree cache's re-walk policy on real directories.

use std::path::Path;
use std::time::{Duration, SystemTime};

use super::{TREE_MAX_AGE_MS, TreeCache};

/// Moves the modification time of `path` (a file or directory) an hour back, out of the racy window.
fn age(path: &Path) {
    let an_hour_ago = SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::open(path).unwrap().set_modified(an_hour_ago).unwrap();
}

/// A project whose directories all changed long ago: `.gitignore` hiding `secret.txt`, and `src/main.rs`.
fn settled_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir(root.join("src")).unwrap();
    std::fs::write(root.join("src/main.rs"), "").unwrap();
    std::fs::write(root.join("secret.txt"), "").unwrap();
    std::fs::write(root.join(".gitignore"), "secret.txt\n").unwrap();
    age(&root.join("src"));
    age(root);
    dir
}

#[test]
fn the_first_get_walks_and_reports_a_change_then_nothing_changes() {
    let dir = settled_project();
    let mut cache = TreeCache::new(dir.path(), 100);
    assert_eq!(cache.root(), dir.path());
    assert_eq!(cache.get(1_000), ("src/\n  main.rs", true));
    assert_eq!(cache.get(2_000), ("src/\n  main.rs", false));
}

#[test]
fn a_fresh_listing_is_reused_until_invalidated() {
    let dir = settled_project();
    let root = dir.path();
    let mut cache = TreeCache::new(root, 100);
    assert_eq!(cache.get(1_000).0, "src/\n  main.rs");

    // Rewriting an existing file changes no directory's time: the cached listing is still returned.
    std::fs::write(root.join(".gitignore"), "nothing\n").unwrap();
    assert_eq!(cache.get(2_000), ("src/\n  main.rs", false));

    cache.invalidate();
    assert_eq!(cache.get(3_000), ("src/\n  main.rs\nsecret.txt", true));
}

#[test]
fn an_old_listing_is_walked_again() {
    let dir = settled_project();
    let root = dir.path();
    let mut cache = TreeCache::new(root, 100);
    assert_eq!(cache.get(1_000).0, "src/\n  main.rs");
    std::fs::write(root.join(".gitignore"), "nothing\n").unwrap();

    assert!(!cache.get(1_000 + TREE_MAX_AGE_MS - 1).1);
    assert_eq!(cache.get(1_000 + TREE_MAX_AGE_MS), ("src/\n  main.rs\nsecret.txt", true));
    // A clock that went back also makes the listing untrustworthy.
    std::fs::write(root.join(".gitignore"), "secret.txt\n").unwrap();
    assert_eq!(cache.get(0), ("src/\n  main.rs", true));
}

#[test]
fn a_new_entry_in_a_shown_directory_is_noticed_without_waiting() {
    let dir = settled_project();
    let root = dir.path();
    let mut cache = TreeCache::new(root, 100);
    assert_eq!(cache.get(1_000).0, "src/\n  main.rs");

    std::fs::write(root.join("src/lib.rs"), "").unwrap();
    assert_eq!(cache.get(2_000), ("src/\n  lib.rs\n  main.rs", true));
}

#[test]
fn a_directory_changed_just_before_the_walk_is_checked_again() {
    let dir = settled_project();
    let root = dir.path();
    // `src` changes now: within the racy window of the first walk.
    std::fs::write(root.join("src/lib.rs"), "").unwrap();
    let mut cache = TreeCache::new(root, 100);
    assert_eq!(cache.get(1_000).0, "src/\n  lib.rs\n  main.rs");

    // A change in the same clock tick would leave the time as it was; pretend that happened.
    let src_time = std::fs::metadata(root.join("src")).unwrap().modified().unwrap();
    std::fs::write(root.join("src/extra.rs"), "").unwrap();
    std::fs::File::open(root.join("src")).unwrap().set_modified(src_time).unwrap();

    assert_eq!(cache.get(2_000), ("src/\n  extra.rs\n  lib.rs\n  main.rs", true));
}
