//! Unit tests of the Mistral provider's request: URL, headers (as pi 0.73.1 sent them to a capture server),
//! error texts, and the hook that sees pi's camelCase payload.

use std::sync::Arc;

use serde_json::json;

use super::*;

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

#[test]
fn requests_go_to_chat_completions_with_the_sdks_headers() {
    let mut model = Model::new("mistral", "m", API, "http://127.0.0.1:9/");
    model.headers = vec![("X-Team".into(), "model".into()), ("User-Agent".into(), "mine".into())];
    let options = StreamOptions {
        api_key: Some("secret".into()),
        session_id: Some("sess-1".into()),
        headers: vec![("x-team".into(), "call".into())],
        retry: crate::ai::ProviderRetry { max_retries: Some(5), ..Default::default() },
        ..StreamOptions::default()
    };
    let (request, hook) = match build_request(&model, &LlmContext::default(), &options, 0) {
        Ok(built) => built,
        Err(error) => panic!("{error}"),
    };
    assert!(hook.is_none());
    assert_eq!(request.url, "http://127.0.0.1:9/v1/chat/completions");
    assert_eq!(request.max_retries, 0, "pi gives the SDK no retries");
    let headers = &request.headers;
    assert_eq!(header(headers, "accept"), Some("text/event-stream"));
    assert_eq!(header(headers, "content-type"), Some("application/json"));
    assert_eq!(header(headers, "authorization"), Some("Bearer secret"));
    assert!(headers.get("authorization").is_some_and(HeaderValue::is_sensitive));
    assert_eq!((header(headers, "x-team"), header(headers, "x-affinity")), (Some("call"), Some("sess-1")));
    assert!(header(headers, "user-agent").is_some_and(|agent| agent.starts_with("pi-runtime/")));
    let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap_or_default();
    assert_eq!(body, json!({"model": "m", "max_tokens": 16384, "stream": true, "messages": []}));

    let own_affinity = StreamOptions { headers: vec![("x-affinity".into(), "mine".into())], ..options.clone() };
    let built = build_request(&model, &LlmContext::default(), &own_affinity, 0);
    assert_eq!(
        built.ok().and_then(|(r, _)| r.headers.get("x-affinity").cloned()),
        Some(HeaderValue::from_static("mine"))
    );
    let keyless = build_request(&model, &LlmContext::default(), &StreamOptions::default(), 0);
    assert_eq!(keyless.err().as_deref(), Some("No API key for provider: mistral"));
}

#[test]
fn the_url_is_resolved_under_the_base_as_the_sdk_does() {
    assert_eq!(request_url("").as_deref(), Ok("https://api.mistral.ai/v1/chat/completions"));
    assert_eq!(request_url("http://h:1/prefix").as_deref(), Ok("http://h:1/prefix/v1/chat/completions"));
    assert_eq!(request_url("http://h:1/prefix//").as_deref(), Ok("http://h:1/prefix/v1/chat/completions"));
    assert_eq!(request_url("http://h/a?x=1#f").as_deref(), Ok("http://h/a/v1/chat/completions"));
    assert_eq!(request_url("not a url").err().as_deref(), Some("Invalid URL"));
}

#[tokio::test]
async fn a_payload_hook_sees_pis_camel_case_payload_and_the_sdk_writes_its_answer() {
    let model = Model::new("mistral", "m", API, "http://127.0.0.1:9");
    let seen = Arc::new(std::sync::Mutex::new(None));
    let seen_by_hook = seen.clone();
    let hook: PayloadHook = Arc::new(move |mut payload: Value| {
        *seen_by_hook.lock().unwrap_or_else(|p| p.into_inner()) = Some(payload.clone());
        payload["maxTokens"] = json!(5);
        payload["randomSeed"] = json!(7);
        let done: HookFuture = Box::pin(async move { payload });
        done
    });
    let options = StreamOptions { api_key: Some("k".into()), on_payload: Some(hook), ..StreamOptions::default() };
    let (request, wrapped) = match build_request(&model, &LlmContext::default(), &options, 0) {
        Ok((request, Some(wrapped))) => (request, wrapped),
        Ok((_, None)) => panic!("the hook was dropped"),
        Err(error) => panic!("{error}"),
    };
    let payload: Value = serde_json::from_slice(&request.body).unwrap_or_default();
    assert_eq!(payload["maxTokens"], 16384, "the body waits for the hook in pi's form");
    let sent = wrapped(payload).await;
    assert_eq!(sent.to_string(), r#"{"model":"m","max_tokens":5,"stream":true,"random_seed":7,"messages":[]}"#);
    let seen = seen.lock().unwrap_or_else(|p| p.into_inner()).clone();
    assert_eq!(seen, Some(json!({"model": "m", "stream": true, "messages": [], "maxTokens": 16384})));
}

#[test]
fn http_errors_quote_the_body_as_the_sdk_under_pi_does() {
    let body = r#"{"object":"error","message":"Requests rate limit exceeded","type":"rate_limited","param":null,"code":"1300"}"#;
    assert_eq!(http_error_message(429, &format!(" {body}\n")), format!("Mistral API error (429): {body}"));
    assert_eq!(
        http_error_message(500, "  "),
        r#"Mistral API error (500): API error occurred: Status 500 Content-Type "". Body: """#
    );
    let long = format!("{}é{}", "x".repeat(3999), "y".repeat(10));
    assert_eq!(
        http_error_message(400, &long),
        format!("Mistral API error (400): {}é... [truncated 10 chars]", "x".repeat(3999))
    );
}

#[test]
fn transport_failures_take_the_sdks_words() {
    // pi 0.73.1 said `Unable to make request: TypeError: fetch failed` for a refused connection.
    assert_eq!(reword(ABORTED_BEFORE_RESPONSE), "Request aborted by client: AbortError: This operation was aborted");
    assert_eq!(reword(ABORTED), "This operation was aborted");
    let refused = format!("{CONNECTION_ERROR} (POST http://h/v1/chat/completions: Connection refused (os error 111))");
    assert_eq!(
        reword(&refused),
        "Unable to make request: TypeError: fetch failed (POST http://h/v1/chat/completions: Connection refused (os error 111))"
    );
    assert_eq!(reword("Request timed out."), "Request timed out.");
    assert_eq!(reword("Mistral API error (400): x"), "Mistral API error (400): x");
}
