//! Permission rules from settings.json: `{"permissions": {"default": "ask", "rules": [{"tool": "bash",
//! "match": {"command": {"regex": "^git push"}}, "action": "deny", "name": "no-push", "reason": "..."}]}}`.
//! Patterns are written as hooks' are: a string is a glob, `{"glob": ...}` or `{"regex": ...}` says which.

use serde_json::Value;

use super::{PermissionAction, PermissionRule};
use crate::extension::declarative::TextMatcher;
use crate::extension::{ArgumentPattern, TextPattern};

/// The rules and default of one settings file's `permissions` value. `origin` names the file in rule names
/// and problems (`<origin> permissions.rules[1]`). Rules that are malformed are left out and reported.
pub fn rules_from_settings(
    value: &Value,
    origin: &str,
) -> (Option<PermissionAction>, Vec<PermissionRule>, Vec<String>) {
    let mut problems = Vec::new();
    let Value::Object(object) = value else {
        problems.push(format!("{origin}: `permissions` must be an object with `default` and `rules`; ignored"));
        return (None, Vec::new(), problems);
    };
    let default = match object.get("default") {
        None => None,
        Some(Value::String(text)) if PermissionAction::parse(text).is_some() => PermissionAction::parse(text),
        Some(other) => {
            problems.push(format!(
                "{origin}: permissions.default is {other}; expected \"allow\", \"ask\" or \"deny\" (ignored)"
            ));
            None
        }
    };
    let rules = match object.get("rules") {
        None => Vec::new(),
        Some(Value::Array(rules)) => rules
            .iter()
            .enumerate()
            .filter_map(|(index, rule)| {
                let at = format!("{origin} permissions.rules[{index}]");
                rule_from_value(rule, &at)
                    .map_err(|message| problems.push(format!("{at}: {message}; rule ignored")))
                    .ok()
            })
            .collect(),
        Some(_) => {
            problems.push(format!("{origin}: permissions.rules must be an array of rules; ignored"));
            Vec::new()
        }
    };
    (default, rules, problems)
}

fn rule_from_value(value: &Value, at: &str) -> Result<PermissionRule, String> {
    let Value::Object(object) = value else { return Err("a rule is an object with `tool` and `action`".to_owned()) };
    for key in object.keys() {
        if !["tool", "match", "action", "name", "reason"].contains(&key.as_str()) {
            return Err(format!("unknown key `{key}` (a rule has tool, match, action, name, reason)"));
        }
    }
    let tool = pattern(object.get("tool").ok_or("`tool` is missing: the tool's name or a pattern on it")?)
        .map_err(|message| format!("tool: {message}"))?;
    let action = match object.get("action") {
        Some(Value::String(text)) => PermissionAction::parse(text),
        _ => None,
    }
    .ok_or("`action` must be \"allow\", \"ask\" or \"deny\"")?;
    let arguments = match object.get("match") {
        None => Vec::new(),
        Some(Value::Object(matches)) => matches
            .iter()
            .map(|(argument, value)| {
                let pattern = pattern(value).map_err(|message| format!("match.{argument}: {message}"))?;
                Ok(ArgumentPattern { argument: argument.clone(), pattern })
            })
            .collect::<Result<Vec<_>, String>>()?,
        Some(_) => return Err("`match` maps argument names to patterns".to_owned()),
    };
    let text = |key: &str| object.get(key).and_then(Value::as_str).map(str::to_owned);
    Ok(PermissionRule {
        name: text("name").unwrap_or_else(|| at.to_owned()),
        tool,
        arguments,
        action,
        reason: text("reason"),
    })
}

fn pattern(value: &Value) -> Result<TextPattern, String> {
    let pattern = written_pattern(value)?;
    TextMatcher::new(&pattern)?;
    Ok(pattern)
}

fn written_pattern(value: &Value) -> Result<TextPattern, String> {
    match value {
        Value::String(glob) => Ok(TextPattern::Glob(glob.clone())),
        Value::Object(object) if object.len() == 1 => match object.iter().next() {
            Some((key, Value::String(text))) if key == "glob" => Ok(TextPattern::Glob(text.clone())),
            Some((key, Value::String(text))) if key == "regex" => Ok(TextPattern::Regex(text.clone())),
            _ => Err("expected a glob string, {\"glob\": \"...\"} or {\"regex\": \"...\"}".to_owned()),
        },
        _ => Err("expected a glob string, {\"glob\": \"...\"} or {\"regex\": \"...\"}".to_owned()),
    }
}
