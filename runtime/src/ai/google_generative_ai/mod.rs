//! The `google-generative-ai` provider: POST `{baseUrl}/models/{id}:streamGenerateContent?alt=sse`
//! with `x-goog-api-key`, parse the `data:` chunks into assistant-message events. Error texts and
//! retries follow the `@google/genai` SDK that pi uses: the failed response's JSON as the message,
//! and no retries (pi does not turn them on).

mod decode;
mod request;

use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, USER_AGENT};
use serde_json::{Value, json};

pub use request::build_body;
pub(crate) use request::{Dialect, build_body_for};

use self::decode::StreamState;
use super::Model;
use super::pi15::{apply_user_agent, initial_message, settled_error};
use super::provider::{ApiProvider, LlmContext, StreamOptions};
use super::stream::AssistantMessageStream;
use super::transport::{DecodeError, Flow, HttpRequest, StreamDecoder, apply_headers, secret_header, spawn_sse_call};
use crate::protocol::{AssistantMessage, AssistantMessageEvent, PiCompat, StopReason};

/// The api name this provider serves.
pub const API: &str = "google-generative-ai";

/// Where the SDK sends requests when the model names no base URL.
pub const DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta";

/// The stream ended with a finish reason that maps to an error.
const UNKNOWN_ERROR: &str = "An unknown error occurred";

/// pi 1.5's error for a stream that ended before any finish reason.
const NO_FINISH_REASON: &str = "Google stream ended without a finish reason";

/// The header that carries the API key.
const API_KEY_HEADER: &str = "x-goog-api-key";

/// Streams Gemini responses from Google's Generative Language API (or a compatible server).
#[derive(Debug, Clone, Default)]
pub struct GoogleGenerativeAiProvider {
    max_retries: u32,
}

impl GoogleGenerativeAiProvider {
    /// A provider that, like the genai SDK under pi, does not retry failed requests.
    pub fn new() -> Self {
        Self { max_retries: 0 }
    }

    /// Retries a retryable failure (408, 409, 429, 5xx, no connection) this often before failing.
    pub fn with_max_retries(mut self, max_retries: u32) -> Self {
        self.max_retries = max_retries;
        self
    }
}

impl ApiProvider for GoogleGenerativeAiProvider {
    fn api(&self) -> &str {
        API
    }

    fn stream(&self, model: &Model, context: &LlmContext, options: StreamOptions) -> AssistantMessageStream {
        let request = build_request(model, context, &options, self.max_retries);
        spawn_sse_call(model, request, decoder_for(model, options.pi_compat), options.cancel, options.on_payload)
    }
}

/// This API's stream decoder, for decoding recorded responses (tests, benchmarks).
pub fn decoder(model: &Model) -> impl StreamDecoder + use<> {
    decoder_for(model, PiCompat::V0_73)
}

/// This API's stream decoder as `compat`'s pi reads the stream.
pub fn decoder_with_compat(model: &Model, compat: PiCompat) -> impl StreamDecoder + use<> {
    decoder_for(model, compat)
}

/// The decoder of a Gemini stream (Vertex sends the same chunks).
pub(crate) fn decoder_for(model: &Model, compat: PiCompat) -> impl StreamDecoder + use<> {
    gemini_decoder(model, compat)
}

fn gemini_decoder(model: &Model, compat: PiCompat) -> GeminiDecoder {
    let state = StreamState::new(initial_message(model, compat)).with_compat(compat);
    GeminiDecoder { state, model: model.clone(), compat }
}

/// The URL of the streaming call for `model`, as the SDK builds it.
pub fn request_url(model: &Model) -> Result<String, String> {
    let id = &model.id;
    if id.is_empty() || id.contains("..") || id.contains('?') || id.contains('&') {
        return Err(format!("the model id \"{id}\" cannot be used in a request path"));
    }
    let base = if model.base_url.is_empty() { DEFAULT_BASE_URL } else { &model.base_url };
    let base = base.strip_suffix('/').unwrap_or(base);
    let resource =
        if id.starts_with("models/") || id.starts_with("tunedModels/") { id.clone() } else { format!("models/{id}") };
    Ok(format!("{base}/{resource}:streamGenerateContent?alt=sse"))
}

fn build_request(
    model: &Model,
    context: &LlmContext,
    options: &StreamOptions,
    max_retries: u32,
) -> Result<HttpRequest, String> {
    let body = build_body(model, context, options)?;
    // pi hands `retry.provider` to the OpenAI and Anthropic SDKs only; the Gemini one keeps its defaults.
    let sdk_options = StreamOptions { retry: Default::default(), ..options.clone() };
    HttpRequest::json(request_url(model)?, request_headers(model, options)?, &body, max_retries, &sdk_options)
}

/// Content type, the call's `user-agent` (pi 1.5's), the API key (when given), then the model's and the
/// call's headers.
fn request_headers(model: &Model, options: &StreamOptions) -> Result<HeaderMap, String> {
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(USER_AGENT, HeaderValue::from_static(concat!("pi-runtime/", env!("CARGO_PKG_VERSION"))));
    apply_user_agent(&mut headers, options)?;
    if let Some(key) = options.api_key.as_deref().filter(|k| !k.is_empty()) {
        headers.insert(HeaderName::from_static(API_KEY_HEADER), secret_header(key)?);
    }
    apply_headers(&mut headers, model.headers.iter().chain(&options.headers))?;
    Ok(headers)
}

/// Gemini chunks in, assistant-message events out.
struct GeminiDecoder {
    state: StreamState,
    model: Model,
    compat: PiCompat,
}

impl StreamDecoder for GeminiDecoder {
    fn message(&self) -> &AssistantMessage {
        self.state.message()
    }

    fn take_message(&mut self) -> AssistantMessage {
        self.state.take_message()
    }

    /// The SDK reads every `data:` event, whatever its name.
    fn on_event(
        &mut self,
        _name: &str,
        data: &str,
        events: &mut Vec<AssistantMessageEvent>,
    ) -> Result<Flow, DecodeError> {
        if data.trim().is_empty() {
            return Ok(Flow::Continue);
        }
        if self.state.apply_typical_chunk(data, &self.model, events) {
            return Ok(Flow::Continue);
        }
        let chunk: Value =
            serde_json::from_str(data).map_err(|e| format!("could not parse stream chunk as JSON: {e}: {data}"))?;
        self.state.apply_chunk(&chunk, &self.model, events)?;
        Ok(Flow::Continue)
    }

    fn finish(&mut self, events: &mut Vec<AssistantMessageEvent>) -> Result<(), DecodeError> {
        self.state.finish(events);
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

/// The genai SDK's text for a failed response: a JSON body as compact JSON; any other body wrapped
/// as `{"error":{"message":…,"code":…,"status":<reason phrase>}}`.
pub(crate) fn http_error_message(status: u16, body: &str) -> String {
    if let Ok(json) = serde_json::from_str::<Value>(body) {
        return json.to_string();
    }
    let reason = reqwest::StatusCode::from_u16(status).ok().and_then(|s| s.canonical_reason()).unwrap_or("");
    json!({"error": {"message": body, "code": status, "status": reason}}).to_string()
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
