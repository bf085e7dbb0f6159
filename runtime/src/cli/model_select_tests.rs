//! Tests for choosing the model (pi's resolver rules) and for the whole model/key/thinking setup.

use std::path::Path;

use super::*;
use crate::AgentDefinition;
use crate::cli::args::CliArgs;
use crate::cli::models_json::parse_models_json;
use crate::cli::resolve::resolve_model;
use crate::cli::settings::Settings;

const MOCK: &str = r#"{"providers": {"mock": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions",
    "apiKey": "mock-key", "models": [{"id": "m", "name": "Mock model"}, {"id": "m-think", "reasoning": true}]}}}"#;

fn registry() -> ModelRegistry {
    ModelRegistry::new(parse_models_json(MOCK).expect("valid"))
}

fn request<'a>(provider: Option<&'a str>, model: Option<&'a str>) -> ModelRequest<'a> {
    ModelRequest {
        agent_dir: Path::new("/agent"),
        provider,
        model,
        default_provider: None,
        default_model: None,
        saved: None,
        scope: &[],
        pi_compat: crate::protocol::PiCompat::V0_73,
    }
}

fn pick(provider: Option<&str>, model: Option<&str>, keyed: &[&str]) -> Result<ModelChoice, CliError> {
    select_model(&registry(), &|p| keyed.contains(&p), &request(provider, model))
}

fn reference(choice: &ModelChoice) -> String {
    format!("{}/{}", choice.model.provider, choice.model.id)
}

#[test]
fn exact_ids_and_provider_references() {
    assert_eq!(reference(&pick(Some("mock"), Some("m"), &[]).expect("found")), "mock/m");
    assert_eq!(reference(&pick(None, Some("mock/m"), &[]).expect("found")), "mock/m");
    assert_eq!(reference(&pick(None, Some("MOCK/M"), &[]).expect("found")), "mock/m");
    // A bare id names the first provider that has it in pi's order: Azure comes before OpenAI (pi 0.73.1 does
    // the same, keys or not).
    assert_eq!(reference(&pick(None, Some("gpt-5.4"), &[]).expect("found")), "azure-openai-responses/gpt-5.4");
    // A provider prefix wins over ids that contain a slash.
    assert_eq!(reference(&pick(None, Some("openai/gpt-5.4"), &[]).expect("found")), "openai/gpt-5.4");
    // OpenRouter ids with a slash resolve when the prefix is not a provider.
    assert_eq!(
        reference(&pick(None, Some("moonshotai/kimi-k2.6"), &[]).expect("found")),
        "openrouter/moonshotai/kimi-k2.6"
    );
    // --provider with a redundant prefix.
    assert_eq!(reference(&pick(Some("Mock"), Some("mock/m"), &[]).expect("found")), "mock/m");
}

#[test]
fn thinking_suffix_and_partial_matching() {
    let choice = pick(None, Some("mock/m-think:high"), &[]).expect("found");
    assert_eq!((reference(&choice), choice.thinking), ("mock/m-think".to_owned(), Some(ThinkingLevel::High)));
    let choice = pick(Some("mock"), Some("think"), &[]).expect("partial");
    assert_eq!(reference(&choice), "mock/m-think");
    // Aliases beat dated ids; among aliases the highest id wins.
    let choice = pick(Some("anthropic"), Some("sonnet-4-5"), &[]).expect("partial");
    assert_eq!(choice.model.id, "claude-sonnet-4-5");
    let choice = pick(Some("anthropic"), Some("claude-3-5-haiku"), &[]).expect("partial");
    assert_eq!(choice.model.id, "claude-3-5-haiku-latest");
    // Names match too.
    assert_eq!(reference(&pick(None, Some("mock model"), &[]).expect("by name")), "mock/m");
}

#[test]
fn unknown_id_of_a_known_provider_becomes_a_custom_id() {
    let choice = pick(Some("mock"), Some("brand-new"), &[]).expect("custom");
    assert_eq!(reference(&choice), "mock/brand-new");
    assert_eq!(choice.model.base_url, "http://127.0.0.1:9/v1");
    assert!(choice.warnings[0].contains("\"brand-new\""), "{:?}", choice.warnings);
    let choice = pick(None, Some("anthropic/claude-future-9"), &[]).expect("custom");
    assert_eq!(choice.model.id, "claude-future-9");
    assert_eq!(choice.model.api, "anthropic-messages");
    let default = crate::ai::catalog::builtin_model("anthropic", "claude-opus-4-7").expect("default");
    assert_eq!(choice.model.max_tokens, default.max_tokens, "built on the provider's default model");
}

#[test]
fn errors_name_the_unknown_provider_or_model() {
    let error = pick(Some("nope"), Some("m"), &[]).expect_err("unknown").to_string();
    assert!(error.contains("\"nope\""), "{error}");
    let error = pick(Some("nope"), None, &[]).expect_err("unknown").to_string();
    assert!(error.contains("\"nope\""), "{error}");
    let error = pick(None, Some("zzz-unheard-of"), &[]).expect_err("unknown").to_string();
    assert!(error.starts_with("model \"zzz-unheard-of\" not found"), "{error}");
    let error = pick(None, Some("sonnet-9-9"), &[]).expect_err("unknown").to_string();
    assert!(error.contains("close matches: ") && error.contains("sonnet"), "{error}");
    // An invalid thinking suffix is part of the id (strict, as pi's CLI).
    assert!(pick(None, Some("gpt-5.4:turbo"), &[]).is_err());
}

#[test]
fn provider_alone_picks_its_default_model() {
    assert_eq!(reference(&pick(Some("anthropic"), None, &[]).expect("found")), "anthropic/claude-opus-4-7");
    assert_eq!(reference(&pick(Some("mock"), None, &[]).expect("found")), "mock/m");
}

#[test]
fn without_flags_the_first_keyed_default_wins() {
    let choice = pick(None, None, &["mock", "groq", "openai"]).expect("available");
    assert_eq!(reference(&choice), "openai/gpt-5.4", "openai comes before groq in pi's list");
    assert_eq!(choice.source, ModelSource::FirstAvailable);
    assert_eq!(reference(&pick(None, None, &["mock", "groq"]).expect("available")), "groq/openai/gpt-oss-120b");
    assert_eq!(reference(&pick(None, None, &["mock"]).expect("available")), "mock/m");
    let error = pick(None, None, &[]).expect_err("nothing keyed").to_string();
    assert!(error.contains("/agent/auth.json") && error.contains("/agent/models.json"), "{error}");
}

#[test]
fn agent_defaults_come_before_availability() {
    let registry = registry();
    let select = |provider: Option<&str>, model: Option<&str>| {
        let request = ModelRequest { default_provider: provider, default_model: model, ..request(None, None) };
        select_model(&registry, &|p| p == "groq", &request)
    };
    let choice = select(Some("mock"), Some("m-think")).expect("default");
    assert_eq!((reference(&choice), choice.source), ("mock/m-think".to_owned(), ModelSource::AgentDefault));
    assert_eq!(reference(&select(None, Some("mock/m")).expect("default")), "mock/m");
    assert_eq!(reference(&select(Some("mock"), None).expect("default")), "mock/m");
    let choice = select(Some("gone"), Some("x")).expect("falls back");
    assert_eq!(reference(&choice), "groq/openai/gpt-oss-120b");
    assert!(choice.warnings[0].contains("default"), "{:?}", choice.warnings);
}

#[test]
fn the_saved_choice_comes_before_the_agent_default_while_it_has_a_key() {
    let registry = registry();
    let select = |saved: Option<(&str, &str)>, keyed: &'static str| {
        let request =
            ModelRequest { default_provider: Some("mock"), default_model: Some("m"), saved, ..request(None, None) };
        select_model(&registry, &|p| p == keyed || p == "mock", &request)
    };
    let choice = select(Some(("groq", "openai/gpt-oss-120b")), "groq").expect("saved");
    assert_eq!((reference(&choice), choice.source), ("groq/openai/gpt-oss-120b".to_owned(), ModelSource::Saved));
    assert_eq!(reference(&select(Some(("groq", "openai/gpt-oss-120b")), "none").expect("default")), "mock/m");
    assert_eq!(reference(&select(Some(("mock", "gone")), "none").expect("default")), "mock/m");
    let flags = ModelRequest { saved: Some(("groq", "openai/gpt-oss-120b")), ..request(None, Some("mock/m-think")) };
    assert_eq!(reference(&select_model(&registry, &|_| true, &flags).expect("flags")), "mock/m-think");
}

fn write_agent_dir(models_json: &str, auth_json: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("models.json"), models_json).expect("models.json");
    if let Some(auth) = auth_json {
        std::fs::write(dir.path().join("auth.json"), auth).expect("auth.json");
    }
    dir
}

fn args(list: &[&str]) -> CliArgs {
    crate::cli::args::parse_args(&AgentDefinition::default(), list.iter().map(|a| (*a).to_owned())).expect("parses")
}

#[test]
fn resolve_model_applies_key_precedence_and_headers() {
    let dir = write_agent_dir(
        &MOCK.replace("\"apiKey\": \"mock-key\",", "\"apiKey\": \"mock-key\", \"authHeader\": true,"),
        Some(r#"{"groq": {"type": "api_key", "key": "groq-from-auth"}}"#),
    );
    let env = |name: &str| (name == "GROQ_API_KEY").then(|| "groq-from-env".to_owned());
    let definition = AgentDefinition::default();
    let resolved = resolve_model(&definition, &args(&["--model", "mock/m"]), dir.path(), &Settings::default(), &env)
        .expect("resolves");
    assert_eq!(resolved.api_key, "mock-key");
    assert_eq!(resolved.model.headers, [("Authorization".to_owned(), "Bearer mock-key".to_owned())]);
    let resolved = resolve_model(
        &definition,
        &args(&["--model", "mock/m", "--api-key", "flag"]),
        dir.path(),
        &Settings::default(),
        &env,
    )
    .expect("ok");
    assert_eq!((resolved.api_key.as_str(), resolved.model.headers[0].1.as_str()), ("flag", "Bearer flag"));
    let resolved = resolve_model(&definition, &args(&["--provider", "groq"]), dir.path(), &Settings::default(), &env)
        .expect("resolves");
    assert_eq!(resolved.api_key, "groq-from-auth");
    let error = resolve_model(&definition, &args(&["--api-key", "k"]), dir.path(), &Settings::default(), &env)
        .expect_err("needs a model");
    assert!(error.to_string().contains("--model"), "{error}");
}

#[test]
fn resolve_model_reports_a_missing_key_with_its_variables() {
    let dir = write_agent_dir(MOCK, None);
    let error = resolve_model(
        &AgentDefinition::default(),
        &args(&["--model", "anthropic/claude-opus-4-6"]),
        dir.path(),
        &Settings::default(),
        &|_| None,
    )
    .expect_err("no key")
    .to_string();
    assert!(error.contains("\"anthropic\"") && error.contains("ANTHROPIC_OAUTH_TOKEN, ANTHROPIC_API_KEY"), "{error}");
    assert!(dir.path().join("auth.json").exists(), "auth.json is created like pi does");
}

#[test]
fn thinking_defaults_to_medium_and_is_clamped() {
    let dir = write_agent_dir(MOCK, None);
    let env = |name: &str| (name == "ANTHROPIC_API_KEY").then(|| "a".to_owned());
    let level = |list: &[&str]| {
        resolve_model(&AgentDefinition::default(), &args(list), dir.path(), &Settings::default(), &env)
            .expect("resolves")
            .thinking
    };
    assert_eq!(level(&["--model", "mock/m"]), ThinkingLevel::Off, "a model that does not reason");
    assert_eq!(level(&["--model", "mock/m-think"]), ThinkingLevel::Medium);
    assert_eq!(level(&["--model", "mock/m-think:low"]), ThinkingLevel::Low);
    assert_eq!(level(&["--model", "mock/m-think:low", "--thinking", "high"]), ThinkingLevel::High);
    assert_eq!(level(&["--model", "mock/m-think", "--thinking", "xhigh"]), ThinkingLevel::High);
    assert_eq!(level(&["--model", "mock/m-think", "--thinking", "bogus"]), ThinkingLevel::Medium);
    assert_eq!(level(&["--model", "anthropic/claude-opus-4-6:xhigh"]), ThinkingLevel::Xhigh);
}

#[test]
fn max_is_a_level_at_1_5_and_refused_at_0_73() {
    let dir = write_agent_dir(MOCK, None);
    let env = |name: &str| (name == "ANTHROPIC_API_KEY").then(|| "a".to_owned());
    let resolve = |list: &[&str]| {
        resolve_model(&AgentDefinition::default(), &args(list), dir.path(), &Settings::default(), &env)
            .expect("resolves")
    };
    let level = |list: &[&str]| resolve(list).thinking;
    let opus = ["--model", "anthropic/claude-opus-4-7"];
    assert_eq!(level(&[&opus[..], &["--thinking", "max", "--pi-compat", "1.5"]].concat()), ThinkingLevel::Max);
    assert_eq!(level(&[&opus[..], &["--thinking", "max"]].concat()), ThinkingLevel::Medium, "ignored at 0.73");
    assert_eq!(level(&["--model", "anthropic/claude-opus-4-7:max", "--pi-compat", "1.5"]), ThinkingLevel::Max);
    // At 0.73 `:max` is no level: the whole text is an id the provider does not list.
    assert_eq!(resolve(&["--model", "anthropic/claude-opus-4-7:max"]).model.id, "claude-opus-4-7:max");
    let opus_4_6 = ["--model", "anthropic/claude-opus-4-6", "--thinking", "xhigh"];
    assert_eq!(level(&opus_4_6), ThinkingLevel::Xhigh);
    assert_eq!(level(&[&opus_4_6[..], &["--pi-compat", "1.5"]].concat()), ThinkingLevel::Max, "4.6 tops at max");
    let plain = ["--model", "mock/m-think", "--thinking", "max", "--pi-compat", "1.5"];
    assert_eq!(level(&plain), ThinkingLevel::High, "clamped when the model's map does not name max");
}

#[test]
fn broken_models_json_stops_a_run_with_its_path() {
    let dir = write_agent_dir("{\"providers\": {\"x\": {\"models\": [{\"id\": \"m\"}]}}}", None);
    let error =
        resolve_model(&AgentDefinition::default(), &args(&["--model", "m"]), dir.path(), &Settings::default(), &|_| {
            None
        })
        .expect_err("invalid")
        .to_string();
    let expected = format!("{}: provider \"x\": \"baseUrl\" is required", dir.path().join("models.json").display());
    assert!(error.starts_with(&expected), "{error}");
}

#[test]
fn thinking_defaults_to_settings_then_the_agent_below_flags_and_suffixes() {
    let dir = write_agent_dir(MOCK, None);
    let agent = AgentDefinition { thinking: Some(ThinkingLevel::Low), ..AgentDefinition::default() };
    let settings = |value: serde_json::Value| Settings::from_values(value, serde_json::json!({}));
    let level = |definition: &AgentDefinition, settings: &Settings, list: &[&str]| {
        resolve_model(definition, &args(list), dir.path(), settings, &|_| None).expect("resolves").thinking
    };
    let none = Settings::default();
    assert_eq!(level(&agent, &none, &["--model", "mock/m-think"]), ThinkingLevel::Low, "the agent's level");
    let high = settings(serde_json::json!({"defaultThinkingLevel": "high"}));
    assert_eq!(level(&agent, &high, &["--model", "mock/m-think"]), ThinkingLevel::High, "settings win");
    assert_eq!(level(&AgentDefinition::default(), &high, &["--model", "mock/m-think"]), ThinkingLevel::High);
    assert_eq!(level(&agent, &high, &["--model", "mock/m-think:minimal"]), ThinkingLevel::Minimal, "suffix wins");
    assert_eq!(level(&agent, &high, &["--model", "mock/m-think", "--thinking", "off"]), ThinkingLevel::Off);
    let broken = settings(serde_json::json!({"defaultThinkingLevel": "lots"}));
    assert_eq!(level(&agent, &broken, &["--model", "mock/m-think"]), ThinkingLevel::Low, "invalid setting ignored");
    assert_eq!(level(&agent, &none, &["--model", "mock/m"]), ThinkingLevel::Off, "still clamped to the model");
}

#[test]
fn the_agents_providers_are_usable_and_the_users_file_overrides_them() {
    let agent_providers = r#"{"providers": {"house": {"baseUrl": "http://127.0.0.1:9/v1",
        "api": "openai-completions", "apiKey": "house-key", "models": [{"id": "h"}]}}}"#;
    let definition = AgentDefinition { models_json: Some(agent_providers.to_owned()), ..AgentDefinition::default() };
    let dir = tempfile::tempdir().expect("tempdir");
    let resolve = |list: &[&str]| resolve_model(&definition, &args(list), dir.path(), &Settings::default(), &|_| None);
    let resolved = resolve(&["--model", "house/h"]).expect("the agent's provider");
    assert_eq!((resolved.api_key.as_str(), resolved.model.base_url.as_str()), ("house-key", "http://127.0.0.1:9/v1"));
    let resolved = resolve(&[]).expect("first available is the agent's provider");
    assert_eq!(resolved.model.provider, "house");
    std::fs::write(
        dir.path().join("models.json"),
        r#"{"providers": {"house": {"baseUrl": "http://127.0.0.1:8/v1", "api": "openai-completions",
            "apiKey": "user-key", "models": [{"id": "u"}]}}}"#,
    )
    .expect("write");
    // The agent's model "h" is gone with its definition: the id is now a custom id on the user's provider.
    let resolved = resolve(&["--model", "house/h"]).expect("custom id");
    assert_eq!((resolved.api_key.as_str(), resolved.model.base_url.as_str()), ("user-key", "http://127.0.0.1:8/v1"));
    let resolved = resolve(&["--model", "house/u"]).expect("the user's definition");
    assert_eq!((resolved.api_key.as_str(), resolved.model.base_url.as_str()), ("user-key", "http://127.0.0.1:8/v1"));
    let broken = AgentDefinition { models_json: Some("{".to_owned()), ..AgentDefinition::default() };
    let error = resolve_model(&broken, &args(&["--model", "house/u"]), dir.path(), &Settings::default(), &|_| None)
        .expect_err("invalid built-in providers")
        .to_string();
    assert!(error.contains("the agent's built-in providers"), "{error}");
}
