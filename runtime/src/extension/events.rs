//! The events extensions receive about prompts, requests, tools and the loop. Field names serialize as pi's
//! (camelCase) so command hooks see the same JSON an extension of pi would.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ai::Model;
use crate::protocol::{
    AgentMessage, AgentToolResult, AssistantMessageEvent, ImageContent, ToolResultMessage, UserContent,
};

/// Where a prompt came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum InputSource {
    #[default]
    Interactive,
    Rpc,
    Extension,
}

/// `input`: the raw text of a prompt, before `/skill:` and template expansion.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InputEvent {
    pub text: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImageContent>,
    pub source: InputSource,
}

/// `before_agent_start`: once per prompt, after expansion; `system_prompt` is the previous handler's.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BeforeAgentStartEvent {
    pub prompt: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImageContent>,
    pub system_prompt: String,
}

/// `context`: the messages of the next LLM call (already the previous handler's output).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContextEvent {
    pub messages: Vec<AgentMessage>,
}

/// `before_provider_request`: the request body about to be sent, as JSON.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BeforeProviderRequestEvent {
    pub payload: Value,
}

/// `tool_call`: a call whose arguments passed validation, before it runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallEvent {
    pub tool_name: String,
    pub tool_call_id: String,
    pub input: Value,
}

/// `tool_result`: a finished call; `content`, `details` and `is_error` are the previous handler's output.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultEvent {
    pub tool_name: String,
    pub tool_call_id: String,
    pub input: Value,
    pub content: Vec<UserContent>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    pub is_error: bool,
}

/// `agent_start`: a run of the loop begins.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AgentStartEvent {}

/// `agent_end`: the run is over; the messages it added.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentEndEvent {
    pub messages: Vec<AgentMessage>,
}

/// `turn_start`: one LLM call and its tool calls begin (`turn_index` counts from 0 in each run).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnStartEvent {
    pub turn_index: u64,
    pub timestamp: i64,
}

/// `turn_end`: the turn's answer and its tool results.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnEndEvent {
    pub turn_index: u64,
    pub message: AgentMessage,
    pub tool_results: Vec<ToolResultMessage>,
}

/// `message_start`, `message_end`: a message enters the transcript.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MessageEvent {
    pub message: AgentMessage,
}

/// `message_update`: a streamed answer grew.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageUpdateEvent {
    pub message: AgentMessage,
    pub assistant_message_event: AssistantMessageEvent,
}

/// `tool_execution_start`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecutionStartEvent {
    pub tool_call_id: String,
    pub tool_name: String,
    pub args: Value,
}

/// `tool_execution_update`: a running tool reported partial output.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecutionUpdateEvent {
    pub tool_call_id: String,
    pub tool_name: String,
    pub args: Value,
    pub partial_result: AgentToolResult,
}

/// `tool_execution_end`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecutionEndEvent {
    pub tool_call_id: String,
    pub tool_name: String,
    pub result: AgentToolResult,
    pub is_error: bool,
}

/// Why the model changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ModelSelectSource {
    Set,
    Cycle,
    Restore,
}

/// A model as events describe it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelRef {
    pub provider: String,
    pub id: String,
    pub api: String,
}

impl From<&Model> for ModelRef {
    fn from(model: &Model) -> Self {
        Self { provider: model.provider.clone(), id: model.id.clone(), api: model.api.clone() }
    }
}

/// `model_select`: the session's model changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelSelectEvent {
    pub model: ModelRef,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_model: Option<ModelRef>,
    pub source: ModelSelectSource,
}
