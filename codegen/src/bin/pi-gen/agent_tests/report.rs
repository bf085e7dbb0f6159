//! How a failed expectation is shown: `file:line:col: path: message`, then the expected and actual text as
//! a line diff (`-` expected, `+` actual), indented under the case.

use std::time::Duration;

use similar::{ChangeTag, TextDiff};

use super::case_file::TestFile;
use super::expect::Failure;
use pi_codegen::problem::Target;
use pi_codegen::yaml::locate;

/// The longest diff shown, in lines; the rest is counted.
const MAX_DIFF_LINES: usize = 40;

/// `0.12 s`.
pub fn seconds(duration: Duration) -> String {
    format!("{:.2} s", duration.as_secs_f64())
}

/// The failure as indented lines ending in a newline.
pub fn failure_text(file: &TestFile, failure: &Failure) -> String {
    let (line, column) = locate(&file.text, &failure.at, Target::Value);
    let full_path = failure.at.to_string();
    let path = short_path(&full_path);
    let mut text = format!("        {}:{line}:{column}: {path}: ", file.path.display());
    let mut message_lines = failure.message.lines();
    text.push_str(message_lines.next().unwrap_or_default());
    text.push('\n');
    for rest in message_lines {
        text.push_str(&format!("          {rest}\n"));
    }
    if let (Some(expected), Some(actual)) = (&failure.expected, &failure.actual) {
        text.push_str(&diff(expected, actual));
    }
    text
}

/// `cases[2].expect.tools[0]` without the case (the case's name is printed above it).
fn short_path(path: &str) -> &str {
    match path.split_once("].") {
        Some((case, rest)) if case.starts_with("cases[") => rest,
        _ => path,
    }
}

/// A line diff of `expected` against `actual`, or both in full when either is one line.
pub fn diff(expected: &str, actual: &str) -> String {
    let mut text = String::new();
    if !expected.contains('\n') && !actual.contains('\n') {
        if !expected.is_empty() {
            text.push_str(&format!("          expected: {expected}\n"));
        }
        text.push_str(&format!("          actual:   {actual}\n"));
        return text;
    }
    let diff = TextDiff::from_lines(expected, actual);
    let mut shown = 0;
    let mut hidden = 0;
    for change in diff.iter_all_changes() {
        if shown >= MAX_DIFF_LINES {
            hidden += 1;
            continue;
        }
        let sign = match change.tag() {
            ChangeTag::Delete => '-',
            ChangeTag::Insert => '+',
            ChangeTag::Equal => ' ',
        };
        text.push_str(&format!("          {sign} {}", change.value()));
        if !change.value().ends_with('\n') {
            text.push('\n');
        }
        shown += 1;
    }
    if hidden > 0 {
        text.push_str(&format!("          ... {hidden} more line(s)\n"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diffs_mark_expected_and_actual_lines() {
        assert_eq!(diff("a\nb\n", "a\nc\n"), "            a\n          - b\n          + c\n");
        assert_eq!(diff("x", "y"), "          expected: x\n          actual:   y\n");
        assert_eq!(short_path("cases[3].expect.answer"), "expect.answer");
    }
}
