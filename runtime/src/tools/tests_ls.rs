//! Tests for the ls tool: pi's ordering, directory marks (symlinks followed), limits and errors.

use std::path::Path;

use serde_json::{Value, json};
use tempfile::TempDir;

use super::{ToolContext, ToolEnvironment, ToolError, builtin_tool};
use crate::protocol::AgentToolResult;

async fn ls_in(cwd: &Path, args: Value) -> Result<AgentToolResult, ToolError> {
    builtin_tool("ls", &ToolEnvironment::new(cwd)).unwrap().execute(args, ToolContext::new("call")).await
}

async fn ls_text(cwd: &Path, args: Value) -> String {
    ls_in(cwd, args).await.unwrap().content[0].as_text().unwrap().to_owned()
}

#[tokio::test]
async fn sorts_case_insensitively_with_ties_in_byte_order() {
    let dir = TempDir::new().unwrap();
    for name in ["b", "B", "a", "A.txt", "a.txt", "Ärger", "zoo", "10", "9", "-dash", "_under"] {
        std::fs::write(dir.path().join(name), "").unwrap();
    }
    std::fs::create_dir(dir.path().join("Dir")).unwrap();
    let text = ls_text(dir.path(), json!({})).await;
    assert_eq!(text, "_under\n-dash\n10\n9\na\nA.txt\na.txt\nÄrger\nB\nb\nDir/\nzoo");
}

#[tokio::test]
async fn symlinks_are_followed_and_broken_ones_left_out() {
    let dir = TempDir::new().unwrap();
    std::fs::create_dir(dir.path().join("real")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("real"), dir.path().join("link")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("missing"), dir.path().join("broken")).unwrap();
    assert_eq!(ls_text(dir.path(), json!({})).await, "link/\nreal/");
    assert_eq!(ls_text(dir.path(), json!({"path": "link"})).await, "(empty directory)");
}

#[tokio::test]
async fn limits_match_pi_including_odd_values() {
    let dir = TempDir::new().unwrap();
    for name in ["a", "b", "c", "d"] {
        std::fs::write(dir.path().join(name), "").unwrap();
    }
    let result = ls_in(dir.path(), json!({"limit": 2})).await.unwrap();
    assert_eq!(result.content[0].as_text().unwrap(), "a\nb\n\n[2 entries limit reached. Use limit=4 for more]");
    assert_eq!(result.details, Some(json!({"entryLimitReached": 2})));
    assert_eq!(ls_text(dir.path(), json!({"limit": 4})).await, "a\nb\nc\nd");
    assert_eq!(
        ls_text(dir.path(), json!({"limit": 1.5})).await,
        "a\nb\n\n[1.5 entries limit reached. Use limit=3 for more]"
    );
    // pi stops before the first entry, so a limit of 0 reads as an empty directory.
    assert_eq!(ls_text(dir.path(), json!({"limit": 0})).await, "(empty directory)");
}

#[tokio::test]
async fn missing_paths_and_files_are_errors() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("f.txt"), "").unwrap();
    let err = ls_in(dir.path(), json!({"path": "f.txt"})).await.unwrap_err();
    assert!(err.message.contains("not a directory"), "{}", err.message);
    let err = ls_in(dir.path(), json!({"path": "nope"})).await.unwrap_err();
    assert!(err.message.contains("no such file or directory"), "{}", err.message);
    let err = ls_in(dir.path(), json!({"limit": "many"})).await.unwrap_err();
    assert_eq!(err.message, "Invalid arguments: \"limit\" must be a number");
}

#[tokio::test]
async fn long_listings_are_cut_at_50kb() {
    let dir = TempDir::new().unwrap();
    for i in 0..600 {
        std::fs::write(dir.path().join(format!("{i:04}-{}", "n".repeat(120))), "").unwrap();
    }
    let result = ls_in(dir.path(), json!({"limit": 1000})).await.unwrap();
    let text = result.content[0].as_text().unwrap();
    // Each row is 125 bytes plus a newline: 406 rows fit in 51,200 bytes.
    assert!(
        text.ends_with(&format!("0405-{}\n\n[50.0KB limit reached]", "n".repeat(120))),
        "{}",
        &text[text.len() - 80..]
    );
    assert_eq!(result.details.unwrap()["truncation"]["outputLines"], 406);
}
