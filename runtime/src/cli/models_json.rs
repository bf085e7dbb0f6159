//! `<agent dir>/models.json`: custom providers and models in pi's format, and their API keys.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use super::error::CliError;
use crate::ai::{Model, ModelCost};

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ModelsFile {
    #[serde(default)]
    providers: BTreeMap<String, ProviderEntry>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ProviderEntry {
    base_url: Option<String>,
    api: Option<String>,
    api_key: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    auth_header: bool,
    compat: Option<Value>,
    models: Option<Vec<ModelEntry>>,
    model_overrides: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ModelEntry {
    id: String,
    name: Option<String>,
    api: Option<String>,
    base_url: Option<String>,
    reasoning: Option<bool>,
    input: Option<Vec<String>>,
    context_window: Option<i64>,
    max_tokens: Option<i64>,
    cost: Option<ModelCost>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    compat: Option<Value>,
}

/// A provider's credentials as configured: the raw `apiKey` value (literal, env var name or `!command`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderKey {
    pub provider: String,
    pub api_key: Option<String>,
}

/// The models and keys models.json defines.
#[derive(Debug, Clone, Default)]
pub struct CustomModels {
    pub models: Vec<Model>,
    pub keys: Vec<ProviderKey>,
}

impl CustomModels {
    /// The configured `apiKey` of `provider`, resolved (env var name, `!command` or literal).
    pub fn resolve_key(&self, provider: &str) -> Option<String> {
        let raw = self.keys.iter().find(|key| key.provider == provider)?.api_key.as_deref()?;
        resolve_config_value(raw)
    }
}

/// Reads `path`; a missing file means no custom models.
pub fn load_models_json(path: &Path) -> Result<CustomModels, CliError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(CustomModels::default()),
        Err(error) => return Err(CliError::ModelsJson { path: path.to_path_buf(), message: error.to_string() }),
    };
    parse_models_json(&text).map_err(|message| CliError::ModelsJson { path: path.to_path_buf(), message })
}

/// Parses models.json text; errors name the line and column, or the provider and field.
pub fn parse_models_json(text: &str) -> Result<CustomModels, String> {
    let file: ModelsFile = serde_json::from_str(text).map_err(|error| error.to_string())?;
    let mut custom = CustomModels::default();
    for (name, provider) in file.providers {
        add_provider(&mut custom, &name, provider)?;
    }
    Ok(custom)
}

fn add_provider(custom: &mut CustomModels, name: &str, provider: ProviderEntry) -> Result<(), String> {
    let models = provider.models.unwrap_or_default();
    if models.is_empty()
        && provider.base_url.is_none()
        && provider.compat.is_none()
        && provider.model_overrides.is_none()
    {
        return Err(format!(
            "provider \"{name}\": nothing to configure; give \"baseUrl\", \"compat\", \"modelOverrides\" or \"models\""
        ));
    }
    if !models.is_empty() {
        if provider.base_url.as_deref().is_none_or(str::is_empty) {
            return Err(format!("provider \"{name}\": \"baseUrl\" is required when the provider defines models"));
        }
        if provider.api_key.as_deref().is_none_or(str::is_empty) {
            return Err(format!(
                "provider \"{name}\": \"apiKey\" is required when the provider defines models (a key, or the name of an environment variable holding it)"
            ));
        }
    }
    let mut headers: Vec<(String, String)> = provider
        .headers
        .iter()
        .map(|(key, value)| (key.clone(), resolve_config_value(value).unwrap_or_default()))
        .collect();
    if provider.auth_header
        && let Some(key) = provider.api_key.as_deref().and_then(resolve_config_value)
    {
        headers.push(("Authorization".to_owned(), format!("Bearer {key}")));
    }
    for (index, entry) in models.into_iter().enumerate() {
        let at = format!("provider \"{name}\": models[{index}]");
        if entry.id.trim().is_empty() {
            return Err(format!("{at}: \"id\" must not be empty"));
        }
        let api = entry.api.or_else(|| provider.api.clone()).ok_or_else(|| {
            format!(
                "{at} (\"{}\"): \"api\" is required (on the provider or the model), e.g. \"openai-completions\"",
                entry.id
            )
        })?;
        let base_url = entry.base_url.or_else(|| provider.base_url.clone()).unwrap_or_default();
        let mut model = Model::new(name, entry.id.clone(), api, base_url);
        if let Some(display) = entry.name {
            model.name = display;
        }
        model.reasoning = entry.reasoning.unwrap_or(false);
        if let Some(input) = entry.input {
            model.input = input;
        }
        model.context_window = positive(entry.context_window, model.context_window, &at, "contextWindow")?;
        model.max_tokens = positive(entry.max_tokens, model.max_tokens, &at, "maxTokens")?;
        model.cost = entry.cost.unwrap_or_default();
        model.headers = headers.clone();
        for (key, value) in &entry.headers {
            model.headers.push((key.clone(), resolve_config_value(value).unwrap_or_default()));
        }
        model.compat = merge_compat(provider.compat.as_ref(), entry.compat);
        custom.models.retain(|existing| !(existing.provider == name && existing.id == model.id));
        custom.models.push(model);
    }
    custom.keys.push(ProviderKey { provider: name.to_owned(), api_key: provider.api_key });
    Ok(())
}

fn positive(value: Option<i64>, default: u64, at: &str, field: &str) -> Result<u64, String> {
    match value {
        None => Ok(default),
        Some(number) if number > 0 => Ok(number as u64),
        Some(number) => Err(format!("{at}: invalid {field} {number} (must be a positive number)")),
    }
}

fn merge_compat(provider: Option<&Value>, model: Option<Value>) -> Option<Value> {
    match (provider.cloned(), model) {
        (Some(Value::Object(mut base)), Some(Value::Object(over))) => {
            base.extend(over);
            Some(Value::Object(base))
        }
        (base, over) => over.or(base),
    }
}

/// Resolves a models.json value: `!command` runs the command (10 s limit) and takes its trimmed
/// output; otherwise the value names an environment variable if one is set, else it is the literal.
pub fn resolve_config_value(raw: &str) -> Option<String> {
    if let Some(command) = raw.strip_prefix('!') {
        return run_key_command(command);
    }
    match std::env::var(raw) {
        Ok(value) if !value.is_empty() => Some(value),
        _ if raw.is_empty() => None,
        _ => Some(raw.to_owned()),
    }
}

fn run_key_command(command: &str) -> Option<String> {
    let mut child = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if std::time::Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let output = child.wait_with_output().ok()?;
    let value = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    (output.status.success() && !value.is_empty()).then_some(value)
}

#[cfg(test)]
#[path = "models_json_tests.rs"]
mod tests;
