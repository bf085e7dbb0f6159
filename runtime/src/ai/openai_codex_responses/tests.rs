//! Codex request tests: the URL, pi's headers (checked against a request pi 0.73.1 sent), the account id
//! from the token, and the token kept out of errors and debug output.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::json;

use super::*;

/// A token shaped like ChatGPT's: a JWT whose payload carries the account claim.
pub(crate) fn fake_token(account: &str) -> String {
    let payload = json!({AUTH_CLAIM: {"chatgpt_account_id": account}, "exp": 4_102_444_800u64});
    format!("{}.{}.sig", URL_SAFE_NO_PAD.encode(r#"{"alg":"none"}"#), URL_SAFE_NO_PAD.encode(payload.to_string()))
}

fn header<'a>(request: &'a HttpRequest, name: &str) -> Option<&'a str> {
    request.headers.get(name).and_then(|value| value.to_str().ok())
}

#[test]
fn urls_end_in_codex_responses_once() {
    assert_eq!(codex_url("https://chatgpt.com/backend-api"), "https://chatgpt.com/backend-api/codex/responses");
    assert_eq!(codex_url("http://127.0.0.1:9/"), "http://127.0.0.1:9/codex/responses");
    assert_eq!(codex_url("http://h/x/codex"), "http://h/x/codex/responses");
    assert_eq!(codex_url("http://h/x/codex/responses/"), "http://h/x/codex/responses");
    assert_eq!(codex_url("  "), "https://chatgpt.com/backend-api/codex/responses");
}

#[test]
fn requests_carry_pis_headers_over_the_models_and_the_calls() {
    let mut model = Model::new(PROVIDER, "gpt-5.5", API, "http://127.0.0.1:9");
    model.headers = vec![("X-Team".into(), "model".into()), ("originator".into(), "model".into())];
    let token = fake_token("acct-123");
    let options = StreamOptions {
        api_key: Some(token.clone()),
        session_id: Some("s-1".into()),
        headers: vec![("x-team".into(), "call".into()), ("OpenAI-Beta".into(), "call".into())],
        ..StreamOptions::default()
    };
    let request = build_request(&model, &LlmContext::default(), &options);
    let Ok(request) = request else { panic!("{request:?}") };
    assert_eq!(request.url, "http://127.0.0.1:9/codex/responses");
    assert_eq!(request.retry_rule, RetryRule::Codex);
    assert_eq!(header(&request, "authorization"), Some(format!("Bearer {token}").as_str()));
    assert!(request.headers.get("authorization").is_some_and(HeaderValue::is_sensitive));
    assert_eq!(header(&request, "chatgpt-account-id"), Some("acct-123"));
    assert_eq!(header(&request, "originator"), Some("pi"));
    assert_eq!(header(&request, "openai-beta"), Some("responses=experimental"));
    assert_eq!(header(&request, "accept"), Some("text/event-stream"));
    assert_eq!(header(&request, "content-type"), Some("application/json"));
    assert_eq!((header(&request, "session_id"), header(&request, "x-client-request-id")), (Some("s-1"), Some("s-1")));
    assert_eq!(header(&request, "x-team"), Some("call"));
    assert!(header(&request, "user-agent").is_some_and(|agent| agent.starts_with("pi-runtime/")));
    assert!(!format!("{request:?}").contains(&token), "the token never shows in debug output");
    let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap_or_default();
    assert_eq!(body["prompt_cache_key"], "s-1");
}

#[test]
fn no_session_sends_no_session_headers() {
    let model = Model::new(PROVIDER, "gpt-5.5", API, "");
    let options = StreamOptions { api_key: Some(fake_token("a")), ..StreamOptions::default() };
    let request = build_request(&model, &LlmContext::default(), &options);
    let Ok(request) = request else { panic!("{request:?}") };
    assert_eq!(request.url, "https://chatgpt.com/backend-api/codex/responses");
    assert_eq!((header(&request, "session_id"), header(&request, "x-client-request-id")), (None, None));
}

#[test]
fn a_missing_token_or_one_without_an_account_fails_before_sending() {
    let model = Model::new(PROVIDER, "gpt-5.5", API, "");
    let keyless = build_request(&model, &LlmContext::default(), &StreamOptions::default());
    assert_eq!(keyless.err().as_deref(), Some(MISSING_TOKEN));
    let options = StreamOptions { api_key: Some("sk-secret-not-a-jwt".into()), ..StreamOptions::default() };
    let refused = build_request(&model, &LlmContext::default(), &options).err().unwrap_or_default();
    assert!(refused.contains("account id") && !refused.contains("sk-secret"), "{refused}");
}
