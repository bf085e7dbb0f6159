//! `tools:` in the agent YAML: built-in tool selection, execution mode and custom tools.

use schemars::JsonSchema;
use serde::Deserialize;

/// Built-in tools the runtime provides, in pi's order.
pub const BUILTIN_TOOLS: [&str; 7] = ["read", "bash", "edit", "write", "grep", "find", "ls"];

/// The built-in tools an agent gets when its YAML names none (pi's defaults; grep, find and ls are opt-in).
pub const DEFAULT_TOOLS: [&str; 4] = ["read", "bash", "edit", "write"];

/// Which tools the agent has and how they run.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolsSpec {
    /// Built-in tools active by default, in order. Default: [read, bash, edit, write].
    #[serde(default)]
    pub builtin: Option<Vec<BuiltinTool>>,
    /// How the tool calls of one answer run. Default: parallel.
    #[serde(default)]
    pub execution: Option<ExecutionSpec>,
    /// Tools of the agent's own, always active.
    #[serde(default)]
    pub custom: Vec<CustomToolSpec>,
}

/// A built-in tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[non_exhaustive]
#[serde(rename_all = "lowercase")]
pub enum BuiltinTool {
    Read,
    Bash,
    Edit,
    Write,
    Grep,
    Find,
    Ls,
}

impl BuiltinTool {
    pub fn name(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Bash => "bash",
            Self::Edit => "edit",
            Self::Write => "write",
            Self::Grep => "grep",
            Self::Find => "find",
            Self::Ls => "ls",
        }
    }
}

/// Tool execution mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ExecutionSpec {
    /// One call after another.
    Sequential,
    /// Calls run concurrently; results keep call order.
    Parallel,
}

/// A tool declared in the YAML: a shell command template or a Rust implementation.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CustomToolSpec {
    /// The name the model calls: letters, digits, '_' and '-', at most 64.
    pub name: String,
    /// A human-readable name for UIs. Default: the name.
    #[serde(default)]
    pub label: Option<String>,
    /// What the tool does, for the model.
    pub description: String,
    /// The line in the system prompt's tool list. Default: the description.
    #[serde(default)]
    pub prompt_snippet: Option<String>,
    /// Guidelines added to the system prompt while the tool is active.
    #[serde(default)]
    pub prompt_guidelines: Vec<String>,
    /// JSON Schema of the arguments (an object schema). Default: no arguments.
    #[serde(default)]
    pub parameters: Option<serde_json::Value>,
    /// A minijinja template of the shell command, e.g. `cargo test {{ filter }}`. Every value is
    /// shell-quoted; `{{ x | safe }}` inserts it unquoted. The arguments also arrive as JSON on stdin
    /// and as `TOOL_ARG_<NAME>` environment variables. Not with `handler`.
    #[serde(default)]
    pub command: Option<String>,
    /// `rust`: implemented in Rust through `#[agent]`. Not with `command`.
    #[serde(default)]
    pub handler: Option<HandlerSpec>,
    /// Seconds before a command is killed. Default: no limit.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub timeout: Option<u64>,
}

/// Who implements a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[non_exhaustive]
#[serde(rename_all = "lowercase")]
pub enum HandlerSpec {
    /// A method of the trait `#[agent]` generates.
    Rust,
}

impl CustomToolSpec {
    /// The parameter schema, `{"type": "object", "properties": {}}` when none is given.
    pub fn parameters_schema(&self) -> serde_json::Value {
        self.parameters.clone().unwrap_or_else(|| serde_json::json!({ "type": "object", "properties": {} }))
    }

    /// Top-level argument names, in schema order.
    pub fn parameter_names(&self) -> Vec<String> {
        self.parameters
            .as_ref()
            .and_then(|schema| schema.get("properties"))
            .and_then(serde_json::Value::as_object)
            .map(|properties| properties.keys().cloned().collect())
            .unwrap_or_default()
    }
}
