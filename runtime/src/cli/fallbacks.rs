//! The run's fallback models: `--fallback-model` entries, then the YAML's `model.fallbacks`, each resolved
//! (catalog, models.json, key, thinking level) only when a run needs it.

use std::path::Path;
use std::sync::Arc;

use super::args::CliArgs;
use super::config_value::process_env;
use super::resolve::resolve_model;
use super::settings::Settings;
use crate::AgentDefinition;
use crate::agent::AgentState;
use crate::agent_session::{FallbackChain, FallbackModel};
use crate::ai::ThinkingLevel;

/// The chain of fallbacks, or `None` when neither the flags nor the YAML name any.
pub(super) fn fallback_chain(
    definition: &AgentDefinition,
    args: &CliArgs,
    agent_dir: &Path,
    settings: &Settings,
    state: &AgentState,
) -> Option<FallbackChain> {
    let models: Vec<String> = args
        .fallback_models
        .iter()
        .chain(&definition.fallback_models)
        .map(|model| model.trim().to_owned())
        .filter(|model| !model.is_empty())
        .collect();
    if models.is_empty() {
        return None;
    }
    let primary_provider = state.model.as_ref().map(|model| model.provider.clone());
    let (definition, args, agent_dir, settings) =
        (definition.clone(), args.clone(), agent_dir.to_path_buf(), settings.clone());
    let resolver = move |wanted: &str| {
        let has_level = wanted.rsplit_once(':').is_some_and(|(_, level)| ThinkingLevel::from_name(level).is_some());
        // `--api-key` is the key of the run's provider: a fallback of another provider finds its own.
        let same_provider = wanted.split_once('/').map(|(provider, _)| provider) == primary_provider.as_deref();
        let request = CliArgs {
            provider: None,
            model: Some(wanted.to_owned()),
            models: None,
            api_key: if same_provider { args.api_key.clone() } else { None },
            thinking: if has_level { None } else { args.thinking.clone() },
            ..args.clone()
        };
        resolve_model(&definition, &request, &agent_dir, &settings, &process_env)
            .map(|resolved| FallbackModel {
                model: resolved.model,
                api_key: Some(resolved.api_key),
                thinking: resolved.thinking,
            })
            .map_err(|error| error.to_string())
    };
    Some(FallbackChain { models, resolver: Arc::new(resolver) })
}
