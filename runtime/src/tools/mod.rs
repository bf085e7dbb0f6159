//! The tool contract ([`AgentTool`]) and the built-in tools.

pub mod bash;
pub mod edit;
mod edit_diff;
pub mod path;
pub mod read;
pub mod truncate;
pub mod write;

#[cfg(test)]
mod tests_bash;
#[cfg(test)]
mod tests_edit;
#[cfg(test)]
mod tests_read;
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

/// Where built-in tools work.
#[derive(Debug, Clone)]
pub struct ToolEnvironment {
    /// Relative paths resolve against this directory.
    pub cwd: PathBuf,
}

impl ToolEnvironment {
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        Self { cwd: cwd.into() }
    }
}

/// Names of the built-in tools, in pi's order.
pub const BUILTIN_TOOL_NAMES: [&str; 4] = ["read", "bash", "edit", "write"];

/// The built-in tool called `name`, if there is one.
pub fn builtin_tool(name: &str, env: &ToolEnvironment) -> Option<Arc<dyn AgentTool>> {
    match name {
        "read" => Some(Arc::new(read::ReadTool::new(env.clone()))),
        "bash" => Some(Arc::new(bash::BashTool::new(env.clone()))),
        "edit" => Some(Arc::new(edit::EditTool::new(env.clone()))),
        "write" => Some(Arc::new(write::WriteTool::new(env.clone()))),
        _ => None,
    }
}

/// The string argument `key`, or a [`ToolError`] naming it.
pub(crate) fn arg_str<'a>(args: &'a Value, key: &str) -> Result<&'a str, ToolError> {
    args.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::new(format!("Invalid arguments: \"{key}\" must be a string")))
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
