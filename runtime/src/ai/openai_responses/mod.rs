//! The `openai-responses` provider: POST `{baseUrl}/responses` with `stream: true`, parse the
//! `response.*` events into assistant-message events. Retries, error texts and abort handling follow
//! the OpenAI JS SDK that pi uses (2 retries on 408/409/429/5xx and connection failures).

mod decode;
mod errors;
mod ids;
mod request;

use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue, USER_AGENT};
use serde_json::Value;

pub(crate) use decode::ResponsesState;
pub(crate) use ids::short_hash;
pub use request::build_body;
pub(crate) use request::{Dialect, build_dialect_body, convert_messages};

use self::errors::{http_error_message, is_truthy, sdk_error_message};
use self::request::ResponsesCompat;
use super::Model;
use super::github_copilot::dynamic_headers;
use super::pi15::{apply_user_agent, initial_message, settled_error};
use super::provider::{ApiProvider, LlmContext, StreamOptions};
use super::stream::AssistantMessageStream;
use super::transport::{
    DEFAULT_MAX_RETRIES, DecodeError, Flow, HttpRequest, StreamDecoder, apply_headers, secret_header, spawn_sse_call,
};
use crate::protocol::{AssistantMessage, AssistantMessageEvent, PiCompat, StopReason};

/// The api name this provider serves.
pub const API: &str = "openai-responses";

/// The response ended with status `failed` or `cancelled` but no failure event.
const UNKNOWN_ERROR: &str = "An unknown error occurred";
/// pi 1.5's error for a stream that ended without `response.completed`, `response.incomplete` or a failure.
const NO_TERMINAL_EVENT: &str = "OpenAI Responses stream ended before a terminal response event";

/// Streams responses from the OpenAI Responses API or a compatible endpoint.
#[derive(Debug, Clone)]
pub struct OpenAiResponsesProvider {
    max_retries: u32,
}

impl Default for OpenAiResponsesProvider {
    fn default() -> Self {
        Self::new()
    }
}

impl OpenAiResponsesProvider {
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

impl ApiProvider for OpenAiResponsesProvider {
    fn api(&self) -> &str {
        API
    }

    fn stream(&self, model: &Model, context: &LlmContext, options: StreamOptions) -> AssistantMessageStream {
        let request = build_request(model, context, &options, self.max_retries);
        let decoder = ResponsesDecoder::new(model, options.pi_compat);
        spawn_sse_call(model, request, decoder, options.cancel, options.on_payload)
    }
}

/// This API's stream decoder, for decoding recorded responses (tests, benchmarks).
pub fn decoder(model: &Model) -> impl StreamDecoder + use<> {
    ResponsesDecoder::new(model, PiCompat::V0_73)
}

/// This API's stream decoder as `compat`'s pi reads the stream.
pub fn decoder_with_compat(model: &Model, compat: PiCompat) -> impl StreamDecoder + use<> {
    ResponsesDecoder::new(model, compat)
}

fn build_request(
    model: &Model,
    context: &LlmContext,
    options: &StreamOptions,
    max_retries: u32,
) -> Result<HttpRequest, String> {
    let body = build_body(model, context, options);
    HttpRequest::json(
        format!("{}/responses", model.base_url.trim_end_matches('/')),
        request_headers(model, context, options)?,
        &body,
        max_retries,
        options,
    )
}

/// Responses stream events in, assistant-message events out (shared with the Azure provider).
pub(crate) struct ResponsesDecoder {
    state: ResponsesState,
    model: Model,
    compat: PiCompat,
}

impl ResponsesDecoder {
    fn new(model: &Model, compat: PiCompat) -> Self {
        let state = ResponsesState::new(initial_message(model, compat)).with_compat(compat);
        Self { state, model: model.clone(), compat }
    }

    /// The decoder as pi's Azure provider reads the same events: the cost ignores the service tier.
    pub(crate) fn for_azure(model: &Model, compat: PiCompat) -> Self {
        let state =
            ResponsesState::new(initial_message(model, compat)).with_compat(compat).without_service_tier_pricing();
        Self { state, model: model.clone(), compat }
    }
}

impl StreamDecoder for ResponsesDecoder {
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
        // The SDK hands Assistants events (`thread.*`) on unparsed; pi ignores them.
        if name.starts_with("thread.") {
            return Ok(Flow::Continue);
        }
        // pi 1.5's SDK fails on an event named `error`, worded by its `error` object or the data itself.
        if name == "error" && self.compat.is_v1_5() {
            let message = match serde_json::from_str::<Value>(data) {
                Ok(event) => sdk_error_message(event.get("error").filter(|e| is_truthy(e)).unwrap_or(&event)),
                Err(_) => data.to_owned(),
            };
            return Err(message.into());
        }
        if self.state.apply_typical_delta(data, events) {
            return Ok(Flow::Continue);
        }
        let event: Value =
            serde_json::from_str(data).map_err(|e| format!("could not parse stream event as JSON: {e}: {data}"))?;
        // The SDK fails any event that carries an `error` object.
        if let Some(error) = event.get("error").filter(|e| is_truthy(e)) {
            return Err(sdk_error_message(error).into());
        }
        events.extend(self.state.apply_event(&event, &self.model)?);
        Ok(Flow::Continue)
    }

    fn finish(&mut self, _events: &mut Vec<AssistantMessageEvent>) -> Result<(), DecodeError> {
        // As in pi, blocks left open by a cut-short stream are not closed.
        if self.compat.is_v1_5() {
            return settled_error(self.state.message(), NO_TERMINAL_EVENT).map_or(Ok(()), |e| Err(e.into()));
        }
        match self.state.message().stop_reason {
            StopReason::Error | StopReason::Aborted => Err(UNKNOWN_ERROR.into()),
            _ => Ok(()),
        }
    }

    fn http_error(&self, status: u16, body: &str) -> String {
        http_error_message(status, body)
    }
}

/// Content headers, the call's `user-agent` (pi 1.5's), `Authorization` (when a key is given), the model's
/// headers, GitHub Copilot's conversation headers (for its models), the session headers (`session_id` unless
/// the model's compat turns it off, at level 1.5 always `session-id`; and `x-client-request-id`), then the call's.
fn request_headers(model: &Model, context: &LlmContext, options: &StreamOptions) -> Result<HeaderMap, String> {
    let mut headers = HeaderMap::new();
    headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(USER_AGENT, HeaderValue::from_static(concat!("pi-runtime/", env!("CARGO_PKG_VERSION"))));
    apply_user_agent(&mut headers, options)?;
    if let Some(key) = options.api_key.as_deref().filter(|k| !k.is_empty()) {
        headers.insert(AUTHORIZATION, secret_header(&format!("Bearer {key}"))?);
    }
    apply_headers(&mut headers, &model.headers)?;
    apply_headers(&mut headers, &dynamic_headers(&model.provider, &context.messages))?;
    if let Some(session_id) = options.session_id.as_deref().filter(|id| !id.is_empty()) {
        let mut session = Vec::new();
        if options.pi_compat.is_v1_5() {
            session.push(("session-id".to_owned(), session_id.to_owned()));
        } else if ResponsesCompat::for_model(model).send_session_id_header {
            session.push(("session_id".to_owned(), session_id.to_owned()));
        }
        session.push(("x-client-request-id".to_owned(), session_id.to_owned()));
        apply_headers(&mut headers, &session)?;
    }
    apply_headers(&mut headers, &options.headers)?;
    Ok(headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_apply_in_pi_order() {
        let mut model = Model::new("p", "m", API, "http://127.0.0.1:9/v1");
        model.headers = vec![("X-Team".into(), "model".into()), ("session_id".into(), "model".into())];
        let options = StreamOptions {
            api_key: Some("k".into()),
            session_id: Some("s-1".into()),
            headers: vec![("x-team".into(), "call".into())],
            ..StreamOptions::default()
        };
        let headers = request_headers(&model, &LlmContext::default(), &options).map_err(|e| e.to_string());
        let headers = headers.as_ref().map_err(String::as_str);
        let get = |name: &str| headers.ok().and_then(|h| h.get(name)).and_then(|v| v.to_str().ok());
        assert_eq!(get("x-team"), Some("call"));
        assert_eq!(get("authorization"), Some("Bearer k"));
        assert!(headers.is_ok_and(|h| h.get("authorization").is_some_and(HeaderValue::is_sensitive)));
        assert_eq!(get("session_id"), Some("s-1"), "the session header wins over the model's");
        assert_eq!(get("x-client-request-id"), Some("s-1"));

        model.compat = Some(serde_json::json!({"sendSessionIdHeader": false}));
        let headers = request_headers(&model, &LlmContext::default(), &options).unwrap_or_default();
        assert_eq!(headers.get("session_id").and_then(|v| v.to_str().ok()), Some("model"));
        let keyless =
            request_headers(&Model::new("p", "m", API, "x"), &LlmContext::default(), &StreamOptions::default());
        assert!(keyless.is_ok_and(|h| h.get("authorization").is_none() && h.get("x-client-request-id").is_none()));
    }

    #[test]
    fn copilot_models_carry_the_conversation_headers_below_the_calls() {
        let mut model = Model::new("github-copilot", "gpt-5.4", API, "https://api.individual.githubcopilot.com");
        model.headers = vec![("User-Agent".into(), "GitHubCopilotChat/0.35.0".into())];
        let messages = vec![crate::protocol::Message::User(crate::protocol::UserMessage::text("hi"))];
        let context = LlmContext { messages, ..LlmContext::default() };
        let options = StreamOptions {
            api_key: Some("tid=1".into()),
            headers: vec![("Openai-Intent".into(), "call".into())],
            ..StreamOptions::default()
        };
        let headers = request_headers(&model, &context, &options).unwrap_or_default();
        let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        assert_eq!((get("x-initiator"), get("openai-intent")), (Some("user"), Some("call")));
        assert_eq!((get("user-agent"), get("authorization")), (Some("GitHubCopilotChat/0.35.0"), Some("Bearer tid=1")));
        model.provider = "openai".into();
        let plain = request_headers(&model, &context, &options).unwrap_or_default();
        assert!(plain.get("x-initiator").is_none());
    }

    #[test]
    fn level_1_5_names_the_session_header_session_id_whatever_the_compat() {
        let mut model = Model::new("p", "m", API, "http://127.0.0.1:9/v1");
        model.compat = Some(serde_json::json!({"sendSessionIdHeader": false}));
        let options = StreamOptions {
            session_id: Some("s-1".into()),
            pi_compat: crate::protocol::PiCompat::V1_5,
            user_agent: Some("pi/1.5.2 (linux; x64)".into()),
            ..StreamOptions::default()
        };
        let headers = request_headers(&model, &LlmContext::default(), &options).unwrap_or_default();
        let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        assert_eq!(
            (get("session-id"), get("session_id"), get("x-client-request-id")),
            (Some("s-1"), None, Some("s-1"))
        );
        assert_eq!(get("user-agent"), Some("pi/1.5.2 (linux; x64)"));
    }
}
