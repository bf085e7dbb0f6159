//! Checks of `subagents:` that need no other file: tool names (valid, unique, not taken by a built-in or
//! custom tool). Reading the sub-agents' own files, cycles and depth are [`crate::yaml`]'s part.

use std::collections::BTreeMap;

use crate::problem::{Problem, YamlPath};
use crate::spec::{AgentSpec, BUILTIN_TOOLS, is_tool_name};

/// Problems of `subagents[].name`.
pub fn subagent_problems(spec: &AgentSpec, out: &mut Vec<Problem>) {
    let custom = YamlPath::root().key("tools").key("custom");
    let custom: BTreeMap<&str, YamlPath> = spec
        .custom_tools()
        .iter()
        .enumerate()
        .rev()
        .map(|(index, tool)| (tool.name.as_str(), custom.index(index).key("name")))
        .collect();
    let mut seen: BTreeMap<&str, YamlPath> = BTreeMap::new();
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
        } else if let Some(first) = custom.get(name) {
            let message = format!("`{name}` is also a custom tool (tools.custom); give the sub-agent another name");
            out.push(Problem::value(at, message).first_defined_at(first.clone()));
        } else if let Some(first) = seen.get(name) {
            let message = format!("duplicate sub-agent name `{name}`; each one is a tool of its own");
            out.push(Problem::value(at, message).first_defined_at(first.clone()));
        } else {
            seen.insert(name, at);
        }
    }
}
