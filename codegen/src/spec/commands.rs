//! `commands:` in the agent YAML: slash commands the agent's author declares. `/name args` either expands a
//! prompt (pi's template placeholders take the arguments) or runs a shell command whose output is shown to
//! the user or sent to the model.

use schemars::JsonSchema;
use serde::Deserialize;

/// The interactive mode's own commands, which a YAML command may not shadow.
pub const BUILTIN_COMMANDS: [&str; 15] = [
    "model", "compact", "new", "name", "session", "export", "copy", "hotkeys", "quit", "exit", "resume", "tree",
    "fork", "reload", "settings",
];

/// One slash command: `/name args`. Exactly one of `prompt` and `command`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CommandSpec {
    /// What follows the `/`: lowercase letters, digits, '-', '_' and ':', starting with a letter or digit.
    pub name: String,
    /// One line for the `/` list and RPC `get_commands`.
    pub description: String,
    /// The prompt `/name args` becomes, with pi's template placeholders: `$1`, `$2`, ..., `$@` and
    /// `$ARGUMENTS` (all arguments), `${@:N}` (from the Nth on), `${@:N:L}` (L of them from the Nth).
    /// Not with `command`.
    #[serde(default)]
    pub prompt: Option<String>,
    /// A shell command run with the agent's shell in its working directory, like the bash tool. The
    /// arguments are its positional parameters (`"$1"`, `"$@"`), never pasted into the text. Not with
    /// `prompt`.
    #[serde(default)]
    pub command: Option<String>,
    /// With `command`: send the output to the model as the prompt (`true`), or only show it to the user
    /// (`false`, no model call). Default: false.
    #[serde(default)]
    pub send: Option<bool>,
    /// With `command`: seconds before it is killed. Default: no limit.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub timeout: Option<u64>,
    /// The arguments, in order: they make the hint in the `/` list (`<file> [focus]`), and a missing
    /// required one is an error instead of an empty placeholder.
    #[serde(default)]
    pub arguments: Vec<CommandArgumentSpec>,
}

/// One positional argument of a command.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CommandArgumentSpec {
    /// Shown in the hint: `<name>` when required, `[name]` otherwise.
    pub name: String,
    /// What the argument is for.
    #[serde(default)]
    pub description: Option<String>,
    /// Whether the command refuses to run without it. Default: false.
    #[serde(default)]
    pub required: Option<bool>,
}

impl CommandArgumentSpec {
    /// Whether the argument must be given.
    pub fn is_required(&self) -> bool {
        self.required.unwrap_or(false)
    }
}

/// Whether `name` can be a command name: `[a-z0-9][a-z0-9-_:]*`.
pub fn is_command_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|first| first.is_ascii_lowercase() || first.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_' | ':'))
}
