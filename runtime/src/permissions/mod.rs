//! Permissions: which tool calls run at once, which wait for the person's approval and which never run.
//! The agent's YAML (`permissions:`) and settings.json (`permissions`, whose rules come first) give rules
//! with the matchers hooks use (a pattern on the tool's name, patterns on its arguments); the first rule
//! that matches a call decides, and the default decides the rest. [`PermissionsExtension`] applies them
//! to every tool call: built-in, custom, MCP and sub-agent tools alike.

mod extension;
mod settings;

use serde_json::Value;

use crate::extension::declarative::{TextMatcher, argument_text};
use crate::extension::{ArgumentPattern, TextPattern};

pub use extension::{ALLOW_ALWAYS_CHOICE, ALLOW_ONCE_CHOICE, ApprovalDialog, DENY_CHOICE, PermissionsExtension};
pub use settings::rules_from_settings;

/// What happens to a call a rule (or the default) covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum PermissionAction {
    /// The call runs.
    #[default]
    Allow,
    /// The person approves or refuses it first (refused where nobody can be asked, unless `--approve-all`).
    Ask,
    /// The call never runs; the model is told which rule refused it.
    Deny,
}

impl PermissionAction {
    /// The YAML and settings spelling (`allow`, `ask`, `deny`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Ask => "ask",
            Self::Deny => "deny",
        }
    }

    /// Reads the YAML and settings spelling.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "allow" => Some(Self::Allow),
            "ask" => Some(Self::Ask),
            "deny" => Some(Self::Deny),
            _ => None,
        }
    }
}

/// One rule: calls of a tool matching `tool` whose listed arguments all match get `action`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermissionRule {
    /// How messages name the rule: its `name`, else where it was written (`permissions.rules[2]`).
    pub name: String,
    pub tool: TextPattern,
    pub arguments: Vec<ArgumentPattern>,
    pub action: PermissionAction,
    /// Said to the model (and the person) along with the rule's name when the rule refuses a call.
    pub reason: Option<String>,
}

/// The YAML's `permissions:`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PermissionsDefinition {
    /// What calls no rule matches get.
    pub default: PermissionAction,
    pub rules: Vec<PermissionRule>,
}

impl PermissionsDefinition {
    /// Whether every call runs without a check (no rules, default `allow`).
    pub fn allows_everything(&self) -> bool {
        self.default == PermissionAction::Allow && self.rules.is_empty()
    }
}

/// A rule with its patterns compiled.
#[derive(Debug, Clone)]
pub(crate) struct CompiledRule {
    pub name: String,
    tool: TextMatcher,
    arguments: Vec<(String, TextMatcher)>,
    pub action: PermissionAction,
    pub reason: Option<String>,
}

impl CompiledRule {
    fn new(rule: &PermissionRule) -> Result<Self, String> {
        let compile = |pattern: &TextPattern| {
            TextMatcher::new(pattern).map_err(|error| format!("permission rule `{}`: {error}", rule.name))
        };
        let arguments = rule
            .arguments
            .iter()
            .map(|argument| Ok((argument.argument.clone(), compile(&argument.pattern)?)))
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Self {
            name: rule.name.clone(),
            tool: compile(&rule.tool)?,
            arguments,
            action: rule.action,
            reason: rule.reason.clone(),
        })
    }

    fn matches(&self, tool_name: &str, input: &Value) -> bool {
        self.tool.is_match(tool_name)
            && self.arguments.iter().all(|(argument, pattern)| {
                input.get(argument).is_some_and(|value| pattern.is_match(&argument_text(value)))
            })
    }
}

/// The rules in force, compiled: the settings' rules, then the YAML's, then the default.
#[derive(Debug, Clone)]
pub struct Permissions {
    default: PermissionAction,
    rules: Vec<CompiledRule>,
}

/// What the permissions say of one call: the action, and the rule that chose it (`None`: the default).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Verdict<'a> {
    pub action: PermissionAction,
    pub rule: Option<&'a CompiledRule>,
}

impl Permissions {
    /// `rules` in order (first match wins) over `default`. The error names the rule whose pattern is invalid.
    pub fn new(default: PermissionAction, rules: &[PermissionRule]) -> Result<Self, String> {
        let rules = rules.iter().map(CompiledRule::new).collect::<Result<Vec<_>, String>>()?;
        Ok(Self { default, rules })
    }

    /// Whether every call runs without a check.
    pub fn allows_everything(&self) -> bool {
        self.default == PermissionAction::Allow && self.rules.is_empty()
    }

    /// The first matching rule's action, else the default.
    pub(crate) fn decide(&self, tool_name: &str, input: &Value) -> Verdict<'_> {
        match self.rules.iter().find(|rule| rule.matches(tool_name, input)) {
            Some(rule) => Verdict { action: rule.action, rule: Some(rule) },
            None => Verdict { action: self.default, rule: None },
        }
    }

    /// The action a call of `tool_name` with `input` gets (for tests and UIs).
    pub fn action_for(&self, tool_name: &str, input: &Value) -> PermissionAction {
        self.decide(tool_name, input).action
    }
}

#[cfg(test)]
mod tests;
