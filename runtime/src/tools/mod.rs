//! The tool contract ([`AgentTool`]) and the built-in tools.

pub mod bash;
pub mod bash_structured;
pub mod command;
pub mod edit;
mod edit_diff;
mod edit_patch;
pub mod find;
mod find_glob;
pub mod grep;
mod grep_search;
mod listing;
pub mod ls;
mod ls_order;
pub mod path;
pub mod process_groups;
pub mod read;
mod read_scan;
pub mod truncate;
mod walk;
pub mod write;

#[cfg(test)]
mod tests_bash;
#[cfg(test)]
mod tests_command;
#[cfg(test)]
mod tests_edit;
#[cfg(test)]
mod tests_find;
#[cfg(test)]
mod tests_grep;
#[cfg(test)]
mod tests_ls;
#[cfg(test)]
mod tests_pi_search;
#[cfg(test)]
mod tests_pi_search_edge;
#[cfg(test)]
mod tests_read;
#[cfg(test)]
mod tests_read_stream;
#[cfg(test)]
mod tests_truncate;
#[cfg(test)]
mod tests_write;

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::protocol::AgentToolResult;

pub use command::CommandTool;

/// The future a tool's `execute` returns.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = Result<AgentToolResult, ToolError>> + Send + 'a>>;

/// Receives partial results while a tool runs (bash streams its output this way).
pub type ToolUpdateFn = Arc<dyn Fn(AgentToolResult) + Send + Sync>;

/// A tool failed; the message becomes the text of an error tool result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    pub message: String,
}

impl ToolError {
    pub fn new(message: impl Into<String>) -> Self {
        Self { message: message.into() }
    }
}

/// Per-call context given to a tool.
#[derive(Clone)]
pub struct ToolContext {
    pub tool_call_id: String,
    /// Cancelled when the agent is aborted; a tool should stop promptly and fail.
    pub cancel: CancellationToken,
    pub on_update: Option<ToolUpdateFn>,
}

impl ToolContext {
    pub fn new(tool_call_id: impl Into<String>) -> Self {
        Self { tool_call_id: tool_call_id.into(), cancel: CancellationToken::new(), on_update: None }
    }

    /// Reports a partial result, if anyone listens.
    pub fn update(&self, partial: AgentToolResult) {
        if let Some(on_update) = &self.on_update {
            on_update(partial);
        }
    }
}

/// A tool the agent can call.
pub trait AgentTool: Send + Sync {
    fn name(&self) -> &str;
    /// A human-readable name for UIs.
    fn label(&self) -> &str;
    fn description(&self) -> &str;
    /// JSON Schema of the arguments.
    fn parameters(&self) -> &Value;
    /// The one-line text for the system prompt's tool list (falls back to the description).
    fn prompt_snippet(&self) -> Option<&str> {
        None
    }
    /// Guidelines this tool adds to the system prompt.
    fn prompt_guidelines(&self) -> &[String] {
        &[]
    }
    /// Rewrites raw arguments from the model before schema validation (pi's `prepareArguments`).
    /// The edit tool uses it to fold the legacy `oldText`/`newText` form into `edits[]`.
    fn prepare_arguments(&self, args: Value) -> Value {
        args
    }
    /// Runs the tool with validated arguments.
    fn execute(&self, args: Value, ctx: ToolContext) -> ToolFuture<'_>;
}

/// Where built-in tools work, and how `bash` runs commands.
#[derive(Debug, Clone)]
pub struct ToolEnvironment {
    /// Relative paths resolve against this directory.
    pub cwd: PathBuf,
    /// The shell `bash` runs commands with (settings `shellPath`); `None` picks `/bin/bash`, then `bash` on
    /// `PATH`, then `sh`.
    pub shell_path: Option<PathBuf>,
    /// Lines run before every `bash` command (settings `shellCommandPrefix`), e.g. `shopt -s expand_aliases`.
    pub command_prefix: Option<String>,
    /// A directory put in front of `PATH` for `bash` commands (the agent directory's `bin/`).
    pub bin_dir: Option<PathBuf>,
    /// The pi release whose result texts and details the tools reproduce (pi 1.5's edit adds a unified
    /// `patch`, its write names no byte count).
    pub pi_compat: crate::protocol::PiCompat,
}

impl ToolEnvironment {
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        Self {
            cwd: cwd.into(),
            shell_path: None,
            command_prefix: None,
            bin_dir: None,
            pi_compat: crate::protocol::PiCompat::default(),
        }
    }
}

/// The built-in tools pi activates when no tool selection is given (grep, find and ls are opt-in).
pub const DEFAULT_TOOL_NAMES: [&str; 4] = ["read", "bash", "edit", "write"];

/// Names of the built-in tools, in pi's order.
pub const BUILTIN_TOOL_NAMES: [&str; 7] = ["read", "bash", "edit", "write", "grep", "find", "ls"];

/// The built-in tool called `name`, if there is one.
pub fn builtin_tool(name: &str, env: &ToolEnvironment) -> Option<Arc<dyn AgentTool>> {
    match name {
        "read" => Some(Arc::new(read::ReadTool::new(env.clone()))),
        "bash" => Some(Arc::new(bash::BashTool::new(env.clone()))),
        "edit" => Some(Arc::new(edit::EditTool::new(env.clone()))),
        "write" => Some(Arc::new(write::WriteTool::new(env.clone()))),
        "grep" => Some(Arc::new(grep::GrepTool::new(env.clone()))),
        "find" => Some(Arc::new(find::FindTool::new(env.clone()))),
        "ls" => Some(Arc::new(ls::LsTool::new(env.clone()))),
        _ => None,
    }
}

/// The string argument `key`, or a [`ToolError`] naming it.
pub(crate) fn arg_str<'a>(args: &'a Value, key: &str) -> Result<&'a str, ToolError> {
    args.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::new(format!("Invalid arguments: \"{key}\" must be a string")))
}

/// The optional string argument `key`; like pi's `value || default`, an empty string counts as absent.
pub(crate) fn arg_opt_str<'a>(args: &'a Value, key: &str) -> Result<Option<&'a str>, ToolError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str()).filter(|s| !s.is_empty())),
        Some(_) => Err(ToolError::new(format!("Invalid arguments: \"{key}\" must be a string"))),
    }
}

/// The optional boolean argument `key` (false when absent); `"true"`/`"false"` and 1/0 are accepted like
/// AJV's `coerceTypes`.
pub(crate) fn arg_bool(args: &Value, key: &str) -> Result<bool, ToolError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(Value::String(s)) if s == "true" || s == "false" => Ok(s == "true"),
        Some(Value::Number(n)) if n.as_f64() == Some(1.0) || n.as_f64() == Some(0.0) => Ok(n.as_f64() == Some(1.0)),
        Some(_) => Err(ToolError::new(format!("Invalid arguments: \"{key}\" must be a boolean"))),
    }
}

/// The optional numeric argument `key`; numeric strings are accepted like AJV's `coerceTypes`.
pub(crate) fn arg_number(args: &Value, key: &str) -> Result<Option<f64>, ToolError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64()),
        Some(Value::String(s)) => s
            .trim()
            .parse::<f64>()
            .map(Some)
            .map_err(|_| ToolError::new(format!("Invalid arguments: \"{key}\" must be a number"))),
        Some(_) => Err(ToolError::new(format!("Invalid arguments: \"{key}\" must be a number"))),
    }
}

/// Formats a number the way JavaScript prints it in a template string (`1`, `0.5`).
pub(crate) fn js_number(n: f64) -> String {
    if n.is_finite() && n.fract() == 0.0 && n.abs() < 1e15 { format!("{}", n as i64) } else { format!("{n}") }
}

/// The error every built-in file tool reports when it is cancelled before it finishes.
pub(crate) fn aborted_error() -> ToolError {
    ToolError::new("Operation aborted")
}
