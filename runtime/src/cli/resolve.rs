//! Which model a run uses, with its key and thinking level: from flags, a continued session, the agent's
//! defaults and settings, and the configured keys.

use std::path::Path;

use super::agent_models::load_agent_models;
use super::args::CliArgs;
use super::auth::{AuthFile, KeySources, StoredCredential};
use super::config_value::{EnvLookup, process_env};
use super::error::CliError;
use super::model_scope::{resolve_model_scope, scope_patterns};
use super::model_select::{ModelRequest, ModelSource, select_model};
use super::registry::ModelRegistry;
use super::run_defaults::RunDefaults;
use super::settings::Settings;
use crate::AgentDefinition;
use crate::ai::catalog::{api_key_env_vars, clamp_thinking_level};
use crate::ai::github_copilot::{self, copilot_base_url};
use crate::ai::{Model, ThinkingLevel};
use crate::session::SessionManager;

/// The model to run, its key (with models.json headers applied to the model) and thinking level.
#[derive(Debug, Clone)]
pub struct ResolvedModel {
    pub model: Model,
    pub api_key: String,
    pub thinking: ThinkingLevel,
}

/// Chooses the model from flags, the agent's defaults and the configured keys (pi's catalog, the agent's
/// own providers and the user's models.json over them), then finds its key (`--api-key`, auth.json,
/// environment, models.json) and the thinking level (`--thinking`, a `:<level>` suffix, settings
/// `defaultThinkingLevel`, the agent's `thinking`, else medium; clamped to the model). The levels are those of
/// the run's pi release (`--pi-compat`, else settings and the YAML): `max` only at 1.5. Warnings go to stderr.
pub fn resolve_model(
    definition: &AgentDefinition,
    args: &CliArgs,
    agent_dir: &Path,
    settings: &Settings,
    env: EnvLookup<'_>,
) -> Result<ResolvedModel, CliError> {
    let registry = ModelRegistry::new(load_agent_models(definition.models_json.as_deref(), agent_dir)?);
    // Invalid settings values were reported once when the run's defaults were set up.
    let defaults = RunDefaults::new(definition, settings, args.pi_compat).0;
    let pi_compat = defaults.pi_compat;
    let auth_path = agent_dir.join("auth.json");
    let auth = AuthFile::load_or_create(&auth_path);
    let mut keys =
        KeySources { runtime: None, auth: &auth, env, models_json_keys: registry.models_json_keys(), auth_path };
    let patterns = scope_patterns(args.models.as_deref(), settings);
    let scope = if patterns.is_empty() {
        Vec::new()
    } else {
        let available: Vec<_> =
            registry.all().iter().filter(|model| keys.has_auth(&model.model.provider)).cloned().collect();
        let (scope, warnings) = resolve_model_scope(&patterns, &available, pi_compat);
        for warning in warnings {
            eprintln!("Warning: {warning}");
        }
        scope
    };
    let request = ModelRequest {
        agent_dir,
        provider: args.provider.as_deref(),
        model: args.model.as_deref(),
        default_provider: definition.default_provider.as_deref(),
        default_model: definition.default_model.as_deref(),
        saved: settings.string("defaultProvider").zip(settings.string("defaultModel")),
        scope: &scope,
        pi_compat,
    };
    let choice = select_model(&registry, &|provider| keys.has_auth(provider), &request)?;
    for warning in &choice.warnings {
        eprintln!("Warning: {warning}");
    }
    let mut model = choice.model;
    apply_copilot_base_url(&mut model, &auth);
    if let Some(key) = &args.api_key {
        // Like pi: a key given on the command line needs a model named for it.
        if choice.source == ModelSource::FirstAvailable {
            return Err(CliError::ApiKeyWithoutModel);
        }
        keys.runtime = Some((model.provider.clone(), key.clone()));
    }
    let api_key = keys.api_key(&model.provider)?.ok_or_else(|| CliError::NoApiKey {
        provider: model.provider.clone(),
        env_vars: api_key_env_vars(&model.provider).iter().map(|name| (*name).to_owned()).collect(),
        auth_path: keys.auth_path.clone(),
    })?;
    model.headers = registry.request_headers(&model, Some(&api_key), env)?;
    let requested = match args.thinking.as_deref().map(|text| ThinkingLevel::parse_at(text, pi_compat)) {
        Some(Ok(level)) => Some(level),
        Some(Err(error)) => {
            eprintln!("Warning: {error}; ignoring --thinking");
            None
        }
        None => None,
    };
    let level = requested.or(choice.thinking).unwrap_or(defaults.thinking);
    let thinking = clamp_thinking_level(&model, choice.thinking_level_map.as_ref(), level, pi_compat);
    Ok(ResolvedModel { model, api_key, thinking })
}

/// pi's `modifyModels` for GitHub Copilot: once auth.json holds a Copilot OAuth login, every Copilot model goes
/// to the base URL its access token names (over the catalog's and models.json's, which pi applies first).
/// A login to GitHub Enterprise (its `enterpriseUrl`) names the host when the token names none.
pub(super) fn apply_copilot_base_url(model: &mut Model, auth: &AuthFile) {
    if model.provider != github_copilot::PROVIDER {
        return;
    }
    if let Some(StoredCredential::OAuth { access, enterprise_url, .. }) = auth.credentials.get(github_copilot::PROVIDER)
    {
        let domain = enterprise_url.as_deref().and_then(crate::ai::oauth::login::enterprise_domain);
        model.base_url = copilot_base_url(access.as_deref().unwrap_or_default(), domain.as_deref());
    }
}

/// The model and thinking level: a continued session's own (unless flags name others), else as
/// [`resolve_model`] picks. A session model that can no longer be used is reported and replaced.
pub(super) fn resolve_with_session(
    definition: &AgentDefinition,
    args: &CliArgs,
    agent_dir: &Path,
    settings: &Settings,
    session: &SessionManager,
) -> Result<ResolvedModel, CliError> {
    if session.entries().is_empty() {
        return resolve_model(definition, args, agent_dir, settings, &process_env);
    }
    let context = session.context();
    let mut restored = args.clone();
    if args.model.is_none()
        && args.provider.is_none()
        && let Some((provider, model)) = &context.model
    {
        restored.provider = Some(provider.clone());
        restored.model = Some(model.clone());
    }
    if args.thinking.is_none() {
        restored.thinking = Some(context.thinking_level.clone());
    }
    match resolve_model(definition, &restored, agent_dir, settings, &process_env) {
        Ok(resolved) => Ok(resolved),
        Err(error) if args.model.is_none() && args.provider.is_none() => {
            eprintln!("Warning: cannot use the session's model ({error}); choosing another");
            let thinking_only = CliArgs { thinking: restored.thinking, ..args.clone() };
            resolve_model(definition, &thinking_only, agent_dir, settings, &process_env)
        }
        Err(error) => Err(error),
    }
}

/// The YAML's `compaction.model` (`provider/id`) with its key; a model that cannot be used is reported and
/// the agent's model writes the summaries instead.
pub(super) fn resolve_summary_model(
    definition: &AgentDefinition,
    args: &CliArgs,
    agent_dir: &Path,
    settings: &Settings,
) -> Option<(Model, String)> {
    let wanted = definition.summary_model.as_deref()?;
    let Some((provider, id)) = wanted.split_once('/') else {
        eprintln!("Warning: compaction model \"{wanted}\" is not provider/id; summaries use the agent's model");
        return None;
    };
    let request = CliArgs {
        provider: Some(provider.to_owned()),
        model: Some(id.to_owned()),
        api_key: None,
        thinking: None,
        ..args.clone()
    };
    match resolve_model(definition, &request, agent_dir, settings, &process_env) {
        Ok(resolved) => Some((resolved.model, resolved.api_key)),
        Err(error) => {
            eprintln!("Warning: cannot use compaction model \"{wanted}\" ({error}); summaries use the agent's model");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copilot_login_sends_copilot_models_where_its_token_says() {
        let login = |access: Option<&str>, enterprise_url: Option<&str>| AuthFile {
            credentials: [(
                "github-copilot".to_owned(),
                StoredCredential::OAuth {
                    access: access.map(str::to_owned),
                    expires: None,
                    enterprise_url: enterprise_url.map(str::to_owned),
                },
            )]
            .into(),
        };
        let auth = |access: Option<&str>| login(access, None);
        let models_json_url = "http://127.0.0.1:9";
        let mut copilot = Model::new("github-copilot", "gpt-5.4", "openai-responses", models_json_url);
        apply_copilot_base_url(&mut copilot, &auth(Some("tid=1;proxy-ep=proxy.business.githubcopilot.com;")));
        assert_eq!(copilot.base_url, "https://api.business.githubcopilot.com", "the login wins over models.json");
        apply_copilot_base_url(&mut copilot, &login(Some("tid=1"), Some("https://ghe.example.com/")));
        assert_eq!(copilot.base_url, "https://copilot-api.ghe.example.com");
        let mut other = Model::new("openai", "gpt-5.4", "openai-responses", models_json_url);
        apply_copilot_base_url(&mut other, &auth(Some("tid=1;proxy-ep=proxy.x.com")));
        assert_eq!(other.base_url, models_json_url);
        let mut keyed = Model::new("github-copilot", "gpt-5.4", "openai-responses", models_json_url);
        let api_key = AuthFile {
            credentials: [("github-copilot".to_owned(), StoredCredential::ApiKey { key: "k".into() })].into(),
        };
        apply_copilot_base_url(&mut keyed, &api_key);
        assert_eq!(keyed.base_url, models_json_url, "only an OAuth login moves the models");
    }
}
