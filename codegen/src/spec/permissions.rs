//! `permissions:` in the agent YAML: which tool calls run at once, wait for the person's approval, or never
//! run; rules use the hooks' matchers, the first matching rule wins, and the default takes the rest.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use super::PatternSpec;

/// Tool-call permissions. settings.json's `permissions` rules come before these, and its `default` wins.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PermissionsSpec {
    /// What calls no rule matches get. Default: allow.
    #[serde(default)]
    pub default: Option<PermissionActionSpec>,
    /// Rules in order; the first whose `tool` and `match` patterns fit a call decides.
    #[serde(default)]
    pub rules: Vec<PermissionRuleSpec>,
}

/// One permission rule.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PermissionRuleSpec {
    /// How messages name the rule. Default: `permissions.rules[N]`.
    #[serde(default)]
    pub name: Option<String>,
    /// The tool's name, or a pattern on it (`mcp__*`, `{ regex: ... }`): built-in, custom, MCP and sub-agent
    /// tools alike.
    pub tool: PatternSpec,
    /// Argument name -> pattern on the argument's text (numbers and booleans as JSON); all must match.
    #[serde(default, rename = "match")]
    pub matches: Option<BTreeMap<String, PatternSpec>>,
    /// `allow` runs the call, `ask` waits for the person's approval (refused in print and json mode unless
    /// `--approve-all`), `deny` never runs it.
    pub action: PermissionActionSpec,
    /// Told to the model with the rule's name when the rule refuses a call.
    #[serde(default)]
    pub reason: Option<String>,
}

/// A permission's action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PermissionActionSpec {
    Allow,
    Ask,
    Deny,
}

impl PermissionRuleSpec {
    /// The `match` entries, as (argument, pattern).
    pub fn argument_patterns(&self) -> impl Iterator<Item = (&String, &PatternSpec)> {
        self.matches.iter().flatten()
    }
}
