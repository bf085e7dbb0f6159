//! Command panels (a pi-gen addition, like Context Pilot's git and GitHub result panels): a shell command's
//! output, run again when older than its refresh interval.
//!
//! Commands run as the bash tool runs them ([`run_command_with`]): the agent's shell and command prefix, in
//! the working directory, in a process group of their own that is registered while it runs and killed on a
//! timeout or a cancellation, stdout and stderr merged in order, only the tail kept (2000 lines or 50 KB).

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::panels::CommandPanelDefinition;
use crate::tools::bash::{BashOutput, RunOptions, ShellCommand, run_command_with, with_command_prefix};
use crate::tools::{ToolEnvironment, js_number};

/// One run of a panel's command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandPanelOutput {
    /// The panel's text: the output's tail, then notes: `[exit code N]` for a failure, `[stopped after N s]`
    /// for a timeout, `[killed by a signal]`, `[cancelled]`, or `[could not run the command: …]`.
    pub text: String,
    /// `None` when the command was ended by a signal or could not be started.
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    /// The cancellation token fired; the output is partial.
    pub cancelled: bool,
}

/// Runs `command` for a panel, as the module describes.
pub async fn run_panel_command(
    command: &str,
    env: &ToolEnvironment,
    timeout: Duration,
    cancel: CancellationToken,
) -> CommandPanelOutput {
    let shell = match ShellCommand::for_env(env) {
        Ok(shell) => shell,
        Err(err) => return not_run(&err.message),
    };
    let command = with_command_prefix(env, command);
    let run = run_command_with(&command, &shell, &RunOptions::default(), Some(timeout), &cancel, |_, _| {}).await;
    match run {
        Ok(out) => {
            // The bash tool keeps a complete copy of long output for the model to read; a panel does not.
            if let Some(spilled) = &out.full_output_path {
                let _ = std::fs::remove_file(spilled);
            }
            panel_output(&out, timeout)
        }
        Err(err) => not_run(&err.message),
    }
}

fn not_run(reason: &str) -> CommandPanelOutput {
    CommandPanelOutput {
        text: format!("[could not run the command: {reason}]"),
        exit_code: None,
        timed_out: false,
        cancelled: false,
    }
}

/// The panel text of a finished run.
fn panel_output(out: &BashOutput, timeout: Duration) -> CommandPanelOutput {
    let truncation = &out.truncation;
    let mut lines: Vec<String> = Vec::new();
    if truncation.truncated {
        // A final newline ends the last line rather than starting another.
        let trailing = usize::from(truncation.content.ends_with('\n'));
        let shown = truncation.output_lines.saturating_sub(trailing);
        let total = truncation.total_lines.saturating_sub(trailing);
        lines.push(format!("[showing the last {shown} of {total} lines]"));
    }
    let body = truncation.content.strip_suffix('\n').unwrap_or(&truncation.content);
    if !body.is_empty() {
        lines.push(body.to_owned());
    }
    if out.cancelled {
        lines.push("[cancelled]".to_owned());
    } else if out.timed_out {
        lines.push(format!("[stopped after {} s]", js_number(timeout.as_secs_f64())));
    } else {
        match out.exit_code {
            Some(0) => {}
            Some(code) => lines.push(format!("[exit code {code}]")),
            None => lines.push("[killed by a signal]".to_owned()),
        }
    }
    if lines.is_empty() {
        lines.push("(no output)".to_owned());
    }
    CommandPanelOutput {
        text: lines.join("\n"),
        exit_code: out.exit_code,
        timed_out: out.timed_out,
        cancelled: out.cancelled,
    }
}

/// A panel showing a command's latest output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandPanel {
    /// The panel's heading.
    pub name: String,
    pub command: String,
    /// Seconds after a run before the output counts as stale.
    pub refresh_secs: u64,
    /// Seconds a run may take before it is stopped.
    pub timeout_secs: u64,
    last_run_ms: Option<i64>,
    content: String,
}

impl CommandPanel {
    /// A panel that has not run yet (its content is empty and it is stale).
    pub fn new(name: impl Into<String>, command: impl Into<String>, refresh_secs: u64, timeout_secs: u64) -> Self {
        Self {
            name: name.into(),
            command: command.into(),
            refresh_secs,
            timeout_secs,
            last_run_ms: None,
            content: String::new(),
        }
    }

    /// The panel an agent's YAML defines.
    pub fn from_definition(definition: &CommandPanelDefinition) -> Self {
        Self::new(&definition.name, &definition.command, definition.refresh_secs, definition.timeout_secs)
    }

    /// The last completed run's text (empty before the first).
    pub fn content(&self) -> &str {
        &self.content
    }

    /// When the last completed run started (the `now_ms` given to [`CommandPanel::refresh`]).
    pub fn last_run_ms(&self) -> Option<i64> {
        self.last_run_ms
    }

    /// Whether the command should run again: it never completed a run, or the last one started
    /// `refresh_secs` or more before `now_ms` (or after it: a clock that went back).
    pub fn is_stale(&self, now_ms: i64) -> bool {
        let interval_ms = i64::try_from(self.refresh_secs.saturating_mul(1000)).unwrap_or(i64::MAX);
        self.last_run_ms.is_none_or(|last| !(0..interval_ms).contains(&now_ms.saturating_sub(last)))
    }

    /// Runs the command now and keeps its output; returns whether the content changed. A cancelled run
    /// changes nothing (the panel stays stale if it was).
    pub async fn refresh(&mut self, env: &ToolEnvironment, cancel: CancellationToken, now_ms: i64) -> bool {
        let timeout = Duration::from_secs(self.timeout_secs);
        let output = run_panel_command(&self.command, env, timeout, cancel).await;
        if output.cancelled {
            return false;
        }
        self.last_run_ms = Some(now_ms);
        if output.text == self.content {
            return false;
        }
        self.content = output.text;
        true
    }
}

#[cfg(test)]
#[path = "tests_command.rs"]
mod tests;
