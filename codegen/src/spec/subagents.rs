//! `subagents:` in the agent YAML: other agent files compiled into the same binary, each one a tool of the
//! parent that runs that agent in-process on a task and answers with its final text.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Deserialize;

/// How deep sub-agents may nest when the YAML does not say (`max_subagent_depth`).
pub const DEFAULT_MAX_SUBAGENT_DEPTH: u32 = 3;

/// One sub-agent: another agent YAML the parent calls as a tool.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SubagentSpec {
    /// The tool's name: the parent calls the sub-agent as `name` with `{ task: string }`. 1 to 64 letters,
    /// digits, '_' or '-', and not the name of a built-in or custom tool.
    pub name: String,
    /// Another agent YAML (relative to this one): a full agent with its own system prompt, tools, hooks,
    /// skills and model, compiled into the same binary. Without a `model` of its own it uses the parent's
    /// model and key.
    pub path: String,
    /// What the sub-agent is good for, shown to the model in the tool's description. Default: the
    /// sub-agent YAML's own `description`.
    #[serde(default)]
    pub description: Option<String>,
}

/// A sub-agent with its YAML read and checked (filled in by [`crate::yaml::load_spec`]; never written in
/// YAML).
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedSubagent {
    /// The tool name (`subagents[].name`).
    pub name: String,
    /// The tool's description: the entry's `description`, else the sub-agent's own.
    pub description: String,
    /// The sub-agent's YAML file, absolute; relative paths inside it resolve against its directory.
    pub spec_path: PathBuf,
    /// The sub-agent, its own sub-agents loaded too.
    pub spec: Box<super::AgentSpec>,
}

/// Whether `name` can be a tool name every provider accepts: 1 to 64 letters, digits, '_' or '-'.
pub fn is_tool_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= 64 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}
