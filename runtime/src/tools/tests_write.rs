//! Tests for the write tool and path resolution on real files.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use serde_json::{Value, json};
use tempfile::TempDir;

use super::path::{expand_path, resolve_to_cwd};
use super::{BUILTIN_TOOL_NAMES, ToolContext, ToolEnvironment, ToolError, builtin_tool};
use crate::protocol::AgentToolResult;

async fn write(dir: &TempDir, args: Value) -> Result<AgentToolResult, ToolError> {
    let tool = builtin_tool("write", &ToolEnvironment::new(dir.path())).unwrap();
    tool.execute(args, ToolContext::new("call-1")).await
}

#[tokio::test]
async fn creates_parent_directories() {
    let dir = TempDir::new().unwrap();
    let result = write(&dir, json!({"path": "notes/deep/todo.md", "content": "- [ ] write tests\n"})).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("Successfully wrote 18 bytes to notes/deep/todo.md"));
    assert_eq!(std::fs::read_to_string(dir.path().join("notes/deep/todo.md")).unwrap(), "- [ ] write tests\n");
}

#[tokio::test]
async fn reports_utf16_length_like_pi() {
    let dir = TempDir::new().unwrap();
    let result = write(&dir, json!({"path": "u.txt", "content": "h\u{e9}llo\u{1F600}"})).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("Successfully wrote 7 bytes to u.txt"));
    assert_eq!(std::fs::read(dir.path().join("u.txt")).unwrap().len(), 10);
}

#[tokio::test]
async fn overwrites_keeping_permissions_and_leaves_no_temp_files() {
    let dir = TempDir::new().unwrap();
    let file = dir.path().join("run.sh");
    std::fs::write(&file, "old").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o750)).unwrap();
    write(&dir, json!({"path": "run.sh", "content": "#!/bin/sh\n"})).await.unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "#!/bin/sh\n");
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o750);
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, vec![std::ffi::OsString::from("run.sh")]);
}

#[tokio::test]
async fn writes_through_symlinks() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("real.txt"), "old").unwrap();
    std::os::unix::fs::symlink("real.txt", dir.path().join("link.txt")).unwrap();
    write(&dir, json!({"path": "link.txt", "content": "new"})).await.unwrap();
    assert_eq!(std::fs::read_to_string(dir.path().join("real.txt")).unwrap(), "new");
    assert!(std::fs::symlink_metadata(dir.path().join("link.txt")).unwrap().file_type().is_symlink());
}

#[tokio::test]
async fn writing_onto_a_directory_fails() {
    let dir = TempDir::new().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let err = write(&dir, json!({"path": "sub", "content": "x"})).await.unwrap_err();
    assert!(err.message.starts_with("EISDIR"), "{}", err.message);
}

#[test]
fn paths_resolve_like_pi() {
    let cwd = Path::new("/work/project");
    assert_eq!(resolve_to_cwd("@src/main.rs", cwd), Path::new("/work/project/src/main.rs"));
    assert_eq!(resolve_to_cwd("../other/./x", cwd), Path::new("/work/other/x"));
    assert_eq!(resolve_to_cwd("/abs/file", cwd), Path::new("/abs/file"));
    assert_eq!(resolve_to_cwd("my\u{00A0}file.txt", cwd), Path::new("/work/project/my file.txt"));
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        assert_eq!(expand_path("~"), Path::new(&home));
        assert_eq!(expand_path("~/notes.md"), Path::new(&home).join("notes.md"));
        assert_eq!(resolve_to_cwd("@~/notes.md", cwd), Path::new(&home).join("notes.md"));
    }
    assert_eq!(expand_path("~user/x"), Path::new("~user/x"));
}

#[test]
fn builtin_tools_are_all_available() {
    let env = ToolEnvironment::new("/tmp");
    for name in BUILTIN_TOOL_NAMES {
        let tool = builtin_tool(name, &env).unwrap();
        assert_eq!(tool.name(), name);
        assert!(tool.prompt_snippet().is_some());
        let schema = serde_json::to_string(tool.parameters()).unwrap();
        // TypeBox's key order; an object without required properties (ls) has no "required" key.
        let expected_start =
            if name == "ls" { "{\"type\":\"object\",\"properties\":{" } else { "{\"type\":\"object\",\"required\":[" };
        assert!(schema.starts_with(expected_start), "{schema}");
    }
    assert!(builtin_tool("glob", &env).is_none());
}
