//! The YAML's `commands:` at run time: `/name args` expands a `prompt:` command with the prompt templates'
//! own placeholder code, or runs a `command:` with the agent's shell (the arguments as positional
//! parameters, never pasted into the script) and sends its output to the model or shows it to the user.
//!
//! Like pi's extension commands, they are looked up before the `input` event and the template expansion
//! (a command a Rust extension registers under the same name wins), and they run even while the agent
//! works. Print, json and rpc modes call in here; the interactive mode uses [`yaml_command_items`] and
//! [`run_yaml_command`].

use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::AgentDefinition;
use crate::agent_session::AgentSession;
use crate::definition::{CommandAction, CommandDefinition};
use crate::extension::{NotifyLevel, UiRequest};
use crate::prompt::{parse_command_args, substitute_args};
use crate::tools::ToolEnvironment;
use crate::tools::bash::{BashOutput, RunOptions, ShellCommand, run_command_with, with_command_prefix};

/// What invoking a YAML command came to.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum YamlCommandOutcome {
    /// Send this text to the model as the user's prompt (already expanded: do not expand it again).
    Prompt(String),
    /// Show this output to the user (without its final line feeds); nothing goes to the model.
    Show(String),
    /// The command could not run, failed, or lacks a required argument: show this to the user.
    Error(String),
}

/// The agent's commands for the `/` list: (name, description with the argument hint in front).
pub fn yaml_command_items(definition: &AgentDefinition) -> Vec<(String, String)> {
    command_items(&definition.commands)
}

/// [`yaml_command_items`] of a list of commands.
pub fn command_items(commands: &[CommandDefinition]) -> Vec<(String, String)> {
    commands.iter().map(|command| (command.name.clone(), description_with_hint(command))).collect()
}

/// `<file> [focus] — Review one file`, or just the description when the command takes no arguments.
pub fn description_with_hint(command: &CommandDefinition) -> String {
    let hint = command.argument_hint();
    if hint.is_empty() { command.description.clone() } else { format!("{hint} — {}", command.description) }
}

/// The command `text` (`/name args`) invokes, with the text of its arguments.
pub fn find_yaml_command<'c, 't>(
    commands: &'c [CommandDefinition],
    text: &'t str,
) -> Option<(&'c CommandDefinition, &'t str)> {
    let body = text.strip_prefix('/')?;
    let (name, args) = match body.find(char::is_whitespace) {
        Some(at) => (&body[..at], body[at..].trim_start()),
        None => (body, ""),
    };
    commands.iter().find(|command| command.name == name).map(|command| (command, args))
}

/// Runs `text` when it invokes one of `commands`; `None` when it does not (the text is an ordinary prompt).
/// A `command:` runs in `env`'s working directory with its shell and command prefix until it ends, its
/// timeout passes or `cancel` fires.
pub async fn run_yaml_command(
    commands: &[CommandDefinition],
    text: &str,
    env: &ToolEnvironment,
    cancel: &CancellationToken,
) -> Option<YamlCommandOutcome> {
    let (command, args) = find_yaml_command(commands, text)?;
    Some(run_command_definition(command, args, env, cancel).await)
}

/// Runs one command with the text of its arguments.
pub async fn run_command_definition(
    command: &CommandDefinition,
    args: &str,
    env: &ToolEnvironment,
    cancel: &CancellationToken,
) -> YamlCommandOutcome {
    let args = parse_command_args(args);
    if let Some(error) = missing_arguments(command, &args) {
        return YamlCommandOutcome::Error(error);
    }
    match &command.action {
        CommandAction::Prompt { template } => YamlCommandOutcome::Prompt(substitute_args(template, &args)),
        CommandAction::Shell { command: script, send, timeout_secs } => {
            let out = run_shell(&command.name, script, args, *timeout_secs, env, cancel).await;
            out.map_or_else(YamlCommandOutcome::Error, |output| shell_outcome(&command.name, output, *send))
        }
    }
}

/// `/name args` expanded when `name` is a `prompt:` command (`Err`: a required argument is missing); `None`
/// for any other text. For the prompt expander, which also serves queued (steering, follow-up) messages.
pub fn expand_prompt_command(commands: &[CommandDefinition], text: &str) -> Option<Result<String, String>> {
    let (command, args) = find_yaml_command(commands, text)?;
    let CommandAction::Prompt { template } = &command.action else { return None };
    let args = parse_command_args(args);
    Some(match missing_arguments(command, &args) {
        Some(error) => Err(error),
        None => Ok(substitute_args(template, &args)),
    })
}

/// Why `text` cannot be queued as a steering or follow-up message: it runs a `command:` (which runs at
/// once, as pi refuses to queue extension commands) or lacks a required argument.
pub fn queue_refusal(commands: &[CommandDefinition], text: &str) -> Option<String> {
    let (command, args) = find_yaml_command(commands, text)?;
    match &command.action {
        CommandAction::Prompt { .. } => missing_arguments(command, &parse_command_args(args)),
        CommandAction::Shell { .. } => Some(format!(
            "/{} runs a command and cannot be queued; send it as a prompt (it runs at once, even while the agent works)",
            command.name
        )),
    }
}

/// The YAML command `text` invokes and its arguments' text, unless a Rust extension registered a command of the same name (which
/// the session runs instead).
pub fn session_yaml_command<'c, 't>(
    session: &AgentSession,
    commands: &'c [CommandDefinition],
    text: &'t str,
) -> Option<(&'c CommandDefinition, &'t str)> {
    let (command, args) = find_yaml_command(commands, text)?;
    session.extensions().command(&command.name).is_none().then_some((command, args))
}

/// pi's fire-and-forget `notify` request: how json and rpc modes show a command's output.
pub fn notify_request(message: &str, error: bool) -> Value {
    let id = uuid::Uuid::new_v4().to_string();
    let level = if error { NotifyLevel::Error } else { NotifyLevel::Info };
    super::rpc::ui::request_line(&id, &UiRequest::Notify { message: message.to_owned(), level })
}

/// An error naming the required arguments not given, with the usage line.
fn missing_arguments(command: &CommandDefinition, args: &[String]) -> Option<String> {
    let missing: Vec<String> = command
        .arguments
        .iter()
        .enumerate()
        .filter(|(index, argument)| argument.required && *index >= args.len())
        .map(|(_, argument)| format!("<{}>", argument.name))
        .collect();
    if missing.is_empty() {
        return None;
    }
    let noun = if missing.len() == 1 { "argument" } else { "arguments" };
    Some(format!(
        "/{} needs the {noun} {}; usage: /{} {}",
        command.name,
        missing.join(" "),
        command.name,
        command.argument_hint()
    ))
}

/// Runs `script` as `<shell> -c <script> <name> <args...>`.
async fn run_shell(
    name: &str,
    script: &str,
    args: Vec<String>,
    timeout_secs: Option<u64>,
    env: &ToolEnvironment,
    cancel: &CancellationToken,
) -> Result<BashOutput, String> {
    let shell = ShellCommand::for_env(env).map_err(|error| format!("/{name} cannot run: {error}"))?;
    let script = with_command_prefix(env, script);
    let argv = std::iter::once(name.to_owned()).chain(args).collect();
    let options = RunOptions { argv, ..RunOptions::default() };
    let timeout = timeout_secs.map(Duration::from_secs);
    run_command_with(&script, &shell, &options, timeout, cancel, |_, _| {})
        .await
        .map_err(|error| format!("/{name} cannot run: {error}"))
}

/// The outcome of a finished command: its output, or an error carrying the output.
fn shell_outcome(name: &str, out: BashOutput, send: bool) -> YamlCommandOutcome {
    let output = out.formatted("");
    let status = if out.cancelled {
        Some(format!("/{name} was aborted"))
    } else if out.timed_out {
        Some(format!("/{name} timed out"))
    } else {
        match out.exit_code {
            Some(0) => None,
            Some(code) => Some(format!("/{name} exited with code {code}")),
            None => Some(format!("/{name} was ended by a signal")),
        }
    };
    if let Some(status) = status {
        let output = output.trim_end();
        return YamlCommandOutcome::Error(if output.is_empty() { status } else { format!("{status}:\n{output}") });
    }
    if !send {
        return YamlCommandOutcome::Show(output.trim_end_matches('\n').to_owned());
    }
    let prompt = output.trim_end();
    if prompt.trim().is_empty() {
        YamlCommandOutcome::Error(format!("/{name} printed nothing, so there is nothing to send"))
    } else {
        YamlCommandOutcome::Prompt(prompt.to_owned())
    }
}

#[cfg(test)]
#[path = "yaml_commands_tests.rs"]
mod tests;
