//! Tests for the edit tool on real files: matching rules, pi's error texts, line endings and the diff.

use serde_json::{Value, json};
use tempfile::TempDir;

use super::edit::prepare_edit_arguments;
use super::edit_diff::generate_diff;
use super::{AgentTool, ToolContext, ToolEnvironment, ToolError, builtin_tool};
use crate::protocol::AgentToolResult;

fn tool(dir: &TempDir) -> std::sync::Arc<dyn AgentTool> {
    builtin_tool("edit", &ToolEnvironment::new(dir.path())).unwrap()
}

async fn edit(dir: &TempDir, args: Value) -> Result<AgentToolResult, ToolError> {
    tool(dir).execute(args, ToolContext::new("call-1")).await
}

/// Writes `content` to f.txt, applies one edit and returns the outcome and the file afterwards.
async fn edit_one(content: &str, old: &str, new: &str) -> (Result<AgentToolResult, ToolError>, String) {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("f.txt"), content).unwrap();
    let result = edit(&dir, json!({"path": "f.txt", "edits": [{"oldText": old, "newText": new}]})).await;
    (result, std::fs::read_to_string(dir.path().join("f.txt")).unwrap())
}

#[tokio::test]
async fn replaces_unique_text() {
    let (result, after) = edit_one("foo bar\nbaz\n", "bar", "qux").await;
    let result = result.unwrap();
    assert_eq!(after, "foo qux\nbaz\n");
    assert_eq!(result.content[0].as_text(), Some("Successfully replaced 1 block(s) in f.txt."));
    let details = result.details.unwrap();
    assert_eq!(details["diff"], "-1 foo bar\n+1 foo qux\n 2 baz");
    assert_eq!(details["firstChangedLine"], 1);
}

#[tokio::test]
async fn diff_matches_pi_wire_example() {
    let dir = TempDir::new().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    let before = "def greet(name):\n    return \"Hello, \" + name\n\n\nprint(greet(\"world\"))\n";
    std::fs::write(dir.path().join("src/main.py"), before).unwrap();
    let args = json!({"path": "src/main.py", "edits": [{"oldText": "\"Hello, \"", "newText": "\"Hi, \""}]});
    let result = edit(&dir, args).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("Successfully replaced 1 block(s) in src/main.py."));
    assert_eq!(
        result.details.unwrap(),
        json!({
            "diff": " 1 def greet(name):\n-2     return \"Hello, \" + name\n+2     return \"Hi, \" + name\n 3 \n 4 \n 5 print(greet(\"world\"))",
            "firstChangedLine": 2
        })
    );
}

#[tokio::test]
async fn legacy_old_text_new_text_form_is_accepted() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("f.txt"), "one two\n").unwrap();
    let result = edit(&dir, json!({"path": "f.txt", "oldText": "two", "newText": "2"})).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("Successfully replaced 1 block(s) in f.txt."));
    assert_eq!(std::fs::read_to_string(dir.path().join("f.txt")).unwrap(), "one 2\n");
}

#[test]
fn prepare_arguments_folds_legacy_and_string_forms() {
    let legacy = prepare_edit_arguments(json!({"path": "p", "oldText": "a", "newText": "b"}));
    assert_eq!(legacy, json!({"path": "p", "edits": [{"oldText": "a", "newText": "b"}]}));
    let stringly = prepare_edit_arguments(json!({"path": "p", "edits": "[{\"oldText\":\"a\",\"newText\":\"b\"}]"}));
    assert_eq!(stringly, json!({"path": "p", "edits": [{"oldText": "a", "newText": "b"}]}));
    let untouched = json!({"path": "p", "edits": [{"oldText": "a", "newText": "b"}]});
    assert_eq!(prepare_edit_arguments(untouched.clone()), untouched);
}

#[tokio::test]
async fn missing_text_is_reported() {
    let (result, after) = edit_one("alpha\n", "beta", "gamma").await;
    assert_eq!(
        result.unwrap_err().message,
        "Could not find the exact text in f.txt. The old text must match exactly including all whitespace and newlines."
    );
    assert_eq!(after, "alpha\n");
}

#[tokio::test]
async fn repeated_text_is_rejected() {
    let (result, after) = edit_one("a\na\n", "a", "b").await;
    assert_eq!(
        result.unwrap_err().message,
        "Found 2 occurrences of the text in f.txt. The text must be unique. Please provide more context to make it unique."
    );
    assert_eq!(after, "a\na\n");
}

#[tokio::test]
async fn uniqueness_is_counted_after_line_ending_normalization() {
    let (result, _) = edit_one("hello\r\nworld\r\n---\r\nhello\nworld\n", "hello\nworld\n", "x").await;
    assert!(result.unwrap_err().message.starts_with("Found 2 occurrences"));
}

#[tokio::test]
async fn identical_replacement_is_rejected() {
    let (result, _) = edit_one("same\n", "same", "same").await;
    assert_eq!(
        result.unwrap_err().message,
        "No changes made to f.txt. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected."
    );
}

#[tokio::test]
async fn crlf_and_bom_are_preserved() {
    let (result, after) = edit_one("\u{FEFF}a\r\nb\r\n", "a\nb", "x\ny").await;
    result.unwrap();
    assert_eq!(after, "\u{FEFF}x\r\ny\r\n");
}

#[tokio::test]
async fn fuzzy_match_tolerates_quotes_and_trailing_spaces() {
    let (result, after) =
        edit_one("const s = \u{201C}hi\u{201D};   \nnext\n", "const s = \"hi\";\nnext", "const s = \"yo\";\nnext")
            .await;
    result.unwrap();
    assert_eq!(after, "const s = \"yo\";\nnext\n");
}

#[tokio::test]
async fn fuzzy_match_rewrites_the_whole_file_normalized() {
    let (result, after) = edit_one("keep  \nfoo\u{2014}bar\n", "foo-bar", "FOO").await;
    result.unwrap();
    assert_eq!(after, "keep\nFOO\n");
}

#[tokio::test]
async fn several_edits_apply_against_the_original() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("f.txt"), "a = 1\nb = 2\nc = 3\n").unwrap();
    let args = json!({"path": "f.txt", "edits": [
        {"oldText": "c = 3", "newText": "c = 30"},
        {"oldText": "a = 1", "newText": "a = 10"}
    ]});
    let result = edit(&dir, args).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("Successfully replaced 2 block(s) in f.txt."));
    assert_eq!(std::fs::read_to_string(dir.path().join("f.txt")).unwrap(), "a = 10\nb = 2\nc = 30\n");
}

#[tokio::test]
async fn overlapping_and_indexed_errors_name_the_edits() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("f.txt"), "abcdef\nxx\nxx\n").unwrap();
    let overlap =
        json!({"path": "f.txt", "edits": [{"oldText": "abcd", "newText": "1"}, {"oldText": "cdef", "newText": "2"}]});
    assert_eq!(
        edit(&dir, overlap).await.unwrap_err().message,
        "edits[0] and edits[1] overlap in f.txt. Merge them into one edit or target disjoint regions."
    );
    let missing =
        json!({"path": "f.txt", "edits": [{"oldText": "abc", "newText": "1"}, {"oldText": "zzz", "newText": "2"}]});
    assert_eq!(
        edit(&dir, missing).await.unwrap_err().message,
        "Could not find edits[1] in f.txt. The oldText must match exactly including all whitespace and newlines."
    );
    let dup =
        json!({"path": "f.txt", "edits": [{"oldText": "abc", "newText": "1"}, {"oldText": "xx", "newText": "2"}]});
    assert_eq!(
        edit(&dir, dup).await.unwrap_err().message,
        "Found 2 occurrences of edits[1] in f.txt. Each oldText must be unique. Please provide more context to make it unique."
    );
    assert_eq!(std::fs::read_to_string(dir.path().join("f.txt")).unwrap(), "abcdef\nxx\nxx\n");
}

#[tokio::test]
async fn missing_file_and_empty_edits_are_errors() {
    let dir = TempDir::new().unwrap();
    let err = edit(&dir, json!({"path": "nope.txt", "edits": [{"oldText": "a", "newText": "b"}]})).await.unwrap_err();
    assert_eq!(err.message, "File not found: nope.txt");
    std::fs::write(dir.path().join("f.txt"), "x").unwrap();
    let err = edit(&dir, json!({"path": "f.txt", "edits": []})).await.unwrap_err();
    assert_eq!(err.message, "Edit tool input is invalid. edits must contain at least one replacement.");
    let err = edit(&dir, json!({"path": "f.txt", "edits": [{"oldText": "", "newText": "b"}]})).await.unwrap_err();
    assert_eq!(err.message, "oldText must not be empty in f.txt.");
}

#[test]
fn diff_elides_distant_context() {
    let old: String = (1..=30).map(|i| format!("l{i}\n")).collect();
    let new = old.replace("l3\n", "L3\n").replace("l25\n", "L25\n");
    let (diff, first) = generate_diff(&old, &new, 4);
    assert_eq!(first, Some(3));
    let expected = [
        "  1 l1", "  2 l2", "- 3 l3", "+ 3 L3", "  4 l4", "  5 l5", "  6 l6", "  7 l7", "    ...", " 21 l21",
        " 22 l22", " 23 l23", " 24 l24", "-25 l25", "+25 L25", " 26 l26", " 27 l27", " 28 l28", " 29 l29", "    ...",
    ];
    assert_eq!(diff, expected.join("\n"));
}

#[test]
fn diff_handles_insertions_and_deletions() {
    let (diff, first) = generate_diff("a\nb\nc\n", "a\nx\nb\n", 4);
    assert_eq!(diff, " 1 a\n+2 x\n 2 b\n-3 c");
    assert_eq!(first, Some(2));
}

#[test]
fn schema_keeps_pi_key_order() {
    let dir = TempDir::new().unwrap();
    let text = serde_json::to_string(tool(&dir).parameters()).unwrap();
    assert!(text.starts_with("{\"type\":\"object\",\"required\":[\"path\",\"edits\"],\"properties\":{"), "{text}");
    assert!(text.ends_with(",\"additionalProperties\":false}"), "{text}");
}

/// Splits a full-context diff back into the old and new texts it describes.
fn reconstruct(diff: &str) -> (Vec<String>, Vec<String>) {
    let (mut old, mut new) = (Vec::new(), Vec::new());
    for line in diff.lines() {
        let (tag, rest) = line.split_at(1);
        let text = rest.trim_start().split_once(' ').map_or("", |(_, t)| t).to_owned();
        match tag {
            " " => {
                old.push(text.clone());
                new.push(text);
            }
            "-" => old.push(text),
            "+" => new.push(text),
            other => panic!("unexpected diff line tag {other:?} in {line:?}"),
        }
    }
    (old, new)
}

#[test]
fn diff_with_full_context_reconstructs_both_sides() {
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    for round in 0..60 {
        let len = 1 + next(40) as usize;
        let old: Vec<String> = (0..len).map(|_| format!("w{}", next(6))).collect();
        let mut new = old.clone();
        for _ in 0..next(8) {
            let at = next(new.len() as u64 + 1) as usize;
            match next(3) {
                0 if at < new.len() => {
                    new.remove(at);
                }
                1 => new.insert(at, format!("n{}", next(6))),
                _ if at < new.len() => new[at] = format!("c{}", next(6)),
                _ => new.push("tail".into()),
            }
        }
        if new.is_empty() {
            new.push("only".into());
        }
        let (old_text, new_text) = (old.join("\n") + "\n", new.join("\n") + "\n");
        if old_text == new_text {
            continue;
        }
        let (diff, _) = generate_diff(&old_text, &new_text, 1_000_000);
        assert_eq!(reconstruct(&diff), (old.clone(), new.clone()), "round {round}\n{diff}");
    }
    // Completely different long files exceed the Myers step budget and fall back to remove-all/add-all.
    let old: Vec<String> = (0..1500).map(|i| format!("old{i}")).collect();
    let new: Vec<String> = (0..1500).map(|i| format!("new{i}")).collect();
    let (diff, first) = generate_diff(&(old.join("\n") + "\n"), &(new.join("\n") + "\n"), 1_000_000);
    assert_eq!(reconstruct(&diff), (old, new));
    assert_eq!(first, Some(1));
}

#[tokio::test]
async fn a_file_that_is_not_utf8_is_refused_and_left_byte_for_byte() {
    let dir = TempDir::new().unwrap();
    let original: &[u8] = b"caf\xe9 latin1\nhello world\n\xff\xfe end\n";
    std::fs::write(dir.path().join("latin1.txt"), original).unwrap();
    let args = json!({"path": "latin1.txt", "edits": [{"oldText": "hello world", "newText": "hi"}]});
    let error = edit(&dir, args).await.expect_err("refused");
    assert!(error.message.contains("not UTF-8") && error.message.contains("offset 3"), "{}", error.message);
    assert_eq!(std::fs::read(dir.path().join("latin1.txt")).unwrap(), original, "not one byte changed");
}
