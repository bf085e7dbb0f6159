//! Checks of `subagents:` that need no other file: tool names (valid, unique, not taken by a built-in or
//! custom tool). Reading the sub-agents' own files, cycles and depth are [`crate::yaml`]'s part.

use std::collections::BTreeSet;

use crate::problem::{Problem, YamlPath};
use crate::spec::{AgentSpec, BUILTIN_TOOLS, is_tool_name};

/// Problems of `subagents[].name`.
pub fn subagent_problems(spec: &AgentSpec, out: &mut Vec<Problem>) {
    let custom: BTreeSet<&str> = spec.custom_tools().iter().map(|tool| tool.name.as_str()).collect();
    let mut seen = BTreeSet::new();
    for (index, entry) in spec.subagents.iter().enumerate() {
        let at = YamlPath::root().key("subagents").index(index).key("name");
        let name = entry.name.as_str();
        if !is_tool_name(name) {
            out.push(Problem::value(
                at,
                format!("\"{name}\" cannot be a tool name; use 1 to 64 letters, digits, '_' or '-'"),
            ));
        } else if BUILTIN_TOOLS.contains(&name) {
            out.push(Problem::value(at, format!("`{name}` is a built-in tool; give the sub-agent another name")));
        } else if custom.contains(name) {
            out.push(Problem::value(
                at,
                format!("`{name}` is also a custom tool (tools.custom); give the sub-agent another name"),
            ));
        } else if !seen.insert(name) {
            out.push(Problem::value(at, format!("duplicate sub-agent name `{name}`; each one is a tool of its own")));
        }
    }
}
