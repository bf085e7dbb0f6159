//! Tests for the grep tool on real trees: ripgrep's ignore rules, binary files, limits across files, output
//! truncation, details, argument handling and cancellation.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use tempfile::TempDir;

use super::{ToolContext, ToolEnvironment, ToolError, builtin_tool};
use crate::protocol::AgentToolResult;

async fn grep_in(cwd: &Path, args: Value) -> Result<AgentToolResult, ToolError> {
    builtin_tool("grep", &ToolEnvironment::new(cwd)).unwrap().execute(args, ToolContext::new("call")).await
}

async fn grep_text(cwd: &Path, args: Value) -> String {
    grep_in(cwd, args).await.unwrap().content[0].as_text().unwrap().to_owned()
}

fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[tokio::test]
async fn gitignore_only_counts_inside_a_git_repository() {
    let dir = TempDir::new().unwrap();
    write(dir.path(), ".gitignore", "skipped.txt\n");
    write(dir.path(), "skipped.txt", "needle\n");
    write(dir.path(), "kept.txt", "needle\n");
    // Like rg: outside a repository .gitignore is not read.
    assert_eq!(grep_text(dir.path(), json!({"pattern": "needle"})).await, "kept.txt:1: needle\nskipped.txt:1: needle");
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    assert_eq!(grep_text(dir.path(), json!({"pattern": "needle"})).await, "kept.txt:1: needle");
}

#[tokio::test]
async fn ignore_and_rgignore_files_apply_everywhere() {
    let dir = TempDir::new().unwrap();
    write(dir.path(), ".ignore", "a.txt\n");
    write(dir.path(), "sub/.rgignore", "b.txt\n");
    for name in ["a.txt", "sub/b.txt", "sub/c.txt"] {
        write(dir.path(), name, "needle\n");
    }
    assert_eq!(grep_text(dir.path(), json!({"pattern": "needle"})).await, "sub/c.txt:1: needle");
}

#[tokio::test]
async fn hidden_files_and_the_git_directory_are_searched_like_rg_hidden() {
    let dir = TempDir::new().unwrap();
    write(dir.path(), ".git/description", "needle in git\n");
    write(dir.path(), ".config/app.toml", "needle = 1\n");
    let out = grep_text(dir.path(), json!({"pattern": "needle"})).await;
    assert_eq!(out, ".config/app.toml:1: needle = 1\n.git/description:1: needle in git");
}

#[tokio::test]
async fn binary_files_are_skipped_when_walked_but_searched_when_named() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("blob.bin"), b"\x00\x01binary\nneedle\n").unwrap();
    write(dir.path(), "text.txt", "needle\n");
    assert_eq!(grep_text(dir.path(), json!({"pattern": "needle"})).await, "text.txt:1: needle");
    assert_eq!(grep_text(dir.path(), json!({"pattern": "needle", "path": "blob.bin"})).await, "blob.bin:2: needle");
}

#[tokio::test]
async fn limit_counts_matches_across_files() {
    let dir = TempDir::new().unwrap();
    for i in 0..30 {
        write(dir.path(), &format!("f{i:02}.txt"), "needle a\nneedle b\n");
    }
    let result = grep_in(dir.path(), json!({"pattern": "needle", "limit": 7})).await.unwrap();
    let text = result.content[0].as_text().unwrap();
    let (rows, notice) = text.split_once("\n\n").unwrap();
    assert_eq!(rows.lines().count(), 7);
    assert!(rows.lines().all(|row| row.starts_with('f') && row.contains(": needle ")), "{rows}");
    assert_eq!(notice, "[7 matches limit reached. Use limit=14 for more, or refine pattern]");
    assert_eq!(result.details, Some(json!({"matchLimitReached": 7})));
    // Exactly as many matches as the limit still reports the limit, as pi does.
    let text = grep_text(dir.path(), json!({"pattern": "needle a", "path": "f00.txt", "limit": 1})).await;
    assert_eq!(text, "f00.txt:1: needle a\n\n[1 matches limit reached. Use limit=2 for more, or refine pattern]");
}

#[tokio::test]
async fn fractional_and_tiny_limits_behave_like_pi() {
    let dir = TempDir::new().unwrap();
    write(dir.path(), "n.txt", "x1\nx2\nx3\nx4\n");
    let text = grep_text(dir.path(), json!({"pattern": "x", "path": "n.txt", "limit": 2.5})).await;
    assert_eq!(
        text,
        "n.txt:1: x1\nn.txt:2: x2\nn.txt:3: x3\n\n[2.5 matches limit reached. Use limit=5 for more, or refine pattern]"
    );
    // Limits below 1 become 1.
    let text = grep_text(dir.path(), json!({"pattern": "x", "path": "n.txt", "limit": 0})).await;
    assert_eq!(text, "n.txt:1: x1\n\n[1 matches limit reached. Use limit=2 for more, or refine pattern]");
}

#[tokio::test]
async fn output_over_50kb_is_cut_with_all_notices_in_order() {
    let dir = TempDir::new().unwrap();
    let line = format!("needle {}", "z".repeat(600));
    write(dir.path(), "wide.txt", &format!("{}\n", vec![line.as_str(); 150].join("\n")));
    let result = grep_in(dir.path(), json!({"pattern": "needle", "path": "wide.txt", "limit": 150})).await.unwrap();
    let text = result.content[0].as_text().unwrap();
    assert!(
        text.ends_with(
            "\n\n[150 matches limit reached. Use limit=300 for more, or refine pattern. 50.0KB limit reached. \
             Some lines truncated to 500 chars. Use read tool to see full lines]"
        ),
        "{}",
        &text[text.len() - 200..]
    );
    let details = result.details.unwrap();
    let keys: Vec<&String> = details.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["matchLimitReached", "truncation", "linesTruncated"]);
    assert_eq!(details["truncation"]["truncatedBy"], "bytes");
    assert_eq!(details["truncation"]["maxLines"], json!(9_007_199_254_740_991u64));
    // Each kept row is "wide.txt:N: " + 500 chars + "... [truncated]"; 50 KB holds 96 of them.
    assert_eq!(details["truncation"]["outputLines"], 96);
}

#[tokio::test]
async fn case_and_literal_options_and_bad_input() {
    let dir = TempDir::new().unwrap();
    write(dir.path(), "t.txt", "Foo(1)\nfoo(2)\n");
    assert_eq!(grep_text(dir.path(), json!({"pattern": "foo"})).await, "t.txt:2: foo(2)");
    assert_eq!(
        grep_text(dir.path(), json!({"pattern": "FOO", "ignoreCase": "true"})).await,
        "t.txt:1: Foo(1)\nt.txt:2: foo(2)"
    );
    assert_eq!(grep_text(dir.path(), json!({"pattern": "o(1", "literal": true})).await, "t.txt:1: Foo(1)");
    let err = grep_in(dir.path(), json!({"pattern": "o(1"})).await.unwrap_err();
    assert!(err.message.starts_with("regex parse error:"), "{}", err.message);
    let err = grep_in(dir.path(), json!({"pattern": "x", "glob": "a{"})).await.unwrap_err();
    assert!(err.message.contains("a{"), "{}", err.message);
    let err = grep_in(dir.path(), json!({"pattern": 3})).await.unwrap_err();
    assert_eq!(err.message, "Invalid arguments: \"pattern\" must be a string");
}

#[tokio::test]
async fn lines_that_are_not_utf8_are_read_back_from_the_file() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("latin1.txt"), b"caf\xe9 needle\r\nnext\n").unwrap();
    assert_eq!(grep_text(dir.path(), json!({"pattern": "needle"})).await, "latin1.txt:1: caf\u{FFFD} needle");
}

#[tokio::test]
async fn a_cancelled_call_fails_without_searching() {
    let dir = TempDir::new().unwrap();
    write(dir.path(), "a.txt", "needle\n");
    let ctx = ToolContext::new("call");
    ctx.cancel.cancel();
    let tool = builtin_tool("grep", &ToolEnvironment::new(dir.path())).unwrap();
    let err = tool.execute(json!({"pattern": "needle"}), ctx).await.unwrap_err();
    assert_eq!(err.message, "Operation aborted");
}

#[tokio::test]
async fn cancelling_a_blocked_search_returns_at_once() {
    let dir = TempDir::new().unwrap();
    let fifo = dir.path().join("pipe");
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: c_path is a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    // Holding the pipe open for reading and writing (which never blocks on Linux) lets the search open it and
    // then block reading, like a search that takes forever; dropping the handle ends that read with EOF, so
    // the abandoned search can finish and the runtime shut down.
    let holder = std::fs::OpenOptions::new().read(true).write(true).open(&fifo).unwrap();
    let ctx = ToolContext::new("call");
    let cancel = ctx.cancel.clone();
    let tool = builtin_tool("grep", &ToolEnvironment::new(dir.path())).unwrap();
    let call = tool.execute(json!({"pattern": "x", "path": "pipe"}), ctx);
    let canceller = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        cancel.cancel();
    };
    let (result, ()) =
        tokio::time::timeout(Duration::from_secs(5), async { tokio::join!(call, canceller) }).await.unwrap();
    assert_eq!(result.unwrap_err().message, "Operation aborted");
    drop(holder);
}
