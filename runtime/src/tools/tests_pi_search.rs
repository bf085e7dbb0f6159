//! Our grep, find and ls against results recorded from pi 0.73.1 itself (with rg 15.2.0 and fd 10.5.0 on
//! PATH), which ran the same calls on the same fixture tree through the mock LLM server. Where rg or fd print
//! files in thread completion order, the rows are compared as sets; everything else must match exactly.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tempfile::TempDir;

use super::{ToolContext, ToolEnvironment, ToolError, builtin_tool};

/// The recorded fixture: a project inside a git work tree (the `.git` directory is in the parent, as when pi
/// runs in a subdirectory of a repository), with ignored, hidden, nested, CRLF and long-line files.
pub(super) struct Fixture {
    _dir: TempDir,
    pub project: PathBuf,
}

pub(super) fn fixture() -> Fixture {
    let dir = TempDir::new().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let project = dir.path().join("proj");
    let long_line = format!("{} needle {}", "x".repeat(550), "y".repeat(50));
    let many: String = (1..=5).map(|i| format!("item {i}\n")).collect();
    let files: Vec<(&str, String)> = vec![
        (".gitignore", "build/\n*.log\n".into()),
        (".env", "SECRET=hello\n".into()),
        (".hidden/notes.md", "hello from a hidden dir\n".into()),
        ("README.md", "# Demo\nhello readme\n".into()),
        ("app.log", "hello log line\n".into()),
        ("build/out.txt", "hello build\n".into()),
        ("context.txt", "before\nmatch one\nafter\nmiddle\nmatch two\nend\n".into()),
        ("src/main.rs", "fn main() {\n    println!(\"hello world\");\n}\n".into()),
        ("src/lib.rs", "pub fn greet() -> &'static str {\n    \"Hello\"\n}\n// TODO: more\n".into()),
        ("src/nested/deep/util.ts", "export const hello = 1;\n// todo lower\n".into()),
        ("src/nested/deep/util.spec.ts", "import { hello } from './util';\n".into()),
        ("docs/Guide.MD", "HELLO upper\n".into()),
        ("long.txt", format!("short line\n{long_line}\nneedle short\n")),
        ("crlf.txt", "hello crlf\r\nsecond\r\n".into()),
        ("many.txt", many),
        ("lsdir/Beta", "b\n".into()),
        ("lsdir/alpha", "a\n".into()),
        ("lsdir/_x", "x\n".into()),
        ("lsdir/.dot", "d\n".into()),
        ("lsdir/10.txt", "10\n".into()),
        ("lsdir/2.txt", "2\n".into()),
        ("lsdir/sub/inner.txt", "inner\n".into()),
        ("lsdir/Zed.md", "z\n".into()),
        ("lsdir/a-b", "ab\n".into()),
        ("lsdir/a_b", "ab\n".into()),
    ];
    for (relative, text) in files {
        let path = project.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    std::fs::create_dir(project.join("emptydir")).unwrap();
    Fixture { _dir: dir, project }
}

pub(super) async fn run(cwd: &Path, tool: &str, args: Value) -> Result<String, ToolError> {
    let tool = builtin_tool(tool, &ToolEnvironment::new(cwd)).unwrap();
    let result = tool.execute(args, ToolContext::new("call")).await?;
    Ok(result.content[0].as_text().unwrap().to_owned())
}

async fn ok(fx: &Fixture, tool: &str, args: Value) -> String {
    run(&fx.project, tool, args).await.unwrap()
}

fn sorted_lines(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    lines
}

#[tokio::test]
async fn grep_whole_tree_matches_pi_rows() {
    let fx = fixture();
    // pi printed these in rg's completion order; .gitignore'd build/ and app.log are absent, hidden files present.
    let pi = "README.md:2: hello readme\nsrc/main.rs:2:     println!(\"hello world\");\n\
              src/nested/deep/util.ts:1: export const hello = 1;\n\
              src/nested/deep/util.spec.ts:1: import { hello } from './util';\n\
              .hidden/notes.md:1: hello from a hidden dir\ncrlf.txt:1: hello crlf\n.env:1: SECRET=hello";
    let ours = ok(&fx, "grep", json!({"pattern": "hello"})).await;
    assert_eq!(sorted_lines(&ours), sorted_lines(pi));
    let ours = ok(&fx, "grep", json!({"pattern": "hello", "ignoreCase": true, "glob": "*.rs"})).await;
    assert_eq!(
        sorted_lines(&ours),
        sorted_lines("src/main.rs:2:     println!(\"hello world\");\nsrc/lib.rs:2:     \"Hello\"")
    );
}

#[tokio::test]
async fn grep_context_and_limit_match_pi() {
    let fx = fixture();
    let cases = [
        (
            json!({"pattern": "match", "path": "context.txt", "context": 1, "limit": 1}),
            "context.txt-1- before\ncontext.txt:2: match one\ncontext.txt-3- after\n\n\
             [1 matches limit reached. Use limit=2 for more, or refine pattern]",
        ),
        (
            // Overlapping context is repeated per match, and the empty line after the last newline counts.
            json!({"pattern": "match", "path": "context.txt", "context": 2}),
            "context.txt-1- before\ncontext.txt:2: match one\ncontext.txt-3- after\ncontext.txt-4- middle\n\
             context.txt-3- after\ncontext.txt-4- middle\ncontext.txt:5: match two\ncontext.txt-6- end\ncontext.txt-7- ",
        ),
        (
            json!({"pattern": "match", "path": "context.txt", "context": 1}),
            "context.txt-1- before\ncontext.txt:2: match one\ncontext.txt-3- after\ncontext.txt-4- middle\n\
             context.txt:5: match two\ncontext.txt-6- end",
        ),
        (
            json!({"pattern": "item", "path": "many.txt", "limit": 3}),
            "many.txt:1: item 1\nmany.txt:2: item 2\nmany.txt:3: item 3\n\n\
             [3 matches limit reached. Use limit=6 for more, or refine pattern]",
        ),
        (json!({"pattern": "hello", "path": "crlf.txt"}), "crlf.txt:1: hello crlf"),
        (json!({"pattern": "hello", "path": "crlf.txt", "context": 1}), "crlf.txt:1: hello crlf\ncrlf.txt-2- second"),
    ];
    for (args, pi) in cases {
        assert_eq!(ok(&fx, "grep", args.clone()).await, pi, "{args}");
    }
}

#[tokio::test]
async fn grep_filters_and_paths_match_pi() {
    let fx = fixture();
    let cases = [
        (json!({"pattern": "zzz_nomatch"}), "No matches found"),
        (json!({"pattern": "hello", "glob": "*.rs"}), "src/main.rs:2:     println!(\"hello world\");"),
        (json!({"pattern": "println!(", "literal": true}), "src/main.rs:2:     println!(\"hello world\");"),
        (
            json!({"pattern": "hello", "path": "src/nested"}),
            "deep/util.ts:1: export const hello = 1;\ndeep/util.spec.ts:1: import { hello } from './util';",
        ),
        // An ignored directory searched directly is walked; an ignored file named directly is searched.
        (json!({"pattern": "hello", "path": "build"}), "out.txt:1: hello build"),
        (json!({"pattern": "hello", "path": "app.log"}), "app.log:1: hello log line"),
        (json!({"pattern": "SECRET"}), ".env:1: SECRET=hello"),
        (
            json!({"pattern": "todo", "ignoreCase": true, "glob": "src/**/*.ts"}),
            "src/nested/deep/util.ts:2: // todo lower",
        ),
    ];
    for (args, pi) in cases {
        let ours = ok(&fx, "grep", args.clone()).await;
        assert_eq!(sorted_lines(&ours), sorted_lines(pi), "{args}");
    }
}

#[tokio::test]
async fn grep_long_lines_match_pi() {
    let fx = fixture();
    let pi = format!(
        "long.txt:2: {}... [truncated]\nlong.txt:3: needle short\n\n\
         [Some lines truncated to 500 chars. Use read tool to see full lines]",
        "x".repeat(500)
    );
    assert_eq!(ok(&fx, "grep", json!({"pattern": "needle", "path": "long.txt"})).await, pi);
}

#[tokio::test]
async fn grep_errors_where_pi_errors() {
    let fx = fixture();
    // pi: "rg: regex parse error:\n    (?:a()\n    ^\nerror: unclosed group" and "Path not found: …".
    let err = run(&fx.project, "grep", json!({"pattern": "a("})).await.unwrap_err();
    assert!(err.message.contains("regex parse error") && err.message.contains("unclosed group"), "{}", err.message);
    let err = run(&fx.project, "grep", json!({"pattern": "x", "path": "missing"})).await.unwrap_err();
    assert!(err.message.contains(&fx.project.join("missing").display().to_string()), "{}", err.message);
}

#[tokio::test]
async fn find_matches_pi() {
    let fx = fixture();
    let everything = ".env\n.gitignore\n.hidden/\n.hidden/notes.md\nREADME.md\ncontext.txt\ncrlf.txt\ndocs/\n\
                      docs/Guide.MD\nemptydir/\nlong.txt\nlsdir/\nlsdir/.dot\nlsdir/10.txt\nlsdir/2.txt\nlsdir/Beta\n\
                      lsdir/Zed.md\nlsdir/_x\nlsdir/a-b\nlsdir/a_b\nlsdir/alpha\nlsdir/sub/\nlsdir/sub/inner.txt\n\
                      many.txt\nsrc/\nsrc/lib.rs\nsrc/main.rs\nsrc/nested/\nsrc/nested/deep/\n\
                      src/nested/deep/util.spec.ts\nsrc/nested/deep/util.ts";
    let cases = [
        (json!({"pattern": "*.rs"}), "src/lib.rs\nsrc/main.rs"),
        (json!({"pattern": "*"}), everything),
        (json!({"pattern": "src/**/*.spec.ts"}), "src/nested/deep/util.spec.ts"),
        // fd's smart case: no uppercase letter in the glob, so .MD matches too.
        (json!({"pattern": "*.md"}), ".hidden/notes.md\nREADME.md\ndocs/Guide.MD\nlsdir/Zed.md"),
        (json!({"pattern": "*.MD"}), "docs/Guide.MD"),
        (json!({"pattern": "nomatch*"}), "No files found matching pattern"),
        (json!({"pattern": "*.txt", "path": "build"}), "out.txt"),
        (json!({"pattern": "deep"}), "src/nested/deep/"),
        (json!({"pattern": "*.log"}), "No files found matching pattern"),
        (json!({"pattern": "nested/*"}), "src/nested/deep/"),
        (json!({"pattern": "*.txt", "path": "lsdir", "limit": 5}), "10.txt\n2.txt\nsub/inner.txt"),
    ];
    for (args, pi) in cases {
        assert_eq!(ok(&fx, "find", args.clone()).await, pi, "{args}");
    }
}

#[tokio::test]
async fn find_limit_matches_pi() {
    let fx = fixture();
    // fd stops after any two results (pi got "10.txt\nsub/inner.txt"), so only the shape is fixed.
    let ours = ok(&fx, "find", json!({"pattern": "*.txt", "path": "lsdir", "limit": 2})).await;
    let (rows, notice) = ours.split_once("\n\n").unwrap();
    assert_eq!(notice, "[2 results limit reached. Use limit=4 for more, or refine pattern]");
    let rows: Vec<&str> = rows.lines().collect();
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().all(|row| ["10.txt", "2.txt", "sub/inner.txt"].contains(row)), "{rows:?}");
    assert!(rows.is_sorted());
    // pi: "[fd error]: Search path '…/context.txt' is not a directory."
    let err = run(&fx.project, "find", json!({"pattern": "*", "path": "context.txt"})).await.unwrap_err();
    assert!(err.message.contains("context.txt") && err.message.contains("not a directory"), "{}", err.message);
}

#[tokio::test]
async fn ls_matches_pi() {
    let fx = fixture();
    let cases = [
        (json!({"path": "lsdir"}), "_x\n.dot\n10.txt\n2.txt\na_b\na-b\nalpha\nBeta\nsub/\nZed.md"),
        (
            json!({}),
            ".env\n.gitignore\n.hidden/\napp.log\nbuild/\ncontext.txt\ncrlf.txt\ndocs/\nemptydir/\nlong.txt\nlsdir/\n\
             many.txt\nREADME.md\nsrc/",
        ),
        (json!({"path": "lsdir", "limit": 2}), "_x\n.dot\n\n[2 entries limit reached. Use limit=4 for more]"),
        (json!({"path": "emptydir"}), "(empty directory)"),
    ];
    for (args, pi) in cases {
        assert_eq!(ok(&fx, "ls", args.clone()).await, pi, "{args}");
    }
    // pi: "Not a directory: …" and "Path not found: …".
    for path in ["context.txt", "missing"] {
        let err = run(&fx.project, "ls", json!({ "path": path })).await.unwrap_err();
        assert!(err.message.contains(&fx.project.join(path).display().to_string()), "{}", err.message);
    }
}
