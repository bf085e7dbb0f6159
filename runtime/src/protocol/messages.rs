//! Messages: the three LLM roles (user, assistant, toolResult) and the agent-only roles
//! (bashExecution, custom, branchSummary, compactionSummary), tagged by `role`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::content::{AssistantContent, UserContent};
use super::tag_first::deserialize_tag_first;
use super::usage::{StopReason, Usage};

/// User or custom message content: pi accepts a plain string or a block array and keeps the form.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum MessageContent {
    Text(String),
    Blocks(Vec<UserContent>),
}

impl<'de> Deserialize<'de> for MessageContent {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ContentVisitor;
        impl<'de> serde::de::Visitor<'de> for ContentVisitor {
            type Value = MessageContent;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string or an array of content blocks")
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<MessageContent, E> {
                Ok(MessageContent::Text(text.to_owned()))
            }

            fn visit_string<E: serde::de::Error>(self, text: String) -> Result<MessageContent, E> {
                Ok(MessageContent::Text(text))
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, blocks: A) -> Result<MessageContent, A::Error> {
                let deserializer = serde::de::value::SeqAccessDeserializer::new(blocks);
                Vec::<UserContent>::deserialize(deserializer).map(MessageContent::Blocks)
            }
        }
        deserializer.deserialize_any(ContentVisitor)
    }
}

impl MessageContent {
    /// The content as blocks (a plain string becomes one text block).
    pub fn to_blocks(&self) -> Vec<UserContent> {
        match self {
            Self::Text(text) => vec![UserContent::text(text.clone())],
            Self::Blocks(blocks) => blocks.clone(),
        }
    }

    /// All text joined with `\n`, images skipped.
    pub fn text(&self) -> String {
        match self {
            Self::Text(text) => text.clone(),
            Self::Blocks(blocks) => blocks.iter().filter_map(UserContent::as_text).collect::<Vec<_>>().join("\n"),
        }
    }
}

impl Default for MessageContent {
    fn default() -> Self {
        Self::Blocks(Vec::new())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserMessage {
    pub content: MessageContent,
    pub timestamp: i64,
}

impl UserMessage {
    /// A user message with one text block, stamped now.
    pub fn text(text: impl Into<super::SharedText>) -> Self {
        Self { content: MessageContent::Blocks(vec![UserContent::text(text)]), timestamp: super::now_ms() }
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct AssistantMessage {
    pub content: Vec<AssistantContent>,
    #[serde(deserialize_with = "super::shared_text::deserialize_interned")]
    pub api: super::SharedText,
    #[serde(deserialize_with = "super::shared_text::deserialize_interned")]
    pub provider: super::SharedText,
    #[serde(deserialize_with = "super::shared_text::deserialize_interned")]
    pub model: super::SharedText,
    pub usage: Usage,
    #[serde(rename = "stopReason")]
    pub stop_reason: StopReason,
    pub timestamp: i64,
    #[serde(rename = "responseId", default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<super::SharedText>,
    #[serde(rename = "errorMessage", default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// The provider's own stop reason (`tool_calls`, `end_turn`, ...), from pi 1.5 on.
    #[serde(rename = "rawStopReason", default, skip_serializing_if = "Option::is_none")]
    pub raw_stop_reason: Option<String>,
    /// Milliseconds from the request to the final event, from pi 1.5 on.
    #[serde(rename = "durationMs", default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// The thinking level the message was asked with (`off`, `high`, ...), from pi 1.5 on.
    #[serde(rename = "thinkingLevel", default, skip_serializing_if = "Option::is_none")]
    pub thinking_level: Option<String>,
    /// What kind of failure `error_message` reports, when the provider knew (never serialized:
    /// after a reload the text is classified instead).
    #[serde(skip)]
    pub error_kind: Option<crate::ai::ProviderErrorKind>,
}

impl AssistantMessage {
    /// Moves streamed text and thinking into allocations of their exact size (see [`SharedText::settle`]),
    /// once the message is complete.
    ///
    /// [`SharedText::settle`]: super::SharedText::settle
    pub fn settle_text(&mut self) {
        for block in &mut self.content {
            match block {
                AssistantContent::Text(text) => {
                    text.text.settle();
                    text.text_signature.iter_mut().for_each(super::SharedText::settle);
                }
                AssistantContent::Thinking(thinking) => {
                    thinking.thinking.settle();
                    thinking.thinking_signature.iter_mut().for_each(super::SharedText::settle);
                }
                _ => {}
            }
        }
    }

    /// Text blocks joined with no separator, as print mode shows them.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|c| match c {
                AssistantContent::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The tool calls, in content order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &super::ToolCall> {
        self.content.iter().filter_map(|c| match c {
            AssistantContent::ToolCall(call) => Some(call),
            _ => None,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResultMessage {
    #[serde(rename = "toolCallId")]
    pub tool_call_id: String,
    #[serde(rename = "toolName")]
    pub tool_name: String,
    pub content: Vec<UserContent>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    #[serde(rename = "isError")]
    pub is_error: bool,
    /// Milliseconds the tool ran, from pi 1.5 on.
    #[serde(rename = "durationMs", default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    pub timestamp: i64,
}

/// The output of a `!command` run by the user, kept in the session and (unless excluded) sent as user text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BashExecutionMessage {
    pub command: String,
    pub output: String,
    #[serde(rename = "exitCode", default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    pub cancelled: bool,
    pub truncated: bool,
    #[serde(rename = "fullOutputPath", default, skip_serializing_if = "Option::is_none")]
    pub full_output_path: Option<String>,
    pub timestamp: i64,
    #[serde(rename = "excludeFromContext", default, skip_serializing_if = "Option::is_none")]
    pub exclude_from_context: Option<bool>,
}

/// An extension's message; sent to the LLM as user content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CustomMessage {
    #[serde(rename = "customType")]
    pub custom_type: String,
    pub content: MessageContent,
    pub display: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    pub timestamp: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BranchSummaryMessage {
    pub summary: String,
    #[serde(rename = "fromId")]
    pub from_id: String,
    pub timestamp: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompactionSummaryMessage {
    pub summary: String,
    #[serde(rename = "tokensBefore")]
    pub tokens_before: u64,
    pub timestamp: i64,
}

/// pi 1.5's record of the system prompt in the transcript: its text by named sections (`preamble`, `tools`,
/// `rules`, ...; a later message may set a section to null to drop it) and the tools offered, as the LLM sees
/// them. pi-gen writes one before the first prompt at level 1.5; the request's system prompt is still built
/// from the agent's settings, so these never reach the model as messages.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SystemMessage {
    /// pi 1.5 leaves this empty when the text is in `sections`.
    #[serde(default)]
    pub content: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sections: Option<serde_json::Map<String, Value>>,
    #[serde(default)]
    pub timestamp: i64,
    /// Each tool as `{name, description, parameters, constrainedSampling}`.
    #[serde(rename = "toolsAdded", default, skip_serializing_if = "Option::is_none")]
    pub tools_added: Option<Vec<Value>>,
    #[serde(rename = "toolsRemoved", default, skip_serializing_if = "Option::is_none")]
    pub tools_removed: Option<Vec<Value>>,
}

/// A message the LLM understands.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "role")]
#[non_exhaustive]
pub enum Message {
    #[serde(rename = "user")]
    User(UserMessage),
    #[serde(rename = "assistant")]
    Assistant(AssistantMessage),
    #[serde(rename = "toolResult")]
    ToolResult(ToolResultMessage),
}

/// Any message the agent keeps: the LLM roles plus the coding agent's own.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "role")]
#[non_exhaustive]
pub enum AgentMessage {
    #[serde(rename = "user")]
    User(UserMessage),
    #[serde(rename = "assistant")]
    Assistant(AssistantMessage),
    #[serde(rename = "toolResult")]
    ToolResult(ToolResultMessage),
    #[serde(rename = "bashExecution")]
    BashExecution(BashExecutionMessage),
    #[serde(rename = "custom")]
    Custom(CustomMessage),
    #[serde(rename = "branchSummary")]
    BranchSummary(BranchSummaryMessage),
    #[serde(rename = "compactionSummary")]
    CompactionSummary(CompactionSummaryMessage),
    /// pi 1.5's system prompt record (see [`SystemMessage`]).
    #[serde(rename = "system")]
    System(SystemMessage),
}

impl AgentMessage {
    /// The `role` tag.
    pub fn role(&self) -> &'static str {
        match self {
            Self::User(_) => "user",
            Self::Assistant(_) => "assistant",
            Self::ToolResult(_) => "toolResult",
            Self::BashExecution(_) => "bashExecution",
            Self::Custom(_) => "custom",
            Self::BranchSummary(_) => "branchSummary",
            Self::CompactionSummary(_) => "compactionSummary",
            Self::System(_) => "system",
        }
    }

    pub fn as_assistant(&self) -> Option<&AssistantMessage> {
        match self {
            Self::Assistant(m) => Some(m),
            _ => None,
        }
    }

    /// The LLM message if this is one of the three LLM roles (the default convertToLlm).
    pub fn as_llm_message(&self) -> Option<Message> {
        match self {
            Self::User(m) => Some(Message::User(m.clone())),
            Self::Assistant(m) => Some(Message::Assistant(m.clone())),
            Self::ToolResult(m) => Some(Message::ToolResult(m.clone())),
            _ => None,
        }
    }
}

impl From<Message> for AgentMessage {
    fn from(message: Message) -> Self {
        match message {
            Message::User(m) => Self::User(m),
            Message::Assistant(m) => Self::Assistant(m),
            Message::ToolResult(m) => Self::ToolResult(m),
        }
    }
}

deserialize_tag_first!(Message, "role", "a message", {
    "user" => User(UserMessage),
    "assistant" => Assistant(AssistantMessage),
    "toolResult" => ToolResult(ToolResultMessage),
});

deserialize_tag_first!(AgentMessage, "role", "a message", {
    "user" => User(UserMessage),
    "assistant" => Assistant(AssistantMessage),
    "toolResult" => ToolResult(ToolResultMessage),
    "bashExecution" => BashExecution(BashExecutionMessage),
    "custom" => Custom(CustomMessage),
    "branchSummary" => BranchSummary(BranchSummaryMessage),
    "compactionSummary" => CompactionSummary(CompactionSummaryMessage),
    "system" => System(SystemMessage),
});
