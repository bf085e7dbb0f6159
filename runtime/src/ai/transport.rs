//! The HTTP + SSE transport every provider shares: POST with the vendor SDKs' retry rules, read
//! server-sent events with an idle timeout while honouring cancellation, and hand each event to the
//! provider's [`StreamDecoder`]. The stream a caller gets always ends with exactly one `done` or
//! `error` event, whatever happens on the wire.

use std::sync::OnceLock;
use std::time::Duration;

use bytes::Bytes;
use eventsource_stream::{EventStreamError, Eventsource};
use futures_util::{FutureExt, StreamExt};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use tokio_util::sync::CancellationToken;

use super::Model;
use super::error_kind::ProviderErrorKind;
use super::provider::{PayloadHook, error_stream};
use super::stream::{AssistantMessageSender, AssistantMessageStream};
use crate::protocol::{AssistantMessage, AssistantMessageEvent, DoneReason, ErrorReason, StopReason};

/// How long to wait for the response or the next bytes when the call does not say (the SDKs' default
/// request timeout).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(600);
/// Retries after a retryable failure, as the OpenAI and Anthropic SDKs do by default.
pub const DEFAULT_MAX_RETRIES: u32 = 2;
/// The longest server-requested wait the SDKs honour before a retry (pi's `maxRetryDelayMs` default).
pub const DEFAULT_MAX_RETRY_DELAY: Duration = Duration::from_secs(60);

/// Abort while waiting for the response (the SDKs' `APIUserAbortError`).
pub const ABORTED_BEFORE_RESPONSE: &str = "Request was aborted.";
/// Abort once the stream is open (pi's own check after the stream loop).
pub const ABORTED: &str = "Request was aborted";
/// No response, or no bytes for the idle timeout.
pub const TIMED_OUT: &str = "Request timed out.";
/// The connection could not be made.
pub const CONNECTION_ERROR: &str = "Connection error.";
/// Reading the body failed mid-stream (Node's fetch says `terminated`).
pub const TERMINATED: &str = "terminated";

/// One provider request, ready to send.
#[derive(Debug, Clone)]
pub struct HttpRequest {
    pub url: String,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    /// Retries after 408, 409, 429, 5xx or a failed connection.
    pub max_retries: u32,
    /// How long the stream may stay silent.
    pub idle_timeout: Duration,
    /// How long to wait for the response to each attempt.
    pub response_timeout: Duration,
    /// The longest server-requested wait honoured before a retry.
    pub max_retry_delay: Duration,
}

impl HttpRequest {
    /// A POST of `body` as JSON with the call's timeouts and retries: `sdk_retries` unless the call's
    /// [`ProviderRetry`](super::provider::ProviderRetry) says otherwise.
    pub fn json(
        url: String,
        headers: HeaderMap,
        body: &serde_json::Value,
        sdk_retries: u32,
        options: &super::provider::StreamOptions,
    ) -> Result<Self, String> {
        let body = serde_json::to_vec(body).map_err(|e| format!("could not serialize the request: {e}"))?;
        let idle_timeout = options.idle_timeout.unwrap_or(DEFAULT_IDLE_TIMEOUT);
        let retry = options.retry;
        Ok(Self {
            url,
            headers,
            body,
            max_retries: retry.max_retries.unwrap_or(sdk_retries),
            idle_timeout,
            response_timeout: retry.timeout.unwrap_or(idle_timeout),
            max_retry_delay: retry.max_retry_delay.unwrap_or(DEFAULT_MAX_RETRY_DELAY),
        })
    }
}

/// Whether the decoder wants more events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    /// The provider's end marker (`[DONE]`, `message_stop`, ...): stop reading.
    Stop,
}

/// A failure a decoder reports: its text and, when known, its kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    pub message: String,
    pub kind: Option<ProviderErrorKind>,
}

impl From<String> for DecodeError {
    fn from(message: String) -> Self {
        Self { message, kind: None }
    }
}

impl From<&str> for DecodeError {
    fn from(message: &str) -> Self {
        Self { message: message.to_owned(), kind: None }
    }
}

/// What a provider plugs into the transport: turns SSE events into assistant-message events.
pub trait StreamDecoder: Send + Sync + 'static {
    /// The message built so far.
    fn message(&self) -> &AssistantMessage;
    /// The message, taken out at the end.
    fn take_message(&mut self) -> AssistantMessage;
    /// One SSE event (`name` is `message` when the server gave none); push what it produces.
    fn on_event(
        &mut self,
        name: &str,
        data: &str,
        events: &mut Vec<AssistantMessageEvent>,
    ) -> Result<Flow, DecodeError>;
    /// The stream ended (normally or by cancellation): close open blocks, settle the stop reason.
    fn finish(&mut self, events: &mut Vec<AssistantMessageEvent>) -> Result<(), DecodeError>;
    /// The error text for a non-2xx response, as the vendor SDK words it.
    fn http_error(&self, status: u16, body: &str) -> String;
}

/// Starts `request` on the current tokio runtime and returns its event stream at once.
pub fn spawn_sse_call<D: StreamDecoder>(
    model: &Model,
    request: Result<HttpRequest, String>,
    decoder: D,
    cancel: CancellationToken,
    on_payload: Option<PayloadHook>,
) -> AssistantMessageStream {
    let request = match request {
        Ok(request) => request,
        Err(message) => return error_stream(model, message),
    };
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return error_stream(model, format!("the {} provider needs a tokio runtime", model.api));
    };
    let (tx, stream) = AssistantMessageStream::channel();
    runtime.spawn(run(request, decoder, cancel, on_payload, tx));
    stream
}

/// Why a call ended without `done`.
enum Failure {
    /// The consumer dropped the stream; nobody is left to tell.
    ReaderGone,
    Error(DecodeError),
}

impl<T: Into<DecodeError>> From<T> for Failure {
    fn from(error: T) -> Self {
        Self::Error(error.into())
    }
}

async fn run<D: StreamDecoder>(
    mut request: HttpRequest,
    mut decoder: D,
    cancel: CancellationToken,
    on_payload: Option<PayloadHook>,
    tx: AssistantMessageSender,
) {
    let outcome = match apply_payload_hook(&mut request, on_payload).await {
        Ok(()) => drive(&request, &mut decoder, &cancel, &tx).await,
        Err(error) => Err(Failure::from(error)),
    };
    let mut message = decoder.take_message();
    message.settle_text();
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
        Err(Failure::Error(error)) => {
            // As in pi: an abort wins over whatever error the abort caused.
            let aborted = cancel.is_cancelled();
            message.stop_reason = if aborted { StopReason::Aborted } else { StopReason::Error };
            message.error_message = Some(error.message);
            message.error_kind = if aborted { Some(ProviderErrorKind::Aborted) } else { error.kind };
            let reason = if aborted { ErrorReason::Aborted } else { ErrorReason::Error };
            AssistantMessageEvent::Error { reason, error: message }
        }
    };
    tx.push(event);
}

/// Lets the hook rewrite the body (parsed back from the bytes the provider serialized; only when a hook is set).
async fn apply_payload_hook(request: &mut HttpRequest, on_payload: Option<PayloadHook>) -> Result<(), String> {
    let Some(hook) = on_payload else { return Ok(()) };
    let payload: serde_json::Value =
        serde_json::from_slice(&request.body).map_err(|e| format!("could not read the request back: {e}"))?;
    let payload = hook(payload).await;
    request.body = serde_json::to_vec(&payload).map_err(|e| format!("could not serialize the request: {e}"))?;
    Ok(())
}

/// Characters of an unexpected body quoted in the error.
const BODY_EXCERPT_CHARS: usize = 300;

/// The response when it is an event stream (or does not say what it is); a 2xx answer of another content type
/// (a JSON error, an HTML page from a proxy) is a failure naming the URL, status, type and the body's start.
async fn expect_event_stream(
    response: reqwest::Response,
    request: &HttpRequest,
    cancel: &CancellationToken,
) -> Result<reqwest::Response, Failure> {
    let content_type =
        response.headers().get(reqwest::header::CONTENT_TYPE).and_then(|value| value.to_str().ok()).map(str::to_owned);
    let Some(content_type) = content_type.filter(|kind| !kind.to_ascii_lowercase().contains("event-stream")) else {
        return Ok(response);
    };
    let status = response.status().as_u16();
    let body = tokio::select! {
        biased;
        _ = cancel.cancelled() => return Err(ABORTED_BEFORE_RESPONSE.into()),
        body = tokio::time::timeout(request.idle_timeout, response.text()) => body,
    };
    let body = match body {
        Ok(Ok(text)) => text,
        Ok(Err(error)) => format!("(the body could not be read: {error})"),
        Err(_) => "(no body within the timeout)".to_owned(),
    };
    let flat: String = body.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut excerpt: String = flat.chars().take(BODY_EXCERPT_CHARS).collect();
    if flat.chars().count() > BODY_EXCERPT_CHARS {
        excerpt.push('…');
    }
    Err(Failure::Error(DecodeError {
        message: format!(
            "{} answered {status} with content type {content_type} instead of an event stream: {excerpt}",
            request.url
        ),
        kind: None,
    }))
}

fn emit_all(tx: &AssistantMessageSender, events: &mut Vec<AssistantMessageEvent>) -> Result<(), Failure> {
    for event in events.drain(..) {
        if !tx.push(event) {
            return Err(Failure::ReaderGone);
        }
    }
    Ok(())
}

async fn drive<D: StreamDecoder>(
    request: &HttpRequest,
    decoder: &mut D,
    cancel: &CancellationToken,
    tx: &AssistantMessageSender,
) -> Result<(), Failure> {
    let response = send(request, cancel, |status, body| decoder.http_error(status, body)).await?;
    let response = expect_event_stream(response, request, cancel).await?;
    let mut events = vec![AssistantMessageEvent::Start { partial: decoder.message().clone() }];
    emit_all(tx, &mut events)?;
    let mut emit = |events: &mut Vec<AssistantMessageEvent>| emit_all(tx, events);
    read_body(response.bytes_stream(), request.idle_timeout, decoder, cancel, &mut emit).await
}

/// Reads SSE events from `body` into `decoder` until the stream ends, the decoder stops, the call is
/// cancelled or nothing arrives for `idle_timeout`; then lets the decoder finish.
async fn read_body<S, B, E, D>(
    body: S,
    idle_timeout: Duration,
    decoder: &mut D,
    cancel: &CancellationToken,
    emit: &mut (dyn FnMut(&mut Vec<AssistantMessageEvent>) -> Result<(), Failure> + Send),
) -> Result<(), Failure>
where
    S: futures_util::Stream<Item = Result<B, E>> + Unpin,
    B: Into<Bytes>,
    E: std::fmt::Display,
    D: StreamDecoder,
{
    let mut sse = super::sse_body::event_pieces(body).eventsource();
    let mut events = Vec::new();
    loop {
        // Like the SDKs on abort: stop reading quietly; blocks still close, then the abort check fails.
        if cancel.is_cancelled() {
            break;
        }
        // An event already received is taken at once; only an empty buffer waits (for data, the abort or
        // the idle timeout), so most events cost no timer and no wake-up registration.
        let ready = sse.next().now_or_never();
        let next = match ready {
            Some(next) => next,
            None => tokio::select! {
                biased;
                _ = cancel.cancelled() => break,
                next = tokio::time::timeout(idle_timeout, sse.next()) => next.map_err(|_| Failure::Error(DecodeError {
                    message: TIMED_OUT.to_owned(),
                    kind: Some(ProviderErrorKind::Network),
                }))?,
            },
        };
        let Some(event) = next else { break };
        let event = event.map_err(|error| match error {
            EventStreamError::Transport(_) => {
                Failure::Error(DecodeError { message: TERMINATED.to_owned(), kind: Some(ProviderErrorKind::Network) })
            }
            other => Failure::from(format!("invalid event stream: {other}")),
        })?;
        let flow = decoder.on_event(&event.event, &event.data, &mut events);
        emit(&mut events)?;
        if flow? == Flow::Stop {
            break;
        }
    }
    let finished = decoder.finish(&mut events);
    emit(&mut events)?;
    if cancel.is_cancelled() {
        return Err(ABORTED.into());
    }
    finished.map_err(Failure::Error)
}

/// Decodes a recorded response body delivered in `chunks` (any split), without HTTP: the events the
/// live stream would have carried after `start`, and the final message or the failure.
pub async fn decode_recorded<D: StreamDecoder>(
    mut decoder: D,
    chunks: Vec<Vec<u8>>,
) -> (Vec<AssistantMessageEvent>, Result<AssistantMessage, DecodeError>) {
    let body = futures_util::stream::iter(chunks.into_iter().map(Ok::<_, std::convert::Infallible>));
    let mut collected = Vec::new();
    let mut emit = |events: &mut Vec<AssistantMessageEvent>| {
        collected.append(events);
        Ok(())
    };
    let outcome = read_body(body, DEFAULT_IDLE_TIMEOUT, &mut decoder, &CancellationToken::new(), &mut emit).await;
    let mut message = decoder.take_message();
    message.settle_text();
    let result = match outcome {
        Ok(()) => Ok(message),
        Err(Failure::Error(error)) => Err(error),
        Err(Failure::ReaderGone) => Err(DecodeError::from("the reader went away")),
    };
    (collected, result)
}

/// A shared client: one connection pool for the whole process. Like Node's fetch, it ignores proxy
/// environment variables.
pub fn http_client() -> Result<&'static reqwest::Client, String> {
    static CLIENT: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            // Proxies come from HTTPS_PROXY / HTTP_PROXY / ALL_PROXY / NO_PROXY (either case), as Node's
            // environment proxy agent reads them for pi.
            reqwest::Client::builder().build().map_err(|e| format!("could not create the HTTP client: {e}"))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Adds `name: value` pairs to `headers`, later ones replacing earlier ones of the same name.
pub fn apply_headers<'a>(
    headers: &mut HeaderMap,
    pairs: impl IntoIterator<Item = &'a (String, String)>,
) -> Result<(), String> {
    for (name, value) in pairs {
        let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| format!("invalid header name \"{name}\""))?;
        let value = HeaderValue::from_str(value).map_err(|_| format!("invalid value for header \"{name}\""))?;
        headers.insert(header, value);
    }
    Ok(())
}

/// A header value holding a secret (it is marked sensitive, so it never shows in debug output).
pub fn secret_header(value: &str) -> Result<HeaderValue, String> {
    let mut value = HeaderValue::from_str(value).map_err(|_| "the API key is not a valid header value".to_owned())?;
    value.set_sensitive(true);
    Ok(value)
}

/// Sends the request, retrying like the vendor SDKs, and returns the open (2xx) response.
async fn send(
    request: &HttpRequest,
    cancel: &CancellationToken,
    http_error: impl Fn(u16, &str) -> String,
) -> Result<reqwest::Response, Failure> {
    let client = http_client()?;
    let mut retries_left = request.max_retries;
    loop {
        let attempt = client.post(&request.url).headers(request.headers.clone()).body(request.body.clone());
        let sent = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(ABORTED_BEFORE_RESPONSE.into()),
            sent = tokio::time::timeout(request.response_timeout, attempt.send()) => sent,
        };
        let server_delay = match sent {
            Ok(Ok(response)) if response.status().is_success() => return Ok(response),
            Ok(Ok(response)) if retries_left > 0 && should_retry(&response) => {
                server_retry_delay(response.headers()).filter(|delay| *delay <= request.max_retry_delay)
            }
            Ok(Ok(response)) => {
                let status = response.status().as_u16();
                let retry_after =
                    server_retry_delay(response.headers()).or_else(|| retry_after_seconds(response.headers()));
                let text = tokio::select! {
                    biased;
                    _ = cancel.cancelled() => return Err(ABORTED_BEFORE_RESPONSE.into()),
                    text = tokio::time::timeout(request.idle_timeout, response.text()) => match text {
                        Ok(Ok(text)) => text,
                        Ok(Err(error)) => error.to_string(),
                        Err(_) => return Err(TIMED_OUT.into()),
                    },
                };
                let kind = ProviderErrorKind::from_status(status, retry_after);
                return Err(Failure::Error(DecodeError { message: http_error(status, &text), kind: Some(kind) }));
            }
            Ok(Err(_)) | Err(_) if retries_left > 0 => None,
            Ok(Err(_)) => {
                return Err(Failure::Error(DecodeError {
                    message: CONNECTION_ERROR.to_owned(),
                    kind: Some(ProviderErrorKind::Network),
                }));
            }
            Err(_) => {
                return Err(Failure::Error(DecodeError {
                    message: TIMED_OUT.to_owned(),
                    kind: Some(ProviderErrorKind::Network),
                }));
            }
        };
        let delay = server_delay.unwrap_or_else(|| default_retry_delay(request.max_retries - retries_left));
        retries_left -= 1;
        tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(ABORTED_BEFORE_RESPONSE.into()),
            _ = tokio::time::sleep(delay) => {}
        }
    }
}

/// The SDKs' rule: `x-should-retry` decides when present, else 408, 409, 429 and 5xx are retried.
fn should_retry(response: &reqwest::Response) -> bool {
    match response.headers().get("x-should-retry").and_then(|v| v.to_str().ok()) {
        Some("true") => return true,
        Some("false") => return false,
        _ => {}
    }
    matches!(response.status().as_u16(), 408 | 409 | 429 | 500..)
}

/// A delay the server asked for (`retry-after-ms`, `retry-after` seconds or HTTP date), if reasonable (≤ 60 s).
pub fn server_retry_delay(headers: &HeaderMap) -> Option<Duration> {
    let millis = requested_delay_ms(headers)?;
    (millis.is_finite() && millis > 0.0 && millis <= 60_000.0).then(|| Duration::from_secs_f64(millis / 1000.0))
}

/// Whatever delay the server asked for, however long (for error classification).
fn retry_after_seconds(headers: &HeaderMap) -> Option<Duration> {
    let millis = requested_delay_ms(headers)?;
    (millis.is_finite() && millis > 0.0).then(|| Duration::from_secs_f64(millis / 1000.0))
}

fn requested_delay_ms(headers: &HeaderMap) -> Option<f64> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    header("retry-after-ms").and_then(|v| v.parse::<f64>().ok()).filter(|ms| *ms > 0.0).or_else(|| {
        let value = header("retry-after")?;
        match value.parse::<f64>() {
            Ok(seconds) => Some(seconds * 1000.0),
            Err(_) => {
                let date = chrono::DateTime::parse_from_rfc2822(value).ok()?;
                Some((date.timestamp_millis() - crate::protocol::now_ms()) as f64)
            }
        }
    })
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
        assert_eq!(server_retry_delay(&headers), None, "too long to wait inside the SDK retry");
        assert_eq!(retry_after_seconds(&headers), Some(Duration::from_secs(120)), "but still reported");
    }

    #[test]
    fn headers_replace_by_name_and_bad_ones_are_named() {
        let mut headers = HeaderMap::new();
        let pairs = [("X-Team".to_owned(), "model".to_owned()), ("x-team".to_owned(), "call".to_owned())];
        apply_headers(&mut headers, &pairs).expect("valid");
        assert_eq!(headers.get("x-team").and_then(|v| v.to_str().ok()), Some("call"));
        let bad = [("bad name".to_owned(), "v".to_owned())];
        assert_eq!(apply_headers(&mut headers, &bad).err().as_deref(), Some("invalid header name \"bad name\""));
        assert!(secret_header("k").is_ok_and(|v| v.is_sensitive()));
    }
}
