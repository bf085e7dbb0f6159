//! Scoped models (`--models a,b:high,provider/*`, else the `enabledModels` setting), as pi resolves them:
//! each pattern is a glob (`*`, `?`, `[`; matched, ignoring case, against `provider/id` or the id alone) or
//! a model pattern as `--model` takes it, with an optional `:<thinking>` suffix; only models with a key
//! count, in the patterns' order, each once. The scope chooses the start model (when nothing else names
//! one) and is what Ctrl+P and RPC `cycle_model` cycle through.

use globset::GlobBuilder;

use super::model_select::{ModelSource, resolve_cli_model};
use super::registry::RegisteredModel;
use crate::ai::ThinkingLevel;
use crate::protocol::PiCompat;

/// One model of the scope and the thinking level its pattern asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopedModel {
    pub provider: String,
    pub id: String,
    pub thinking: Option<ThinkingLevel>,
}

/// The scope `patterns` describe among the `available` models (those with a key); warnings name the
/// patterns that matched nothing. A `:<level>` suffix names a level of the pi release `pi_compat`.
pub fn resolve_model_scope(
    patterns: &[String],
    available: &[RegisteredModel],
    pi_compat: PiCompat,
) -> (Vec<ScopedModel>, Vec<String>) {
    let mut scope: Vec<ScopedModel> = Vec::new();
    let mut warnings = Vec::new();
    let add = |scope: &mut Vec<ScopedModel>, model: &RegisteredModel, thinking: Option<ThinkingLevel>| {
        let (provider, id) = (&model.model.provider, &model.model.id);
        if !scope.iter().any(|known| known.provider == *provider && known.id == *id) {
            scope.push(ScopedModel { provider: provider.clone(), id: id.clone(), thinking });
        }
    };
    for pattern in patterns.iter().map(|pattern| pattern.trim()).filter(|pattern| !pattern.is_empty()) {
        if pattern.contains(['*', '?', '[']) {
            let (glob, thinking) = split_thinking(pattern, pi_compat);
            let matcher = match GlobBuilder::new(glob).case_insensitive(true).literal_separator(true).build() {
                Ok(glob) => glob.compile_matcher(),
                Err(error) => {
                    warnings.push(format!("the model pattern \"{pattern}\" is not a valid glob ({error})"));
                    continue;
                }
            };
            let matching: Vec<&RegisteredModel> = available
                .iter()
                .filter(|model| {
                    let full = format!("{}/{}", model.model.provider, model.model.id);
                    matcher.is_match(&full) || matcher.is_match(&model.model.id)
                })
                .collect();
            if matching.is_empty() {
                warnings.push(format!("no models match pattern \"{pattern}\""));
            }
            for model in matching {
                add(&mut scope, model, thinking);
            }
            continue;
        }
        // A plain pattern resolves as `--model` does, but only to a model that exists and has a key.
        let found =
            resolve_cli_model(available, None, pattern, ModelSource::Flags, pi_compat).ok().and_then(|choice| {
                let model = available
                    .iter()
                    .find(|known| known.model.provider == choice.model.provider && known.model.id == choice.model.id)?;
                Some((model, choice.thinking))
            });
        match found {
            Some((model, thinking)) => add(&mut scope, model, thinking),
            None => warnings.push(format!("no models match pattern \"{pattern}\"")),
        }
    }
    (scope, warnings)
}

/// `pattern` without a valid `:<thinking>` suffix (a level of the pi release `pi_compat`), and that level.
fn split_thinking(pattern: &str, pi_compat: PiCompat) -> (&str, Option<ThinkingLevel>) {
    match pattern.rsplit_once(':') {
        Some((rest, suffix)) => match ThinkingLevel::parse_at(suffix, pi_compat) {
            Ok(level) => (rest, Some(level)),
            Err(_) => (pattern, None),
        },
        None => (pattern, None),
    }
}

/// The scope's patterns: `--models`, else the `enabledModels` setting (a list of patterns).
pub fn scope_patterns(models_flag: Option<&str>, settings: &super::settings::Settings) -> Vec<String> {
    match models_flag {
        Some(text) => split_patterns(text),
        None => settings
            .value("enabledModels")
            .and_then(serde_json::Value::as_array)
            .map(|patterns| patterns.iter().filter_map(serde_json::Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default(),
    }
}

/// The comma-separated patterns of `--models` (empty ones dropped).
pub fn split_patterns(text: &str) -> Vec<String> {
    text.split(',').map(str::trim).filter(|pattern| !pattern.is_empty()).map(str::to_owned).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::Model;

    fn model(provider: &str, id: &str) -> RegisteredModel {
        RegisteredModel {
            model: Model::new(provider, id, "openai-completions", "http://127.0.0.1:9"),
            thinking_level_map: None,
        }
    }

    fn ids(scope: &[ScopedModel]) -> Vec<String> {
        scope.iter().map(|scoped| format!("{}/{}", scoped.provider, scoped.id)).collect()
    }

    #[test]
    fn globs_and_plain_patterns_keep_their_order_once_each() {
        let available =
            [model("anthropic", "claude-sonnet-4-5"), model("anthropic", "claude-haiku-4-5"), model("openai", "gpt-5")];
        let patterns = split_patterns("gpt-5:high, *SONNET*, anthropic/*, nothing-like-this");
        let (scope, warnings) = resolve_model_scope(&patterns, &available, PiCompat::V0_73);
        assert_eq!(ids(&scope), ["openai/gpt-5", "anthropic/claude-sonnet-4-5", "anthropic/claude-haiku-4-5"]);
        assert_eq!(scope[0].thinking, Some(ThinkingLevel::High));
        assert_eq!(scope[1].thinking, None);
        assert_eq!(warnings, ["no models match pattern \"nothing-like-this\""]);
        let (scope, _) = resolve_model_scope(&split_patterns("anthropic/*:low"), &available, PiCompat::V0_73);
        assert!(scope.iter().all(|scoped| scoped.thinking == Some(ThinkingLevel::Low)), "{scope:?}");
        assert_eq!(scope.len(), 2);
    }

    #[test]
    fn a_max_suffix_names_a_level_only_at_1_5() {
        let available = [model("anthropic", "claude-opus-4-7"), model("openai", "gpt-5")];
        let patterns = split_patterns("anthropic/*:max, gpt-5:max");
        let (scope, warnings) = resolve_model_scope(&patterns, &available, PiCompat::V1_5);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert!(scope.iter().all(|scoped| scoped.thinking == Some(ThinkingLevel::Max)), "{scope:?}");
        assert_eq!(scope.len(), 2);
        let (scope, warnings) = resolve_model_scope(&patterns, &available, PiCompat::V0_73);
        assert!(scope.is_empty(), "{scope:?}");
        assert_eq!(warnings.len(), 2, "{warnings:?}");
    }
}
