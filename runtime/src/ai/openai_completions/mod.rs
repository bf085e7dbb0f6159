//! The `openai-completions` provider: POST `{baseUrl}/chat/completions` with `stream: true`, parse the
//! SSE chunks into assistant-message events. Retries, error texts and abort handling follow the OpenAI
//! JS SDK that pi uses (2 retries on 408/409/429/5xx and connection failures).

mod partial_json;
mod request;
mod sse;
mod transform;

use std::sync::OnceLock;
use std::time::Duration;

use eventsource_stream::{EventStreamError, Eventsource};
use futures_util::StreamExt;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, USER_AGENT};
use serde_json::Value;

pub use partial_json::parse_streaming_json;
pub use request::build_body;
pub use transform::{NO_RESULT_TEXT, transform_messages};

use self::sse::{StreamState, http_error_message, stream_error_message};
use super::Model;
use super::provider::{ApiProvider, LlmContext, StreamOptions, empty_assistant_message, error_stream};
use super::stream::{AssistantMessageSender, AssistantMessageStream};
use crate::protocol::{AssistantMessageEvent, DoneReason, ErrorReason, StopReason};

/// The api name this provider serves.
pub const API: &str = "openai-completions";
/// How long to wait for the response or the next bytes when `StreamOptions::idle_timeout` is not set
/// (the OpenAI SDK's default request timeout).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(600);
/// Retries after a retryable failure, as the OpenAI SDK does by default.
pub const DEFAULT_MAX_RETRIES: u32 = 2;

/// Abort while waiting for the response (the SDK's `APIUserAbortError`).
const ABORTED_BEFORE_RESPONSE: &str = "Request was aborted.";
/// Abort once the stream is open (pi's own check after the stream loop).
const ABORTED: &str = "Request was aborted";
const TIMED_OUT: &str = "Request timed out.";
const CONNECTION_ERROR: &str = "Connection error.";
/// Reading the body failed mid-stream (Node's fetch says `terminated`).
const TERMINATED: &str = "terminated";
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
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return error_stream(model, "the openai-completions provider needs a tokio runtime".to_owned());
        };
        let call = Call {
            model: model.clone(),
            body: build_body(model, context, &options),
            options,
            max_retries: self.max_retries,
        };
        let (tx, stream) = AssistantMessageStream::channel();
        runtime.spawn(run(call, tx));
        stream
    }
}

/// Everything one streaming call needs, owned by its task.
struct Call {
    model: Model,
    body: Value,
    options: StreamOptions,
    max_retries: u32,
}

impl Call {
    fn idle_timeout(&self) -> Duration {
        self.options.idle_timeout.unwrap_or(DEFAULT_IDLE_TIMEOUT)
    }
}

/// Why a call ended without `done`.
enum Failure {
    /// The consumer dropped the stream; nobody is left to tell.
    ReaderGone,
    Message(String),
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Self::Message(message)
    }
}

impl From<&str> for Failure {
    fn from(message: &str) -> Self {
        Self::Message(message.to_owned())
    }
}

async fn run(call: Call, tx: AssistantMessageSender) {
    let mut state = StreamState::new(empty_assistant_message(&call.model));
    let outcome = drive(&call, &mut state, &tx).await;
    let mut message = state.into_message();
    let event = match outcome {
        Ok(()) => {
            let reason = match message.stop_reason {
                StopReason::Length => DoneReason::Length,
                StopReason::ToolUse => DoneReason::ToolUse,
                _ => DoneReason::Stop,
            };
            AssistantMessageEvent::Done { reason, message }
        }
        Err(Failure::ReaderGone) => return,
        Err(Failure::Message(text)) => {
            // As in pi: an abort wins over whatever error the abort caused.
            let aborted = call.options.cancel.is_cancelled();
            message.stop_reason = if aborted { StopReason::Aborted } else { StopReason::Error };
            message.error_message = Some(text);
            let reason = if aborted { ErrorReason::Aborted } else { ErrorReason::Error };
            AssistantMessageEvent::Error { reason, error: message }
        }
    };
    tx.push(event);
}

fn emit(tx: &AssistantMessageSender, event: AssistantMessageEvent) -> Result<(), Failure> {
    if tx.push(event) { Ok(()) } else { Err(Failure::ReaderGone) }
}

async fn drive(call: &Call, state: &mut StreamState, tx: &AssistantMessageSender) -> Result<(), Failure> {
    let response = send(call).await?;
    emit(tx, AssistantMessageEvent::Start { partial: state.message().clone() })?;
    let mut events = response.bytes_stream().eventsource();
    loop {
        let next = tokio::select! {
            biased;
            // Like the SDK's stream on abort: stop reading quietly; blocks still close, then the abort check fails.
            _ = call.options.cancel.cancelled() => break,
            next = tokio::time::timeout(call.idle_timeout(), events.next()) => next.map_err(|_| Failure::from(TIMED_OUT))?,
        };
        let Some(event) = next else { break };
        let event = event.map_err(|error| match error {
            EventStreamError::Transport(_) => Failure::from(TERMINATED),
            other => Failure::Message(format!("invalid event stream: {other}")),
        })?;
        if event.data.starts_with("[DONE]") {
            break;
        }
        let named = event.event.as_str();
        let is_chunk = named == "message" || named.starts_with("response.") || named.starts_with("transcript.");
        if !is_chunk && named != "error" {
            continue;
        }
        let chunk: Value = serde_json::from_str(&event.data)
            .map_err(|e| format!("could not parse stream chunk as JSON: {e}: {}", event.data))?;
        if named == "error" {
            return Err(named_error_message(&chunk).into());
        }
        for update in state.apply_chunk(&chunk, &call.model)? {
            emit(tx, update)?;
        }
    }
    for update in state.finish() {
        emit(tx, update)?;
    }
    if call.options.cancel.is_cancelled() {
        return Err(ABORTED.into());
    }
    if state.message().stop_reason == StopReason::Error {
        return Err(UNKNOWN_ERROR.into());
    }
    Ok(())
}

/// An `event: error` SSE event: the SDK reads `data.error`, then `data.message`.
fn named_error_message(data: &Value) -> String {
    match data.get("error").filter(|e| !e.is_null()) {
        Some(error) => stream_error_message(error),
        None => data.get("message").and_then(Value::as_str).unwrap_or("(no status code or body)").to_owned(),
    }
}

fn http_client() -> Result<&'static reqwest::Client, Failure> {
    static CLIENT: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            // Like Node's fetch, ignore proxy environment variables.
            reqwest::Client::builder().no_proxy().build().map_err(|e| format!("could not create the HTTP client: {e}"))
        })
        .as_ref()
        .map_err(|e| Failure::Message(e.clone()))
}

/// Content headers, then `Authorization` (when a key is given), then the model's and the call's headers.
fn request_headers(model: &Model, options: &StreamOptions) -> Result<HeaderMap, String> {
    let mut headers = HeaderMap::new();
    headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(USER_AGENT, HeaderValue::from_static(concat!("pi-runtime/", env!("CARGO_PKG_VERSION"))));
    if let Some(key) = options.api_key.as_deref().filter(|k| !k.is_empty()) {
        let value = HeaderValue::from_str(&format!("Bearer {key}"))
            .map_err(|_| "the API key is not a valid header value".to_owned())?;
        headers.insert(AUTHORIZATION, value);
    }
    for (name, value) in model.headers.iter().chain(&options.headers) {
        let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| format!("invalid header name \"{name}\""))?;
        let value = HeaderValue::from_str(value).map_err(|_| format!("invalid value for header \"{name}\""))?;
        headers.insert(header, value);
    }
    Ok(headers)
}

/// Sends the request, retrying like the OpenAI SDK, and returns the open (2xx) response.
async fn send(call: &Call) -> Result<reqwest::Response, Failure> {
    let client = http_client()?;
    let url = format!("{}/chat/completions", call.model.base_url.trim_end_matches('/'));
    let headers = request_headers(&call.model, &call.options)?;
    let body = serde_json::to_vec(&call.body).map_err(|e| format!("could not serialize the request: {e}"))?;
    let cancel = &call.options.cancel;
    let mut retries_left = call.max_retries;
    loop {
        let request = client.post(&url).headers(headers.clone()).body(body.clone());
        let sent = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(ABORTED_BEFORE_RESPONSE.into()),
            sent = tokio::time::timeout(call.idle_timeout(), request.send()) => sent,
        };
        let server_delay = match sent {
            Ok(Ok(response)) if response.status().is_success() => return Ok(response),
            Ok(Ok(response)) if retries_left > 0 && should_retry(&response) => server_retry_delay(response.headers()),
            Ok(Ok(response)) => {
                let status = response.status().as_u16();
                let text = tokio::select! {
                    biased;
                    _ = cancel.cancelled() => return Err(ABORTED_BEFORE_RESPONSE.into()),
                    text = tokio::time::timeout(call.idle_timeout(), response.text()) => match text {
                        Ok(Ok(text)) => text,
                        Ok(Err(error)) => error.to_string(),
                        Err(_) => return Err(TIMED_OUT.into()),
                    },
                };
                return Err(http_error_message(status, &text).into());
            }
            Ok(Err(_)) | Err(_) if retries_left > 0 => None,
            Ok(Err(_)) => return Err(CONNECTION_ERROR.into()),
            Err(_) => return Err(TIMED_OUT.into()),
        };
        let delay = server_delay.unwrap_or_else(|| default_retry_delay(call.max_retries - retries_left));
        retries_left -= 1;
        tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(ABORTED_BEFORE_RESPONSE.into()),
            _ = tokio::time::sleep(delay) => {}
        }
    }
}

/// The SDK's rule: `x-should-retry` decides when present, else 408, 409, 429 and 5xx are retried.
fn should_retry(response: &reqwest::Response) -> bool {
    match response.headers().get("x-should-retry").and_then(|v| v.to_str().ok()) {
        Some("true") => return true,
        Some("false") => return false,
        _ => {}
    }
    matches!(response.status().as_u16(), 408 | 409 | 429 | 500..)
}

/// A delay the server asked for (`retry-after-ms`, `retry-after` seconds or HTTP date), if reasonable (≤ 60 s).
fn server_retry_delay(headers: &HeaderMap) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    let millis = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok()).filter(|ms| *ms > 0.0).or_else(|| {
        let value = header("retry-after")?;
        match value.parse::<f64>() {
            Ok(seconds) => Some(seconds * 1000.0),
            Err(_) => {
                let date = chrono::DateTime::parse_from_rfc2822(value).ok()?;
                Some((date.timestamp_millis() - crate::protocol::now_ms()) as f64)
            }
        }
    })?;
    (millis.is_finite() && millis > 0.0 && millis <= 60_000.0).then(|| Duration::from_secs_f64(millis / 1000.0))
}

/// 0.5 s doubling per retry, at most 8 s, minus up to 25 % jitter.
fn default_retry_delay(retries_done: u32) -> Duration {
    let seconds = (0.5 * 2f64.powi(retries_done.min(16) as i32)).min(8.0);
    let random = (uuid::Uuid::new_v4().as_u128() % 10_000) as f64 / 10_000.0;
    Duration::from_secs_f64(seconds * (1.0 - random * 0.25))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_delays_follow_the_sdk() {
        for (done, max) in [(0, 0.5), (1, 1.0), (2, 2.0), (5, 8.0), (40, 8.0)] {
            let delay = default_retry_delay(done).as_secs_f64();
            assert!(delay <= max && delay >= max * 0.75, "retry {done}: {delay}");
        }
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(server_retry_delay(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(server_retry_delay(&headers), Some(Duration::from_millis(150)));
        headers.insert("retry-after-ms", HeaderValue::from_static("0"));
        headers.insert("retry-after", HeaderValue::from_static("120"));
        assert_eq!(server_retry_delay(&headers), None);
    }

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
