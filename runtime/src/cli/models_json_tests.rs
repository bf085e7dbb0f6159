//! Tests for models.json parsing and key resolution.

use super::*;

const MOCK: &str = r#"{
  "providers": {
    "mock": {
      "baseUrl": "http://127.0.0.1:9/v1",
      "api": "openai-completions",
      "apiKey": "mock-key",
      "models": [
        { "id": "m", "name": "Mock", "contextWindow": 32000, "maxTokens": 4096, "reasoning": true },
        { "id": "n" }
      ]
    }
  }
}"#;

#[test]
fn parses_provider_and_models_with_pi_defaults() {
    let custom = parse_models_json(MOCK).expect("valid");
    assert_eq!(custom.models.len(), 2);
    let m = &custom.models[0];
    assert_eq!((m.provider.as_str(), m.id.as_str(), m.name.as_str()), ("mock", "m", "Mock"));
    assert_eq!((m.context_window, m.max_tokens, m.reasoning), (32000, 4096, true));
    assert_eq!(m.api, "openai-completions");
    assert_eq!(m.base_url, "http://127.0.0.1:9/v1");
    let n = &custom.models[1];
    assert_eq!((n.name.as_str(), n.context_window, n.max_tokens, n.reasoning), ("n", 128_000, 16_384, false));
    assert_eq!(n.input, vec!["text"]);
    assert_eq!(custom.resolve_key("mock").as_deref(), Some("mock-key"));
}

#[test]
fn api_key_may_name_an_environment_variable() {
    let text = MOCK.replace("\"mock-key\"", "\"PATH\"");
    let custom = parse_models_json(&text).expect("valid");
    assert_eq!(custom.resolve_key("mock"), std::env::var("PATH").ok());
}

#[test]
fn api_key_may_be_a_command() {
    let text = MOCK.replace("\"mock-key\"", "\"!printf ' from-command '\"");
    let custom = parse_models_json(&text).expect("valid");
    assert_eq!(custom.resolve_key("mock").as_deref(), Some("from-command"));
}

#[test]
fn errors_name_provider_and_field() {
    let no_base = MOCK.replace("\"baseUrl\": \"http://127.0.0.1:9/v1\",", "");
    let error = parse_models_json(&no_base).expect_err("baseUrl missing");
    assert!(error.contains("provider \"mock\"") && error.contains("\"baseUrl\""), "{error}");

    let no_key = MOCK.replace("\"apiKey\": \"mock-key\",", "");
    let error = parse_models_json(&no_key).expect_err("apiKey missing");
    assert!(error.contains("\"apiKey\""), "{error}");

    let bad_window = MOCK.replace("32000", "0");
    let error = parse_models_json(&bad_window).expect_err("bad window");
    assert!(error.contains("models[0]") && error.contains("contextWindow"), "{error}");
}

#[test]
fn syntax_errors_carry_line_and_column() {
    let error = parse_models_json("{\n  \"providers\": {,\n}").expect_err("bad json");
    assert!(error.contains("line 2"), "{error}");
}

#[test]
fn missing_file_means_no_models() {
    let dir = tempfile::tempdir().expect("tempdir");
    let custom = load_models_json(&dir.path().join("models.json")).expect("missing is fine");
    assert!(custom.models.is_empty());
}
