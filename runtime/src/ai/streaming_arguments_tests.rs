//! Tests of [`StreamingArguments`]: at every piece, whatever the split, the reading equals
//! [`parse_streaming_json`] of the whole text so far.

use super::StreamingArguments;
use crate::ai::partial_json::parse_streaming_json;

/// Arguments as models send them, with the awkward parts: escapes of every kind, surrogate pairs, keys out
/// of alphabetical order, a duplicate key, nesting, numbers and literals, invalid text.
const DOCUMENTS: [&str; 12] = [
    r#"{"path": "src/main.rs", "content": "fn main() {\n\tprintln!(\"héllo \\ wörld\");\n}\n/* \/ */"}"#,
    r#"{"zeta": "last key first", "alpha": "line\r\nbreak \b\f end"}"#,
    r#"{"emoji": "smile \ud83d\ude00 and \u00e9 and \u2028 done", "n": 1}"#,
    r#"{"lone": "high \ud83d then text", "x": "\ud83dz"}"#,
    r#"{"a": "first", "b": "", "a": "again and longer"}"#,
    r#"{"edits": [{"old": "a\nb", "new": "c\"d"}, {"old": "", "new": "tail text here"}], "path": "x"}"#,
    r#"[1, "two", {"three": [true, null, -4.5e3, "deep string"]}, "end"]"#,
    r#"{"command": "grep -rn \"TODO\" src | head -n 5", "timeout": 30}"#,
    r#"{"raw": "tab	inside and control"}"#,
    r#"{"a": "x"} trailing garbage"#,
    r#"{"a" "missing colon", "b": "c"}"#,
    r#"  {  "spaced"  :  "value with spaces"  ,  "k"  :  [ "a" , "b" ]  }  "#,
];

fn check_split(document: &str, sizes: impl Fn(usize) -> usize) {
    let mut arguments = StreamingArguments::new();
    let mut start = 0;
    let mut step = 0;
    while start < document.len() {
        let mut end = (start + sizes(step).max(1)).min(document.len());
        while !document.is_char_boundary(end) {
            end += 1;
        }
        let read = arguments.push(&document[start..end]).clone();
        assert_eq!(
            read,
            parse_streaming_json(&document[..end]),
            "after {:?} (pieces ending at {end})",
            &document[..end]
        );
        assert_eq!(arguments.text(), &document[..end]);
        start = end;
        step += 1;
    }
}

#[test]
fn every_split_reads_as_the_whole_text_does() {
    for document in DOCUMENTS {
        for size in 1..=9 {
            check_split(document, |_| size);
        }
        // Uneven pieces, as a network delivers them.
        check_split(document, |step| [3, 1, 7, 2, 11, 1, 5][step % 7]);
        check_split(document, |step| 1 + step * step % 13);
    }
}

#[test]
fn a_long_string_argument_grows_in_place() {
    let mut arguments = StreamingArguments::new();
    arguments.push(r#"{"path": "notes.md", "content": ""#);
    let mut expected = String::new();
    for line in 0..2000 {
        let piece = format!("line {line}: \\\"quoted\\\" \\t tab\\n");
        arguments.push(&piece);
        expected.push_str(&format!("line {line}: \"quoted\" \t tab\n"));
    }
    let value = arguments.push("\"}").clone();
    assert_eq!(value["content"], expected.as_str());
    assert_eq!(value, parse_streaming_json(arguments.text()));
}

#[test]
fn nothing_yet_reads_as_an_empty_object() {
    let mut arguments = StreamingArguments::new();
    assert_eq!(arguments.value(), &serde_json::json!({}));
    assert_eq!(arguments.push("   "), &serde_json::json!({}));
}
