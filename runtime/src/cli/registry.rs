//! Every model the agent can use: pi's built-in catalog with models.json applied (provider
//! `baseUrl`/`compat` re-routing, `modelOverrides`, custom models upserted by id), and the request
//! headers models.json adds.

use std::collections::{BTreeMap, HashMap};

use super::config_value::{CommandFailure, EnvLookup, try_resolve_config_value};
use super::error::CliError;
use super::models_json::{ModelDefinition, ModelOverride, ModelsConfig, ProviderConfig};
use crate::ai::Model;
use crate::ai::catalog::{
    ThinkingLevelMap, builtin_models, builtin_provider_models, builtin_thinking_level_map, merge_compat,
};

/// A model with the thinking-level map pi keeps next to it.
#[derive(Debug, Clone, PartialEq)]
pub struct RegisteredModel {
    pub model: Model,
    pub thinking_level_map: Option<ThinkingLevelMap>,
}

/// Built-in and custom models, in pi's order (built-in providers first, then custom ones).
#[derive(Debug, Clone, Default)]
pub struct ModelRegistry {
    models: Vec<RegisteredModel>,
    config: ModelsConfig,
}

impl ModelRegistry {
    /// The catalog with `config` applied.
    pub fn new(config: ModelsConfig) -> Self {
        let mut models: Vec<RegisteredModel> = builtin_models()
            .iter()
            .map(|model| {
                let thinking_level_map = builtin_thinking_level_map(&model.provider, &model.id).cloned();
                let mut registered = RegisteredModel { model: model.clone(), thinking_level_map };
                if let Some(provider) = config.providers.iter().find(|p| p.name == model.provider) {
                    apply_provider_override(&mut registered, provider);
                }
                registered
            })
            .collect();
        // Custom models replace the model of the same provider and id, or join the end: found by an index,
        // so a models.json of many thousand models loads in linear time.
        let mut index: HashMap<(String, String), usize> =
            models.iter().enumerate().map(|(at, m)| ((m.model.provider.clone(), m.model.id.clone()), at)).collect();
        for provider in &config.providers {
            for definition in &provider.models {
                let Some(custom) = custom_model(provider, definition) else { continue };
                let key = (provider.name.clone(), definition.id.clone());
                match index.get(&key) {
                    Some(&at) => models[at] = custom,
                    None => {
                        index.insert(key, models.len());
                        models.push(custom);
                    }
                }
            }
        }
        Self { models, config }
    }

    /// All models, whether or not a key is configured.
    pub fn all(&self) -> &[RegisteredModel] {
        &self.models
    }

    /// The model `provider`/`id` (exact).
    pub fn find(&self, provider: &str, id: &str) -> Option<&RegisteredModel> {
        self.models.iter().find(|m| m.model.provider == provider && m.model.id == id)
    }

    /// The raw `apiKey` of every models.json provider that has one.
    pub fn models_json_keys(&self) -> BTreeMap<String, String> {
        self.config
            .providers
            .iter()
            .filter_map(|provider| Some((provider.name.clone(), provider.api_key.clone()?)))
            .collect()
    }

    /// The headers to send for `model`: its own, then the provider's models.json `headers`, then
    /// the model's (`models[].headers` or `modelOverrides[id].headers`), each value resolved like a
    /// key; `authHeader` adds `Authorization: Bearer <api_key>`.
    pub fn request_headers(
        &self,
        model: &Model,
        api_key: Option<&str>,
        env: EnvLookup<'_>,
    ) -> Result<Vec<(String, String)>, CliError> {
        let mut headers = model.headers.clone();
        let Some(provider) = self.config.providers.iter().find(|p| p.name == model.provider) else {
            return Ok(headers);
        };
        let model_headers = match provider.models.iter().find(|definition| definition.id == model.id) {
            Some(definition) => definition.headers.as_ref(),
            None => provider
                .model_overrides
                .iter()
                .find(|(id, _)| *id == model.id)
                .and_then(|(_, over)| over.headers.as_ref()),
        };
        for (name, raw) in provider.headers.iter().flatten().chain(model_headers.into_iter().flatten()) {
            let value = try_resolve_config_value(raw, env)
                .map_err(|failure| match failure {
                    CommandFailure::Failed => {
                        CliError::HeaderCommandFailed { provider: model.provider.clone(), header: name.clone() }
                    }
                    CommandFailure::TimedOut(limit) => super::auth::command_timed_out(
                        raw,
                        format!("header \"{name}\" of provider \"{}\" in models.json", model.provider),
                        limit,
                    ),
                })?
                .ok_or_else(|| CliError::HeaderCommandFailed {
                    provider: model.provider.clone(),
                    header: name.clone(),
                })?;
            set_header(&mut headers, name, value);
        }
        if provider.auth_header {
            let key = api_key.ok_or_else(|| CliError::AuthHeaderWithoutKey(model.provider.clone()))?;
            set_header(&mut headers, "Authorization", format!("Bearer {key}"));
        }
        Ok(headers)
    }
}

fn set_header(headers: &mut Vec<(String, String)>, name: &str, value: String) {
    match headers.iter_mut().find(|(existing, _)| existing == name) {
        Some(entry) => entry.1 = value,
        None => headers.push((name.to_owned(), value)),
    }
}

/// Provider-level `baseUrl`/`compat` and the model's `modelOverrides` entry, over a built-in model.
fn apply_provider_override(registered: &mut RegisteredModel, provider: &ProviderConfig) {
    let model = &mut registered.model;
    if provider.base_url.is_some() || provider.compat.is_some() {
        if let Some(base_url) = &provider.base_url {
            model.base_url = base_url.clone();
        }
        model.compat = merge_compat(model.compat.as_ref(), provider.compat.as_ref());
    }
    if let Some((_, over)) = provider.model_overrides.iter().find(|(id, _)| *id == model.id) {
        apply_model_override(registered, over);
    }
}

fn apply_model_override(registered: &mut RegisteredModel, over: &ModelOverride) {
    let model = &mut registered.model;
    if let Some(name) = &over.name {
        model.name = name.clone();
    }
    if let Some(reasoning) = over.reasoning {
        model.reasoning = reasoning;
    }
    if let Some(input) = &over.input {
        model.input = input.clone();
    }
    if let Some(window) = over.context_window {
        model.context_window = window;
    }
    if let Some(max_tokens) = over.max_tokens {
        model.max_tokens = max_tokens;
    }
    over.cost.apply(&mut model.cost);
    model.compat = merge_compat(model.compat.as_ref(), over.compat.as_ref());
    if let Some(map) = &over.thinking_level_map {
        registered.thinking_level_map = Some(match &registered.thinking_level_map {
            Some(base) => base.merged_with(map),
            None => map.clone(),
        });
    }
}

/// A custom model with pi's defaults; the api and base URL fall back to the provider's, then to
/// those of the provider's first built-in model. `None` when neither can be found.
fn custom_model(provider: &ProviderConfig, definition: &ModelDefinition) -> Option<RegisteredModel> {
    let builtin = builtin_provider_models(&provider.name).next();
    let api = definition.api.clone().or_else(|| provider.api.clone()).or_else(|| builtin.map(|m| m.api.clone()))?;
    let base_url = definition
        .base_url
        .clone()
        .or_else(|| provider.base_url.clone())
        .or_else(|| builtin.map(|m| m.base_url.clone()))?;
    let mut model = Model::new(provider.name.clone(), definition.id.clone(), api, base_url);
    if let Some(name) = &definition.name {
        model.name = name.clone();
    }
    model.reasoning = definition.reasoning.unwrap_or(false);
    if let Some(input) = &definition.input {
        model.input = input.clone();
    }
    if let Some(cost) = definition.cost {
        model.cost = cost;
    }
    if let Some(window) = definition.context_window {
        model.context_window = window;
    }
    if let Some(max_tokens) = definition.max_tokens {
        model.max_tokens = max_tokens;
    }
    model.compat = merge_compat(provider.compat.as_ref(), definition.compat.as_ref());
    Some(RegisteredModel { model, thinking_level_map: definition.thinking_level_map.clone() })
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;
