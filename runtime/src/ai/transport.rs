//! The HTTP + SSE transport every provider shares: POST with the vendor SDKs' retry rules, read
//! server-sent events with an idle timeout while honouring cancellation, and hand each event to the
//! provider's [`StreamDecoder`]. The stream a caller gets always ends with exactly one `done` or
//! `error` event, whatever happens on the wire.

use std::time::Duration;

use futures_util::{FutureExt, StreamExt};
use reqwest::header::HeaderMap;
use tokio_util::sync::CancellationToken;

use super::Model;
use super::error_kind::ProviderErrorKind;
use super::http_send::send;
pub use super::http_send::{apply_headers, http_client, secret_header, server_retry_delay};
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
    /// Whose rules decide what is retried and how failures are worded.
    pub retry_rule: RetryRule,
}

/// Whose retry loop a request follows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum RetryRule {
    /// The vendor SDKs': 408/409/429/5xx and failed connections, `max_retries` times, the server's `retry-after`.
    #[default]
    Sdk,
    /// pi's own loop for ChatGPT's Codex endpoint (see `openai_codex_responses::send`).
    Codex,
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
            retry_rule: RetryRule::Sdk,
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
    runtime.spawn(run(request, std::future::ready(Ok(Vec::new())), decoder, cancel, on_payload, tx));
    stream
}

/// Like [`spawn_sse_call`], for APIs whose credentials come from a call of their own (an OAuth token
/// endpoint): once the payload hook has seen the body, `auth` yields the headers to add (those the request
/// already has win), or the failure that ends the call. Cancelling stops the wait for `auth`.
pub fn spawn_authorized_sse_call<D, A>(
    model: &Model,
    request: Result<HttpRequest, String>,
    auth: A,
    decoder: D,
    cancel: CancellationToken,
    on_payload: Option<PayloadHook>,
) -> AssistantMessageStream
where
    D: StreamDecoder,
    A: Future<Output = Result<AuthHeaders, DecodeError>> + Send + 'static,
{
    let request = match request {
        Ok(request) => request,
        Err(message) => return error_stream(model, message),
    };
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return error_stream(model, format!("the {} provider needs a tokio runtime", model.api));
    };
    let (tx, stream) = AssistantMessageStream::channel();
    runtime.spawn(run(request, auth, decoder, cancel, on_payload, tx));
    stream
}

/// Headers that authorize a request (name, value), values marked sensitive.
pub type AuthHeaders = Vec<(reqwest::header::HeaderName, reqwest::header::HeaderValue)>;

/// Why a call ended without `done`.
pub(crate) enum Failure {
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
    auth: impl Future<Output = Result<AuthHeaders, DecodeError>> + Send,
    mut decoder: D,
    cancel: CancellationToken,
    on_payload: Option<PayloadHook>,
    tx: AssistantMessageSender,
) {
    let outcome = match apply_payload_hook(&mut request, on_payload).await {
        Ok(()) => match authorize(&mut request, auth, &cancel).await {
            Ok(()) => drive(&request, &mut decoder, &cancel, &tx).await,
            Err(failure) => Err(failure),
        },
        Err(error) => Err(Failure::from(error)),
    };
    if let Some(event) = closing_event(decoder.take_message(), outcome, &cancel) {
        tx.push(event);
    }
}

/// The body's next chunk. Bytes already received are taken at once; only an empty buffer waits (for data,
/// the abort or the idle timeout), so most chunks cost no timer and no wake-up registration. `None` when the
/// call was aborted; the idle timeout is an error.
pub(crate) async fn next_chunk<S: futures_util::Stream + Unpin>(
    body: &mut S,
    cancel: &CancellationToken,
    idle_timeout: Duration,
) -> Result<Option<Option<S::Item>>, Failure> {
    if let Some(next) = body.next().now_or_never() {
        return Ok(Some(next));
    }
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Ok(None),
        next = tokio::time::timeout(idle_timeout, body.next()) => next.map(Some).map_err(|_| {
            Failure::Error(DecodeError { message: TIMED_OUT.to_owned(), kind: Some(ProviderErrorKind::Network) })
        }),
    }
}

/// The stream's last event for `outcome`: `done` with the message's reason, or `error` (`aborted` when the
/// call was cancelled: as in pi, an abort wins over whatever error the abort caused); `None` when nobody
/// reads the stream any more.
pub(crate) fn closing_event(
    mut message: AssistantMessage,
    outcome: Result<(), Failure>,
    cancel: &CancellationToken,
) -> Option<AssistantMessageEvent> {
    message.settle_text();
    match outcome {
        Ok(()) => {
            let reason = match message.stop_reason {
                StopReason::Length => DoneReason::Length,
                StopReason::ToolUse => DoneReason::ToolUse,
                _ => DoneReason::Stop,
            };
            Some(AssistantMessageEvent::Done { reason, message })
        }
        Err(Failure::ReaderGone) => None,
        Err(Failure::Error(error)) => {
            let aborted = cancel.is_cancelled();
            message.stop_reason = if aborted { StopReason::Aborted } else { StopReason::Error };
            message.error_message = Some(error.message);
            message.error_kind = if aborted { Some(ProviderErrorKind::Aborted) } else { error.kind };
            let reason = if aborted { ErrorReason::Aborted } else { ErrorReason::Error };
            Some(AssistantMessageEvent::Error { reason, error: message })
        }
    }
}

/// Waits for the authorization headers (or the abort) and adds those the request does not already carry.
async fn authorize(
    request: &mut HttpRequest,
    auth: impl Future<Output = Result<AuthHeaders, DecodeError>> + Send,
    cancel: &CancellationToken,
) -> Result<(), Failure> {
    let headers = tokio::select! {
        biased;
        _ = cancel.cancelled() => return Err(ABORTED_BEFORE_RESPONSE.into()),
        headers = auth => headers.map_err(Failure::Error)?,
    };
    for (name, value) in headers {
        if !request.headers.contains_key(&name) {
            request.headers.insert(name, value);
        }
    }
    Ok(())
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
            super::http_send::shown_url(&request.url)
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
    let source = format!("POST {}", super::http_send::shown_url(&request.url));
    read_body(response.bytes_stream(), &source, request.idle_timeout, decoder, cancel, &mut emit).await
}

/// Reads SSE events from `body` into `decoder` until the stream ends, the decoder stops, the call is
/// cancelled or no bytes arrive for `idle_timeout`; then lets the decoder finish. `source` names the body in
/// errors (`POST http://host/v1/messages`).
///
/// The events are cut by `sse-parse` as the SDKs' decoders cut them: a leading byte-order mark is skipped,
/// invalid UTF-8 becomes U+FFFD (as `TextDecoder` does), and an event the body ends in the middle of is
/// dropped.
async fn read_body<S, B, E, D>(
    mut body: S,
    source: &str,
    idle_timeout: Duration,
    decoder: &mut D,
    cancel: &CancellationToken,
    emit: &mut (dyn FnMut(&mut Vec<AssistantMessageEvent>) -> Result<(), Failure> + Send),
) -> Result<(), Failure>
where
    S: futures_util::Stream<Item = Result<B, E>> + Unpin,
    B: AsRef<[u8]>,
    E: std::error::Error + 'static,
    D: StreamDecoder,
{
    let mut parser = sse_parse::SseParser::new();
    let mut events = Vec::new();
    loop {
        // Like the SDKs on abort: stop reading quietly; blocks still close, then the abort check fails.
        if cancel.is_cancelled() {
            break;
        }
        if let Some(event) = parser.next_event() {
            let flow = decoder.on_event(&event.event, &event.data, &mut events);
            emit(&mut events)?;
            if flow? == Flow::Stop {
                break;
            }
            continue;
        }
        let Some(next) = next_chunk(&mut body, cancel, idle_timeout).await? else { break };
        match next {
            Some(Ok(chunk)) => parser.feed(chunk.as_ref()),
            Some(Err(error)) => {
                let cause = super::http_send::root_cause(&error);
                let message = format!("{TERMINATED} (reading the answer to {source}: {cause})");
                return Err(Failure::Error(DecodeError { message, kind: Some(ProviderErrorKind::Network) }));
            }
            None => break,
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
    let cancel = CancellationToken::new();
    let outcome = read_body(body, "a recorded body", DEFAULT_IDLE_TIMEOUT, &mut decoder, &cancel, &mut emit).await;
    let mut message = decoder.take_message();
    message.settle_text();
    let result = match outcome {
        Ok(()) => Ok(message),
        Err(Failure::Error(error)) => Err(error),
        Err(Failure::ReaderGone) => Err(DecodeError::from("the reader went away")),
    };
    (collected, result)
}
