//! One ConverseStream call: each attempt signed afresh (its `amz-sdk-request` counts attempts), retried as
//! the AWS SDK's standard strategy retries (three attempts; throttling and transient failures), then the
//! binary event stream read message by message with the idle timeout, honouring cancellation. The stream a
//! caller gets always ends with exactly one `done` or `error` event.

use std::time::{Duration, SystemTime};

use bytes::{Buf, BytesMut};
use reqwest::header::{HeaderMap, HeaderValue};
use tokio_util::sync::CancellationToken;

use super::credentials::BedrockAuth;
use super::decode::BedrockDecoder;
use super::errors::{RetryClass, http_error};
use super::signing::authorize;
use crate::ai::Model;
use crate::ai::error_kind::ProviderErrorKind;
use crate::ai::http_send::{root_cause, shown_url};
use crate::ai::provider::{PayloadHook, error_stream};
use crate::ai::stream::{AssistantMessageSender, AssistantMessageStream};
use crate::ai::transport::{
    ABORTED, ABORTED_BEFORE_RESPONSE, CONNECTION_ERROR, DecodeError, Failure, TERMINATED, TIMED_OUT, closing_event,
    http_client, next_chunk,
};
use crate::protocol::{AssistantMessageEvent, StopReason};

/// Attempts per call, as the SDK's standard retry strategy makes them.
pub const MAX_ATTEMPTS: u32 = 3;
/// The largest event-stream message accepted (the format's own limit is 16 MiB).
const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// A call ready to send: everything but the per-attempt headers.
#[derive(Debug, Clone)]
pub struct PreparedCall {
    pub url: String,
    /// Headers every attempt carries (content type, user agent).
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    pub auth: BedrockAuth,
    pub region: String,
    /// How long the stream may stay silent, and how long to wait for each response.
    pub idle_timeout: Duration,
}

impl PreparedCall {
    /// The headers of attempt `attempt` (from 1), signed now.
    fn attempt_headers(&self, invocation_id: &str, attempt: u32) -> Result<HeaderMap, String> {
        let mut headers = self.headers.clone();
        let text = |value: String| HeaderValue::from_str(&value).map_err(|_| "invalid SDK header".to_owned());
        headers.insert("amz-sdk-invocation-id", text(invocation_id.to_owned())?);
        headers.insert("amz-sdk-request", text(format!("attempt={attempt}; max={MAX_ATTEMPTS}"))?);
        authorize(&mut headers, &self.url, &self.body, &self.auth, &self.region, SystemTime::now())?;
        Ok(headers)
    }
}

/// Starts the call on the current tokio runtime and returns its event stream at once.
pub fn spawn(
    model: &Model,
    call: Result<PreparedCall, String>,
    decoder: BedrockDecoder,
    cancel: CancellationToken,
    on_payload: Option<PayloadHook>,
) -> AssistantMessageStream {
    let call = match call {
        Ok(call) => call,
        Err(message) => return error_stream(model, message),
    };
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return error_stream(model, format!("the {} provider needs a tokio runtime", model.api));
    };
    let (tx, stream) = AssistantMessageStream::channel();
    runtime.spawn(run(call, decoder, cancel, on_payload, tx));
    stream
}

async fn run(
    mut call: PreparedCall,
    mut decoder: BedrockDecoder,
    cancel: CancellationToken,
    on_payload: Option<PayloadHook>,
    tx: AssistantMessageSender,
) {
    let outcome = match apply_payload_hook(&mut call, on_payload).await {
        Ok(()) => drive(&call, &mut decoder, &cancel, &tx).await,
        Err(error) => Err(Failure::from(error)),
    };
    if let Some(event) = closing_event(decoder.take_message(), outcome, &cancel) {
        tx.push(event);
    }
}

/// Lets the hook rewrite the body (only when a hook is set); the signature covers the rewritten body.
async fn apply_payload_hook(call: &mut PreparedCall, on_payload: Option<PayloadHook>) -> Result<(), String> {
    let Some(hook) = on_payload else { return Ok(()) };
    let payload: serde_json::Value =
        serde_json::from_slice(&call.body).map_err(|e| format!("could not read the request back: {e}"))?;
    let payload = hook(payload).await;
    call.body = serde_json::to_vec(&payload).map_err(|e| format!("could not serialize the request: {e}"))?;
    Ok(())
}

async fn drive(
    call: &PreparedCall,
    decoder: &mut BedrockDecoder,
    cancel: &CancellationToken,
    tx: &AssistantMessageSender,
) -> Result<(), Failure> {
    let response = send(call, cancel).await?;
    let content_type = response.headers().get(reqwest::header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
    if let Some(kind) = content_type.filter(|kind| !kind.to_ascii_lowercase().contains("eventstream")) {
        let (status, kind) = (response.status().as_u16(), kind.to_owned());
        let body = read_text(response, call.idle_timeout, cancel).await?;
        let excerpt: String = body.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(300).collect();
        let url = shown_url(&call.url);
        return Err(
            format!("{url} answered {status} with content type {kind} instead of an event stream: {excerpt}").into()
        );
    }
    let source = format!("POST {}", shown_url(&call.url));
    read_messages(response.bytes_stream(), &source, call.idle_timeout, decoder, cancel, tx).await
}

/// Sends the attempts, returning the first 2xx response or the failure that ends the call.
async fn send(call: &PreparedCall, cancel: &CancellationToken) -> Result<reqwest::Response, Failure> {
    let client = http_client()?;
    let invocation_id = uuid::Uuid::new_v4().to_string();
    for attempt in 1..=MAX_ATTEMPTS {
        let headers = call.attempt_headers(&invocation_id, attempt)?;
        let request = client.post(&call.url).headers(headers).body(call.body.clone());
        let sent = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(ABORTED_BEFORE_RESPONSE.into()),
            sent = tokio::time::timeout(call.idle_timeout, request.send()) => sent,
        };
        let last = attempt == MAX_ATTEMPTS;
        let (class, server_delay, failure) = match sent {
            Ok(Ok(response)) if response.status().is_success() => return Ok(response),
            Ok(Ok(response)) => {
                let (status, headers) = (response.status().as_u16(), response.headers().clone());
                let text = read_text(response, call.idle_timeout, cancel).await?;
                let error = http_error(status, &headers, &text);
                let failure = DecodeError { message: error.text(), kind: Some(error.kind()) };
                (error.retry_class(), error.retry_after, failure)
            }
            Ok(Err(error)) => {
                let (url, cause) = (shown_url(&call.url), root_cause(&error));
                let message = format!("{CONNECTION_ERROR} (POST {url}: {cause})");
                (Some(RetryClass::Transient), None, DecodeError { message, kind: Some(ProviderErrorKind::Network) })
            }
            Err(_) => {
                let failure = DecodeError { message: TIMED_OUT.to_owned(), kind: Some(ProviderErrorKind::Network) };
                (Some(RetryClass::Transient), None, failure)
            }
        };
        let Some(class) = class.filter(|_| !last) else { return Err(Failure::Error(failure)) };
        tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(ABORTED_BEFORE_RESPONSE.into()),
            _ = tokio::time::sleep(class.delay(attempt - 1, server_delay)) => {}
        }
    }
    Err(TIMED_OUT.into())
}

/// A response body as text, within the idle timeout.
async fn read_text(response: reqwest::Response, idle: Duration, cancel: &CancellationToken) -> Result<String, Failure> {
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(ABORTED_BEFORE_RESPONSE.into()),
        text = tokio::time::timeout(idle, response.text()) => match text {
            Ok(Ok(text)) => Ok(text),
            Ok(Err(error)) => Ok(format!("(the body could not be read: {error})")),
            Err(_) => Err(TIMED_OUT.into()),
        },
    }
}

fn emit_all(tx: &AssistantMessageSender, events: &mut Vec<AssistantMessageEvent>) -> Result<(), Failure> {
    for event in events.drain(..) {
        if !tx.push(event) {
            return Err(Failure::ReaderGone);
        }
    }
    Ok(())
}

/// Reads event-stream messages from `body` into `decoder` until the body ends, a message fails, the call
/// is cancelled or no bytes arrive for `idle_timeout`.
async fn read_messages<S, B, E>(
    mut body: S,
    source: &str,
    idle_timeout: Duration,
    decoder: &mut BedrockDecoder,
    cancel: &CancellationToken,
    tx: &AssistantMessageSender,
) -> Result<(), Failure>
where
    S: futures_util::Stream<Item = Result<B, E>> + Unpin,
    B: AsRef<[u8]>,
    E: std::error::Error + 'static,
{
    let mut buffer = BytesMut::new();
    let mut events = Vec::new();
    loop {
        if cancel.is_cancelled() {
            break;
        }
        if let Some(message) = next_message(&mut buffer)? {
            let outcome = decoder.on_message(&message.message_type, &message.name, &message.payload, &mut events);
            emit_all(tx, &mut events)?;
            outcome?;
            continue;
        }
        let Some(next) = next_chunk(&mut body, cancel, idle_timeout).await? else { break };
        match next {
            Some(Ok(chunk)) => buffer.extend_from_slice(chunk.as_ref()),
            Some(Err(error)) => {
                let message = format!("{TERMINATED} (reading the answer to {source}: {})", root_cause(&error));
                return Err(Failure::Error(DecodeError { message, kind: Some(ProviderErrorKind::Network) }));
            }
            None if buffer.is_empty() => break,
            None => {
                let message = format!("{TERMINATED} (the answer to {source} ended inside an event-stream message)");
                return Err(Failure::Error(DecodeError { message, kind: Some(ProviderErrorKind::Network) }));
            }
        }
    }
    if cancel.is_cancelled() {
        return Err(ABORTED.into());
    }
    match decoder.message().stop_reason {
        StopReason::Error | StopReason::Aborted => Err("An unknown error occurred".into()),
        _ => Ok(()),
    }
}

/// One decoded event-stream message.
#[derive(Debug)]
pub struct StreamMessage {
    /// `:message-type`: `event`, `exception` or `error`.
    pub message_type: String,
    /// `:event-type` or `:exception-type`; for `error` messages, the `:error-message`.
    pub name: String,
    pub payload: bytes::Bytes,
}

/// The next whole message at the front of `buffer`, taken out of it; `None` until one has fully arrived.
pub fn next_message(buffer: &mut BytesMut) -> Result<Option<StreamMessage>, String> {
    if buffer.len() < 4 {
        return Ok(None);
    }
    let total = (&buffer[..4]).get_u32() as usize;
    if !(16..=MAX_MESSAGE_BYTES).contains(&total) {
        return Err(format!("the Bedrock event stream sent a message of invalid length {total}"));
    }
    if buffer.len() < total {
        return Ok(None);
    }
    let frame = buffer.split_to(total).freeze();
    let message = aws_smithy_eventstream::frame::read_message_from(frame)
        .map_err(|error| format!("could not read the Bedrock event stream: {error}"))?;
    let header = |name: &str| {
        message
            .headers()
            .iter()
            .find(|h| h.name().as_str() == name)
            .and_then(|h| h.value().as_string().ok())
            .map(|s| s.as_str().to_owned())
    };
    let message_type = header(":message-type").unwrap_or_else(|| "event".to_owned());
    let name = match message_type.as_str() {
        "event" => header(":event-type"),
        "exception" => header(":exception-type"),
        _ => header(":error-message").or_else(|| header(":error-code")),
    }
    .unwrap_or_default();
    Ok(Some(StreamMessage { message_type, name, payload: message.payload().clone() }))
}
