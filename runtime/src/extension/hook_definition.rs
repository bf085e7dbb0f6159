//! Declarative hooks as the agent's YAML (`hooks:`) describes them; generated code builds these values and
//! the runtime turns each into a built-in extension.

/// A text pattern: a glob that must match the whole text (`*` and `?` match any character, newlines and
/// `/` included), or a regular expression that may match anywhere in it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TextPattern {
    Glob(String),
    Regex(String),
}

/// A pattern on one argument of a tool call (the argument's text; numbers and booleans as JSON text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentPattern {
    pub argument: String,
    pub pattern: TextPattern,
}

/// One declarative hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookDefinition {
    /// How errors name the hook (`hooks[2]`, or its `name:`).
    pub name: String,
    pub action: HookAction,
}

/// What a hook does.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HookAction {
    /// `tool_call`: a call of a tool matching `tool` whose arguments all match is refused; the model gets
    /// `reason` as the error result and the tool never runs.
    BlockToolCall { tool: TextPattern, arguments: Vec<ArgumentPattern>, reason: String },
    /// `before_agent_start`: `text` is appended to the system prompt (after a blank line) for each prompt
    /// that matches `when` (every prompt when absent); the next prompt starts from the base prompt again.
    AppendSystemPrompt { text: String, when: Option<TextPattern> },
    /// `before_agent_start`: the system prompt is `text` for each prompt that matches `when`.
    ReplaceSystemPrompt { text: String, when: Option<TextPattern> },
    /// `before_agent_start`: a custom message with `content` follows each prompt that matches `when`.
    InjectMessage { custom_type: String, content: String, display: bool, when: Option<TextPattern> },
    /// `input`: every match of `pattern` in the prompt is replaced by `replacement` (`$1`, `${name}` refer to
    /// the regex's groups; a glob replaces the whole prompt when it matches).
    TransformInput { pattern: TextPattern, replacement: String },
    /// Any event: `command` (run by the shell) gets the event as JSON on stdin and answers JSON on stdout.
    /// `tool` limits `tool_call` / `tool_result` / `tool_execution_*` hooks to matching tools.
    Command {
        event: String,
        command: String,
        timeout_secs: Option<u64>,
        tool: Option<TextPattern>,
        /// The embedded path (among the agent's unpacked resources) of the script the command's first word
        /// names, when that word was a path relative to the YAML (`./hooks/x.sh`); the command then runs the
        /// unpacked copy.
        script: Option<String>,
    },
}
