//! Helpers shared by the lowering tests of the `context:` and `mcp:` sections: the generated main.rs of an
//! agent, without whitespace.

use std::path::Path;

use super::*;
use crate::yaml::parse_spec;

/// The text without whitespace, so assertions do not depend on how prettyplease wraps lines.
pub(super) fn squash(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// The generated main.rs of the agent `yaml`, squashed.
pub(super) fn main_rs_of(yaml: &str) -> String {
    let spec = parse_spec(Path::new("a.yaml"), yaml).expect("valid");
    squash(&main_rs(&spec, &LowerContext::new(Path::new("a.yaml"))).expect("generates"))
}
