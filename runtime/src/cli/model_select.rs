//! Choosing the model from `--provider`, `--model` (`provider/id`, `id:thinking`) and the agent's defaults.

use crate::ai::{Model, ThinkingLevel};

use super::error::CliError;

/// The chosen model and a thinking level given as a `:suffix` of `--model`.
#[derive(Debug, Clone)]
pub struct ModelChoice {
    pub model: Model,
    pub thinking: Option<ThinkingLevel>,
    /// The id matched no configured model and is used as given with the provider's settings.
    pub custom_id: bool,
}

/// Picks a model among `models`. `provider`/`pattern` come from the flags, else the defaults.
pub fn select_model(
    models: &[Model],
    provider: Option<&str>,
    pattern: Option<&str>,
    models_path: &str,
) -> Result<ModelChoice, CliError> {
    let mut thinking = None;
    let mut provider = provider.map(str::to_owned);
    let mut pattern = pattern.map(str::to_owned);
    if let Some(text) = pattern.clone() {
        let (base, suffix) = split_thinking(&text);
        thinking = suffix;
        pattern = Some(base.to_owned());
        if provider.is_none()
            && let Some((prefix, rest)) = base.split_once('/')
            && models.iter().any(|model| model.provider == prefix)
        {
            provider = Some(prefix.to_owned());
            pattern = Some(rest.to_owned());
        }
    }
    let candidates: Vec<&Model> = match &provider {
        Some(name) => models.iter().filter(|model| &model.provider == name).collect(),
        None => models.iter().collect(),
    };
    if candidates.is_empty() {
        return Err(match provider {
            Some(name) if !models.is_empty() => CliError::ProviderNotFound(name, models_path.to_owned()),
            _ => CliError::NoModels { path: models_path.into() },
        });
    }
    let Some(pattern) = pattern else {
        return Ok(ModelChoice { model: candidates[0].clone(), thinking, custom_id: false });
    };
    let found = candidates
        .iter()
        .find(|model| model.id == pattern)
        .or_else(|| candidates.iter().find(|model| model.id.eq_ignore_ascii_case(&pattern)))
        .or_else(|| {
            let needle = pattern.to_lowercase();
            candidates
                .iter()
                .find(|model| model.id.to_lowercase().contains(&needle) || model.name.to_lowercase().contains(&needle))
        });
    match (found, &provider) {
        (Some(model), _) => Ok(ModelChoice { model: (*model).clone(), thinking, custom_id: false }),
        // As pi does, an unknown id for a known provider is tried as a custom model of that provider.
        (None, Some(_)) => {
            let mut model = candidates[0].clone();
            model.id = pattern.clone();
            model.name = pattern;
            Ok(ModelChoice { model, thinking, custom_id: true })
        }
        (None, None) => Err(CliError::ModelNotFound {
            pattern,
            provider,
            available: candidates.iter().map(|m| format!("{}/{}", m.provider, m.id)).collect::<Vec<_>>().join(", "),
        }),
    }
}

/// Splits `id:level` when the suffix is a thinking level.
fn split_thinking(text: &str) -> (&str, Option<ThinkingLevel>) {
    if let Some((base, suffix)) = text.rsplit_once(':')
        && let Ok(level) = suffix.parse::<ThinkingLevel>()
    {
        return (base, Some(level));
    }
    (text, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn models() -> Vec<Model> {
        vec![
            Model::new("mock", "m", "openai-completions", "http://x"),
            Model::new("mock", "mock-large", "openai-completions", "http://x"),
            Model::new("other", "m", "openai-completions", "http://y"),
        ]
    }

    fn pick(provider: Option<&str>, pattern: Option<&str>) -> Result<ModelChoice, CliError> {
        select_model(&models(), provider, pattern, "models.json")
    }

    #[test]
    fn exact_id_within_provider() {
        let choice = pick(Some("other"), Some("m")).expect("found");
        assert_eq!((choice.model.provider.as_str(), choice.model.id.as_str()), ("other", "m"));
    }

    #[test]
    fn provider_prefix_and_thinking_suffix() {
        let choice = pick(None, Some("other/m:high")).expect("found");
        assert_eq!(choice.model.provider, "other");
        assert_eq!(choice.thinking, Some(ThinkingLevel::High));
    }

    #[test]
    fn partial_match_and_defaults() {
        assert_eq!(pick(None, Some("LARGE")).expect("found").model.id, "mock-large");
        assert_eq!(pick(Some("mock"), None).expect("found").model.id, "m");
    }

    #[test]
    fn unknown_id_of_a_known_provider_is_a_custom_id() {
        let choice = pick(Some("other"), Some("brand-new")).expect("custom");
        assert!(choice.custom_id);
        assert_eq!((choice.model.provider.as_str(), choice.model.id.as_str()), ("other", "brand-new"));
        assert_eq!(choice.model.base_url, "http://y");
    }

    #[test]
    fn errors_name_what_is_missing() {
        let error = pick(None, Some("zzz")).expect_err("missing").to_string();
        assert!(error.contains("\"zzz\"") && error.contains("mock/m"), "{error}");
        let error = pick(Some("nope"), None).expect_err("missing").to_string();
        assert!(error.contains("\"nope\""), "{error}");
        let error = select_model(&[], None, None, "models.json").expect_err("none").to_string();
        assert!(error.contains("no models"), "{error}");
    }
}
