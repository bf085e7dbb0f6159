//! Checks of `permissions:` and `model.fallbacks`: rules name real tools and their arguments (as hooks'
//! matchers do), patterns compile, names are unique, reasons say something; fallbacks are
//! `provider/id[:thinking]`.

use std::collections::BTreeMap;

use super::hooks::{Tools, check_tool_and_arguments, compile, pattern_path};
use crate::problem::{Problem, YamlPath};
use crate::spec::AgentSpec;

/// The thinking levels a fallback may name after its `:`.
const THINKING_LEVELS: [&str; 7] = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

/// Problems of `permissions`.
pub fn permission_problems(spec: &AgentSpec, out: &mut Vec<Problem>) {
    let Some(permissions) = &spec.permissions else { return };
    let tools = Tools::of(spec);
    let rules_at = YamlPath::root().key("permissions").key("rules");
    let mut names: BTreeMap<&str, usize> = BTreeMap::new();
    for (index, rule) in permissions.rules.iter().enumerate() {
        let at = rules_at.index(index);
        let match_at = at.key("match");
        check_tool_and_arguments(
            &rule.tool,
            &at.key("tool"),
            rule.argument_patterns().map(|(key, _)| key),
            &match_at,
            &tools,
            out,
        );
        let patterns = std::iter::once((at.key("tool"), &rule.tool))
            .chain(rule.argument_patterns().map(|(key, pattern)| (match_at.key(key.clone()), pattern)));
        for (pattern_at, pattern) in patterns {
            if let Err(message) = compile(pattern) {
                out.push(Problem::value(pattern_path(pattern, &pattern_at), message));
            }
        }
        if rule.reason.as_deref().is_some_and(|reason| reason.trim().is_empty()) {
            out.push(Problem::value(at.key("reason"), "the reason is empty; say why, or leave `reason` out"));
        }
        if let Some(name) = rule.name.as_deref() {
            if name.trim().is_empty() {
                out.push(Problem::value(at.key("name"), "the name is empty; name the rule, or leave `name` out"));
            } else if let Some(first) = names.insert(name, index) {
                out.push(Problem::value(
                    at.key("name"),
                    format!(
                        "permissions.rules[{first}] is named `{name}` already; messages name rules, so make it unique"
                    ),
                ));
            }
        }
    }
}

/// Problems of `model.fallbacks`.
pub fn fallback_problems(spec: &AgentSpec, out: &mut Vec<Problem>) {
    let Some(model) = &spec.model else { return };
    let at = YamlPath::root().key("model").key("fallbacks");
    for (index, fallback) in model.fallbacks.iter().enumerate() {
        if let Some(message) = fallback_problem(fallback, spec.pi_compat == Some(crate::spec::PiCompatSpec::V1_5)) {
            out.push(Problem::value(at.index(index), message));
        }
    }
}

/// What is wrong with one `provider/id[:thinking]`, if anything.
fn fallback_problem(fallback: &str, allows_max: bool) -> Option<String> {
    let (model, thinking) = match fallback.rsplit_once(':') {
        Some((model, level)) if THINKING_LEVELS.contains(&level) => (model, Some(level)),
        _ => (fallback, None),
    };
    if model.split_once('/').is_none_or(|(provider, id)| provider.is_empty() || id.is_empty()) {
        return Some(format!(
            "\"{fallback}\" is not `provider/id` with an optional `:<thinking>`, e.g. `openai/gpt-5-mini:low`"
        ));
    }
    if thinking == Some("max") && !allows_max {
        return Some("`max` is pi 1.5's level; add `pi_compat: \"1.5\"` or use `xhigh`".to_owned());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::fallback_problem;

    #[test]
    fn fallbacks_are_provider_slash_id_with_an_optional_level() {
        assert_eq!(fallback_problem("openai/gpt-5-mini", false), None);
        assert_eq!(fallback_problem("openai/gpt-5-mini:low", false), None);
        // A colon that is not a level belongs to the id (as in `ollama/qwen3:8b`).
        assert_eq!(fallback_problem("ollama/qwen3:8b", false), None);
        assert!(fallback_problem("gpt-5-mini", false).is_some_and(|message| message.contains("is not `provider/id`")));
        assert!(fallback_problem("/gpt", false).is_some());
        assert!(fallback_problem("openai/gpt-5:max", false).is_some_and(|message| message.contains("pi 1.5")));
        assert_eq!(fallback_problem("openai/gpt-5:max", true), None);
    }
}
