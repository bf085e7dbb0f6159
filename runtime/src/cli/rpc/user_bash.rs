//! The user's own shell commands over RPC (`bash`, `abort_bash`): run with the agent's shell, working
//! directory and command prefix, answered with pi's `BashResult`, and kept in the conversation as a
//! `bashExecution` message.

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::protocol::{BashExecutionMessage, now_ms};
use crate::tools::ToolEnvironment;
use crate::tools::bash::{ShellCommand, run_command, with_command_prefix};

/// What one command produced: the reply's data and the message to keep.
pub struct UserBashOutcome {
    pub data: Value,
    pub message: BashExecutionMessage,
}

/// Runs `command` until it ends or `cancel` fires. A command that cannot start is an error text.
pub async fn run_user_bash(
    env: &ToolEnvironment,
    command: &str,
    cancel: &CancellationToken,
) -> Result<UserBashOutcome, String> {
    let script = with_command_prefix(env, command);
    let shell = ShellCommand::for_env(env).map_err(|error| error.to_string())?;
    let out = run_command(&script, &shell, None, cancel, |_, _| {}).await.map_err(|error| error.to_string())?;
    let exit_code = if out.cancelled { None } else { out.exit_code.map(i64::from) };
    let full_output_path = out.full_output_path.as_ref().map(|path| path.to_string_lossy().into_owned());
    let mut data = json!({ "output": out.truncation.content });
    if let Some(code) = exit_code {
        data["exitCode"] = json!(code);
    }
    data["cancelled"] = json!(out.cancelled);
    data["truncated"] = json!(out.truncation.truncated);
    if let Some(path) = &full_output_path {
        data["fullOutputPath"] = json!(path);
    }
    let message = BashExecutionMessage {
        command: command.to_owned(),
        output: out.truncation.content,
        exit_code,
        cancelled: out.cancelled,
        truncated: out.truncation.truncated,
        full_output_path,
        timestamp: now_ms(),
        exclude_from_context: None,
    };
    Ok(UserBashOutcome { data, message })
}
