//! `providers:` in the agent YAML: models.json's provider entries with snake_case keys, turned back into
//! models.json text for the runtime.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One provider, as models.json's `providers.<name>`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all(serialize = "camelCase"))]
pub struct ProviderSpec {
    /// Endpoint, e.g. `http://localhost:11434/v1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Wire protocol of the endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<ProviderApi>,
    /// The key: an environment variable name (e.g. `OLLAMA_API_KEY`) or `!command` whose output is the key.
    /// A literal is refused: it would be compiled into the binary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    /// Extra request headers (values resolved like `api_key`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Also send `Authorization: Bearer <key>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_header: Option<bool>,
    /// Provider quirks, as models.json's `compat`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compat: Option<serde_json::Value>,
    /// The provider's models.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<ModelEntrySpec>,
    /// Fields laid over built-in models of this provider, by model id (models.json's `modelOverrides`,
    /// camelCase keys as there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_overrides: Option<serde_json::Value>,
}

/// A provider's wire protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[non_exhaustive]
#[serde(rename_all = "kebab-case")]
pub enum ProviderApi {
    AnthropicMessages,
    OpenaiCompletions,
    OpenaiResponses,
    GoogleGenerativeAi,
    BedrockConverseStream,
    OpenaiCodexResponses,
}

/// One model of a provider.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all(serialize = "camelCase"))]
pub struct ModelEntrySpec {
    /// The id sent to the endpoint.
    pub id: String,
    /// Display name. Default: the id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Overrides the provider's `api` for this model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api: Option<ProviderApi>,
    /// Overrides the provider's `base_url` for this model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// Whether the model can think.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<bool>,
    /// Input kinds: `text`, `image`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Vec<String>>,
    /// Prices per million tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<CostSpec>,
    /// Context window in tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// Output token limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Extra request headers for this model.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Model quirks, as models.json's `compat`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compat: Option<serde_json::Value>,
    /// Thinking level to provider value map, as models.json's `thinkingLevelMap`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_level_map: Option<serde_json::Value>,
}

/// Prices per million tokens.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all(serialize = "camelCase"))]
pub struct CostSpec {
    #[serde(default)]
    pub input: f64,
    #[serde(default)]
    pub output: f64,
    #[serde(default)]
    pub cache_read: f64,
    #[serde(default)]
    pub cache_write: f64,
}

/// The providers as models.json text (`{"providers": {...}}`), or `None` when there are none.
pub fn models_json(providers: &BTreeMap<String, ProviderSpec>) -> Option<String> {
    if providers.is_empty() {
        return None;
    }
    serde_json::to_string_pretty(&serde_json::json!({ "providers": providers })).ok()
}
