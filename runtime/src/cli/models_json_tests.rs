//! Tests for reading and validating models.json.

use super::*;

const MOCK: &str = r#"{
  "providers": {
    "mock": {
      "baseUrl": "http://127.0.0.1:9/v1",
      "api": "openai-completions",
      "apiKey": "mock-key",
      "headers": { "x-team": "TEAM_VAR" },
      "authHeader": true,
      "compat": { "supportsStore": false },
      "models": [
        { "id": "m", "name": "Mock", "contextWindow": 32000, "maxTokens": 4096, "reasoning": true,
          "input": ["text", "image"], "cost": { "input": 1, "output": 2, "cacheRead": 0.5, "cacheWrite": 0 },
          "thinkingLevelMap": { "xhigh": "max", "off": null }, "headers": { "x-model": "!echo hi" } },
        { "id": "n" }
      ]
    }
  }
}"#;

fn error_of(text: &str) -> String {
    parse_models_json(text).expect_err("invalid")
}

#[test]
fn reads_every_field_of_providers_and_models() {
    let config = parse_models_json(MOCK).expect("valid");
    assert_eq!(config.providers.len(), 1);
    let mock = &config.providers[0];
    assert_eq!(mock.name, "mock");
    assert_eq!(mock.base_url.as_deref(), Some("http://127.0.0.1:9/v1"));
    assert_eq!(mock.api.as_deref(), Some("openai-completions"));
    assert_eq!(mock.api_key.as_deref(), Some("mock-key"));
    assert_eq!(mock.headers, Some(vec![("x-team".to_owned(), "TEAM_VAR".to_owned())]));
    assert!(mock.auth_header);
    assert_eq!(mock.compat, Some(serde_json::json!({"supportsStore": false})));
    let m = &mock.models[0];
    assert_eq!((m.id.as_str(), m.name.as_deref()), ("m", Some("Mock")));
    assert_eq!((m.context_window, m.max_tokens, m.reasoning), (Some(32000), Some(4096), Some(true)));
    assert_eq!(m.input.as_deref(), Some(&["text".to_owned(), "image".to_owned()][..]));
    assert_eq!(m.cost, Some(ModelCost { input: 1.0, output: 2.0, cache_read: 0.5, cache_write: 0.0 }));
    let map = m.thinking_level_map.as_ref().expect("map");
    assert_eq!(map.get(crate::ai::ThinkingLevel::Xhigh), Some(Some("max")));
    assert_eq!(map.get(crate::ai::ThinkingLevel::Off), Some(None));
    assert_eq!(m.headers, Some(vec![("x-model".to_owned(), "!echo hi".to_owned())]));
    assert_eq!(mock.models[1], ModelDefinition { id: "n".to_owned(), ..ModelDefinition::default() });
}

#[test]
fn comments_and_trailing_commas_are_accepted_like_pi() {
    let text = "{\n  // my providers\n  \"providers\": {\n    \"mock\": {\"baseUrl\": \"http://a//b\", \"apiKey\": \"k // not a comment\",\n      \"api\": \"openai-completions\", \"models\": [{\"id\": \"m\",}, ], // done\n    },\n  },\n}";
    let config = parse_models_json(text).expect("valid");
    let mock = &config.providers[0];
    assert_eq!(mock.base_url.as_deref(), Some("http://a//b"));
    assert_eq!(mock.api_key.as_deref(), Some("k // not a comment"));
    assert_eq!(mock.models.len(), 1);
}

#[test]
fn syntax_errors_give_line_and_column_of_the_file() {
    let error = error_of("{\n  // comment\n  \"providers\": {\"a\" 1}\n}");
    assert!(error.starts_with("invalid JSON at 3:21:"), "{error}");
    let error = error_of("{\"providers\": {\"x\": \"é\" oops}}");
    assert!(error.contains("at 1:"), "{error}");
}

#[test]
fn custom_providers_need_base_url_api_key_and_api() {
    let no_base = MOCK.replace("\"baseUrl\": \"http://127.0.0.1:9/v1\",", "");
    assert_eq!(error_of(&no_base), "provider \"mock\": \"baseUrl\" is required when defining custom models");
    let no_key = MOCK.replace("\"apiKey\": \"mock-key\",", "");
    let error = error_of(&no_key);
    assert!(error.starts_with("provider \"mock\": \"apiKey\" is required"), "{error}");
    let no_api = MOCK.replace("\"api\": \"openai-completions\",", "");
    let error = error_of(&no_api);
    assert!(error.starts_with("provider \"mock\": models[0] (\"m\"): \"api\" is required"), "{error}");
}

#[test]
fn built_in_providers_may_add_models_without_endpoint_or_key() {
    let text = r#"{"providers": {"openai": {"models": [{"id": "my-finetune"}]}}}"#;
    let config = parse_models_json(text).expect("valid");
    assert_eq!(config.providers[0].models[0].id, "my-finetune");
}

#[test]
fn field_errors_name_provider_model_and_field() {
    let cases = [
        (MOCK.replace("32000", "0"), "provider \"mock\": models[0] (\"m\"): invalid \"contextWindow\" 0"),
        (MOCK.replace("4096", "-1"), "provider \"mock\": models[0] (\"m\"): invalid \"maxTokens\" -1"),
        (MOCK.replace("\"reasoning\": true", "\"reasoning\": \"yes\""), "\"reasoning\" must be true or false"),
        (MOCK.replace("[\"text\", \"image\"]", "[\"audio\"]"), "models[0] (\"m\"): \"input\" must be a list"),
        (MOCK.replace("\"cacheWrite\": 0 ", ""), "\"cost.cacheWrite\" is required"),
        (MOCK.replace("\"TEAM_VAR\"", "3"), "provider \"mock\": \"headers.x-team\" must be a string"),
        (MOCK.replace("{ \"id\": \"n\" }", "{ \"name\": \"n\" }"), "provider \"mock\": models[1]: \"id\" is required"),
        (MOCK.replace("\"id\": \"n\"", "\"id\": \"\""), "models[1]: \"id\" must be a non-empty string"),
        (MOCK.replace("\"authHeader\": true", "\"authHeader\": 1"), "\"authHeader\" must be true or false"),
        (MOCK.replace("{ \"supportsStore\": false }", "[]"), "provider \"mock\": \"compat\" must be an object"),
        (MOCK.replace("\"off\": null", "\"off\": 1"), "\"thinkingLevelMap\" \"off\" must be a string or null"),
    ];
    for (text, expected) in cases {
        let error = error_of(&text);
        assert!(error.contains(expected), "expected {expected:?} in {error:?}");
    }
}

#[test]
fn overrides_and_override_only_providers() {
    let text = r#"{"providers": {
        "anthropic": {"baseUrl": "http://proxy/anthropic"},
        "openai": {"modelOverrides": {"gpt-5.4": {"name": "GPT", "cost": {"input": 9}, "maxTokens": 1000}}},
        "groq": {"headers": {"x-a": "b"}}
    }}"#;
    let config = parse_models_json(text).expect("valid");
    assert_eq!(config.providers.len(), 3);
    let (id, over) = &config.providers[1].model_overrides[0];
    assert_eq!(id, "gpt-5.4");
    assert_eq!(over.name.as_deref(), Some("GPT"));
    assert_eq!(over.cost, PartialCost { input: Some(9.0), ..PartialCost::default() });
    assert_eq!(over.max_tokens, Some(1000));

    let error = error_of(r#"{"providers": {"openai": {"apiKey": "k"}}}"#);
    assert!(error.starts_with("provider \"openai\": nothing to configure"), "{error}");
    let error = error_of(r#"{"providers": {"openai": {"modelOverrides": {"x": {"contextWindow": "big"}}}}}"#);
    assert!(error.contains("provider \"openai\": modelOverrides[\"x\"]: \"contextWindow\""), "{error}");
}

#[test]
fn root_shape_errors() {
    assert!(error_of("[]").contains("\"providers\""));
    assert!(error_of("{}").contains("\"providers\" is missing"));
    assert!(error_of(r#"{"providers": []}"#).contains("\"providers\" must be an object"));
}

#[test]
fn missing_file_is_empty_and_errors_name_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("models.json");
    assert_eq!(load_models_json(&path).expect("missing is fine"), ModelsConfig::default());
    std::fs::write(&path, "{\"providers\": {\"x\": {}}}").expect("write");
    let error = load_models_json(&path).expect_err("invalid").to_string();
    assert!(error.starts_with(&format!("{}: provider \"x\": ", path.display())), "{error}");
}
