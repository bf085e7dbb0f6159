//! Tests for the tree listing on real directories: order, indentation, ignore rules, the entry limit.

use std::path::Path;

use super::{render_tree, render_tree_scanning, render_tree_watched};

fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, text).unwrap();
}

#[test]
fn lists_directories_first_then_files_by_name_indented_per_level() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "b.txt", "b");
    write(root, "a.txt", "a");
    write(root, "src/main.rs", "fn main() {}");
    write(root, "src/lib.rs", "");
    write(root, "src/panels/mod.rs", "");
    std::fs::create_dir(root.join("empty")).unwrap();

    let expected = "empty/\nsrc/\n  panels/\n    mod.rs\n  lib.rs\n  main.rs\na.txt\nb.txt";
    assert_eq!(render_tree(root, 100), expected);
}

#[test]
fn respects_gitignore_and_ignore_files_and_skips_hidden_entries_outside_a_repository() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, ".gitignore", "target/\n*.log\n");
    write(root, ".ignore", "secret.txt\n");
    write(root, ".github/workflows/ci.yml", "");
    write(root, "target/debug/app", "");
    write(root, "build.log", "");
    write(root, "secret.txt", "");
    write(root, "sub/.gitignore", "local.txt\n");
    write(root, "sub/local.txt", "");
    write(root, "sub/kept.txt", "");
    write(root, "README.md", "");

    assert_eq!(render_tree(root, 100), "sub/\n  kept.txt\nREADME.md");
}

#[test]
fn respects_git_exclude_inside_a_repository() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join(".git/info")).unwrap();
    write(root, ".git/info/exclude", "scratch/\n");
    write(root, "scratch/notes.md", "");
    write(root, "kept.md", "");

    assert_eq!(render_tree(root, 100), "kept.md");
}

#[test]
fn over_the_limit_shallow_entries_come_first_and_the_rest_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for name in ["a", "b"] {
        for file in 0..3 {
            write(root, &format!("{name}/deep/{file}.txt"), "");
        }
    }
    write(root, "top.txt", "");
    // Entries: a/ a/deep/ 3 files, b/ b/deep/ 3 files, top.txt = 11.

    // All 3 of depth 1, then the 2 of depth 2, then the first depth-3 entry in tree order.
    let expected = "a/\n  deep/\n    0.txt\nb/\n  deep/\ntop.txt\n… 5 more entries not shown";
    assert_eq!(render_tree(root, 6), expected);

    assert_eq!(render_tree(root, 0), "… 11 more entries not shown");
    assert!(render_tree(root, 10).ends_with("top.txt\n… 1 more entry not shown"), "{}", render_tree(root, 10));
    assert!(!render_tree(root, 11).contains("more entr"));
}

#[test]
fn an_empty_or_missing_root_says_so() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(render_tree(dir.path(), 10), "(empty directory)");

    let missing = dir.path().join("missing");
    let text = render_tree(&missing, 10);
    assert!(text.starts_with("(cannot list "), "{text}");
    assert!(text.contains("missing"), "{text}");
}

#[test]
fn the_watched_directories_are_the_root_and_every_directory_shown() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "a/inner/x.txt", "");
    write(root, "b/y.txt", "");

    let rendered = render_tree_watched(root, 100);
    let mut watched = rendered.watched_dirs.clone();
    watched.sort();
    let mut expected = vec![root.to_path_buf(), root.join("a"), root.join("a/inner"), root.join("b")];
    expected.sort();
    assert_eq!(watched, expected);

    // A directory cut by the limit is not watched.
    let limited = render_tree_watched(root, 2);
    assert!(!limited.watched_dirs.contains(&root.join("a/inner")), "{:?}", limited.watched_dirs);
}

#[test]
fn a_tree_over_the_scan_limit_is_listed_from_the_entries_seen() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for name in ["a.txt", "b.txt", "c.txt", "d.txt", "e.txt"] {
        write(root, name, "");
    }
    let rendered = render_tree_scanning(root, 2, 3);
    assert_eq!(rendered.text, "a.txt\nb.txt\n… more entries not shown (stopped counting after 3)");
}
