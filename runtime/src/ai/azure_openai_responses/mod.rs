//! The `azure-openai-responses` provider: the Responses API of an Azure OpenAI resource. The body and the
//! stream are openai-responses' (the deployment named as `model`, no `store` or cache retention, no
//! service-tier pricing); the request goes to `{base}/responses?api-version=…` with the key in `api-key`, and
//! retries follow the OpenAI SDK's Azure client (2 retries on 408/409/429/5xx and connection failures).

mod config;

use std::sync::Arc;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, USER_AGENT};

pub use self::config::{
    API_KEY_ENV, API_VERSION_ENV, AzureEndpoint, BASE_URL_ENV, DEFAULT_API_VERSION, DEPLOYMENT_MAP_ENV, EnvLookup,
    RESOURCE_NAME_ENV, deployment_name, normalize_base_url,
};
use super::Model;
use super::openai_responses::{Dialect, ResponsesDecoder, build_dialect_body};
use super::pi15::apply_user_agent;
use super::provider::{ApiProvider, LlmContext, StreamOptions};
use super::stream::AssistantMessageStream;
use super::transport::{DEFAULT_MAX_RETRIES, HttpRequest, apply_headers, secret_header, spawn_sse_call};

/// The api name this provider serves.
pub const API: &str = "azure-openai-responses";

/// The header that carries the key.
const API_KEY_HEADER: &str = "api-key";

/// Streams responses from Azure OpenAI deployments.
#[derive(Clone)]
pub struct AzureOpenAiResponsesProvider {
    max_retries: u32,
    env: Arc<EnvLookup>,
}

impl std::fmt::Debug for AzureOpenAiResponsesProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AzureOpenAiResponsesProvider").field("max_retries", &self.max_retries).finish_non_exhaustive()
    }
}

impl Default for AzureOpenAiResponsesProvider {
    fn default() -> Self {
        Self::new()
    }
}

impl AzureOpenAiResponsesProvider {
    /// A provider that reads the `AZURE_OPENAI_*` variables from the process environment at each request.
    pub fn new() -> Self {
        Self { max_retries: DEFAULT_MAX_RETRIES, env: Arc::new(|name: &str| std::env::var(name).ok()) }
    }

    /// Reads the `AZURE_OPENAI_*` variables through `env` instead (tests).
    pub fn with_env(mut self, env: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> Self {
        self.env = Arc::new(env);
        self
    }

    /// Sets how often a retryable failure (408, 409, 429, 5xx, no connection, timeout) is retried
    /// before the stream fails. A response header `x-should-retry: true|false` overrides the status rule.
    pub fn with_max_retries(mut self, max_retries: u32) -> Self {
        self.max_retries = max_retries;
        self
    }
}

impl ApiProvider for AzureOpenAiResponsesProvider {
    fn api(&self) -> &str {
        API
    }

    fn stream(&self, model: &Model, context: &LlmContext, options: StreamOptions) -> AssistantMessageStream {
        let request = build_request(model, context, &options, self.max_retries, &*self.env);
        let decoder = ResponsesDecoder::for_azure(model, options.pi_compat);
        spawn_sse_call(model, request, decoder, options.cancel, options.on_payload)
    }
}

/// The request as pi's Azure provider makes it; a missing key or base URL fails before anything is sent.
fn build_request(
    model: &Model,
    context: &LlmContext,
    options: &StreamOptions,
    max_retries: u32,
    env: &EnvLookup,
) -> Result<HttpRequest, String> {
    let deployment = deployment_name(&model.id, env);
    let key = config::api_key(options.api_key.as_deref(), env)?;
    let endpoint = AzureEndpoint::resolve(&model.base_url, env)?;
    let body = build_dialect_body(model, context, options, Dialect::Azure { deployment: &deployment }, false);
    HttpRequest::json(endpoint.responses_url()?, request_headers(model, options, &key)?, &body, max_retries, options)
}

/// Content headers, the call's `user-agent` (pi 1.5's), `api-key`, then the model's and the call's headers
/// (which may replace any of them).
fn request_headers(model: &Model, options: &StreamOptions, key: &str) -> Result<HeaderMap, String> {
    let mut headers = HeaderMap::new();
    headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(USER_AGENT, HeaderValue::from_static(concat!("pi-runtime/", env!("CARGO_PKG_VERSION"))));
    apply_user_agent(&mut headers, options)?;
    headers.insert(HeaderName::from_static(API_KEY_HEADER), secret_header(key)?);
    apply_headers(&mut headers, model.headers.iter().chain(&options.headers))?;
    Ok(headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            BASE_URL_ENV => Some("https://res.openai.azure.com".into()),
            DEPLOYMENT_MAP_ENV => Some("m=dep-m".into()),
            _ => None,
        }
    }

    #[test]
    fn requests_carry_the_key_in_api_key_and_the_deployment_as_model() {
        let mut model = Model::new(API, "m", API, "");
        model.headers = vec![("X-Team".into(), "model".into())];
        let options = StreamOptions {
            api_key: Some("secret".into()),
            session_id: Some("s-1".into()),
            headers: vec![("x-team".into(), "call".into())],
            ..StreamOptions::default()
        };
        let request = build_request(&model, &LlmContext::default(), &options, 2, &env).map_err(|e| e.to_string());
        let Ok(request) = request else { panic!("{request:?}") };
        assert_eq!(request.url, "https://res.openai.azure.com/openai/v1/responses?api-version=v1");
        let header = |name: &str| request.headers.get(name).and_then(|v| v.to_str().ok());
        assert_eq!((header("api-key"), header("authorization")), (Some("secret"), None));
        assert!(request.headers.get("api-key").is_some_and(HeaderValue::is_sensitive));
        assert_eq!((header("x-team"), header("session_id"), header("x-client-request-id")), (Some("call"), None, None));
        let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap_or_default();
        assert_eq!(body["model"], "dep-m");
        assert_eq!(body["prompt_cache_key"], "s-1");
        assert!(body.get("store").is_none(), "{body}");
        assert!(!format!("{request:?}").contains("secret"), "the key never shows in debug output");
    }

    #[test]
    fn a_missing_key_or_base_url_fails_before_sending() {
        let model = Model::new(API, "m", API, "");
        let keyless = build_request(&model, &LlmContext::default(), &StreamOptions::default(), 2, &env);
        assert_eq!(keyless.err().as_deref(), Some(config::MISSING_API_KEY));
        let options = StreamOptions { api_key: Some("k".into()), ..StreamOptions::default() };
        let nowhere = build_request(&model, &LlmContext::default(), &options, 2, &|_: &str| -> Option<String> { None });
        assert_eq!(nowhere.err().as_deref(), Some(config::MISSING_BASE_URL));
    }
}
