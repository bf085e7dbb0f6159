//! The `anthropic-messages` provider: POST `{baseUrl}/v1/messages` with `stream: true` and parse the
//! named SSE events into assistant-message events. Headers, retries and error texts follow the
//! Anthropic JS SDK that pi uses (2 retries on 408/409/429/5xx and connection failures); an OAuth
//! token (`sk-ant-oat…`) is sent as a bearer token with Claude Code's identity, as pi does.

mod decode;
mod request;
mod typical_delta;

use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue, USER_AGENT};

pub use decode::AnthropicDecoder;
pub use request::{CacheRetention, build_body};

use self::request::{Compat, is_oauth_token, supports_adaptive_thinking};
use super::Model;
use super::provider::{ApiProvider, LlmContext, StreamOptions, empty_assistant_message};
use super::stream::AssistantMessageStream;
use super::transport::{DEFAULT_MAX_RETRIES, HttpRequest, StreamDecoder, apply_headers, secret_header, spawn_sse_call};

/// The api name this provider serves.
pub const API: &str = "anthropic-messages";

/// The Messages API version the SDK pins.
const ANTHROPIC_VERSION: &str = "2023-06-01";
/// Beta flag for streamed tool input on endpoints without `eager_input_streaming`.
const FINE_GRAINED_TOOL_STREAMING_BETA: &str = "fine-grained-tool-streaming-2025-05-14";
/// Beta flag for thinking between tool calls (built into adaptive-thinking models).
const INTERLEAVED_THINKING_BETA: &str = "interleaved-thinking-2025-05-14";
/// Beta flags an OAuth token needs before the others.
const OAUTH_BETAS: [&str; 2] = ["claude-code-20250219", "oauth-2025-04-20"];
/// The client identity an OAuth token is accepted from.
const CLAUDE_CODE_USER_AGENT: &str = "claude-cli/2.1.75";

/// Streams Anthropic Messages responses.
#[derive(Debug, Clone)]
pub struct AnthropicMessagesProvider {
    max_retries: u32,
}

impl Default for AnthropicMessagesProvider {
    fn default() -> Self {
        Self::new()
    }
}

impl AnthropicMessagesProvider {
    pub fn new() -> Self {
        Self { max_retries: DEFAULT_MAX_RETRIES }
    }

    /// Sets how often a retryable failure (408, 409, 429, 5xx such as 529 overloaded, no connection,
    /// timeout) is retried before the stream fails; `x-should-retry: true|false` overrides the status rule.
    pub fn with_max_retries(mut self, max_retries: u32) -> Self {
        self.max_retries = max_retries;
        self
    }
}

impl ApiProvider for AnthropicMessagesProvider {
    fn api(&self) -> &str {
        API
    }

    fn stream(&self, model: &Model, context: &LlmContext, options: StreamOptions) -> AssistantMessageStream {
        let request = build_request(model, context, &options, self.max_retries);
        let mut decoder = AnthropicDecoder::new(empty_assistant_message(model), model);
        if is_oauth_token(options.api_key.as_deref()) {
            decoder = decoder.with_tool_names(context.tools.iter().map(|t| t.name.clone()).collect());
        }
        spawn_sse_call(model, request, decoder, options.cancel, options.on_payload)
    }
}

/// This API's stream decoder, for decoding recorded responses (tests, benchmarks).
pub fn decoder(model: &Model) -> impl StreamDecoder + use<> {
    AnthropicDecoder::new(empty_assistant_message(model), model)
}

fn build_request(
    model: &Model,
    context: &LlmContext,
    options: &StreamOptions,
    max_retries: u32,
) -> Result<HttpRequest, String> {
    let body = build_body(model, context, options, CacheRetention::from_env());
    HttpRequest::json(
        format!("{}/v1/messages", model.base_url.trim_end_matches('/')),
        request_headers(model, context, options)?,
        &body,
        max_retries,
        options,
    )
}

/// The `anthropic-beta` flags pi asks for (before the OAuth ones).
fn beta_features(model: &Model, context: &LlmContext) -> Vec<&'static str> {
    let mut betas = Vec::new();
    if !context.tools.is_empty() && !Compat::for_model(model).supports_eager_tool_input_streaming {
        betas.push(FINE_GRAINED_TOOL_STREAMING_BETA);
    }
    if !supports_adaptive_thinking(&model.id) {
        betas.push(INTERLEAVED_THINKING_BETA);
    }
    betas
}

/// The SDK's headers (key, version), pi's defaults, then the model's and the call's headers.
fn request_headers(model: &Model, context: &LlmContext, options: &StreamOptions) -> Result<HeaderMap, String> {
    let key = options.api_key.as_deref().filter(|k| !k.is_empty());
    let oauth = is_oauth_token(key);
    let mut betas = beta_features(model, context);
    let mut headers = HeaderMap::new();
    headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert("anthropic-version", HeaderValue::from_static(ANTHROPIC_VERSION));
    headers.insert("anthropic-dangerous-direct-browser-access", HeaderValue::from_static("true"));
    match key {
        Some(key) if oauth => {
            headers.insert(AUTHORIZATION, secret_header(&format!("Bearer {key}"))?);
            headers.insert(USER_AGENT, HeaderValue::from_static(CLAUDE_CODE_USER_AGENT));
            headers.insert("x-app", HeaderValue::from_static("cli"));
            betas.splice(0..0, OAUTH_BETAS);
        }
        Some(key) => {
            headers.insert("x-api-key", secret_header(key)?);
        }
        None => {}
    }
    if !headers.contains_key(USER_AGENT) {
        headers.insert(USER_AGENT, HeaderValue::from_static(concat!("pi-runtime/", env!("CARGO_PKG_VERSION"))));
    }
    if !betas.is_empty() {
        let betas = HeaderValue::from_str(&betas.join(",")).map_err(|e| format!("invalid anthropic-beta: {e}"))?;
        headers.insert("anthropic-beta", betas);
    }
    apply_headers(&mut headers, model.headers.iter().chain(&options.headers))?;
    Ok(headers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::ToolSpec;

    fn header(headers: &Result<HeaderMap, String>, name: &str) -> Option<String> {
        headers.as_ref().ok()?.get(name)?.to_str().ok().map(str::to_owned)
    }

    #[test]
    fn api_key_headers_follow_pi() {
        let model = Model::new("mock", "claude-sonnet-4-5", API, "http://127.0.0.1:9");
        let options = StreamOptions { api_key: Some("sk-ant-api-1".into()), ..StreamOptions::default() };
        let headers = request_headers(&model, &LlmContext::default(), &options);
        assert_eq!(header(&headers, "x-api-key").as_deref(), Some("sk-ant-api-1"));
        assert!(headers.as_ref().is_ok_and(|h| h.get("x-api-key").is_some_and(HeaderValue::is_sensitive)));
        assert_eq!(header(&headers, "anthropic-version").as_deref(), Some("2023-06-01"));
        assert_eq!(header(&headers, "anthropic-beta").as_deref(), Some("interleaved-thinking-2025-05-14"));
        assert_eq!(header(&headers, "anthropic-dangerous-direct-browser-access").as_deref(), Some("true"));
        assert_eq!(header(&headers, "accept").as_deref(), Some("application/json"));
        assert_eq!(header(&headers, "content-type").as_deref(), Some("application/json"));
        assert_eq!(header(&headers, "authorization"), None);

        // Adaptive models need no beta; endpoints without eager streaming get the fine-grained one.
        let mut adaptive = Model::new("mock", "claude-opus-4-6", API, "http://127.0.0.1:9");
        assert_eq!(header(&request_headers(&adaptive, &LlmContext::default(), &options), "anthropic-beta"), None);
        adaptive.compat = Some(serde_json::json!({"supportsEagerToolInputStreaming": false}));
        let tools = LlmContext {
            tools: vec![ToolSpec { name: "read".into(), description: "r".into(), parameters: serde_json::json!({}) }],
            ..LlmContext::default()
        };
        let headers = request_headers(&adaptive, &tools, &options);
        assert_eq!(header(&headers, "anthropic-beta").as_deref(), Some("fine-grained-tool-streaming-2025-05-14"));
    }

    #[test]
    fn oauth_tokens_use_bearer_auth_and_claude_code_identity() {
        let model = Model::new("anthropic", "claude-sonnet-4-5", API, "https://api.anthropic.com");
        let options = StreamOptions { api_key: Some("sk-ant-oat01-xyz".into()), ..StreamOptions::default() };
        let headers = request_headers(&model, &LlmContext::default(), &options);
        assert_eq!(header(&headers, "authorization").as_deref(), Some("Bearer sk-ant-oat01-xyz"));
        assert_eq!(header(&headers, "x-api-key"), None);
        assert_eq!(
            header(&headers, "anthropic-beta").as_deref(),
            Some("claude-code-20250219,oauth-2025-04-20,interleaved-thinking-2025-05-14")
        );
        assert_eq!(header(&headers, "user-agent").as_deref(), Some("claude-cli/2.1.75"));
        assert_eq!(header(&headers, "x-app").as_deref(), Some("cli"));
    }

    #[test]
    fn model_then_call_headers_override() {
        let mut model = Model::new("mock", "m", API, "http://127.0.0.1:9/");
        model.headers = vec![("X-Team".into(), "model".into()), ("anthropic-beta".into(), "custom".into())];
        let options = StreamOptions {
            api_key: Some("k".into()),
            headers: vec![("x-team".into(), "call".into())],
            ..StreamOptions::default()
        };
        let headers = request_headers(&model, &LlmContext::default(), &options);
        assert_eq!(header(&headers, "x-team").as_deref(), Some("call"));
        assert_eq!(header(&headers, "anthropic-beta").as_deref(), Some("custom"));
        let request = build_request(&model, &LlmContext::default(), &options, 2);
        assert_eq!(request.map(|r| r.url).as_deref(), Ok("http://127.0.0.1:9/v1/messages"));
        let keyless = request_headers(&model, &LlmContext::default(), &StreamOptions::default());
        assert!(keyless.is_ok_and(|h| h.get("x-api-key").is_none() && h.get("authorization").is_none()));
        let bad = StreamOptions { headers: vec![("bad name".into(), "v".into())], ..StreamOptions::default() };
        let bad = request_headers(&model, &LlmContext::default(), &bad);
        assert_eq!(bad.err().as_deref(), Some("invalid header name \"bad name\""));
    }
}
