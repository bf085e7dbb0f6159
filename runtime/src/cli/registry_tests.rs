//! Tests for merging models.json into the built-in catalog.

use super::*;
use crate::ai::catalog::builtin_model;
use crate::ai::{ModelCost, ThinkingLevel};
use crate::cli::models_json::parse_models_json;

fn registry(text: &str) -> ModelRegistry {
    ModelRegistry::new(parse_models_json(text).expect("valid models.json"))
}

fn no_env(_: &str) -> Option<String> {
    None
}

#[test]
fn without_models_json_the_catalog_is_unchanged() {
    let registry = ModelRegistry::new(ModelsConfig::default());
    assert_eq!(registry.all().len(), builtin_models().len());
    let opus = registry.find("anthropic", "claude-opus-4-6").expect("built in");
    assert_eq!(opus.thinking_level_map.as_ref().and_then(|m| m.get(ThinkingLevel::Xhigh)), Some(Some("max")));
    assert!(registry.models_json_keys().is_empty());
}

#[test]
fn base_url_alone_reroutes_a_built_in_provider() {
    let registry = registry(r#"{"providers": {"anthropic": {"baseUrl": "http://127.0.0.1:9"}}}"#);
    let anthropic: Vec<_> = registry.all().iter().filter(|m| m.model.provider == "anthropic").collect();
    assert!(!anthropic.is_empty());
    assert!(anthropic.iter().all(|m| m.model.base_url == "http://127.0.0.1:9"));
    let openai = registry.find("openai", "gpt-5.4").expect("built in");
    assert_eq!(openai.model.base_url, "https://api.openai.com/v1");
}

#[test]
fn model_overrides_merge_partial_fields() {
    let registry = registry(
        r#"{"providers": {"anthropic": {"compat": {"supportsLongCacheRetention": false},
            "modelOverrides": {"claude-opus-4-6": {"name": "Opus", "cost": {"input": 1}, "contextWindow": 5000,
                "thinkingLevelMap": {"low": null}, "compat": {"x": 1}}}}}}"#,
    );
    let builtin = builtin_model("anthropic", "claude-opus-4-6").expect("built in");
    let opus = registry.find("anthropic", "claude-opus-4-6").expect("still there");
    assert_eq!(opus.model.name, "Opus");
    assert_eq!(opus.model.context_window, 5000);
    assert_eq!(opus.model.max_tokens, builtin.max_tokens);
    assert_eq!(opus.model.cost, ModelCost { input: 1.0, ..builtin.cost });
    assert_eq!(opus.model.compat, Some(serde_json::json!({"supportsLongCacheRetention": false, "x": 1})));
    let map = opus.thinking_level_map.as_ref().expect("map");
    assert_eq!((map.get(ThinkingLevel::Low), map.get(ThinkingLevel::Xhigh)), (Some(None), Some(Some("max"))));
    let sonnet = registry.find("anthropic", "claude-sonnet-4-5").expect("built in");
    assert_eq!(sonnet.model.compat, Some(serde_json::json!({"supportsLongCacheRetention": false})));
}

#[test]
fn custom_models_are_upserted_by_id_with_pi_defaults() {
    let registry = registry(
        r#"{"providers": {
            "openai": {"models": [{"id": "gpt-5.4", "name": "Mine"}, {"id": "my-tune", "reasoning": true}]},
            "mock": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "k",
                     "compat": {"supportsStore": false}, "models": [{"id": "m", "compat": {"maxTokensField": "max_tokens"}}]}
        }}"#,
    );
    assert_eq!(registry.all().len(), builtin_models().len() + 2);
    let replaced = registry.find("openai", "gpt-5.4").expect("upserted");
    assert_eq!(replaced.model.name, "Mine");
    assert_eq!((replaced.model.context_window, replaced.model.max_tokens), (128_000, 16_384));
    assert_eq!(replaced.model.api, "openai-responses", "api inherited from the built-in provider");
    assert_eq!(replaced.model.base_url, "https://api.openai.com/v1");
    let index =
        |provider: &str, id: &str| registry.all().iter().position(|m| m.model.provider == provider && m.model.id == id);
    let builtin_index = builtin_models().iter().position(|m| m.provider == "openai" && m.id == "gpt-5.4");
    assert_eq!(index("openai", "gpt-5.4"), builtin_index, "replaced in place");
    let tune = registry.find("openai", "my-tune").expect("added");
    assert!(tune.model.reasoning);
    let m = registry.find("mock", "m").expect("custom");
    assert_eq!(m.model.input, ["text"]);
    assert_eq!(m.model.cost, ModelCost::default());
    assert_eq!(m.model.compat, Some(serde_json::json!({"supportsStore": false, "maxTokensField": "max_tokens"})));
    assert_eq!(index("mock", "m"), Some(registry.all().len() - 1), "custom providers come last");
    assert_eq!(registry.models_json_keys().get("mock").map(String::as_str), Some("k"));
}

#[test]
fn request_headers_layer_model_provider_and_auth_header() {
    let registry = registry(
        r#"{"providers": {
            "mock": {"baseUrl": "http://x/v1", "api": "openai-completions", "apiKey": "k", "authHeader": true,
                     "headers": {"x-team": "TEAM", "x-both": "provider"},
                     "models": [{"id": "m", "headers": {"x-both": "model", "x-cmd": "!printf from-cmd"}}]},
            "openai": {"modelOverrides": {"gpt-5.4": {"headers": {"x-o": "1"}}}},
            "groq": {"headers": {"x-bad": "!exit 1"}}
        }}"#,
    );
    let env = |name: &str| (name == "TEAM").then(|| "team-from-env".to_owned());
    let m = &registry.find("mock", "m").expect("custom").model;
    let headers = registry.request_headers(m, Some("the-key"), &env).expect("resolved");
    let expected =
        [("x-team", "team-from-env"), ("x-both", "model"), ("x-cmd", "from-cmd"), ("Authorization", "Bearer the-key")];
    let expected: Vec<(String, String)> = expected.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    assert_eq!(headers, expected);
    let error = registry.request_headers(m, None, &env).expect_err("authHeader needs a key").to_string();
    assert!(error.contains("\"mock\""), "{error}");

    let gpt = &registry.find("openai", "gpt-5.4").expect("built in").model;
    assert_eq!(registry.request_headers(gpt, None, &no_env).expect("ok"), [("x-o".to_owned(), "1".to_owned())]);
    let other = &registry.find("openai", "gpt-4o").expect("built in").model;
    assert!(registry.request_headers(other, None, &no_env).expect("ok").is_empty());
    let groq = &registry.find("groq", "openai/gpt-oss-120b").expect("built in").model;
    let error = registry.request_headers(groq, None, &no_env).expect_err("command fails").to_string();
    assert!(error.contains("\"x-bad\"") && error.contains("\"groq\""), "{error}");
}

#[test]
fn many_custom_models_keep_their_order_and_a_repeated_id_replaces_the_first() {
    // Thousands of models (registries that list every model of a gateway): each joins the end once, in file
    // order; an id given twice keeps the first one's place with the last one's fields.
    let mut models: Vec<String> = (0..5000).map(|n| format!(r#"{{"id": "m-{n}", "name": "Model {n}"}}"#)).collect();
    models.push(r#"{"id": "m-10", "name": "Replaced"}"#.to_owned());
    let text = format!(
        r#"{{"providers": {{"gateway": {{"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions",
            "apiKey": "k", "models": [{}]}}}}}}"#,
        models.join(",")
    );
    let registry = registry(&text);
    let gateway: Vec<&str> =
        registry.all().iter().filter(|m| m.model.provider == "gateway").map(|m| m.model.id.as_str()).collect();
    assert_eq!(gateway.len(), 5000);
    assert_eq!((gateway[0], gateway[10], gateway[4999]), ("m-0", "m-10", "m-4999"));
    assert_eq!(registry.find("gateway", "m-10").map(|m| m.model.name.as_str()), Some("Replaced"));
    assert_eq!(registry.all().len(), builtin_models().len() + 5000);
}
