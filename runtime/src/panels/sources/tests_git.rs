//! Tests for the git status panel against real repositories made with the installed git.

use std::ffi::OsStr;
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::{GIT_STATUS_MAX_LINES, git_status, git_status_with};
use crate::tools::ToolEnvironment;

const GENEROUS: Duration = Duration::from_secs(30);

/// Runs git in `dir` with a fixed identity and no signing; panics (loudly, naming the command) when git is
/// missing or fails.
fn git(dir: &Path, args: &[&str]) {
    let output = Command::new("git")
        .args(["-c", "user.name=Panel Test", "-c", "user.email=panel@test.invalid", "-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|err| panic!("git must be installed to run these tests: {err}"));
    assert!(output.status.success(), "git {args:?} failed: {}", String::from_utf8_lossy(&output.stderr));
}

fn new_repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "--quiet", "--initial-branch=main"]);
    dir
}

#[tokio::test]
async fn outside_a_work_tree_there_is_no_panel() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(git_status(&ToolEnvironment::new(dir.path()), GENEROUS).await, None);
}

#[tokio::test]
async fn a_missing_git_program_gives_no_panel() {
    let dir = new_repo();
    let env = ToolEnvironment::new(dir.path());
    assert_eq!(git_status_with(OsStr::new("/nonexistent/git"), &env, GENEROUS).await, None);
}

#[tokio::test]
async fn a_new_repository_shows_its_branch_and_files_without_commits() {
    let dir = new_repo();
    std::fs::write(dir.path().join("new.txt"), "hello\n").unwrap();

    let text = git_status(&ToolEnvironment::new(dir.path()), GENEROUS).await.unwrap();
    assert_eq!(text, "## No commits yet on main\n?? new.txt");
}

#[tokio::test]
async fn changes_and_recent_commits_are_listed() {
    let dir = new_repo();
    let root = dir.path();
    for n in 1..=6 {
        std::fs::write(root.join("file.txt"), format!("version {n}\n")).unwrap();
        git(root, &["add", "file.txt"]);
        git(root, &["commit", "--quiet", "-m", &format!("commit number {n}")]);
    }
    std::fs::write(root.join("file.txt"), "changed\n").unwrap();
    std::fs::write(root.join("untracked.txt"), "").unwrap();

    // From a subdirectory too: the work tree is found upwards, paths are relative to the subdirectory.
    std::fs::create_dir(root.join("sub")).unwrap();
    let text = git_status(&ToolEnvironment::new(root.join("sub")), GENEROUS).await.unwrap();
    let (status, log) = text.split_once("\n\nRecent commits:\n").unwrap();
    assert_eq!(status, "## main\n M ../file.txt\n?? ../untracked.txt");
    let subjects: Vec<&str> = log.lines().map(|line| line.split_once(' ').unwrap().1).collect();
    assert_eq!(
        subjects,
        ["commit number 6", "commit number 5", "commit number 4", "commit number 3", "commit number 2"]
    );
}

#[tokio::test]
async fn a_huge_status_is_cut_with_a_note() {
    let dir = new_repo();
    for n in 0..(GIT_STATUS_MAX_LINES + 50) {
        std::fs::write(dir.path().join(format!("f{n:04}.txt")), "").unwrap();
    }
    let text = git_status(&ToolEnvironment::new(dir.path()), GENEROUS).await.unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), GIT_STATUS_MAX_LINES + 1);
    // The branch line, 199 files, then the note for the other 51.
    assert_eq!(lines.last(), Some(&"[... 51 more lines not shown]"));
}

#[tokio::test]
async fn a_status_does_not_take_the_index_lock() {
    let dir = new_repo();
    std::fs::write(dir.path().join("a.txt"), "").unwrap();
    git(dir.path(), &["add", "a.txt"]);
    git(dir.path(), &["commit", "--quiet", "-m", "first"]);
    // Rewrite the file so a status allowed to write would refresh the index (git writes a new index file and
    // renames it into place, so the inode tells).
    std::fs::write(dir.path().join("a.txt"), "x").unwrap();
    std::fs::write(dir.path().join("a.txt"), "").unwrap();
    let index = dir.path().join(".git/index");
    let before = std::fs::metadata(&index).unwrap().ino();

    git_status(&ToolEnvironment::new(dir.path()), GENEROUS).await.unwrap();
    assert_eq!(std::fs::metadata(&index).unwrap().ino(), before, "the index was rewritten");
}
