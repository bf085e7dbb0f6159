//! The providers a run knows besides pi's catalog: the agent's own (models.json text compiled from its
//! YAML) with the user's `<agent dir>/models.json` laid over them provider by provider: a provider the
//! user defines replaces the agent's definition of it entirely.

use std::path::Path;

use super::error::CliError;
use super::models_json::{ModelsConfig, load_models_json, parse_models_json};

/// The agent's providers with the user's models.json applied. A problem in either is an error (the
/// agent's names "the agent's built-in providers", the user's names the file).
pub fn load_agent_models(builtin: Option<&str>, agent_dir: &Path) -> Result<ModelsConfig, CliError> {
    let agent = parse_builtin(builtin)?;
    let user = load_models_json(&agent_dir.join("models.json"))?;
    Ok(merge_models_configs(agent, user))
}

/// As [`load_agent_models`], but a broken part is left out with a warning (what `--list-models` does).
pub fn load_agent_models_lenient(builtin: Option<&str>, agent_dir: &Path) -> (ModelsConfig, Vec<String>) {
    let mut warnings = Vec::new();
    let agent = parse_builtin(builtin).unwrap_or_else(|error| {
        warnings.push(format!("{error}; they are ignored"));
        ModelsConfig::default()
    });
    let user = load_models_json(&agent_dir.join("models.json")).unwrap_or_else(|error| {
        warnings.push(format!("models.json is ignored: {error}"));
        ModelsConfig::default()
    });
    (merge_models_configs(agent, user), warnings)
}

fn parse_builtin(builtin: Option<&str>) -> Result<ModelsConfig, CliError> {
    match builtin {
        None => Ok(ModelsConfig::default()),
        Some(text) => parse_models_json(text).map_err(CliError::AgentModelsJson),
    }
}

/// `user` over `agent`: the agent's providers in their order, each replaced by the user's provider of the
/// same name when there is one, then the user's other providers in file order.
pub fn merge_models_configs(agent: ModelsConfig, user: ModelsConfig) -> ModelsConfig {
    if agent.providers.is_empty() {
        return user;
    }
    let mut user_providers: Vec<Option<_>> = user.providers.into_iter().map(Some).collect();
    let mut providers = Vec::with_capacity(agent.providers.len() + user_providers.len());
    for provider in agent.providers {
        let replacement =
            user_providers.iter_mut().find(|slot| slot.as_ref().is_some_and(|user| user.name == provider.name));
        providers.push(replacement.and_then(Option::take).unwrap_or(provider));
    }
    providers.extend(user_providers.into_iter().flatten());
    ModelsConfig { providers }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AGENT: &str = r#"{"providers": {
        "house": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "HOUSE_KEY",
                  "models": [{"id": "h1"}, {"id": "h2"}]},
        "shared": {"baseUrl": "http://127.0.0.1:8/v1", "api": "openai-completions", "apiKey": "agent-key",
                   "models": [{"id": "agent-model"}]}
    }}"#;

    const USER: &str = r#"{"providers": {
        "mine": {"baseUrl": "http://127.0.0.1:7/v1", "api": "openai-completions", "apiKey": "k", "models": [{"id": "m"}]},
        "shared": {"baseUrl": "http://127.0.0.1:6/v1", "api": "openai-responses", "apiKey": "user-key",
                   "models": [{"id": "user-model"}]}
    }}"#;

    fn agent_dir_with(models_json: Option<&str>) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        if let Some(text) = models_json {
            std::fs::write(dir.path().join("models.json"), text).expect("write");
        }
        dir
    }

    #[test]
    fn the_users_provider_replaces_the_agents_entirely() {
        let dir = agent_dir_with(Some(USER));
        let config = load_agent_models(Some(AGENT), dir.path()).expect("valid");
        let names: Vec<&str> = config.providers.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["house", "shared", "mine"]);
        let shared = &config.providers[1];
        assert_eq!(shared.api_key.as_deref(), Some("user-key"));
        assert_eq!(shared.api.as_deref(), Some("openai-responses"));
        let ids: Vec<&str> = shared.models.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(ids, ["user-model"], "nothing of the agent's definition is kept");
        assert_eq!(config.providers[0].models.len(), 2);
    }

    #[test]
    fn without_a_user_file_the_agents_providers_are_used() {
        let dir = agent_dir_with(None);
        let config = load_agent_models(Some(AGENT), dir.path()).expect("valid");
        assert_eq!(config.providers.len(), 2);
        let config = load_agent_models(None, dir.path()).expect("valid");
        assert!(config.providers.is_empty());
    }

    #[test]
    fn broken_builtin_providers_are_named_as_the_agents() {
        let dir = agent_dir_with(Some(USER));
        let error = load_agent_models(Some("{\"providers\": {\"x\": {\"models\": [{\"id\": \"m\"}]}}}"), dir.path())
            .expect_err("invalid")
            .to_string();
        assert!(error.contains("the agent's built-in providers"), "{error}");
        assert!(error.contains("\"baseUrl\" is required"), "{error}");
        assert!(!error.contains("models.json:"), "no file path for compiled-in text: {error}");
        let (config, warnings) = load_agent_models_lenient(Some("{ nope"), dir.path());
        assert_eq!(config.providers.len(), 2, "the user's file still counts");
        assert!(warnings.len() == 1 && warnings[0].contains("the agent's built-in providers"), "{warnings:?}");
    }

    #[test]
    fn a_broken_user_file_is_an_error_with_its_path() {
        let dir = agent_dir_with(Some("{ nope"));
        let error = load_agent_models(Some(AGENT), dir.path()).expect_err("invalid").to_string();
        assert!(error.contains("models.json"), "{error}");
        let (config, warnings) = load_agent_models_lenient(Some(AGENT), dir.path());
        assert_eq!(config.providers.len(), 2, "the agent's providers are still listed");
        assert!(warnings[0].starts_with("models.json is ignored"), "{warnings:?}");
    }
}
