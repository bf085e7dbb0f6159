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

use self::request::{Compat, is_oauth_token, thinks_adaptively};
use super::github_copilot;
use super::pi15::{apply_user_agent, initial_message};
use super::provider::{ApiProvider, LlmContext, StreamOptions, empty_assistant_message};
use super::stream::AssistantMessageStream;
use super::transport::{DEFAULT_MAX_RETRIES, HttpRequest, StreamDecoder, apply_headers, secret_header, spawn_sse_call};
use super::{Model, ThinkingLevel};

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
/// The Claude Code identity pi 1.5 sends with an OAuth token.
const CLAUDE_CODE_USER_AGENT_V1_5: &str = "claude-cli/2.1.322";

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
        let mut decoder =
            AnthropicDecoder::new(initial_message(model, options.pi_compat), model).with_compat(options.pi_compat);
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

/// This API's stream decoder as `compat`'s pi reads the stream.
pub fn decoder_with_compat(model: &Model, compat: crate::protocol::PiCompat) -> impl StreamDecoder + use<> {
    AnthropicDecoder::new(initial_message(model, compat), model).with_compat(compat)
}

fn build_request(
    model: &Model,
    context: &LlmContext,
    options: &StreamOptions,
    max_retries: u32,
) -> Result<HttpRequest, String> {
    let body = build_body(model, context, options, CacheRetention::from_env());
    // pi 1.5's SDK posts through its beta client.
    let query = if options.pi_compat.is_v1_5() { "?beta=true" } else { "" };
    HttpRequest::json(
        format!("{}/v1/messages{query}", model.base_url.trim_end_matches('/')),
        request_headers(model, context, options)?,
        &body,
        max_retries,
        options,
    )
}

/// The `anthropic-beta` flags pi asks for (before the OAuth ones). pi 0.73 asks for interleaved thinking
/// whenever the model does not think adaptively; pi 1.5 only when a reasoning model thinks on a budget.
fn beta_features(model: &Model, context: &LlmContext, options: &StreamOptions) -> Vec<&'static str> {
    let mut betas = Vec::new();
    if !context.tools.is_empty() && !Compat::for_model(model).supports_eager_tool_input_streaming {
        betas.push(FINE_GRAINED_TOOL_STREAMING_BETA);
    }
    let interleaved = if options.pi_compat.is_v1_5() {
        let thinking = options.reasoning.is_some_and(|level| level != ThinkingLevel::Off);
        model.reasoning && thinking && !thinks_adaptively(model, options.pi_compat)
    } else {
        !thinks_adaptively(model, options.pi_compat)
    };
    if interleaved {
        betas.push(INTERLEAVED_THINKING_BETA);
    }
    betas
}

/// The SDK's headers (key, version), pi's defaults (the call's `user-agent` unless an OAuth token needs
/// Claude Code's), then the model's headers, GitHub Copilot's conversation headers (for its models, which
/// send their token as a bearer token) and the call's headers.
fn request_headers(model: &Model, context: &LlmContext, options: &StreamOptions) -> Result<HeaderMap, String> {
    let key = options.api_key.as_deref().filter(|k| !k.is_empty());
    let oauth = is_oauth_token(key);
    let mut betas = beta_features(model, context, options);
    let mut headers = HeaderMap::new();
    headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert("anthropic-version", HeaderValue::from_static(ANTHROPIC_VERSION));
    headers.insert("anthropic-dangerous-direct-browser-access", HeaderValue::from_static("true"));
    let copilot = model.provider == github_copilot::PROVIDER;
    match key {
        // Copilot takes its token as a bearer token, with none of the Claude Code identity.
        Some(key) if copilot => {
            headers.insert(AUTHORIZATION, secret_header(&format!("Bearer {key}"))?);
        }
        Some(key) if oauth => {
            headers.insert(AUTHORIZATION, secret_header(&format!("Bearer {key}"))?);
            let identity =
                if options.pi_compat.is_v1_5() { CLAUDE_CODE_USER_AGENT_V1_5 } else { CLAUDE_CODE_USER_AGENT };
            headers.insert(USER_AGENT, HeaderValue::from_static(identity));
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
        apply_user_agent(&mut headers, options)?;
    }
    if !betas.is_empty() {
        let betas = HeaderValue::from_str(&betas.join(",")).map_err(|e| format!("invalid anthropic-beta: {e}"))?;
        headers.insert("anthropic-beta", betas);
    }
    let conversation = github_copilot::dynamic_headers(&model.provider, &context.messages);
    apply_headers(&mut headers, model.headers.iter().chain(&conversation).chain(&options.headers))?;
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
    fn copilot_sends_its_token_as_a_bearer_token_with_its_headers() {
        let mut model =
            Model::new("github-copilot", "claude-sonnet-4.6", API, "https://api.individual.githubcopilot.com");
        model.headers = vec![("User-Agent".into(), "GitHubCopilotChat/0.35.0".into())];
        let messages = vec![crate::protocol::Message::User(crate::protocol::UserMessage::text("hi"))];
        let context = LlmContext { messages, ..LlmContext::default() };
        let options = StreamOptions { api_key: Some("tid=1;proxy-ep=x".into()), ..StreamOptions::default() };
        let headers = request_headers(&model, &context, &options);
        assert_eq!(header(&headers, "authorization").as_deref(), Some("Bearer tid=1;proxy-ep=x"));
        assert!(headers.as_ref().is_ok_and(|h| h.get("authorization").is_some_and(HeaderValue::is_sensitive)));
        assert_eq!(header(&headers, "x-api-key"), None);
        assert_eq!(header(&headers, "x-app"), None);
        assert_eq!(header(&headers, "user-agent").as_deref(), Some("GitHubCopilotChat/0.35.0"));
        assert_eq!(header(&headers, "x-initiator").as_deref(), Some("user"));
        assert_eq!(header(&headers, "openai-intent").as_deref(), Some("conversation-edits"));
        assert_eq!(header(&headers, "anthropic-dangerous-direct-browser-access").as_deref(), Some("true"));
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

    #[test]
    fn level_1_5_posts_to_the_beta_client_and_asks_for_interleaving_only_on_a_budget() {
        let mut model = Model::new("mock", "claude-sonnet-4-5", API, "http://127.0.0.1:9");
        model.reasoning = true;
        let at = |pi_compat, reasoning| StreamOptions {
            api_key: Some("k".into()),
            pi_compat,
            reasoning,
            user_agent: Some("pi/1.5.2 (linux; x64)".into()),
            ..StreamOptions::default()
        };
        let (v1_5, v0_73) = (crate::protocol::PiCompat::V1_5, crate::protocol::PiCompat::V0_73);
        let context = LlmContext::default();
        let beta = |options: &StreamOptions| header(&request_headers(&model, &context, options), "anthropic-beta");
        assert_eq!(beta(&at(v1_5, None)), None);
        assert_eq!(beta(&at(v1_5, Some(ThinkingLevel::Off))), None);
        assert_eq!(beta(&at(v1_5, Some(ThinkingLevel::Low))).as_deref(), Some(INTERLEAVED_THINKING_BETA));
        assert_eq!(beta(&at(v0_73, None)).as_deref(), Some(INTERLEAVED_THINKING_BETA));
        let headers = request_headers(&model, &context, &at(v1_5, None));
        assert_eq!(header(&headers, "user-agent").as_deref(), Some("pi/1.5.2 (linux; x64)"));
        let url = |options: &StreamOptions| build_request(&model, &context, options, 2).map(|r| r.url);
        assert_eq!(url(&at(v1_5, None)).as_deref(), Ok("http://127.0.0.1:9/v1/messages?beta=true"));
        assert_eq!(url(&at(v0_73, None)).as_deref(), Ok("http://127.0.0.1:9/v1/messages"));
    }
}
