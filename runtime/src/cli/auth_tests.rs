//! Tests for auth.json and the key precedence.

use std::os::unix::fs::PermissionsExt;

use super::*;

fn no_env(_: &str) -> Option<String> {
    None
}

fn sources<'a>(auth: &'a AuthFile, env: EnvLookup<'a>, models_json: &[(&str, &str)]) -> KeySources<'a> {
    KeySources {
        runtime: None,
        auth,
        env,
        models_json_keys: models_json.iter().map(|(p, k)| ((*p).to_owned(), (*k).to_owned())).collect(),
        auth_path: PathBuf::from("/agent/auth.json"),
    }
}

#[test]
fn missing_auth_json_is_created_empty_with_mode_600() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("nested").join("auth.json");
    let auth = AuthFile::load_or_create(&path);
    assert!(auth.credentials.is_empty());
    assert_eq!(std::fs::read_to_string(&path).expect("created"), "{}");
    let mode = std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let dir_mode = std::fs::metadata(path.parent().expect("dir")).expect("meta").permissions().mode() & 0o777;
    assert_eq!(dir_mode, 0o700);
    // An existing file is left alone.
    std::fs::write(&path, r#"{"openai": {"type": "api_key", "key": "sk-1"}}"#).expect("write");
    let auth = AuthFile::load_or_create(&path);
    assert_eq!(auth.credentials.get("openai"), Some(&StoredCredential::ApiKey { key: "sk-1".to_owned() }));
}

#[test]
fn parses_api_key_oauth_and_unknown_entries() {
    let auth = AuthFile::parse(
        r#"{
        "openai": {"type": "api_key", "key": "sk-1"},
        "anthropic": {"type": "oauth", "access": "sk-ant-oat-1", "refresh": "r", "expires": 4102444800000},
        "google": {"type": "something-else"},
        "broken": 3
    }"#,
    )
    .expect("valid");
    assert_eq!(auth.credentials.get("openai"), Some(&StoredCredential::ApiKey { key: "sk-1".to_owned() }));
    assert_eq!(
        auth.credentials.get("anthropic"),
        Some(&StoredCredential::OAuth {
            access: Some("sk-ant-oat-1".to_owned()),
            expires: Some(4_102_444_800_000),
            enterprise_url: None
        })
    );
    assert_eq!(auth.credentials.get("google"), Some(&StoredCredential::Other));
    assert!(!auth.credentials.contains_key("broken"));
    assert_eq!(AuthFile::parse("  ").expect("empty is fine"), AuthFile::default());
}

#[test]
fn parse_errors_never_show_the_contents() {
    let error = AuthFile::parse(r#"{"openai": {"type": "api_key", "key": "sk-secret-123"#).expect_err("invalid");
    assert!(!error.contains("sk-secret"), "{error}");
    assert!(error.contains("1:"), "{error}");
}

#[test]
fn precedence_is_flag_then_auth_json_then_env_then_models_json() {
    let auth = AuthFile::parse(r#"{"openai": {"type": "api_key", "key": "from-auth"}}"#).expect("valid");
    let env = |name: &str| match name {
        "OPENAI_API_KEY" => Some("from-env-openai".to_owned()),
        "GROQ_API_KEY" => Some("from-env-groq".to_owned()),
        _ => None,
    };
    let models_json = [("openai", "from-models"), ("groq", "from-models"), ("mock", "from-models")];
    let mut keys = sources(&auth, &env, &models_json);
    assert_eq!(keys.api_key("openai").expect("ok").as_deref(), Some("from-auth"));
    assert_eq!(keys.api_key("groq").expect("ok").as_deref(), Some("from-env-groq"));
    assert_eq!(keys.api_key("mock").expect("ok").as_deref(), Some("from-models"));
    assert_eq!(keys.api_key("xai").expect("ok"), None);
    keys.runtime = Some(("openai".to_owned(), "from-flag".to_owned()));
    assert_eq!(keys.api_key("openai").expect("ok").as_deref(), Some("from-flag"));
    assert_eq!(keys.api_key("groq").expect("ok").as_deref(), Some("from-env-groq"), "the flag is for one provider");
}

#[test]
fn stored_keys_resolve_like_config_values() {
    let auth = AuthFile::parse(
        r#"{"openai": {"type": "api_key", "key": "MY_KEY_VAR"}, "groq": {"type": "api_key", "key": "!printf cmd-key"},
            "xai": {"type": "api_key", "key": "!exit 1"}}"#,
    )
    .expect("valid");
    let env = |name: &str| (name == "MY_KEY_VAR").then(|| "var-value".to_owned());
    let keys = sources(&auth, &env, &[]);
    assert_eq!(keys.api_key("openai").expect("ok").as_deref(), Some("var-value"));
    assert_eq!(keys.api_key("groq").expect("ok").as_deref(), Some("cmd-key"));
    let error = keys.api_key("xai").expect_err("command fails").to_string();
    assert!(error.contains("\"xai\"") && error.contains("/agent/auth.json"), "{error}");
}

#[test]
fn oauth_access_tokens_are_used_without_refresh() {
    let auth = AuthFile::parse(
        r#"{"anthropic": {"type": "oauth", "access": "old-token", "refresh": "r", "expires": 1000},
            "openai": {"type": "oauth", "refresh": "r"}}"#,
    )
    .expect("valid");
    let env = |name: &str| (name == "OPENAI_API_KEY").then(|| "env-key".to_owned());
    let keys = sources(&auth, &env, &[]);
    assert_eq!(keys.api_key("anthropic").expect("ok").as_deref(), Some("old-token"));
    // An OAuth entry without a token falls through to the environment.
    assert_eq!(keys.api_key("openai").expect("ok").as_deref(), Some("env-key"));
}

#[test]
fn availability_counts_every_source_without_running_commands() {
    let auth = AuthFile::parse(r#"{"google": {"type": "oauth"}}"#).expect("valid");
    let env = |name: &str| (name == "CEREBRAS_API_KEY").then(|| "c".to_owned());
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("ran");
    let command = format!("!touch '{}'", marker.display());
    let keys = sources(&auth, &env, &[("mock", command.as_str())]);
    assert!(keys.has_auth("google"));
    assert!(keys.has_auth("cerebras"));
    assert!(keys.has_auth("mock"));
    assert!(!keys.has_auth("openai"));
    assert!(!marker.exists(), "has_auth must not run commands");
    let keys = sources(&auth, &no_env, &[]);
    assert!(!keys.has_auth("cerebras"));
}

#[test]
fn failing_models_json_command_is_an_error_without_the_command_output() {
    let auth = AuthFile::default();
    let keys = sources(&auth, &no_env, &[("mock", "!echo sk-leak; exit 2")]);
    let error = keys.api_key("mock").expect_err("fails").to_string();
    assert!(error.contains("\"mock\"") && !error.contains("sk-leak"), "{error}");
}

#[test]
fn a_key_command_past_its_limit_is_named_with_what_it_sets() {
    use super::super::config_value::COMMAND_TIMEOUT;
    let timed_out = CommandFailure::TimedOut(COMMAND_TIMEOUT);
    let what = || "apiKey of provider \"X\" in models.json".to_owned();
    let error = key_command_error(timed_out, "X", "!sleep 100", "models.json \"apiKey\"", what).to_string();
    assert_eq!(
        error,
        "`!sleep 100` (apiKey of provider \"X\" in models.json) did not finish within 10 s; it was stopped"
    );
    let failed = key_command_error(CommandFailure::Failed, "X", "!false", "models.json \"apiKey\"", what).to_string();
    assert!(failed.contains("failed or printed nothing"), "{failed}");
}
