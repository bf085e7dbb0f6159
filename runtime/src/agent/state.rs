//! The stateful agent's value types: construction options, the observable state, prompt input and
//! the errors its methods return.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

use super::config::{AfterToolCallFn, BeforeToolCallFn, ConvertToLlmFn, GetApiKeyFn, QueueMode, TransformContextFn};
use crate::ai::{ApiProvider, Model, PayloadHook, ThinkingLevel};
use crate::definition::ToolExecutionMode;
use crate::protocol::{AgentMessage, ImageContent, MessageContent, UserContent, UserMessage, now_ms};
use crate::tools::AgentTool;

/// How an [`super::Agent`] starts. Build with [`AgentOptions::new`] and struct-update syntax.
#[derive(Clone)]
pub struct AgentOptions {
    /// The stream function: a provider, or a registry that dispatches on `model.api`.
    pub provider: Arc<dyn ApiProvider>,
    pub model: Option<Model>,
    pub system_prompt: String,
    pub thinking_level: ThinkingLevel,
    pub tools: Vec<Arc<dyn AgentTool>>,
    pub messages: Vec<AgentMessage>,
    pub api_key: Option<String>,
    pub get_api_key: Option<GetApiKeyFn>,
    /// `None`: keep user, assistant and toolResult messages.
    pub convert_to_llm: Option<ConvertToLlmFn>,
    pub transform_context: Option<TransformContextFn>,
    pub before_tool_call: Option<BeforeToolCallFn>,
    pub after_tool_call: Option<AfterToolCallFn>,
    /// Rewrites each request body before it is sent.
    pub on_payload: Option<PayloadHook>,
    pub steering_mode: QueueMode,
    pub follow_up_mode: QueueMode,
    pub tool_execution: ToolExecutionMode,
    pub session_id: Option<String>,
    pub temperature: Option<f64>,
    pub max_tokens: Option<u64>,
    /// The JSON Schema the final answer must match (sent natively where the API can).
    pub response_schema: Option<std::sync::Arc<serde_json::Value>>,
    pub headers: Vec<(String, String)>,
    /// Give up on a model stream that sends nothing for this long (`None`: the provider's default).
    pub idle_timeout: Option<std::time::Duration>,
    /// The SDK-level timeout and retries of each request (pi's `retry.provider`).
    pub provider_retry: crate::ai::ProviderRetry,
    /// Thinking-token budgets per level (pi's `thinkingBudgets`).
    pub thinking_budgets: crate::ai::ThinkingBudgets,
    /// The pi release whose events, message fields and requests the agent reproduces.
    pub pi_compat: crate::protocol::PiCompat,
    /// The `user-agent` requests carry at level 1.5.
    pub user_agent: Option<String>,
}

impl AgentOptions {
    /// pi's defaults: no model, empty prompt, thinking off, no tools, one-at-a-time queues, parallel tools.
    pub fn new(provider: Arc<dyn ApiProvider>) -> Self {
        Self {
            provider,
            model: None,
            system_prompt: String::new(),
            thinking_level: ThinkingLevel::Off,
            tools: Vec::new(),
            messages: Vec::new(),
            api_key: None,
            get_api_key: None,
            convert_to_llm: None,
            transform_context: None,
            before_tool_call: None,
            after_tool_call: None,
            on_payload: None,
            steering_mode: QueueMode::OneAtATime,
            follow_up_mode: QueueMode::OneAtATime,
            tool_execution: ToolExecutionMode::default(),
            session_id: None,
            temperature: None,
            max_tokens: None,
            response_schema: None,
            headers: Vec::new(),
            idle_timeout: None,
            provider_retry: crate::ai::ProviderRetry::default(),
            thinking_budgets: crate::ai::ThinkingBudgets::default(),
            pi_compat: crate::protocol::PiCompat::default(),
            user_agent: None,
        }
    }
}

/// A snapshot of what the agent holds and is doing.
#[derive(Clone, Default)]
pub struct AgentState {
    pub system_prompt: String,
    pub model: Option<Model>,
    pub thinking_level: ThinkingLevel,
    pub tools: Vec<Arc<dyn AgentTool>>,
    pub messages: Vec<AgentMessage>,
    pub is_streaming: bool,
    /// The message being streamed (between its start and end events).
    pub streaming_message: Option<AgentMessage>,
    /// Ids of tool calls that started and have not ended.
    pub pending_tool_calls: BTreeSet<String>,
    /// The error text of the last failed run.
    pub error: Option<String>,
}

impl fmt::Debug for AgentState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentState")
            .field("model", &self.model.as_ref().map(|m| format!("{}/{}", m.provider, m.id)))
            .field("thinking_level", &self.thinking_level)
            .field("tools", &self.tools.iter().map(|t| t.name().to_owned()).collect::<Vec<_>>())
            .field("messages", &self.messages.len())
            .field("is_streaming", &self.is_streaming)
            .field("pending_tool_calls", &self.pending_tool_calls)
            .field("error", &self.error)
            .finish_non_exhaustive()
    }
}

/// What a prompt can be: text (with optional images) or ready-made messages.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum PromptInput {
    Text { text: String, images: Vec<ImageContent> },
    Messages(Vec<AgentMessage>),
}

impl PromptInput {
    /// The messages this input starts a run with (text becomes one user message stamped now).
    pub fn into_messages(self) -> Vec<AgentMessage> {
        match self {
            Self::Messages(messages) => messages,
            Self::Text { text, images } => {
                let mut content = vec![UserContent::text(text)];
                content.extend(images.into_iter().map(UserContent::Image));
                vec![AgentMessage::User(UserMessage { content: MessageContent::Blocks(content), timestamp: now_ms() })]
            }
        }
    }
}

impl From<&str> for PromptInput {
    fn from(text: &str) -> Self {
        Self::Text { text: text.to_owned(), images: Vec::new() }
    }
}

impl From<String> for PromptInput {
    fn from(text: String) -> Self {
        Self::Text { text, images: Vec::new() }
    }
}

impl From<AgentMessage> for PromptInput {
    fn from(message: AgentMessage) -> Self {
        Self::Messages(vec![message])
    }
}

impl From<Vec<AgentMessage>> for PromptInput {
    fn from(messages: Vec<AgentMessage>) -> Self {
        Self::Messages(messages)
    }
}

impl From<UserMessage> for PromptInput {
    fn from(message: UserMessage) -> Self {
        Self::Messages(vec![AgentMessage::User(message)])
    }
}

/// Why a call on the agent was refused. Failures during a run are not errors: they end the run with
/// an assistant message whose stopReason is `error` or `aborted`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    #[error(
        "Agent is already processing a prompt. Use steer() or follow_up() to queue messages, or wait for completion."
    )]
    AlreadyRunning,
    #[error("No model configured")]
    NoModel,
    #[error("No messages to continue from")]
    NoMessages,
    #[error("Cannot continue from message role: assistant")]
    ContinueFromAssistant,
    #[error("The agent is busy with a prompt: say whether the new one steers it or follows up (streaming behavior)")]
    StreamingBehaviorRequired,
    #[error("No API key for provider {0}: set its environment variable, or pass --api-key")]
    NoApiKey(String),
    /// A driver asked for the tools of an answer the context does not have.
    #[error("There is no answer whose tool calls could run")]
    NoAnswer,
}
