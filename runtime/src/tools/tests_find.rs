//! Tests for the find tool on real trees: fd's ignore rules and glob matching, ordering, limits and errors.

use std::path::Path;

use serde_json::{Value, json};
use tempfile::TempDir;

use super::{ToolContext, ToolEnvironment, ToolError, builtin_tool};
use crate::protocol::AgentToolResult;

async fn find_in(cwd: &Path, args: Value) -> Result<AgentToolResult, ToolError> {
    builtin_tool("find", &ToolEnvironment::new(cwd)).unwrap().execute(args, ToolContext::new("call")).await
}

async fn find_text(cwd: &Path, args: Value) -> String {
    find_in(cwd, args).await.unwrap().content[0].as_text().unwrap().to_owned()
}

fn touch(root: &Path, relative: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, "x").unwrap();
}

#[tokio::test]
async fn gitignore_applies_without_a_repository_and_fdignore_too() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join(".gitignore"), "target/\n*.tmp\n").unwrap();
    std::fs::write(dir.path().join(".fdignore"), "secret.rs\n").unwrap();
    for name in ["a.rs", "b.tmp", "secret.rs", "target/c.rs", "src/d.rs"] {
        touch(dir.path(), name);
    }
    assert_eq!(find_text(dir.path(), json!({"pattern": "*.rs"})).await, "a.rs\nsrc/d.rs");
    assert_eq!(find_text(dir.path(), json!({"pattern": "*.tmp"})).await, "No files found matching pattern");
}

#[tokio::test]
async fn results_are_sorted_by_path_with_directories_marked() {
    let dir = TempDir::new().unwrap();
    for name in ["b/z.txt", "a.txt", "a/y.txt", ".h/x.txt"] {
        touch(dir.path(), name);
    }
    // Path order compares components: "a" (the directory) comes before "a.txt".
    assert_eq!(find_text(dir.path(), json!({"pattern": ""})).await, ".h/\n.h/x.txt\na/\na/y.txt\na.txt\nb/\nb/z.txt");
    assert_eq!(find_text(dir.path(), json!({"pattern": "?"})).await, "a/\nb/");
}

#[tokio::test]
async fn patterns_with_a_slash_match_the_full_path() {
    let dir = TempDir::new().unwrap();
    for name in ["src/app/main.ts", "src/app/main.spec.ts", "test/main.spec.ts", "src/deep/er/x.spec.ts"] {
        touch(dir.path(), name);
    }
    assert_eq!(
        find_text(dir.path(), json!({"pattern": "src/**/*.spec.ts"})).await,
        "src/app/main.spec.ts\nsrc/deep/er/x.spec.ts"
    );
    // `*` does not cross a `/`.
    assert_eq!(find_text(dir.path(), json!({"pattern": "src/*/*.spec.ts"})).await, "src/app/main.spec.ts");
    // An absolute pattern is matched against the absolute path as it stands.
    let absolute = format!("{}/test/*.ts", dir.path().display());
    assert_eq!(find_text(dir.path(), json!({ "pattern": absolute })).await, "test/main.spec.ts");
}

#[tokio::test]
async fn smart_case_follows_uppercase_in_the_glob() {
    let dir = TempDir::new().unwrap();
    for name in ["Makefile", "makefile.bak", "README.md", "notes.MD"] {
        touch(dir.path(), name);
    }
    assert_eq!(find_text(dir.path(), json!({"pattern": "makefile*"})).await, "Makefile\nmakefile.bak");
    assert_eq!(find_text(dir.path(), json!({"pattern": "Makefile*"})).await, "Makefile");
    assert_eq!(find_text(dir.path(), json!({"pattern": "*.md"})).await, "README.md\nnotes.MD");
}

#[tokio::test]
async fn limit_reached_notice_and_details() {
    let dir = TempDir::new().unwrap();
    for i in 0..20 {
        touch(dir.path(), &format!("f{i:02}.log"));
    }
    let result = find_in(dir.path(), json!({"pattern": "*.log", "limit": 5})).await.unwrap();
    let text = result.content[0].as_text().unwrap();
    let (rows, notice) = text.split_once("\n\n").unwrap();
    assert_eq!(rows.lines().count(), 5);
    assert!(rows.lines().collect::<Vec<_>>().is_sorted());
    assert_eq!(notice, "[5 results limit reached. Use limit=10 for more, or refine pattern]");
    assert_eq!(result.details, Some(json!({"resultLimitReached": 5})));
    // fd ignores --max-results 0, but pi still reports a limit of 0.
    let text = find_text(dir.path(), json!({"pattern": "f0*.log", "limit": 0})).await;
    assert_eq!(text.lines().count(), 12, "{text}");
    assert!(text.ends_with("\n\n[0 results limit reached. Use limit=0 for more, or refine pattern]"));
}

#[tokio::test]
async fn bad_arguments_and_paths_are_errors() {
    let dir = TempDir::new().unwrap();
    touch(dir.path(), "file.txt");
    let err = find_in(dir.path(), json!({"pattern": "[a"})).await.unwrap_err();
    assert!(err.message.contains("[a"), "{}", err.message);
    let err = find_in(dir.path(), json!({"pattern": "*", "limit": 2.5})).await.unwrap_err();
    assert_eq!(err.message, "Invalid arguments: \"limit\" must be a whole number");
    let err = find_in(dir.path(), json!({"pattern": "*", "path": "file.txt"})).await.unwrap_err();
    assert!(err.message.ends_with("is not a directory"), "{}", err.message);
    let err = find_in(dir.path(), json!({"pattern": "*", "path": "nope"})).await.unwrap_err();
    assert!(err.message.ends_with("does not exist"), "{}", err.message);
    let ctx = ToolContext::new("call");
    ctx.cancel.cancel();
    let tool = builtin_tool("find", &ToolEnvironment::new(dir.path())).unwrap();
    assert_eq!(tool.execute(json!({"pattern": "*"}), ctx).await.unwrap_err().message, "Operation aborted");
}

#[tokio::test]
async fn symlinks_are_listed_but_not_followed() {
    let dir = TempDir::new().unwrap();
    touch(dir.path(), "real/inner.txt");
    std::os::unix::fs::symlink(dir.path().join("real"), dir.path().join("link")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("gone"), dir.path().join("broken")).unwrap();
    assert_eq!(find_text(dir.path(), json!({"pattern": "*"})).await, "broken\nlink\nreal/\nreal/inner.txt");
}
