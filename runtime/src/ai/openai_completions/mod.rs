//! The `openai-completions` provider: POST `{baseUrl}/chat/completions` with `stream: true`, parse the
//! SSE chunks into assistant-message events. Retries, error texts and abort handling follow the OpenAI
//! JS SDK that pi uses (2 retries on 408/409/429/5xx and connection failures).

mod request;
mod sse;

use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue, USER_AGENT};
use serde_json::Value;

pub use request::build_body;

use self::sse::StreamState;
use super::Model;
use super::github_copilot::dynamic_headers;
use super::openai_sdk_errors::{http_error_message, is_truthy, stream_error_message};
use super::pi15::{apply_user_agent, initial_message, settled_error};
use super::provider::{ApiProvider, LlmContext, StreamOptions};
use super::stream::AssistantMessageStream;
use super::transport::{
    DEFAULT_MAX_RETRIES, DecodeError, Flow, HttpRequest, StreamDecoder, apply_headers, secret_header, spawn_sse_call,
};
use crate::protocol::{AssistantMessage, AssistantMessageEvent, PiCompat, StopReason};

/// The api name this provider serves.
pub const API: &str = "openai-completions";

/// The stream ended with finish reason `content_filter`.
const UNKNOWN_ERROR: &str = "An unknown error occurred";
/// pi 1.5's error for a stream that ended before any finish reason.
const NO_FINISH_REASON: &str = "Stream ended without finish_reason";

/// Streams chat completions from any OpenAI-compatible endpoint.
#[derive(Debug, Clone)]
pub struct OpenAiCompletionsProvider {
    max_retries: u32,
}

impl Default for OpenAiCompletionsProvider {
    fn default() -> Self {
        Self::new()
    }
}

impl OpenAiCompletionsProvider {
    pub fn new() -> Self {
        Self { max_retries: DEFAULT_MAX_RETRIES }
    }

    /// Sets how often a retryable failure (408, 409, 429, 5xx, no connection, timeout) is retried
    /// before the stream fails. A response header `x-should-retry: true|false` overrides the status rule.
    pub fn with_max_retries(mut self, max_retries: u32) -> Self {
        self.max_retries = max_retries;
        self
    }
}

impl ApiProvider for OpenAiCompletionsProvider {
    fn api(&self) -> &str {
        API
    }

    fn stream(&self, model: &Model, context: &LlmContext, options: StreamOptions) -> AssistantMessageStream {
        let request = build_request(model, context, &options, self.max_retries);
        spawn_sse_call(
            model,
            request,
            CompletionsDecoder::new(model, options.pi_compat),
            options.cancel,
            options.on_payload,
        )
    }
}

/// This API's stream decoder, for decoding recorded responses (tests, benchmarks).
pub fn decoder(model: &Model) -> impl StreamDecoder + use<> {
    CompletionsDecoder::new(model, PiCompat::V0_73)
}

/// This API's stream decoder as `compat`'s pi reads the stream.
pub fn decoder_with_compat(model: &Model, compat: PiCompat) -> impl StreamDecoder + use<> {
    CompletionsDecoder::new(model, compat)
}

fn build_request(
    model: &Model,
    context: &LlmContext,
    options: &StreamOptions,
    max_retries: u32,
) -> Result<HttpRequest, String> {
    let body = build_body(model, context, options);
    HttpRequest::json(
        format!("{}/chat/completions", model.base_url.trim_end_matches('/')),
        request_headers(model, context, options)?,
        &body,
        max_retries,
        options,
    )
}

/// Chat-completion chunks in, assistant-message events out.
struct CompletionsDecoder {
    state: StreamState,
    model: Model,
    compat: PiCompat,
}

impl CompletionsDecoder {
    fn new(model: &Model, compat: PiCompat) -> Self {
        let state = StreamState::new(initial_message(model, compat)).with_compat(compat);
        Self { state, model: model.clone(), compat }
    }
}

impl StreamDecoder for CompletionsDecoder {
    fn message(&self) -> &AssistantMessage {
        self.state.message()
    }

    fn take_message(&mut self) -> AssistantMessage {
        self.state.take_message()
    }

    fn on_event(
        &mut self,
        name: &str,
        data: &str,
        events: &mut Vec<AssistantMessageEvent>,
    ) -> Result<Flow, DecodeError> {
        if data.starts_with("[DONE]") {
            return Ok(Flow::Stop);
        }
        let is_chunk = name == "message" || name.starts_with("response.") || name.starts_with("transcript.");
        if !is_chunk && name != "error" {
            return Ok(Flow::Continue);
        }
        if name == "message" && self.state.apply_typical_chunk(data, events) {
            return Ok(Flow::Continue);
        }
        let chunk: Value =
            serde_json::from_str(data).map_err(|e| format!("could not parse stream chunk as JSON: {e}: {data}"))?;
        if name == "error" {
            return Err(named_error_message(&chunk, self.compat).into());
        }
        events.extend(self.state.apply_chunk(&chunk, &self.model)?);
        Ok(Flow::Continue)
    }

    fn finish(&mut self, events: &mut Vec<AssistantMessageEvent>) -> Result<(), DecodeError> {
        events.extend(self.state.finish());
        if self.compat.is_v1_5() {
            return settled_error(self.state.message(), NO_FINISH_REASON).map_or(Ok(()), |e| Err(e.into()));
        }
        if self.state.message().stop_reason == StopReason::Error {
            return Err(UNKNOWN_ERROR.into());
        }
        Ok(())
    }

    fn http_error(&self, status: u16, body: &str) -> String {
        http_error_message(status, body)
    }
}

/// An `event: error` SSE event: the SDK reads `data.error`, then `data.message`. pi 1.5's SDK words it like
/// any error object: `data.error` (when truthy) or the data itself, by its `message` or else as JSON.
fn named_error_message(data: &Value, compat: PiCompat) -> String {
    if compat.is_v1_5() {
        return stream_error_message(data.get("error").filter(|e| is_truthy(e)).unwrap_or(data));
    }
    match data.get("error").filter(|e| !e.is_null()) {
        Some(error) => stream_error_message(error),
        None => data.get("message").and_then(Value::as_str).unwrap_or("(no status code or body)").to_owned(),
    }
}

/// Content headers, the call's `user-agent` (pi 1.5's), then `Authorization` (when a key is given), then the
/// model's headers, GitHub Copilot's conversation headers (for its models) and the call's headers.
fn request_headers(model: &Model, context: &LlmContext, options: &StreamOptions) -> Result<HeaderMap, String> {
    let mut headers = HeaderMap::new();
    headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(USER_AGENT, HeaderValue::from_static(concat!("pi-runtime/", env!("CARGO_PKG_VERSION"))));
    apply_user_agent(&mut headers, options)?;
    if let Some(key) = options.api_key.as_deref().filter(|k| !k.is_empty()) {
        headers.insert(AUTHORIZATION, secret_header(&format!("Bearer {key}"))?);
    }
    let copilot = dynamic_headers(&model.provider, &context.messages);
    apply_headers(&mut headers, model.headers.iter().chain(&copilot).chain(&options.headers))?;
    Ok(headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_apply_in_pi_order() {
        let mut model = Model::new("p", "m", API, "http://127.0.0.1:9/v1");
        model.headers = vec![("X-Team".into(), "model".into()), ("authorization".into(), "Bearer model".into())];
        let options = StreamOptions {
            api_key: Some("k".into()),
            headers: vec![("x-team".into(), "call".into())],
            ..StreamOptions::default()
        };
        let headers = request_headers(&model, &LlmContext::default(), &options).map_err(|e| e.to_string());
        let headers = headers.as_ref().map_err(String::as_str);
        let get = |name: &str| headers.ok().and_then(|h| h.get(name)).and_then(|v| v.to_str().ok());
        assert_eq!(get("x-team"), Some("call"));
        assert_eq!(get("authorization"), Some("Bearer model"));
        assert_eq!(get("content-type"), Some("application/json"));
        let keyless =
            request_headers(&Model::new("p", "m", API, "x"), &LlmContext::default(), &StreamOptions::default());
        assert!(keyless.is_ok_and(|h| h.get("authorization").is_none()));
        let bad = StreamOptions { headers: vec![("bad name".into(), "v".into())], ..StreamOptions::default() };
        assert_eq!(
            request_headers(&model, &LlmContext::default(), &bad).err().as_deref(),
            Some("invalid header name \"bad name\"")
        );
    }

    #[test]
    fn copilot_models_carry_the_conversation_headers() {
        let model = Model::new("github-copilot", "gpt-4.1", API, "https://api.individual.githubcopilot.com");
        let image = crate::protocol::UserContent::Image(crate::protocol::ImageContent {
            data: "AAAA".into(),
            mime_type: "image/png".into(),
        });
        let user = crate::protocol::UserMessage {
            content: crate::protocol::MessageContent::Blocks(vec![image]),
            timestamp: 1,
        };
        let messages = vec![
            crate::protocol::Message::User(user),
            crate::protocol::Message::Assistant(AssistantMessage::default()),
        ];
        let context = LlmContext { messages, ..LlmContext::default() };
        let headers = request_headers(&model, &context, &StreamOptions::default()).unwrap_or_default();
        let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        assert_eq!(get("x-initiator"), Some("agent"));
        assert_eq!(get("openai-intent"), Some("conversation-edits"));
        assert_eq!(get("copilot-vision-request"), Some("true"));
    }

    #[test]
    fn the_calls_user_agent_replaces_ours_and_model_headers_still_win() {
        let mut model = Model::new("p", "m", API, "http://127.0.0.1:9/v1");
        let agent = |headers: &HeaderMap| headers.get("user-agent").and_then(|v| v.to_str().ok()).map(str::to_owned);
        let options = StreamOptions { user_agent: Some("pi/1.5.2 (linux; x64)".into()), ..StreamOptions::default() };
        assert_eq!(
            request_headers(&model, &LlmContext::default(), &options).ok().as_ref().and_then(agent).as_deref(),
            Some("pi/1.5.2 (linux; x64)")
        );
        let ours = request_headers(&model, &LlmContext::default(), &StreamOptions::default()).ok();
        assert!(ours.as_ref().and_then(agent).is_some_and(|a| a.starts_with("pi-runtime/")));
        model.headers = vec![("User-Agent".into(), "mine".into())];
        assert_eq!(
            request_headers(&model, &LlmContext::default(), &options).ok().as_ref().and_then(agent).as_deref(),
            Some("mine")
        );
    }
}
