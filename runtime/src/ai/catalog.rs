//! pi's built-in model catalog, embedded as data (`runtime/data/models.json`) and parsed on first
//! use, plus the facts that go with it: each provider's key variables, pi's default model per
//! provider, and the thinking levels a model supports.
//!
//! The data comes from pi-ai's generated model list (providers amazon-bedrock, anthropic,
//! azure-openai-responses, cerebras, deepseek, github-copilot, google, google-vertex, groq, mistral, openai,
//! openai-codex, openrouter, xai).
//! Azure's models have no base URL: the `azure-openai-responses` provider finds it in the environment (or the
//! model's models.json entry).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::Value;

pub use super::thinking::{ThinkingLevelMap, clamp_thinking_level, supported_thinking_levels};
use super::{Model, ModelCost};

/// The embedded catalog: an array of providers, each with its models (one per line).
const CATALOG_JSON: &str = include_str!("../../data/models.json");

/// pi's `defaultModelPerProvider`, in pi's order: when no model is named, the first of these with
/// a key wins.
pub const DEFAULT_MODEL_PER_PROVIDER: [(&str, &str); 31] = [
    ("amazon-bedrock", "us.anthropic.claude-opus-4-6-v1"),
    ("anthropic", "claude-opus-4-7"),
    ("openai", "gpt-5.4"),
    ("azure-openai-responses", "gpt-5.4"),
    ("openai-codex", "gpt-5.5"),
    ("deepseek", "deepseek-v4-pro"),
    ("google", "gemini-3.1-pro-preview"),
    ("google-vertex", "gemini-3.1-pro-preview"),
    ("github-copilot", "gpt-5.4"),
    ("openrouter", "moonshotai/kimi-k2.6"),
    ("vercel-ai-gateway", "zai/glm-5.1"),
    ("xai", "grok-4.20-0309-reasoning"),
    ("groq", "openai/gpt-oss-120b"),
    ("cerebras", "zai-glm-4.7"),
    ("zai", "glm-5.1"),
    ("mistral", "devstral-medium-latest"),
    ("minimax", "MiniMax-M2.7"),
    ("minimax-cn", "MiniMax-M2.7"),
    ("moonshotai", "kimi-k2.6"),
    ("moonshotai-cn", "kimi-k2.6"),
    ("huggingface", "moonshotai/Kimi-K2.6"),
    ("fireworks", "accounts/fireworks/models/kimi-k2p6"),
    ("opencode", "kimi-k2.6"),
    ("opencode-go", "kimi-k2.6"),
    ("kimi-coding", "kimi-for-coding"),
    ("cloudflare-workers-ai", "@cf/moonshotai/kimi-k2.6"),
    ("cloudflare-ai-gateway", "workers-ai/@cf/moonshotai/kimi-k2.6"),
    ("xiaomi", "mimo-v2.5-pro"),
    ("xiaomi-token-plan-cn", "mimo-v2.5-pro"),
    ("xiaomi-token-plan-ams", "mimo-v2.5-pro"),
    ("xiaomi-token-plan-sgp", "mimo-v2.5-pro"),
];

/// pi's default model id for `provider`, if it has one.
pub fn default_model_id(provider: &str) -> Option<&'static str> {
    DEFAULT_MODEL_PER_PROVIDER.iter().find(|(name, _)| *name == provider).map(|(_, id)| *id)
}

/// The environment variables pi reads `provider`'s key from, in order of preference.
pub fn api_key_env_vars(provider: &str) -> &'static [&'static str] {
    match provider {
        "anthropic" => &["ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"],
        // Credentials rather than a key: see `env_api_key`.
        "amazon-bedrock" => &["AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_BEARER_TOKEN_BEDROCK"],
        "github-copilot" => &["COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"],
        "openai" => &["OPENAI_API_KEY"],
        "azure-openai-responses" => &["AZURE_OPENAI_API_KEY"],
        "deepseek" => &["DEEPSEEK_API_KEY"],
        "google" => &["GEMINI_API_KEY"],
        "google-vertex" => &["GOOGLE_CLOUD_API_KEY"],
        "groq" => &["GROQ_API_KEY"],
        "cerebras" => &["CEREBRAS_API_KEY"],
        "xai" => &["XAI_API_KEY"],
        "openrouter" => &["OPENROUTER_API_KEY"],
        "vercel-ai-gateway" => &["AI_GATEWAY_API_KEY"],
        "zai" => &["ZAI_API_KEY"],
        "mistral" => &["MISTRAL_API_KEY"],
        "minimax" => &["MINIMAX_API_KEY"],
        "minimax-cn" => &["MINIMAX_CN_API_KEY"],
        "moonshotai" | "moonshotai-cn" => &["MOONSHOT_API_KEY"],
        "huggingface" => &["HF_TOKEN"],
        "fireworks" => &["FIREWORKS_API_KEY"],
        "opencode" | "opencode-go" => &["OPENCODE_API_KEY"],
        "kimi-coding" => &["KIMI_API_KEY"],
        "cloudflare-workers-ai" | "cloudflare-ai-gateway" => &["CLOUDFLARE_API_KEY"],
        "xiaomi" => &["XIAOMI_API_KEY"],
        "xiaomi-token-plan-cn" => &["XIAOMI_TOKEN_PLAN_CN_API_KEY"],
        "xiaomi-token-plan-ams" => &["XIAOMI_TOKEN_PLAN_AMS_API_KEY"],
        "xiaomi-token-plan-sgp" => &["XIAOMI_TOKEN_PLAN_SGP_API_KEY"],
        _ => &[],
    }
}

/// `provider`'s key from the environment: the first of its variables that is set and not empty.
/// `env` looks a variable up (the process environment in production, a map in tests). Amazon Bedrock
/// has no key: like pi, it counts as configured (`<authenticated>`) when AWS credentials are in sight; so
/// does `google-vertex` when Application Default Credentials are set up.
pub fn env_api_key(provider: &str, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    if provider == super::bedrock_converse::PROVIDER {
        return super::bedrock_converse::env_has_credentials(env)
            .then(|| super::bedrock_converse::AUTHENTICATED.to_owned());
    }
    api_key_env_vars(provider).iter().find_map(|name| env(name).filter(|value| !value.is_empty())).or_else(|| {
        (provider == super::google_vertex::API && super::google_vertex::has_adc_credentials(env))
            .then(|| super::google_vertex::AUTHENTICATED_MARKER.to_owned())
    })
}

/// The parsed catalog: models in pi's order with their thinking maps alongside.
struct Catalog {
    models: Vec<Model>,
    thinking_maps: Vec<Option<ThinkingLevelMap>>,
    providers: Vec<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ProviderData {
    provider: String,
    api: String,
    base_url: String,
    compat: Option<Value>,
    models: Vec<ModelData>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ModelData {
    id: String,
    name: String,
    api: Option<String>,
    base_url: Option<String>,
    reasoning: bool,
    input: Vec<String>,
    cost: ModelCost,
    context_window: u64,
    max_tokens: u64,
    thinking_level_map: Option<Value>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    compat: Option<Value>,
}

fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| parse_catalog(CATALOG_JSON).unwrap_or_else(|_| Catalog::empty()))
}

impl Catalog {
    fn empty() -> Self {
        Self { models: Vec::new(), thinking_maps: Vec::new(), providers: Vec::new() }
    }
}

fn parse_catalog(text: &str) -> Result<Catalog, String> {
    let providers: Vec<ProviderData> = serde_json::from_str(text).map_err(|error| error.to_string())?;
    let mut catalog = Catalog::empty();
    for provider in providers {
        for data in provider.models {
            let mut model = Model::new(
                provider.provider.clone(),
                data.id,
                data.api.unwrap_or_else(|| provider.api.clone()),
                data.base_url.unwrap_or_else(|| provider.base_url.clone()),
            );
            model.name = data.name;
            model.reasoning = data.reasoning;
            model.input = data.input;
            model.cost = data.cost;
            model.context_window = data.context_window;
            model.max_tokens = data.max_tokens;
            model.headers = data.headers.into_iter().collect();
            model.compat = merge_compat(provider.compat.as_ref(), data.compat.as_ref());
            let map = data.thinking_level_map.as_ref().map(ThinkingLevelMap::from_json).transpose()?;
            let map = ThinkingLevelMap::with_v1_5_catalog(map, &model.provider, &model.id);
            catalog.models.push(model);
            catalog.thinking_maps.push(map);
        }
        catalog.providers.push(provider.provider);
    }
    Ok(catalog)
}

/// pi's `mergeCompat`: `over`'s keys replace `base`'s, except that the routing objects
/// `openRouterRouting` and `vercelGatewayRouting` are merged key by key.
pub fn merge_compat(base: Option<&Value>, over: Option<&Value>) -> Option<Value> {
    let Some(over) = over else { return base.cloned() };
    let (Some(Value::Object(base)), Value::Object(over_map)) = (base, over) else {
        return Some(over.clone());
    };
    let mut merged = base.clone();
    for (key, value) in over_map {
        let nested = matches!(key.as_str(), "openRouterRouting" | "vercelGatewayRouting");
        match (merged.get_mut(key), value) {
            (Some(Value::Object(existing)), Value::Object(extra)) if nested => {
                existing.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            _ => {
                merged.insert(key.clone(), value.clone());
            }
        }
    }
    Some(Value::Object(merged))
}

/// Every built-in model, in pi's order (by provider, then as pi lists them).
pub fn builtin_models() -> &'static [Model] {
    &catalog().models
}

/// The built-in providers, in pi's order.
pub fn builtin_providers() -> &'static [String] {
    &catalog().providers
}

pub fn is_builtin_provider(provider: &str) -> bool {
    builtin_providers().iter().any(|name| name == provider)
}

/// The built-in models of `provider`.
pub fn builtin_provider_models(provider: &str) -> impl Iterator<Item = &'static Model> {
    builtin_models().iter().filter(move |model| model.provider == provider)
}

/// The built-in model `provider`/`id` (exact match).
pub fn builtin_model(provider: &str, id: &str) -> Option<&'static Model> {
    builtin_models().iter().find(|model| model.provider == provider && model.id == id)
}

/// The built-in `thinkingLevelMap` of `provider`/`id`, when pi gives it one.
pub fn builtin_thinking_level_map(provider: &str, id: &str) -> Option<&'static ThinkingLevelMap> {
    let catalog = catalog();
    let index = catalog.models.iter().position(|model| model.provider == provider && model.id == id)?;
    catalog.thinking_maps.get(index)?.as_ref()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_catalog_parses_with_every_shipped_provider() {
        assert!(parse_catalog(CATALOG_JSON).is_ok());
        let providers: Vec<&str> = builtin_providers().iter().map(String::as_str).collect();
        assert_eq!(
            providers,
            [
                "amazon-bedrock",
                "anthropic",
                "azure-openai-responses",
                "cerebras",
                "deepseek",
                "github-copilot",
                "google",
                "google-vertex",
                "groq",
                "mistral",
                "openai",
                "openai-codex",
                "openrouter",
                "xai"
            ]
        );
        assert!(builtin_models().len() > 400, "{}", builtin_models().len());
        for provider in &providers {
            assert!(builtin_provider_models(provider).count() > 0, "{provider} has models");
            // A ChatGPT subscription is reached with an OAuth login only; pi reads no variable for it.
            let oauth_only = *provider == "openai-codex";
            assert_eq!(api_key_env_vars(provider).is_empty(), oauth_only, "{provider}'s key variables");
        }
    }

    #[test]
    fn entries_carry_pi_facts() {
        let sonnet = builtin_model("anthropic", "claude-sonnet-4-5").expect("in catalog");
        assert_eq!(sonnet.api, "anthropic-messages");
        assert_eq!(sonnet.base_url, "https://api.anthropic.com");
        assert_eq!(sonnet.name, "Claude Sonnet 4.5 (latest)");
        assert!(sonnet.reasoning);
        assert_eq!(sonnet.input, ["text", "image"]);
        assert_eq!((sonnet.context_window, sonnet.max_tokens), (200_000, 64_000));
        assert_eq!(sonnet.cost, ModelCost { input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 3.75 });

        let gpt = builtin_model("openai", "gpt-5.4").expect("in catalog");
        assert_eq!((gpt.api.as_str(), gpt.base_url.as_str()), ("openai-responses", "https://api.openai.com/v1"));
        let gemini = builtin_model("google", "gemini-2.5-pro").expect("in catalog");
        assert_eq!(gemini.base_url, "https://generativelanguage.googleapis.com/v1beta");
        let deepseek = builtin_model("deepseek", "deepseek-v4-pro").expect("in catalog");
        assert_eq!(deepseek.compat.as_ref().and_then(|c| c["thinkingFormat"].as_str()), Some("deepseek"));
        let bedrock = builtin_model("amazon-bedrock", "us.anthropic.claude-opus-4-6-v1").expect("in catalog");
        assert_eq!(
            (bedrock.api.as_str(), bedrock.base_url.as_str()),
            ("bedrock-converse-stream", "https://bedrock-runtime.us-east-1.amazonaws.com")
        );
        let groq = builtin_model("groq", "openai/gpt-oss-120b").expect("in catalog");
        assert_eq!(
            (groq.api.as_str(), groq.base_url.as_str()),
            ("openai-completions", "https://api.groq.com/openai/v1")
        );
    }

    #[test]
    fn subscription_providers_carry_pis_models() {
        let codex: Vec<&str> = builtin_provider_models("openai-codex").map(|m| m.id.as_str()).collect();
        assert_eq!(codex.len(), 10, "{codex:?}");
        assert!(builtin_provider_models("openai-codex").all(|m| m.api == "openai-codex-responses"));
        assert_eq!(
            builtin_model("openai-codex", "gpt-5.5").map(|m| m.base_url.as_str()),
            Some("https://chatgpt.com/backend-api")
        );
        let copilot: Vec<&Model> = builtin_provider_models("github-copilot").collect();
        assert_eq!(copilot.len(), 26);
        let apis: std::collections::BTreeSet<&str> = copilot.iter().map(|m| m.api.as_str()).collect();
        assert_eq!(
            apis.into_iter().collect::<Vec<_>>(),
            ["anthropic-messages", "openai-completions", "openai-responses"]
        );
        let gpt = builtin_model("github-copilot", "gpt-5.4").expect("in catalog");
        assert!(
            gpt.headers.contains(&("Copilot-Integration-Id".to_owned(), "vscode-chat".to_owned())),
            "{:?}",
            gpt.headers
        );
        assert_eq!(gpt.base_url, "https://api.individual.githubcopilot.com");
    }

    #[test]
    fn mistral_and_azure_speak_their_own_apis() {
        let devstral = builtin_model("mistral", "devstral-medium-latest").expect("in catalog");
        assert_eq!(
            (devstral.api.as_str(), devstral.base_url.as_str()),
            ("mistral-conversations", "https://api.mistral.ai")
        );
        assert_eq!(devstral.compat, None);
        let azure = builtin_model("azure-openai-responses", "gpt-5.4").expect("in catalog");
        assert_eq!((azure.api.as_str(), azure.base_url.as_str()), ("azure-openai-responses", ""));
        let map = builtin_thinking_level_map("azure-openai-responses", "gpt-5.4");
        assert_eq!(map.and_then(|m| m.get(crate::ai::ThinkingLevel::Off)), Some(None));
        assert_eq!(builtin_provider_models("azure-openai-responses").count(), 42);
    }

    #[test]
    fn every_default_model_of_a_shipped_provider_exists() {
        for provider in builtin_providers() {
            let id = default_model_id(provider).expect("pi names a default");
            assert!(builtin_model(provider, id).is_some(), "{provider}/{id}");
        }
        assert_eq!(default_model_id("anthropic"), Some("claude-opus-4-7"));
        assert_eq!(default_model_id("mock"), None);
    }

    #[test]
    fn env_keys_follow_pi_order_and_skip_empty_values() {
        let env = |name: &str| match name {
            "ANTHROPIC_OAUTH_TOKEN" => Some(String::new()),
            "ANTHROPIC_API_KEY" => Some("sk-ant".to_owned()),
            "GEMINI_API_KEY" => Some("g".to_owned()),
            _ => None,
        };
        assert_eq!(env_api_key("anthropic", &env).as_deref(), Some("sk-ant"));
        assert_eq!(env_api_key("google", &env).as_deref(), Some("g"));
        assert_eq!(env_api_key("openai", &env), None);
        assert_eq!(env_api_key("unknown", &env), None);
        assert_eq!(env_api_key("amazon-bedrock", &env), None);
        let aws = |name: &str| (name == "AWS_PROFILE").then(|| "work".to_owned());
        assert_eq!(env_api_key("amazon-bedrock", &aws).as_deref(), Some("<authenticated>"));
        let oauth_first = |name: &str| Some(format!("value-of-{name}"));
        assert_eq!(env_api_key("anthropic", &oauth_first).as_deref(), Some("value-of-ANTHROPIC_OAUTH_TOKEN"));
    }

    #[test]
    fn compat_merge_replaces_keys_but_merges_routing() {
        let base = serde_json::json!({"supportsStore": false, "openRouterRouting": {"only": ["a"], "order": ["x"]}});
        let over = serde_json::json!({"supportsStore": true, "openRouterRouting": {"only": ["b"]}});
        let merged = merge_compat(Some(&base), Some(&over)).expect("merged");
        assert_eq!(
            merged,
            serde_json::json!({"supportsStore": true, "openRouterRouting": {"only": ["b"], "order": ["x"]}})
        );
        assert_eq!(merge_compat(Some(&base), None), Some(base.clone()));
        assert_eq!(merge_compat(None, Some(&over)), Some(over));
    }
}
