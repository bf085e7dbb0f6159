//! What handlers answer. Each event has its own type, so a handler can only return an action its event
//! supports (a `tool_result` handler cannot block, a `context` handler cannot touch the system prompt).

use std::path::PathBuf;

use serde::Deserialize;
use serde_json::Value;

use crate::protocol::{ImageContent, MessageContent, UserContent};

/// The answer to `input`.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub enum InputAction {
    /// Go on with the text as it is.
    #[default]
    Continue,
    /// Go on with this text (and these images, when given); later handlers see it.
    Transform { text: String, images: Option<Vec<ImageContent>> },
    /// The extension took care of the input: nothing is sent.
    Handled,
}

/// A message an extension adds to the conversation (a `custom` message; the LLM sees it as user content).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionMessage {
    pub custom_type: String,
    pub content: MessageContent,
    /// Whether a UI shows it; the LLM always sees it.
    #[serde(default)]
    pub display: bool,
    #[serde(default)]
    pub details: Option<Value>,
}

impl ExtensionMessage {
    /// A text message of `custom_type`, not displayed.
    pub fn text(custom_type: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            custom_type: custom_type.into(),
            content: MessageContent::Text(text.into()),
            display: false,
            details: None,
        }
    }
}

/// The answer to `before_agent_start`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BeforeAgentStartResult {
    /// Added after the prompt (every handler's message is kept).
    #[serde(default)]
    pub message: Option<ExtensionMessage>,
    /// The system prompt for this prompt only; the next handler sees it.
    #[serde(default)]
    pub system_prompt: Option<String>,
}

/// The answer to `tool_call`.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub enum ToolCallDecision {
    #[default]
    Allow,
    /// The call does not run; the model gets `reason` (or a generic text) as the error result.
    Block { reason: Option<String> },
}

impl ToolCallDecision {
    pub fn block(reason: impl Into<String>) -> Self {
        Self::Block { reason: Some(reason.into()) }
    }
}

/// The answer to `tool_result`: each field given replaces the result's (later handlers see it).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultPatch {
    #[serde(default)]
    pub content: Option<Vec<UserContent>>,
    #[serde(default)]
    pub details: Option<Value>,
    #[serde(default)]
    pub is_error: Option<bool>,
}

impl ToolResultPatch {
    pub fn is_empty(&self) -> bool {
        self.content.is_none() && self.details.is_none() && self.is_error.is_none()
    }
}

/// The answer to the `session_before_*` events that can only be cancelled (switch, tree).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct CancelResult {
    #[serde(default)]
    pub cancel: bool,
}

/// The answer to `session_before_fork`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ForkDecision {
    #[serde(default)]
    pub cancel: bool,
    #[serde(default)]
    pub skip_conversation_restore: bool,
}

/// A compaction an extension wrote itself.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionCompaction {
    pub summary: String,
    pub first_kept_entry_id: String,
    pub tokens_before: u64,
    #[serde(default)]
    pub details: Option<Value>,
}

/// The answer to `session_before_compact`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct CompactDecision {
    #[serde(default)]
    pub cancel: bool,
    /// Used instead of asking the model for a summary.
    #[serde(default)]
    pub compaction: Option<ExtensionCompaction>,
}

/// The answer to `resources_discover`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoveredResources {
    #[serde(default)]
    pub skill_paths: Vec<PathBuf>,
    #[serde(default)]
    pub prompt_paths: Vec<PathBuf>,
}
