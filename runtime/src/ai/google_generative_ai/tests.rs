//! Unit tests of the google-generative-ai request URL, headers and HTTP error texts.

use super::*;

fn model(base_url: &str, id: &str) -> Model {
    Model::new("google", id, API, base_url)
}

#[test]
fn urls_follow_the_sdk() {
    let url = |base: &str, id: &str| request_url(&model(base, id));
    assert_eq!(
        url("http://127.0.0.1:9/v1beta", "gemini-2.5-flash").as_deref(),
        Ok("http://127.0.0.1:9/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse")
    );
    assert_eq!(
        url("http://h/v1beta/", "tunedModels/mine").as_deref(),
        Ok("http://h/v1beta/tunedModels/mine:streamGenerateContent?alt=sse"),
        "one trailing slash goes; tuned and prefixed names stay"
    );
    assert_eq!(
        url("", "models/gemini-3-pro").as_deref(),
        Ok("https://generativelanguage.googleapis.com/v1beta/models/gemini-3-pro:streamGenerateContent?alt=sse")
    );
    for bad in ["a..b", "m?x=1", "m&x", ""] {
        assert!(url("http://h", bad).is_err(), "{bad:?} must be refused");
    }
}

#[test]
fn headers_carry_the_key_then_model_and_call_headers() {
    let mut m = model("http://h", "g");
    m.headers = vec![("X-Team".into(), "model".into()), ("x-other".into(), "kept".into())];
    let options = StreamOptions {
        api_key: Some("secret".into()),
        headers: vec![("x-team".into(), "call".into())],
        ..StreamOptions::default()
    };
    let headers = request_headers(&m, &options).unwrap_or_default();
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    assert_eq!(get("x-goog-api-key"), Some("secret"));
    assert!(headers.get("x-goog-api-key").is_some_and(HeaderValue::is_sensitive));
    assert_eq!(get("content-type"), Some("application/json"));
    assert_eq!((get("x-team"), get("x-other")), (Some("call"), Some("kept")));
    assert!(headers.get("authorization").is_none());
    let keyless = request_headers(&m, &StreamOptions::default()).unwrap_or_default();
    assert!(keyless.get("x-goog-api-key").is_none());
    let bad = StreamOptions { headers: vec![("bad name".into(), "v".into())], ..StreamOptions::default() };
    assert_eq!(request_headers(&m, &bad).err().as_deref(), Some("invalid header name \"bad name\""));
}

#[test]
fn http_errors_read_like_the_genai_sdk() {
    let google = r#"{"error": {"code": 400, "message": "API key not valid.", "status": "INVALID_ARGUMENT"}}"#;
    assert_eq!(
        http_error_message(400, google),
        r#"{"error":{"code":400,"message":"API key not valid.","status":"INVALID_ARGUMENT"}}"#,
        "a JSON body comes back compact, keys in order"
    );
    assert_eq!(
        http_error_message(400, "plain failure"),
        r#"{"error":{"message":"plain failure","code":400,"status":"Bad Request"}}"#
    );
    assert_eq!(http_error_message(503, ""), r#"{"error":{"message":"","code":503,"status":"Service Unavailable"}}"#);
}

#[test]
fn requests_are_not_retried_by_default() {
    assert_eq!(GoogleGenerativeAiProvider::new().max_retries, 0);
    assert_eq!(GoogleGenerativeAiProvider::new().with_max_retries(2).max_retries, 2);
    let context = LlmContext::default();
    let refused = build_request(&model("http://h", "g"), &context, &StreamOptions::default(), 0);
    assert!(refused.is_err_and(|e| e.contains("no contents")), "an empty conversation is refused before sending");
}

#[test]
fn the_calls_user_agent_replaces_ours() {
    let options = StreamOptions { user_agent: Some("pi/1.5.2 (linux; x64)".into()), ..StreamOptions::default() };
    let headers = request_headers(&model("http://h", "g"), &options).unwrap_or_default();
    assert_eq!(headers.get("user-agent").and_then(|v| v.to_str().ok()), Some("pi/1.5.2 (linux; x64)"));
    let ours = request_headers(&model("http://h", "g"), &StreamOptions::default()).unwrap_or_default();
    assert!(ours.get("user-agent").and_then(|v| v.to_str().ok()).is_some_and(|a| a.starts_with("pi-runtime/")));
}
