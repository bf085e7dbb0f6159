//! Event enums: the provider's AssistantMessageEvent, the loop's AgentEvent and the session's
//! AgentSessionEvent (agent events plus auto-compaction and auto-retry), tagged by `type`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::SharedText;
use super::content::{ToolCall, UserContent};
use super::messages::{AgentMessage, AssistantMessage, ToolResultMessage};

/// How a successful stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum DoneReason {
    #[serde(rename = "stop")]
    Stop,
    #[serde(rename = "length")]
    Length,
    #[serde(rename = "toolUse")]
    ToolUse,
}

/// How a failed stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum ErrorReason {
    #[serde(rename = "aborted")]
    Aborted,
    #[serde(rename = "error")]
    Error,
}

/// One step of a streamed assistant message. Every variant but the terminal ones carries the
/// message built so far (`partial`); `done` and `error` carry the final message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum AssistantMessageEvent {
    #[serde(rename = "start")]
    Start {
        #[serde(with = "super::tagged::assistant")]
        partial: AssistantMessage,
    },
    #[serde(rename = "text_start")]
    TextStart {
        #[serde(rename = "contentIndex")]
        content_index: usize,
        #[serde(with = "super::tagged::assistant")]
        partial: AssistantMessage,
    },
    #[serde(rename = "text_delta")]
    TextDelta {
        #[serde(rename = "contentIndex")]
        content_index: usize,
        delta: SharedText,
        #[serde(with = "super::tagged::assistant")]
        partial: AssistantMessage,
    },
    #[serde(rename = "text_end")]
    TextEnd {
        #[serde(rename = "contentIndex")]
        content_index: usize,
        content: SharedText,
        #[serde(with = "super::tagged::assistant")]
        partial: AssistantMessage,
    },
    #[serde(rename = "thinking_start")]
    ThinkingStart {
        #[serde(rename = "contentIndex")]
        content_index: usize,
        #[serde(with = "super::tagged::assistant")]
        partial: AssistantMessage,
    },
    #[serde(rename = "thinking_delta")]
    ThinkingDelta {
        #[serde(rename = "contentIndex")]
        content_index: usize,
        delta: SharedText,
        #[serde(with = "super::tagged::assistant")]
        partial: AssistantMessage,
    },
    #[serde(rename = "thinking_end")]
    ThinkingEnd {
        #[serde(rename = "contentIndex")]
        content_index: usize,
        content: SharedText,
        #[serde(with = "super::tagged::assistant")]
        partial: AssistantMessage,
    },
    #[serde(rename = "toolcall_start")]
    ToolcallStart {
        #[serde(rename = "contentIndex")]
        content_index: usize,
        #[serde(with = "super::tagged::assistant")]
        partial: AssistantMessage,
    },
    #[serde(rename = "toolcall_delta")]
    ToolcallDelta {
        #[serde(rename = "contentIndex")]
        content_index: usize,
        delta: SharedText,
        #[serde(with = "super::tagged::assistant")]
        partial: AssistantMessage,
    },
    #[serde(rename = "toolcall_end")]
    ToolcallEnd {
        #[serde(rename = "contentIndex")]
        content_index: usize,
        #[serde(rename = "toolCall", with = "super::tagged::tool_call")]
        tool_call: ToolCall,
        #[serde(with = "super::tagged::assistant")]
        partial: AssistantMessage,
    },
    #[serde(rename = "done")]
    Done {
        reason: DoneReason,
        #[serde(with = "super::tagged::assistant")]
        message: AssistantMessage,
    },
    #[serde(rename = "error")]
    Error {
        reason: ErrorReason,
        #[serde(with = "super::tagged::assistant")]
        error: AssistantMessage,
    },
}

impl AssistantMessageEvent {
    /// True for `done` and `error`, the events that end a stream.
    pub fn is_terminal(&self) -> bool {
        matches!(self, Self::Done { .. } | Self::Error { .. })
    }

    /// The message as it stands after this event (partial or final).
    pub fn message(&self) -> &AssistantMessage {
        match self {
            Self::Start { partial }
            | Self::TextStart { partial, .. }
            | Self::TextDelta { partial, .. }
            | Self::TextEnd { partial, .. }
            | Self::ThinkingStart { partial, .. }
            | Self::ThinkingDelta { partial, .. }
            | Self::ThinkingEnd { partial, .. }
            | Self::ToolcallStart { partial, .. }
            | Self::ToolcallDelta { partial, .. }
            | Self::ToolcallEnd { partial, .. } => partial,
            Self::Done { message, .. } => message,
            Self::Error { error, .. } => error,
        }
    }
}

/// What a tool returns: content for the LLM and details for the session and UI.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AgentToolResult {
    pub content: Vec<UserContent>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// Machine-readable output beside the text (pi 1.5: bash's `output`/`exit_code`/..., read's text).
    #[serde(rename = "structuredContent", default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Set when the tool reports a failure as a result rather than an error (pi 1.5's bash on a non-zero exit).
    #[serde(rename = "isError", default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
}

impl AgentToolResult {
    /// A result with one text block and no details.
    pub fn text(text: impl Into<crate::protocol::SharedText>) -> Self {
        Self { content: vec![UserContent::text(text)], ..Self::default() }
    }
}

/// Events of the agent loop, in pi's names and shapes.
// Events are short-lived and passed by reference to listeners; boxing the message-carrying variants
// would cost an allocation per streamed delta for no gain.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum AgentEvent {
    #[serde(rename = "agent_start")]
    AgentStart,
    #[serde(rename = "agent_end")]
    AgentEnd {
        messages: Vec<AgentMessage>,
        /// Whether the session retries the failed run (pi 1.5; set by the session layer).
        #[serde(rename = "willRetry", default, skip_serializing_if = "Option::is_none")]
        will_retry: Option<bool>,
    },
    #[serde(rename = "turn_start")]
    TurnStart,
    #[serde(rename = "turn_end")]
    TurnEnd {
        message: AgentMessage,
        #[serde(rename = "toolResults", with = "super::tagged::tool_results")]
        tool_results: Vec<ToolResultMessage>,
    },
    #[serde(rename = "message_start")]
    MessageStart { message: AgentMessage },
    #[serde(rename = "message_update")]
    MessageUpdate {
        #[serde(rename = "assistantMessageEvent")]
        assistant_message_event: AssistantMessageEvent,
        message: AgentMessage,
    },
    #[serde(rename = "message_end")]
    MessageEnd { message: AgentMessage },
    #[serde(rename = "tool_execution_start")]
    ToolExecutionStart {
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
        #[serde(rename = "toolName")]
        tool_name: String,
        args: Value,
    },
    #[serde(rename = "tool_execution_update")]
    ToolExecutionUpdate {
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
        #[serde(rename = "toolName")]
        tool_name: String,
        args: Value,
        #[serde(rename = "partialResult")]
        partial_result: AgentToolResult,
    },
    #[serde(rename = "tool_execution_end")]
    ToolExecutionEnd {
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
        #[serde(rename = "toolName")]
        tool_name: String,
        result: AgentToolResult,
        #[serde(rename = "isError")]
        is_error: bool,
        /// How long the call took (pi 1.5).
        #[serde(rename = "durationMs", default, skip_serializing_if = "Option::is_none")]
        duration_ms: Option<u64>,
    },
}

impl AgentEvent {
    /// The `type` tag.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::AgentStart => "agent_start",
            Self::AgentEnd { .. } => "agent_end",
            Self::TurnStart => "turn_start",
            Self::TurnEnd { .. } => "turn_end",
            Self::MessageStart { .. } => "message_start",
            Self::MessageUpdate { .. } => "message_update",
            Self::MessageEnd { .. } => "message_end",
            Self::ToolExecutionStart { .. } => "tool_execution_start",
            Self::ToolExecutionUpdate { .. } => "tool_execution_update",
            Self::ToolExecutionEnd { .. } => "tool_execution_end",
        }
    }
}

/// Why a compaction started: the context neared the window, overflowed it, or a client asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum CompactionReason {
    #[serde(rename = "threshold")]
    Threshold,
    #[serde(rename = "overflow")]
    Overflow,
    #[serde(rename = "manual")]
    Manual,
}

/// Agent events plus the session layer's own (json mode prints all of them, one per line).
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum AgentSessionEvent {
    Agent(AgentEvent),
    Session(SessionOnlyEvent),
}

/// The events only the session layer emits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum SessionOnlyEvent {
    #[serde(rename = "compaction_start")]
    CompactionStart { reason: CompactionReason },
    #[serde(rename = "compaction_end")]
    CompactionEnd {
        reason: CompactionReason,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        aborted: bool,
        #[serde(rename = "willRetry")]
        will_retry: bool,
        #[serde(rename = "errorMessage", default, skip_serializing_if = "Option::is_none")]
        error_message: Option<String>,
    },
    #[serde(rename = "auto_retry_start")]
    AutoRetryStart {
        attempt: u32,
        #[serde(rename = "maxAttempts")]
        max_attempts: u32,
        #[serde(rename = "delayMs")]
        delay_ms: u64,
        #[serde(rename = "errorMessage")]
        error_message: String,
    },
    #[serde(rename = "auto_retry_end")]
    AutoRetryEnd {
        success: bool,
        attempt: u32,
        #[serde(rename = "finalError", default, skip_serializing_if = "Option::is_none")]
        final_error: Option<String>,
    },
    /// The texts waiting to be delivered, after one was queued or delivered.
    #[serde(rename = "queue_update")]
    QueueUpdate {
        steering: Vec<String>,
        #[serde(rename = "followUp")]
        follow_up: Vec<String>,
    },
    #[serde(rename = "thinking_level_changed")]
    ThinkingLevelChanged { level: String },
    /// What the latest request held under the panels strategy (a pi-gen addition; pi has no panels).
    #[serde(rename = "context_panels")]
    ContextPanels(Box<crate::panels::ContextReport>),
    #[serde(rename = "session_info_changed")]
    SessionInfoChanged { name: String },
    /// A session entry other than a message was written (pi 1.5; e.g. the `context_edit` before a retry).
    #[serde(rename = "entry_appended")]
    EntryAppended { entry: Value },
    /// The prompt's work is over: retries and compaction included (pi 1.5; after the last `agent_end`).
    #[serde(rename = "agent_settled")]
    AgentSettled { aborted: bool },
    /// The run goes on with a fallback model after `from` failed (a pi-gen addition; pi has no fallbacks).
    /// `skipped` says why the fallback `to` could not be used (the next one is tried).
    #[serde(rename = "model_fallback")]
    ModelFallback {
        from: String,
        to: String,
        #[serde(rename = "errorMessage")]
        error_message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        skipped: Option<String>,
    },
}
