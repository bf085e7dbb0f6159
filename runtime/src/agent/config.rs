//! What one run of the agent loop is given: the context, the loop configuration with its stages
//! (transformContext, convertToLlm, API key lookup, queue polls, tool-call hooks) and the event sink.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::ai::{ApiProvider, Model, PayloadHook, ThinkingLevel};
use crate::definition::ToolExecutionMode;
use crate::protocol::{AgentEvent, AgentMessage, AssistantMessage, Message, ToolCall, UserContent};
use crate::tools::AgentTool;

/// A boxed, sendable future (the shape of every async stage).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A stage or hook failed; the message is reported like pi reports a thrown error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct HookError {
    pub message: String,
}

impl HookError {
    pub fn new(message: impl Into<String>) -> Self {
        Self { message: message.into() }
    }
}

/// AgentMessage[] -> AgentMessage[] before each LLM call (pruning, injection). Async and cancellable.
pub type TransformContextFn = Arc<
    dyn Fn(Vec<AgentMessage>, CancellationToken) -> BoxFuture<'static, Result<Vec<AgentMessage>, HookError>>
        + Send
        + Sync,
>;

/// AgentMessage[] -> Message[] at the LLM boundary.
pub type ConvertToLlmFn = Arc<dyn Fn(&[AgentMessage]) -> Vec<Message> + Send + Sync>;

/// The key for a provider, asked before every LLM call (keys may expire). `Ok(None)` falls back to the
/// static key; an error (a login that could not be renewed) ends the call as an error message.
pub type GetApiKeyFn = Arc<dyn Fn(&str) -> BoxFuture<'static, Result<Option<String>, String>> + Send + Sync>;

/// Drains a message queue (steering or follow-up).
pub type QueuePollFn = Arc<dyn Fn() -> Vec<AgentMessage> + Send + Sync>;

/// Runs after a call's arguments are validated and before the tool executes; may block the call.
pub type BeforeToolCallFn = Arc<
    dyn Fn(
            BeforeToolCallContext,
            CancellationToken,
        ) -> BoxFuture<'static, Result<Option<BeforeToolCallResult>, HookError>>
        + Send
        + Sync,
>;

/// Runs after a tool finished; may override content, details and the error flag, field by field.
pub type AfterToolCallFn = Arc<
    dyn Fn(
            AfterToolCallContext,
            CancellationToken,
        ) -> BoxFuture<'static, Result<Option<AfterToolCallResult>, HookError>>
        + Send
        + Sync,
>;

/// What `before_tool_call` sees.
#[derive(Debug, Clone)]
pub struct BeforeToolCallContext {
    pub assistant_message: AssistantMessage,
    pub tool_call: ToolCall,
    /// The validated (and coerced) arguments.
    pub args: Value,
}

/// A `before_tool_call` verdict.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BeforeToolCallResult {
    pub block: bool,
    /// The error text the model sees; "Tool execution was blocked" when absent.
    pub reason: Option<String>,
}

impl BeforeToolCallResult {
    /// Blocks the call with `reason`.
    pub fn block(reason: impl Into<String>) -> Self {
        Self { block: true, reason: Some(reason.into()) }
    }
}

/// What `after_tool_call` sees.
#[derive(Debug, Clone)]
pub struct AfterToolCallContext {
    pub assistant_message: AssistantMessage,
    pub tool_call: ToolCall,
    pub args: Value,
    pub result: crate::protocol::AgentToolResult,
    pub is_error: bool,
}

/// Overrides from `after_tool_call`; `None` keeps the tool's own value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AfterToolCallResult {
    pub content: Option<Vec<UserContent>>,
    pub details: Option<Value>,
    pub is_error: Option<bool>,
}

/// How a queue is drained: the first message only (pi's default) or everything queued.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum QueueMode {
    #[default]
    OneAtATime,
    All,
}

impl QueueMode {
    /// pi's name: `one-at-a-time` or `all`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OneAtATime => "one-at-a-time",
            Self::All => "all",
        }
    }
}

impl std::str::FromStr for QueueMode {
    type Err = HookError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "one-at-a-time" => Ok(Self::OneAtATime),
            "all" => Ok(Self::All),
            other => Err(HookError::new(format!("invalid queue mode \"{other}\" (expected one-at-a-time or all)"))),
        }
    }
}

/// The context one loop run works on.
#[derive(Clone, Default)]
pub struct AgentContext {
    pub system_prompt: String,
    pub messages: Vec<AgentMessage>,
    pub tools: Vec<Arc<dyn AgentTool>>,
}

/// Everything the loop needs besides the context (pi's `AgentLoopConfig`).
#[derive(Clone)]
pub struct AgentLoopConfig {
    pub model: Model,
    /// The stream function: a provider, or a registry dispatching on `model.api`.
    pub provider: Arc<dyn ApiProvider>,
    /// `None` means thinking off.
    pub reasoning: Option<ThinkingLevel>,
    pub api_key: Option<String>,
    /// Asked first on every call; `api_key` is the fallback.
    pub get_api_key: Option<GetApiKeyFn>,
    pub session_id: Option<String>,
    pub temperature: Option<f64>,
    pub max_tokens: Option<u64>,
    /// The JSON Schema the final answer must match (sent natively where the API can).
    pub response_schema: Option<Arc<serde_json::Value>>,
    pub headers: Vec<(String, String)>,
    /// Give up on a model stream that sends nothing for this long (`None`: the provider's default).
    pub idle_timeout: Option<std::time::Duration>,
    /// The SDK-level timeout and retries of each request (pi's `retry.provider`).
    pub provider_retry: crate::ai::ProviderRetry,
    /// Thinking-token budgets per level (pi's `thinkingBudgets`).
    pub thinking_budgets: crate::ai::ThinkingBudgets,
    pub convert_to_llm: ConvertToLlmFn,
    pub transform_context: Option<TransformContextFn>,
    pub get_steering_messages: Option<QueuePollFn>,
    pub get_follow_up_messages: Option<QueuePollFn>,
    pub before_tool_call: Option<BeforeToolCallFn>,
    pub after_tool_call: Option<AfterToolCallFn>,
    /// Rewrites each request body before it is sent (`before_provider_request`).
    pub on_payload: Option<PayloadHook>,
    pub tool_execution: ToolExecutionMode,
    /// The pi release whose events, message fields and requests the loop reproduces.
    pub pi_compat: crate::protocol::PiCompat,
    /// The `user-agent` sent at level 1.5 (`<agent>/<version> (<os>; <arch>)`).
    pub user_agent: Option<String>,
}

impl AgentLoopConfig {
    /// A config with pi's defaults: the default convertToLlm, no hooks, no queues, parallel tools.
    pub fn new(model: Model, provider: Arc<dyn ApiProvider>) -> Self {
        Self {
            model,
            provider,
            reasoning: None,
            api_key: None,
            get_api_key: None,
            session_id: None,
            temperature: None,
            max_tokens: None,
            response_schema: None,
            headers: Vec::new(),
            idle_timeout: None,
            provider_retry: crate::ai::ProviderRetry::default(),
            thinking_budgets: crate::ai::ThinkingBudgets::default(),
            convert_to_llm: default_convert_to_llm(),
            transform_context: None,
            get_steering_messages: None,
            get_follow_up_messages: None,
            before_tool_call: None,
            after_tool_call: None,
            on_payload: None,
            tool_execution: ToolExecutionMode::default(),
            pi_compat: crate::protocol::PiCompat::default(),
            user_agent: None,
        }
    }

    pub(crate) fn poll_steering(&self) -> Vec<AgentMessage> {
        self.get_steering_messages.as_ref().map(|poll| poll()).unwrap_or_default()
    }

    pub(crate) fn poll_follow_up(&self) -> Vec<AgentMessage> {
        self.get_follow_up_messages.as_ref().map(|poll| poll()).unwrap_or_default()
    }
}

/// pi-agent-core's default convertToLlm: keep user, assistant and toolResult messages, drop the rest.
pub fn default_convert_to_llm() -> ConvertToLlmFn {
    Arc::new(|messages: &[AgentMessage]| messages.iter().filter_map(AgentMessage::as_llm_message).collect())
}

/// Receives the loop's events in order; the loop waits for each `emit` to finish.
pub trait AgentEventSink: Send + Sync {
    fn emit(&self, event: AgentEvent) -> BoxFuture<'_, ()>;

    /// Emits `message_end` and returns the message the loop goes on with: a listener may have replaced the
    /// finished message (an extension's `message_end` handler), and the replacement is what later turns see.
    fn emit_message_end(&self, message: AgentMessage) -> BoxFuture<'_, AgentMessage> {
        Box::pin(async move {
            self.emit(AgentEvent::MessageEnd { message: message.clone() }).await;
            message
        })
    }
}

/// Any synchronous closure is a sink.
impl<F: Fn(AgentEvent) + Send + Sync> AgentEventSink for F {
    fn emit(&self, event: AgentEvent) -> BoxFuture<'_, ()> {
        self(event);
        Box::pin(std::future::ready(()))
    }
}
