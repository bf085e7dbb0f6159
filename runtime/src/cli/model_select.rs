//! Choosing the model as pi does: `--model` (with `--provider`, `provider/id`, `:<thinking>`,
//! fuzzy matching, custom ids for a known provider), else the model the user chose last (settings
//! `defaultProvider` / `defaultModel`, when it exists and has a key), else the agent's default, else the
//! first model with a key from pi's default-per-provider list, else any model with a key.

use std::path::Path;

use super::error::CliError;
use super::model_match::{close_matches, parse_model_pattern};
use super::model_scope::ScopedModel;
use super::registry::{ModelRegistry, RegisteredModel};
use crate::ai::catalog::{DEFAULT_MODEL_PER_PROVIDER, ThinkingLevelMap, default_model_id};
use crate::ai::{Model, ThinkingLevel};
use crate::protocol::PiCompat;

/// What the command line and the agent definition ask for.
#[derive(Debug, Clone, Copy)]
pub struct ModelRequest<'a> {
    /// Where auth.json and models.json live (named in errors).
    pub agent_dir: &'a Path,
    /// `--provider`.
    pub provider: Option<&'a str>,
    /// `--model`.
    pub model: Option<&'a str>,
    /// The agent's default provider and model.
    pub default_provider: Option<&'a str>,
    pub default_model: Option<&'a str>,
    /// The model the user chose last (settings `defaultProvider` / `defaultModel`).
    pub saved: Option<(&'a str, &'a str)>,
    /// The scoped models (`--models`, `enabledModels`), when any.
    pub scope: &'a [ScopedModel],
    /// The pi release whose thinking levels a `:<level>` suffix may name (`max` from 1.5 on).
    pub pi_compat: PiCompat,
}

/// How the model was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModelSource {
    /// Named by `--model` or `--provider`.
    Flags,
    /// The model the user chose last (settings).
    Saved,
    /// From the scoped models (`--models`).
    Scope,
    /// The agent's default.
    AgentDefault,
    /// Picked among the models that have a key.
    FirstAvailable,
}

/// The chosen model.
#[derive(Debug, Clone)]
pub struct ModelChoice {
    pub model: Model,
    pub thinking_level_map: Option<ThinkingLevelMap>,
    /// A thinking level given as a `:<level>` suffix of the pattern.
    pub thinking: Option<ThinkingLevel>,
    /// Notices for stderr (e.g. an unknown id used as a custom model id).
    pub warnings: Vec<String>,
    pub source: ModelSource,
}

impl ModelChoice {
    fn new(registered: &RegisteredModel, source: ModelSource) -> Self {
        Self {
            model: registered.model.clone(),
            thinking_level_map: registered.thinking_level_map.clone(),
            thinking: None,
            warnings: Vec::new(),
            source,
        }
    }
}

/// Chooses the model. `has_auth` tells whether a provider has a key configured (it decides which
/// models are available when nothing names one).
pub fn select_model(
    registry: &ModelRegistry,
    has_auth: &dyn Fn(&str) -> bool,
    request: &ModelRequest<'_>,
) -> Result<ModelChoice, CliError> {
    let models = registry.all();
    if let Some(pattern) = request.model {
        return resolve_cli_model(models, request.provider, pattern, ModelSource::Flags, request.pi_compat);
    }
    if let Some(provider) = request.provider {
        // pi ignores --provider without --model; here it selects that provider's default model.
        return provider_default(models, provider, ModelSource::Flags);
    }
    // With scoped models, the saved choice when it is among them, else the first of them (with its level).
    if let Some(first) = request.scope.first() {
        let saved = request.saved.and_then(|(provider, id)| {
            request.scope.iter().find(|scoped| scoped.provider == provider && scoped.id == id)
        });
        let scoped = saved.unwrap_or(first);
        if let Some(found) = registry.find(&scoped.provider, &scoped.id) {
            return Ok(ModelChoice { thinking: scoped.thinking, ..ModelChoice::new(found, ModelSource::Scope) });
        }
    }
    // Like pi, a saved choice counts only while its model exists and has a key; otherwise it is passed over.
    if let Some((provider, id)) = request.saved
        && let Some(found) = registry.find(provider, id).filter(|found| has_auth(&found.model.provider))
    {
        return Ok(ModelChoice::new(found, ModelSource::Saved));
    }
    let mut warnings = Vec::new();
    let default = match (request.default_provider, request.default_model) {
        (Some(provider), Some(id)) => match registry.find(provider, id) {
            Some(found) => Some(Ok(ModelChoice::new(found, ModelSource::AgentDefault))),
            None => Some(resolve_cli_model(models, Some(provider), id, ModelSource::AgentDefault, request.pi_compat)),
        },
        (None, Some(pattern)) => {
            Some(resolve_cli_model(models, None, pattern, ModelSource::AgentDefault, request.pi_compat))
        }
        (Some(provider), None) => Some(provider_default(models, provider, ModelSource::AgentDefault)),
        (None, None) => None,
    };
    match default {
        Some(Ok(choice)) => return Ok(choice),
        Some(Err(error)) => warnings.push(format!("the agent's default model is not usable ({error})")),
        None => {}
    }
    let available: Vec<&RegisteredModel> = models.iter().filter(|m| has_auth(&m.model.provider)).collect();
    let preferred = DEFAULT_MODEL_PER_PROVIDER.iter().find_map(|(provider, id)| {
        available.iter().find(|m| m.model.provider == *provider && m.model.id == *id).copied()
    });
    match preferred.or_else(|| available.first().copied()) {
        Some(found) => Ok(ModelChoice { warnings, ..ModelChoice::new(found, ModelSource::FirstAvailable) }),
        None => {
            for warning in warnings {
                eprintln!("Warning: {warning}");
            }
            Err(CliError::NoModelAvailable { agent_dir: request.agent_dir.to_path_buf() })
        }
    }
}

/// The canonical spelling of `name` among the providers (case-insensitive).
fn canonical_provider<'a>(models: &'a [RegisteredModel], name: &str) -> Option<&'a str> {
    let lower = name.to_lowercase();
    models.iter().map(|m| m.model.provider.as_str()).find(|provider| provider.to_lowercase() == lower)
}

/// `provider`'s default model (pi's default-per-provider id), else its first model.
fn provider_default(models: &[RegisteredModel], provider: &str, source: ModelSource) -> Result<ModelChoice, CliError> {
    let provider =
        canonical_provider(models, provider).ok_or_else(|| CliError::UnknownProvider(provider.to_owned()))?;
    let of_provider = || models.iter().filter(|m| m.model.provider == provider);
    let default = default_model_id(provider).and_then(|id| of_provider().find(|m| m.model.id == id));
    default
        .or_else(|| of_provider().next())
        .map(|found| ModelChoice::new(found, source))
        .ok_or_else(|| CliError::UnknownProvider(provider.to_owned()))
}

/// pi's `resolveCliModel`: resolves `--model` (and `--provider`) against every model, keyed or not; a
/// `:<level>` suffix names a level of the pi release `pi_compat`.
pub fn resolve_cli_model(
    models: &[RegisteredModel],
    cli_provider: Option<&str>,
    cli_model: &str,
    source: ModelSource,
    pi_compat: PiCompat,
) -> Result<ModelChoice, CliError> {
    if models.is_empty() {
        return Err(CliError::NoModels);
    }
    let all: Vec<&RegisteredModel> = models.iter().collect();
    let mut provider = match cli_provider {
        Some(name) => Some(canonical_provider(models, name).ok_or_else(|| CliError::UnknownProvider(name.to_owned()))?),
        None => None,
    };
    let mut pattern = cli_model;
    let mut inferred = false;
    if provider.is_none()
        && let Some((prefix, rest)) = cli_model.split_once('/')
        && let Some(canonical) = canonical_provider(models, prefix)
    {
        provider = Some(canonical);
        pattern = rest;
        inferred = true;
    }
    let lower = cli_model.to_lowercase();
    let exact_anywhere = || {
        all.iter().copied().find(|m| {
            m.model.id.to_lowercase() == lower || format!("{}/{}", m.model.provider, m.model.id).to_lowercase() == lower
        })
    };
    if provider.is_none()
        && let Some(exact) = exact_anywhere()
    {
        return Ok(ModelChoice::new(exact, source));
    }
    if cli_provider.is_some()
        && let Some(name) = provider
        && lower.starts_with(&format!("{}/", name.to_lowercase()))
    {
        pattern = cli_model.get(name.len() + 1..).unwrap_or(pattern);
    }
    let candidates: Vec<&RegisteredModel> = match provider {
        Some(name) => all.iter().copied().filter(|m| m.model.provider == name).collect(),
        None => all.clone(),
    };
    let found = parse_model_pattern(pattern, &candidates, pi_compat);
    if let Some(model) = found.model {
        return Ok(ModelChoice { thinking: found.thinking, ..ModelChoice::new(model, source) });
    }
    if inferred {
        if let Some(exact) = exact_anywhere() {
            return Ok(ModelChoice::new(exact, source));
        }
        let fallback = parse_model_pattern(cli_model, &all, pi_compat);
        if let Some(model) = fallback.model {
            return Ok(ModelChoice { thinking: fallback.thinking, ..ModelChoice::new(model, source) });
        }
    }
    if let Some(name) = provider {
        // As pi does, an unknown id for a known provider is sent as is, with the settings of the
        // provider's default (or first) model.
        let base = provider_default(models, name, source)?;
        let mut choice = ModelChoice { warnings: Vec::new(), ..base };
        choice.model.id = pattern.to_owned();
        choice.model.name = pattern.to_owned();
        choice.warnings.push(format!(
            "model \"{pattern}\" is not in the model list of provider \"{name}\"; sending that id with the provider's settings"
        ));
        return Ok(choice);
    }
    let display = match provider {
        Some(name) => format!("{name}/{pattern}"),
        None => cli_model.to_owned(),
    };
    Err(CliError::ModelNotFound { close_matches: close_matches(cli_model, &all, 5), pattern: display })
}

#[cfg(test)]
#[path = "model_select_tests.rs"]
mod tests;
