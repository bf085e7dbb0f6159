//! The `mistral-conversations` provider, as pi 0.73 drives Mistral through its SDK: POST
//! `{baseUrl}/v1/chat/completions` with `Accept: text/event-stream`, a bearer key and `x-affinity` (the session
//! id, for prefix caching), read the `data:` chunks until `[DONE]`. The SDK does not retry (pi turns its
//! retries off; the session's auto-retry still applies), and its errors read `Mistral API error (status): body`.

mod decode;
mod request;
mod wire;

use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue, USER_AGENT};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use self::decode::MistralState;
pub use self::request::build_payload;
pub use self::wire::to_wire;
use super::Model;
use super::pi15::{apply_user_agent, initial_message};
use super::provider::{ApiProvider, LlmContext, PayloadHook, StreamOptions};
use super::stream::AssistantMessageStream;
use super::transport::{
    ABORTED, ABORTED_BEFORE_RESPONSE, CONNECTION_ERROR, DecodeError, Flow, HttpRequest, StreamDecoder, apply_headers,
    secret_header, spawn_sse_call,
};
use crate::protocol::{AssistantMessage, AssistantMessageEvent, PiCompat, StopReason};

/// The api name this provider serves.
pub const API: &str = "mistral-conversations";

/// The stream ended with finish reason `error`.
const UNKNOWN_ERROR: &str = "An unknown error occurred";
/// Where the SDK sends requests when the model has no base URL.
pub const DEFAULT_BASE_URL: &str = "https://api.mistral.ai";
/// The streaming chat endpoint, relative to the base URL.
const CHAT_PATH: &str = "v1/chat/completions";
/// The header Mistral reads to route a conversation to the same cache.
const AFFINITY_HEADER: &str = "x-affinity";
/// The most characters of an error body the message quotes.
const MAX_ERROR_BODY_CHARS: usize = 4000;

/// Streams chat completions from Mistral's API (or a server that speaks it).
#[derive(Debug, Clone, Default)]
pub struct MistralConversationsProvider {
    max_retries: u32,
}

impl MistralConversationsProvider {
    /// A provider that, like the SDK under pi, does not retry failed requests.
    pub fn new() -> Self {
        Self { max_retries: 0 }
    }

    /// Retries a retryable failure (408, 409, 429, 5xx, no connection) this often before failing.
    pub fn with_max_retries(mut self, max_retries: u32) -> Self {
        self.max_retries = max_retries;
        self
    }
}

impl ApiProvider for MistralConversationsProvider {
    fn api(&self) -> &str {
        API
    }

    fn stream(&self, model: &Model, context: &LlmContext, options: StreamOptions) -> AssistantMessageStream {
        let decoder = MistralDecoder::new(model, options.pi_compat, options.cancel.clone());
        let (request, on_payload) = match build_request(model, context, &options, self.max_retries) {
            Ok((request, on_payload)) => (Ok(request), on_payload),
            Err(error) => (Err(error), None),
        };
        reword_failures(spawn_sse_call(model, request, decoder, options.cancel, on_payload))
    }
}

/// This API's stream decoder, for decoding recorded responses (tests, benchmarks).
pub fn decoder(model: &Model) -> impl StreamDecoder + use<> {
    MistralDecoder::new(model, PiCompat::V0_73, CancellationToken::new())
}

/// What a payload hook returns.
type HookFuture = std::pin::Pin<Box<dyn std::future::Future<Output = Value> + Send>>;

/// The request, and the hook to run on pi's payload (which sees the camelCase payload and hands back one the
/// SDK then writes out).
fn build_request(
    model: &Model,
    context: &LlmContext,
    options: &StreamOptions,
    max_retries: u32,
) -> Result<(HttpRequest, Option<PayloadHook>), String> {
    let key = options
        .api_key
        .as_deref()
        .filter(|key| !key.is_empty())
        .ok_or_else(|| format!("No API key for provider: {}", model.provider))?;
    let payload = build_payload(model, context, options);
    let (body, on_payload) = match options.on_payload.clone() {
        Some(hook) => {
            let wrapped: PayloadHook = std::sync::Arc::new(move |payload: Value| {
                let hook = hook.clone();
                let rewritten: HookFuture = Box::pin(async move { to_wire(&hook(payload).await) });
                rewritten
            });
            (payload, Some(wrapped))
        }
        None => (to_wire(&payload), None),
    };
    // pi hands neither `retry.provider` setting to the Mistral SDK.
    let sdk_options = StreamOptions { retry: Default::default(), ..options.clone() };
    let url = request_url(&model.base_url)?;
    let request = HttpRequest::json(url, request_headers(model, options, key)?, &body, max_retries, &sdk_options)?;
    Ok((request, on_payload))
}

/// `v1/chat/completions` under the base URL, as the SDK resolves it (the base's query and fragment dropped);
/// no base URL means Mistral's own server.
fn request_url(base_url: &str) -> Result<String, String> {
    let base = if base_url.is_empty() { DEFAULT_BASE_URL } else { base_url };
    let mut url = reqwest::Url::parse(base).map_err(|_| "Invalid URL".to_owned())?;
    let directory = format!("{}/", url.path().trim_end_matches('/'));
    url.set_path(&directory);
    let mut url = url.join(CHAT_PATH).map_err(|_| "Invalid URL".to_owned())?;
    url.set_fragment(None);
    Ok(url.to_string())
}

/// Content type, `Accept: text/event-stream`, the bearer key, the model's and the call's headers, `x-affinity`
/// (the session id, unless those headers set it), then the `user-agent` (which they cannot replace, as in the SDK).
fn request_headers(model: &Model, options: &StreamOptions, key: &str) -> Result<HeaderMap, String> {
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
    headers.insert(AUTHORIZATION, secret_header(&format!("Bearer {key}"))?);
    apply_headers(&mut headers, model.headers.iter().chain(&options.headers))?;
    if let Some(session_id) = options.session_id.as_deref().filter(|id| !id.is_empty())
        && !headers.contains_key(AFFINITY_HEADER)
    {
        apply_headers(&mut headers, &[(AFFINITY_HEADER.to_owned(), session_id.to_owned())])?;
    }
    headers.insert(USER_AGENT, HeaderValue::from_static(concat!("pi-runtime/", env!("CARGO_PKG_VERSION"))));
    apply_user_agent(&mut headers, options)?;
    Ok(headers)
}

/// How the SDK under pi words an HTTP error: the body (trimmed, at most 4000 characters), or the SDK's own
/// description when there is none.
fn http_error_message(status: u16, body: &str) -> String {
    let body = body.trim();
    if body.is_empty() {
        return format!(
            "Mistral API error ({status}): API error occurred: Status {status} Content-Type \"\". Body: \"\""
        );
    }
    // Counted in UTF-16 units, as JavaScript counts a string's length.
    let length: usize = body.encode_utf16().count();
    if length <= MAX_ERROR_BODY_CHARS {
        return format!("Mistral API error ({status}): {body}");
    }
    let mut kept = String::new();
    let mut units = 0;
    for c in body.chars() {
        if units + c.len_utf16() > MAX_ERROR_BODY_CHARS {
            break;
        }
        units += c.len_utf16();
        kept.push(c);
    }
    format!("Mistral API error ({status}): {kept}... [truncated {} chars]", length - MAX_ERROR_BODY_CHARS)
}

/// The SDK's words (its error and the cause it names, as Node words them) for the failures the transport names
/// after the OpenAI SDK's; the detail after them is kept.
fn reword(message: &str) -> String {
    let replacements = [
        (ABORTED_BEFORE_RESPONSE, "Request aborted by client: AbortError: This operation was aborted"),
        (ABORTED, "This operation was aborted"),
        (CONNECTION_ERROR, "Unable to make request: TypeError: fetch failed"),
    ];
    for (ours, sdk) in replacements {
        if message == ours {
            return sdk.to_owned();
        }
        if let Some(rest) = message.strip_prefix(ours).filter(|rest| rest.starts_with(" (")) {
            return format!("{sdk}{rest}");
        }
    }
    message.to_owned()
}

/// Passes `stream` on with its error text reworded by [`reword`].
fn reword_failures(mut stream: AssistantMessageStream) -> AssistantMessageStream {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else { return stream };
    let (tx, out) = AssistantMessageStream::channel();
    runtime.spawn(async move {
        while let Some(mut event) = stream.next().await {
            if let AssistantMessageEvent::Error { error, .. } = &mut event {
                error.error_message = error.error_message.as_deref().map(reword);
            }
            if !tx.push(event) {
                break;
            }
        }
    });
    out
}

/// Completion chunks in, assistant-message events out.
struct MistralDecoder {
    state: MistralState,
    model: Model,
    cancel: CancellationToken,
}

impl MistralDecoder {
    fn new(model: &Model, compat: PiCompat, cancel: CancellationToken) -> Self {
        Self { state: MistralState::new(initial_message(model, compat)), model: model.clone(), cancel }
    }
}

impl StreamDecoder for MistralDecoder {
    fn message(&self) -> &AssistantMessage {
        self.state.message()
    }

    fn take_message(&mut self) -> AssistantMessage {
        self.state.take_message()
    }

    /// Every event with data is a chunk, whatever its name; `[DONE]` ends the stream.
    fn on_event(
        &mut self,
        _name: &str,
        data: &str,
        events: &mut Vec<AssistantMessageEvent>,
    ) -> Result<Flow, DecodeError> {
        if data == "[DONE]" {
            return Ok(Flow::Stop);
        }
        self.state.apply_data(data, &self.model, events)?;
        Ok(Flow::Continue)
    }

    fn finish(&mut self, events: &mut Vec<AssistantMessageEvent>) -> Result<(), DecodeError> {
        // An abort fails the SDK's read at once: pi closes no block then.
        if self.cancel.is_cancelled() {
            return Ok(());
        }
        self.state.finish(events);
        self.state.settle_pending();
        match self.state.message().stop_reason {
            StopReason::Error => Err(UNKNOWN_ERROR.into()),
            _ => Ok(()),
        }
    }

    fn http_error(&self, status: u16, body: &str) -> String {
        http_error_message(status, body)
    }
}

#[cfg(test)]
mod tests;
