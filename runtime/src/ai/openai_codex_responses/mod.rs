//! The `openai-codex-responses` provider: a ChatGPT subscription's Codex endpoint, as pi 0.73.1 reaches it
//! over HTTP. The key is the OAuth access token (a JWT); its ChatGPT account id goes in
//! `chatgpt-account-id`. The request posts to `{baseUrl}/codex/responses` with pi's identification
//! (`originator: pi`, `OpenAI-Beta: responses=experimental`, session headers) and a Responses body in Codex's
//! shape; the stream is read with openai-responses' decoder under Codex's rules, and failures are retried by
//! pi's own loop ([`send`]). pi prefers a WebSocket when its runtime has one and falls back to this path;
//! only this path is implemented (see docs/compat.md).

mod account;
mod decode;
mod errors;
mod request;
pub(crate) mod send;

use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, USER_AGENT};

pub use self::account::{AUTH_CLAIM, NoAccountId, account_id};
pub use self::decode::CodexDecoder;
pub use self::request::{DEFAULT_INSTRUCTIONS, build_body};
use super::Model;
use super::pi15::apply_user_agent;
use super::provider::{ApiProvider, LlmContext, StreamOptions};
use super::stream::AssistantMessageStream;
use super::transport::{HttpRequest, RetryRule, apply_headers, secret_header, spawn_sse_call};

/// The api name this provider serves.
pub const API: &str = "openai-codex-responses";
/// The provider pi ships Codex models under.
pub const PROVIDER: &str = "openai-codex";
/// Where pi sends Codex requests when the model names no base URL.
pub const DEFAULT_BASE_URL: &str = "https://chatgpt.com/backend-api";
/// The account header.
const ACCOUNT_HEADER: &str = "chatgpt-account-id";
/// The client pi names itself as.
const ORIGINATOR: &str = "pi";
/// The Responses beta pi opts into over HTTP.
const OPENAI_BETA: &str = "responses=experimental";
/// Said when the call has no token.
const MISSING_TOKEN: &str =
    "no OpenAI Codex access token: log in with /login or put an openai-codex OAuth entry in auth.json";

/// Streams responses from ChatGPT's Codex backend.
#[derive(Debug, Clone, Default)]
pub struct OpenAiCodexResponsesProvider;

impl OpenAiCodexResponsesProvider {
    pub fn new() -> Self {
        Self
    }
}

impl ApiProvider for OpenAiCodexResponsesProvider {
    fn api(&self) -> &str {
        API
    }

    fn stream(&self, model: &Model, context: &LlmContext, options: StreamOptions) -> AssistantMessageStream {
        let request = build_request(model, context, &options);
        let decoder = CodexDecoder::new(model);
        spawn_sse_call(model, request, decoder, options.cancel, options.on_payload)
    }
}

/// The request pi makes; a missing token or one without an account id fails before anything is sent.
fn build_request(model: &Model, context: &LlmContext, options: &StreamOptions) -> Result<HttpRequest, String> {
    let token = options.api_key.as_deref().filter(|key| !key.is_empty()).ok_or(MISSING_TOKEN)?;
    let account = account_id(token).map_err(|error| error.to_string())?;
    let body = build_body(model, context, options);
    let headers = request_headers(model, options, token, &account)?;
    let mut request = HttpRequest::json(codex_url(&model.base_url), headers, &body, send::MAX_RETRIES, options)?;
    request.retry_rule = RetryRule::Codex;
    Ok(request)
}

/// `{baseUrl}/codex/responses` (pi's default base when it is blank), not doubling a path already there.
pub fn codex_url(base_url: &str) -> String {
    let base = if base_url.trim().is_empty() { DEFAULT_BASE_URL } else { base_url };
    let base = base.trim_end_matches('/');
    if base.ends_with("/codex/responses") {
        base.to_owned()
    } else if base.ends_with("/codex") {
        format!("{base}/responses")
    } else {
        format!("{base}/codex/responses")
    }
}

/// The model's headers, then the call's, then pi's own (which win): the token, the account, the originator,
/// our user agent, the beta, the content headers, and the session as `session_id` and `x-client-request-id`.
fn request_headers(model: &Model, options: &StreamOptions, token: &str, account: &str) -> Result<HeaderMap, String> {
    let mut headers = HeaderMap::new();
    apply_headers(&mut headers, model.headers.iter().chain(&options.headers))?;
    headers.insert(AUTHORIZATION, secret_header(&format!("Bearer {token}"))?);
    let account = HeaderValue::from_str(account).map_err(|_| "the ChatGPT account id is not a valid header value")?;
    headers.insert(HeaderName::from_static(ACCOUNT_HEADER), account);
    headers.insert(HeaderName::from_static("originator"), HeaderValue::from_static(ORIGINATOR));
    headers.insert(USER_AGENT, HeaderValue::from_static(concat!("pi-runtime/", env!("CARGO_PKG_VERSION"))));
    apply_user_agent(&mut headers, options)?;
    headers.insert(HeaderName::from_static("openai-beta"), HeaderValue::from_static(OPENAI_BETA));
    headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if let Some(session_id) = options.session_id.as_deref().filter(|id| !id.is_empty()) {
        let session = [
            ("session_id".to_owned(), session_id.to_owned()),
            ("x-client-request-id".to_owned(), session_id.to_owned()),
        ];
        apply_headers(&mut headers, &session)?;
    }
    Ok(headers)
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
