//! The provider contract: an LLM context in, a stream of assistant-message events out.
//! Providers only serialize requests and parse responses; prompts are assembled upstream.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::model::{Model, ThinkingLevel};
use super::stream::AssistantMessageStream;
use crate::protocol::{AssistantMessage, AssistantMessageEvent, ErrorReason, Message, StopReason, now_ms};

/// A tool as the LLM sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments.
    pub parameters: Value,
}

/// What is sent to the model on one call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LlmContext {
    pub system_prompt: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
}

/// Sees the request body just before it is sent and returns the body to send (pi's `onPayload`, behind the
/// `before_provider_request` event).
pub type PayloadHook = Arc<dyn Fn(Value) -> Pin<Box<dyn Future<Output = Value> + Send>> + Send + Sync>;

/// The vendor SDKs' own retry and timeout knobs (pi's `retry.provider` settings). `None` leaves the SDK's
/// default: the idle timeout, the API's retry count, a 60 s longest server-requested wait.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProviderRetry {
    /// How long to wait for a response to each attempt (`timeoutMs`).
    pub timeout: Option<Duration>,
    /// Retries after 408, 409, 429, 5xx or a failed connection (`maxRetries`).
    pub max_retries: Option<u32>,
    /// The longest wait a server may ask for (`retry-after`) before a retry; longer requests are ignored and
    /// the SDK's own backoff is used (`maxRetryDelayMs`).
    pub max_retry_delay: Option<Duration>,
}

/// Thinking-token budgets per level for the APIs that take a budget (Anthropic models without adaptive
/// thinking, Gemini 2.5), over the built-in ones (pi's `thinkingBudgets` setting).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThinkingBudgets {
    pub minimal: Option<u64>,
    pub low: Option<u64>,
    pub medium: Option<u64>,
    pub high: Option<u64>,
}

impl ThinkingBudgets {
    /// The budget set for `level` (`xhigh` and `max` count as `high`, `off` as nothing).
    pub fn for_level(&self, level: ThinkingLevel) -> Option<u64> {
        match level {
            ThinkingLevel::Off => None,
            ThinkingLevel::Minimal => self.minimal,
            ThinkingLevel::Low => self.low,
            ThinkingLevel::Medium => self.medium,
            _ => self.high,
        }
    }

    /// Reads a `thinkingBudgets` settings object (fields that are not whole numbers are ignored).
    pub fn from_settings(value: Option<&Value>) -> Self {
        let field = |key: &str| value.and_then(|value| value.get(key)).and_then(Value::as_u64);
        Self { minimal: field("minimal"), low: field("low"), medium: field("medium"), high: field("high") }
    }
}

/// Per-call options.
#[derive(Clone, Default)]
pub struct StreamOptions {
    pub api_key: Option<String>,
    /// `None` means thinking off.
    pub reasoning: Option<ThinkingLevel>,
    pub max_tokens: Option<u64>,
    pub temperature: Option<f64>,
    /// A JSON Schema the final answer must match: APIs with native structured output are asked for it.
    pub response_schema: Option<Arc<serde_json::Value>>,
    pub session_id: Option<String>,
    /// Extra headers, applied over the model's.
    pub headers: Vec<(String, String)>,
    /// Cancelling drops the connection; the stream then ends with `error` / stopReason `aborted`.
    pub cancel: CancellationToken,
    /// Give up when no bytes arrive for this long (default: providers pick a generous value).
    pub idle_timeout: Option<Duration>,
    /// Rewrites the request body before it is sent.
    pub on_payload: Option<PayloadHook>,
    pub retry: ProviderRetry,
    pub thinking_budgets: ThinkingBudgets,
    /// The pi release whose requests and message fields to reproduce.
    pub pi_compat: crate::protocol::PiCompat,
    /// The `user-agent` header pi 1.5 sends (`<agent>/<version> (<os>; <arch>)`); `None` sends none of ours.
    pub user_agent: Option<String>,
}

impl std::fmt::Debug for StreamOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key is never printed.
        f.debug_struct("StreamOptions")
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("reasoning", &self.reasoning)
            .field("max_tokens", &self.max_tokens)
            .field("temperature", &self.temperature)
            .field("response_schema", &self.response_schema.is_some())
            .field("session_id", &self.session_id)
            .field("headers", &self.headers.iter().map(|(name, _)| name).collect::<Vec<_>>())
            .field("idle_timeout", &self.idle_timeout)
            .field("on_payload", &self.on_payload.is_some())
            .field("retry", &self.retry)
            .field("thinking_budgets", &self.thinking_budgets)
            .field("pi_compat", &self.pi_compat)
            .field("user_agent", &self.user_agent)
            .finish()
    }
}

/// One wire protocol (`openai-completions`, ...).
pub trait ApiProvider: Send + Sync {
    /// The api name this provider serves.
    fn api(&self) -> &str;

    /// Starts a request and returns its event stream at once. Never fails synchronously: every
    /// failure, including a bad request, arrives as an `error` event.
    fn stream(&self, model: &Model, context: &LlmContext, options: StreamOptions) -> AssistantMessageStream;
}

/// Providers keyed by api name; dispatches on `model.api`.
#[derive(Clone, Default)]
pub struct ProviderRegistry {
    providers: HashMap<String, Arc<dyn ApiProvider>>,
}

impl ProviderRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the provider for its api.
    pub fn register(&mut self, provider: Arc<dyn ApiProvider>) {
        self.providers.insert(provider.api().to_owned(), provider);
    }

    pub fn get(&self, api: &str) -> Option<&Arc<dyn ApiProvider>> {
        self.providers.get(api)
    }

    /// Every registered provider, in no particular order.
    pub fn providers(&self) -> impl Iterator<Item = &Arc<dyn ApiProvider>> {
        self.providers.values()
    }

    /// Streams through the provider registered for `model.api`, or yields an error event.
    pub fn stream(&self, model: &Model, context: &LlmContext, options: StreamOptions) -> AssistantMessageStream {
        match self.providers.get(&model.api) {
            Some(provider) => provider.stream(model, context, options),
            None => error_stream(model, format!("No API provider registered for api: {}", model.api)),
        }
    }
}

impl ApiProvider for ProviderRegistry {
    fn api(&self) -> &str {
        "*"
    }

    fn stream(&self, model: &Model, context: &LlmContext, options: StreamOptions) -> AssistantMessageStream {
        ProviderRegistry::stream(self, model, context, options)
    }
}

/// An empty assistant message for `model`, stamped now, as providers start one.
pub fn empty_assistant_message(model: &Model) -> AssistantMessage {
    AssistantMessage {
        content: Vec::new(),
        api: model.api.as_str().into(),
        provider: model.provider.as_str().into(),
        model: model.id.as_str().into(),
        timestamp: now_ms(),
        ..AssistantMessage::default()
    }
}

/// A stream holding a single `error` event with `message` as the error text.
pub fn error_stream(model: &Model, message: String) -> AssistantMessageStream {
    let mut error = empty_assistant_message(model);
    error.stop_reason = StopReason::Error;
    error.error_message = Some(message);
    AssistantMessageStream::from_events([AssistantMessageEvent::Error { reason: ErrorReason::Error, error }])
}
