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
use super::openai_sdk_errors::{http_error_message, stream_error_message};
use super::provider::{ApiProvider, LlmContext, StreamOptions, empty_assistant_message};
use super::stream::AssistantMessageStream;
use super::transport::{
    DEFAULT_MAX_RETRIES, DecodeError, Flow, HttpRequest, StreamDecoder, apply_headers, secret_header, spawn_sse_call,
};
use crate::protocol::{AssistantMessage, AssistantMessageEvent, StopReason};

/// The api name this provider serves.
pub const API: &str = "openai-completions";

/// The stream ended with finish reason `content_filter`.
const UNKNOWN_ERROR: &str = "An unknown error occurred";

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
        let decoder =
            CompletionsDecoder { state: StreamState::new(empty_assistant_message(model)), model: model.clone() };
        spawn_sse_call(model, request, decoder, options.cancel, options.on_payload)
    }
}

/// This API's stream decoder, for decoding recorded responses (tests, benchmarks).
pub fn decoder(model: &Model) -> impl StreamDecoder + use<> {
    CompletionsDecoder { state: StreamState::new(empty_assistant_message(model)), model: model.clone() }
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
        request_headers(model, options)?,
        &body,
        max_retries,
        options,
    )
}

/// Chat-completion chunks in, assistant-message events out.
struct CompletionsDecoder {
    state: StreamState,
    model: Model,
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
            return Err(named_error_message(&chunk).into());
        }
        events.extend(self.state.apply_chunk(&chunk, &self.model)?);
        Ok(Flow::Continue)
    }

    fn finish(&mut self, events: &mut Vec<AssistantMessageEvent>) -> Result<(), DecodeError> {
        events.extend(self.state.finish());
        if self.state.message().stop_reason == StopReason::Error {
            return Err(UNKNOWN_ERROR.into());
        }
        Ok(())
    }

    fn http_error(&self, status: u16, body: &str) -> String {
        http_error_message(status, body)
    }
}

/// An `event: error` SSE event: the SDK reads `data.error`, then `data.message`.
fn named_error_message(data: &Value) -> String {
    match data.get("error").filter(|e| !e.is_null()) {
        Some(error) => stream_error_message(error),
        None => data.get("message").and_then(Value::as_str).unwrap_or("(no status code or body)").to_owned(),
    }
}

/// Content headers, then `Authorization` (when a key is given), then the model's and the call's headers.
fn request_headers(model: &Model, options: &StreamOptions) -> Result<HeaderMap, String> {
    let mut headers = HeaderMap::new();
    headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(USER_AGENT, HeaderValue::from_static(concat!("pi-runtime/", env!("CARGO_PKG_VERSION"))));
    if let Some(key) = options.api_key.as_deref().filter(|k| !k.is_empty()) {
        headers.insert(AUTHORIZATION, secret_header(&format!("Bearer {key}"))?);
    }
    apply_headers(&mut headers, model.headers.iter().chain(&options.headers))?;
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
        let headers = request_headers(&model, &options).map_err(|e| e.to_string());
        let headers = headers.as_ref().map_err(String::as_str);
        let get = |name: &str| headers.ok().and_then(|h| h.get(name)).and_then(|v| v.to_str().ok());
        assert_eq!(get("x-team"), Some("call"));
        assert_eq!(get("authorization"), Some("Bearer model"));
        assert_eq!(get("content-type"), Some("application/json"));
        let keyless = request_headers(&Model::new("p", "m", API, "x"), &StreamOptions::default());
        assert!(keyless.is_ok_and(|h| h.get("authorization").is_none()));
        let bad = StreamOptions { headers: vec![("bad name".into(), "v".into())], ..StreamOptions::default() };
        assert_eq!(request_headers(&model, &bad).err().as_deref(), Some("invalid header name \"bad name\""));
    }
}
