//! Tests for YAML parsing and located errors.

use std::path::Path;

use super::*;
use crate::spec::ExecutionSpec;

const PI: &str = "version: 1
name: pi
config_dir: .pi
agent_dir_env: PI_CODING_AGENT_DIR
tools:
  builtin: [read, bash, edit, write]
  execution: parallel
";

fn errors(text: &str) -> Vec<String> {
    match parse_spec(Path::new("agent.yaml"), text) {
        Ok(_) => Vec::new(),
        Err(SpecError::Invalid(list)) => list.iter().map(ToString::to_string).collect(),
        Err(other) => vec![other.to_string()],
    }
}

#[test]
fn parses_the_pi_agent() {
    let spec = parse_spec(Path::new("pi.yaml"), PI).expect("valid");
    assert_eq!(spec.name, "pi");
    assert_eq!(spec.config_dir(), ".pi");
    assert_eq!(spec.agent_dir_env(), "PI_CODING_AGENT_DIR");
    let tools = spec.tools.expect("tools");
    assert_eq!(tools.builtin.expect("builtin"), vec!["read", "bash", "edit", "write"]);
    assert_eq!(tools.execution, Some(ExecutionSpec::Parallel));
}

#[test]
fn defaults_derive_from_the_name() {
    let spec = parse_spec(Path::new("a.yaml"), "version: 1\nname: my-coder\n").expect("valid");
    assert_eq!(spec.config_dir(), ".my-coder");
    assert_eq!(spec.agent_dir_env(), "MY_CODER_AGENT_DIR");
}

#[test]
fn unknown_key_is_located() {
    let found = errors("version: 1\nname: pi\ntoolz: []\n");
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("agent.yaml:3:1: unknown field `toolz`"), "{found:?}");
}

#[test]
fn type_errors_are_located() {
    let found = errors("version: 1\nname: pi\ntools:\n  builtin: read\n");
    assert!(found[0].starts_with("agent.yaml:4:"), "{found:?}");
}

#[test]
fn semantic_errors_are_all_reported_with_places() {
    let found = errors("version: 2\nname: \"bad name\"\ntools:\n  builtin: [read, grepp]\n");
    assert_eq!(found.len(), 3, "{found:?}");
    assert!(found[0].starts_with("agent.yaml:1:1: version"), "{found:?}");
    assert!(found[1].starts_with("agent.yaml:2:1: name"), "{found:?}");
    assert!(found[2].starts_with("agent.yaml:4:19: tools.builtin[1]: unknown tool \"grepp\""), "{found:?}");
}

#[test]
fn garbage_never_panics() {
    for text in ["", ":", "[", "version: [1", "\u{0}", "name: pi\nversion: x"] {
        assert!(!errors(text).is_empty(), "{text:?} should be rejected");
    }
}
