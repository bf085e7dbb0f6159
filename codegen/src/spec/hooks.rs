//! `hooks:` in the agent YAML: declarative reactions to pi's events (block a tool call, change the system
//! prompt, inject a message, rewrite the input) and external commands run on any event.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

/// The events a hook can be `on`: pi's extension events, in the order `pi_runtime::extension::EventKind::ALL`
/// lists them (a test checks that the two lists agree; the library itself never links the runtime).
pub const HOOK_EVENTS: [&str; 29] = [
    "input",
    "before_agent_start",
    "context",
    "before_provider_request",
    "tool_call",
    "tool_result",
    "agent_start",
    "agent_end",
    "turn_start",
    "turn_end",
    "message_start",
    "message_update",
    "message_end",
    "tool_execution_start",
    "tool_execution_update",
    "tool_execution_end",
    "model_select",
    "session_start",
    "session_shutdown",
    "session_before_switch",
    "session_switch",
    "session_before_fork",
    "session_fork",
    "session_before_compact",
    "session_compact",
    "session_before_tree",
    "session_tree",
    "resources_discover",
    "session_directory",
];

/// The events whose hooks concern one tool, so a command hook on them may `match: { tool: ... }`.
pub const TOOL_EVENTS: [&str; 5] =
    ["tool_call", "tool_result", "tool_execution_start", "tool_execution_update", "tool_execution_end"];

/// One hook: the event it reacts to (`on`), what the event must match, and exactly one action (`block`,
/// `command`, `append_system_prompt`, `replace_system_prompt`, `inject_message` or `transform`).
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HookSpec {
    /// The event: `tool_call` (for `block`), `before_agent_start` (for the system prompt and
    /// `inject_message`), `input` (for `transform`), or any of pi's events for `command`.
    #[schemars(extend("examples" = HOOK_EVENTS))]
    pub on: String,
    /// How runtime errors name the hook. Default: `hooks[N]`.
    #[serde(default)]
    pub name: Option<String>,
    /// What the event must match. `tool`: a pattern on the tool's name (required for `block`; the only key of
    /// a `command` hook on a tool event). Other keys of a `block`: argument name -> pattern on the argument's
    /// text. `text`: the prompt pattern a `transform` rewrites.
    #[serde(default, rename = "match")]
    pub matches: Option<BTreeMap<String, PatternSpec>>,
    /// `tool_call`: refuse matching calls; this text is the reason the model sees.
    #[serde(default)]
    pub block: Option<String>,
    /// Any event: a shell command that gets the event as JSON on stdin and answers JSON on stdout. A first
    /// word starting with `./` or `../` is a file relative to this YAML, compiled into the binary.
    #[serde(default)]
    pub command: Option<String>,
    /// Seconds before a `command` is killed. Default: the runtime's.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub timeout: Option<u64>,
    /// `before_agent_start`: text appended to the system prompt for this prompt.
    #[serde(default)]
    pub append_system_prompt: Option<String>,
    /// `before_agent_start`: the system prompt for this prompt, instead of the usual one.
    #[serde(default)]
    pub replace_system_prompt: Option<String>,
    /// `before_agent_start`: a message added after the prompt (its text, or the full form).
    #[serde(default)]
    pub inject_message: Option<InjectMessageSpec>,
    /// `input`: the replacement for what `match.text` matched (`$1`, `${name}`: a regex's groups; literal
    /// text for a glob, which replaces the whole prompt).
    #[serde(default)]
    pub transform: Option<String>,
    /// With `append_system_prompt`, `replace_system_prompt` or `inject_message`: only for prompts (after
    /// expansion) that match this pattern. Default: every prompt.
    #[serde(default)]
    pub when: Option<PatternSpec>,
}

/// A text pattern: a glob matching the whole text (`*` and `?` match any character, `/` and newlines
/// included), or a regular expression that may match anywhere.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum PatternSpec {
    /// A glob, e.g. `rm -rf *`.
    Glob(String),
    /// `{ glob: ... }` or `{ regex: ... }`.
    Explicit(ExplicitPattern),
}

/// A pattern with its kind spelt out.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ExplicitPattern {
    /// A glob matching the whole text.
    Glob(String),
    /// A regular expression (Rust `regex` syntax) that may match anywhere in the text.
    Regex(String),
}

impl PatternSpec {
    /// The pattern's text.
    pub fn text(&self) -> &str {
        match self {
            Self::Glob(text) | Self::Explicit(ExplicitPattern::Glob(text) | ExplicitPattern::Regex(text)) => text,
        }
    }

    /// Whether the pattern is a regular expression.
    pub fn is_regex(&self) -> bool {
        matches!(self, Self::Explicit(ExplicitPattern::Regex(_)))
    }

    /// The name this pattern matches exactly, when it is a glob without metacharacters.
    pub fn literal(&self) -> Option<&str> {
        let text = self.text();
        let literal = !self.is_regex() && !text.contains(['*', '?', '[', ']', '{', '}', '\\']);
        literal.then_some(text)
    }

    /// The key under which the pattern's text sits in the YAML (`glob` / `regex`), when written as a mapping.
    pub fn inner_key(&self) -> Option<&'static str> {
        match self {
            Self::Glob(_) => None,
            Self::Explicit(ExplicitPattern::Glob(_)) => Some("glob"),
            Self::Explicit(ExplicitPattern::Regex(_)) => Some("regex"),
        }
    }
}

/// `inject_message`: the message's text, or the full form.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum InjectMessageSpec {
    /// The text; the message is of type `hook` and not displayed.
    Content(String),
    /// Text, type and display flag.
    Full(InjectMessageFields),
}

/// The full form of `inject_message`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InjectMessageFields {
    /// The message's text.
    pub content: String,
    /// The custom message type (what UIs and extensions key on). Default: `hook`.
    #[serde(default)]
    pub custom_type: Option<String>,
    /// Whether UIs show the message. Default: false.
    #[serde(default)]
    pub display: Option<bool>,
}

impl InjectMessageSpec {
    /// (custom type, content, display), defaults filled in.
    pub fn parts(&self) -> (&str, &str, bool) {
        match self {
            Self::Content(content) => ("hook", content, false),
            Self::Full(fields) => {
                (fields.custom_type.as_deref().unwrap_or("hook"), &fields.content, fields.display.unwrap_or(false))
            }
        }
    }
}

/// A hook's action, by its YAML key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookActionKind {
    Block,
    Command,
    AppendSystemPrompt,
    ReplaceSystemPrompt,
    InjectMessage,
    Transform,
}

impl HookActionKind {
    /// Every action, in the order the YAML reference lists them.
    pub const ALL: [Self; 6] = [
        Self::Block,
        Self::Command,
        Self::AppendSystemPrompt,
        Self::ReplaceSystemPrompt,
        Self::InjectMessage,
        Self::Transform,
    ];

    /// The action's YAML key.
    pub fn key(self) -> &'static str {
        match self {
            Self::Block => "block",
            Self::Command => "command",
            Self::AppendSystemPrompt => "append_system_prompt",
            Self::ReplaceSystemPrompt => "replace_system_prompt",
            Self::InjectMessage => "inject_message",
            Self::Transform => "transform",
        }
    }

    /// The one event the action works on (`None`: any event).
    pub fn event(self) -> Option<&'static str> {
        match self {
            Self::Block => Some("tool_call"),
            Self::Command => None,
            Self::AppendSystemPrompt | Self::ReplaceSystemPrompt | Self::InjectMessage => Some("before_agent_start"),
            Self::Transform => Some("input"),
        }
    }
}

impl HookSpec {
    /// The actions this entry has, in [`HookActionKind::ALL`] order (exactly one in a valid spec).
    pub fn actions(&self) -> Vec<HookActionKind> {
        HookActionKind::ALL
            .into_iter()
            .filter(|kind| match kind {
                HookActionKind::Block => self.block.is_some(),
                HookActionKind::Command => self.command.is_some(),
                HookActionKind::AppendSystemPrompt => self.append_system_prompt.is_some(),
                HookActionKind::ReplaceSystemPrompt => self.replace_system_prompt.is_some(),
                HookActionKind::InjectMessage => self.inject_message.is_some(),
                HookActionKind::Transform => self.transform.is_some(),
            })
            .collect()
    }

    /// The `match` entry `key`.
    pub fn matched(&self, key: &str) -> Option<&PatternSpec> {
        self.matches.as_ref().and_then(|matches| matches.get(key))
    }

    /// The path named by the command's first word when it is relative to the YAML (`./x`, `../x`).
    pub fn command_script(&self) -> Option<&str> {
        let first = self.command.as_deref()?.split_whitespace().next()?;
        (first.starts_with("./") || first.starts_with("../")).then_some(first)
    }
}
