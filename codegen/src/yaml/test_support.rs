//! Helpers shared by the YAML tests: an agent file's errors as text, and checking them in order.

use std::path::Path;

use super::*;

/// The errors `parse_spec` reports for `text` read from `path` (none when it parses).
pub(super) fn errors_in(path: &Path, text: &str) -> Vec<String> {
    match parse_spec(path, text) {
        Ok(_) => Vec::new(),
        Err(SpecError::Invalid(list)) => list.iter().map(ToString::to_string).collect(),
        Err(other) => vec![other.to_string()],
    }
}

/// Asserts the errors are exactly `expected`, in order (each a prefix of the full line).
pub(super) fn assert_errors(found: &[String], expected: &[&str]) {
    let shown = found.join("\n");
    assert_eq!(found.len(), expected.len(), "{shown}");
    for (line, want) in found.iter().zip(expected) {
        assert!(line.starts_with(want), "expected {want}\n in {shown}");
    }
}
