//! The models a running agent can switch to (RPC `set_model`, `cycle_model`, `get_available_models`): the
//! run's model registry, which models have a key (pi's "available"), and a chosen model's key and headers.

use std::path::{Path, PathBuf};

use super::agent_models::load_agent_models;
use super::auth::{AuthFile, KeySources};
use super::config_value::process_env;
use super::error::CliError;
use super::model_scope::{ScopedModel, resolve_model_scope};
use super::registry::{ModelRegistry, RegisteredModel};
use crate::AgentDefinition;
use crate::ai::catalog::ThinkingLevelMap;
use crate::ai::{Model, ThinkingLevel};
use crate::protocol::PiCompat;

/// The registry with the key sources of this run.
pub struct ModelCatalog {
    registry: ModelRegistry,
    auth: AuthFile,
    auth_path: PathBuf,
    /// `--api-key`, which belongs to the provider of the model the run started with.
    runtime_key: Option<(String, String)>,
    /// The scoped models (`--models`, `enabledModels`) that cycling goes through, when any.
    scope: Vec<ScopedModel>,
    /// The pi release whose thinking levels the scope's patterns may name.
    pi_compat: PiCompat,
}

/// Where cycling goes next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CycleTarget {
    pub provider: String,
    pub id: String,
    /// The level the scope's pattern asked for (`None`: the current preference, clamped).
    pub thinking: Option<ThinkingLevel>,
    /// Whether the target came from the scoped models (RPC's `isScoped`).
    pub scoped: bool,
}

/// A model ready to use: with its models.json headers, its key and its thinking map.
pub struct ChosenModel {
    pub model: Model,
    pub api_key: String,
    pub thinking_level_map: Option<ThinkingLevelMap>,
}

impl ModelCatalog {
    /// Loads the agent's models and the user's models.json; `cli_key` is `--api-key` for `start_provider`.
    pub fn load(
        definition: &AgentDefinition,
        agent_dir: &Path,
        cli_key: Option<&str>,
        start_provider: Option<&str>,
    ) -> Result<Self, CliError> {
        let registry = ModelRegistry::new(load_agent_models(definition.models_json.as_deref(), agent_dir)?);
        let auth_path = agent_dir.join("auth.json");
        let auth = AuthFile::load_or_create(&auth_path);
        let runtime_key = cli_key.zip(start_provider).map(|(key, provider)| (provider.to_owned(), key.to_owned()));
        Ok(Self { registry, auth, auth_path, runtime_key, scope: Vec::new(), pi_compat: definition.pi_compat })
    }

    fn keys(&self) -> KeySources<'_> {
        KeySources {
            runtime: self.runtime_key.clone(),
            auth: &self.auth,
            env: &process_env,
            models_json_keys: self.registry.models_json_keys(),
            auth_path: self.auth_path.clone(),
        }
    }

    /// The models whose provider has a key configured, in pi's order.
    pub fn available(&self) -> Vec<&RegisteredModel> {
        let keys = self.keys();
        self.registry.all().iter().filter(|registered| keys.has_auth(&registered.model.provider)).collect()
    }

    /// `(provider, id)` of the models with a key, in the order of [`ModelCatalog::available`].
    pub fn available_ids(&self) -> Vec<(String, String)> {
        self.available()
            .iter()
            .map(|registered| (registered.model.provider.clone(), registered.model.id.clone()))
            .collect()
    }

    /// The run's pi release, whose thinking levels the scope's `:<level>` suffixes may name (the agent's
    /// `pi_compat` until this is called; call it before [`ModelCatalog::with_scope`]).
    pub fn with_pi_compat(mut self, pi_compat: PiCompat) -> Self {
        self.pi_compat = pi_compat;
        self
    }

    /// Cycling goes through the models `patterns` name (`--models`, `enabledModels`; see
    /// [`resolve_model_scope`]) instead of every model with a key.
    pub fn with_scope(mut self, patterns: &[String]) -> Self {
        if !patterns.is_empty() {
            let available: Vec<RegisteredModel> = self.available().into_iter().cloned().collect();
            self.scope = resolve_model_scope(patterns, &available, self.pi_compat).0;
        }
        self
    }

    /// The model after `current` (before it, `backwards`), wrapping around: among the scoped models that
    /// have a key when there is a scope, else among every model with a key; the first one when `current`
    /// is not among them; `None` when fewer than two are.
    pub fn cycle_from(&self, current: Option<&Model>, backwards: bool) -> Option<CycleTarget> {
        let scoped = !self.scope.is_empty();
        let candidates: Vec<(String, String, Option<ThinkingLevel>)> = if scoped {
            let keys = self.keys();
            self.scope
                .iter()
                .filter(|model| keys.has_auth(&model.provider))
                .map(|model| (model.provider.clone(), model.id.clone(), model.thinking))
                .collect()
        } else {
            self.available_ids().into_iter().map(|(provider, id)| (provider, id, None)).collect()
        };
        let count = candidates.len();
        if count < 2 {
            return None;
        }
        let position = current.and_then(|model| {
            candidates.iter().position(|(provider, id, _)| *provider == model.provider && *id == model.id)
        });
        let next = match position {
            Some(index) if backwards => (index + count - 1) % count,
            Some(index) => (index + 1) % count,
            None => 0,
        };
        let (provider, id, thinking) = candidates.into_iter().nth(next)?;
        Some(CycleTarget { provider, id, thinking, scoped })
    }

    /// `provider`/`id` with its key and headers; an error naming what is missing otherwise.
    pub fn choose(&self, provider: &str, id: &str) -> Result<ChosenModel, String> {
        let registered =
            self.registry.find(provider, id).ok_or_else(|| format!("no model {provider}/{id} is known"))?;
        let key = self
            .keys()
            .api_key(provider)
            .map_err(|error| error.to_string())?
            .ok_or_else(|| format!("no API key for provider \"{provider}\"; {id} cannot be used"))?;
        let mut model = registered.model.clone();
        super::resolve::apply_copilot_base_url(&mut model, &self.auth);
        model.headers =
            self.registry.request_headers(&model, Some(&key), &process_env).map_err(|error| error.to_string())?;
        Ok(ChosenModel { model, api_key: key, thinking_level_map: registered.thinking_level_map.clone() })
    }
}
