//! Content blocks: text, thinking, image and tool calls, tagged by `type` as pi writes them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::SharedText;
use super::tag_first::deserialize_tag_first;

/// Plain text. `textSignature` carries provider metadata (openai-responses message ids).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextContent {
    pub text: SharedText,
    #[serde(rename = "textSignature", default, skip_serializing_if = "Option::is_none")]
    pub text_signature: Option<SharedText>,
}

impl TextContent {
    pub fn new(text: impl Into<SharedText>) -> Self {
        Self { text: text.into(), text_signature: None }
    }
}

/// Model reasoning. `thinkingSignature` is replayed to the same model; `redacted` marks opaque reasoning.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThinkingContent {
    pub thinking: SharedText,
    #[serde(rename = "thinkingSignature", default, skip_serializing_if = "Option::is_none")]
    pub thinking_signature: Option<SharedText>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redacted: Option<bool>,
}

/// An image as base64 data with its MIME type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImageContent {
    pub data: String,
    #[serde(rename = "mimeType")]
    pub mime_type: String,
}

/// A tool call requested by the model. `arguments` is a JSON object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: Value,
    #[serde(rename = "thoughtSignature", default, skip_serializing_if = "Option::is_none")]
    pub thought_signature: Option<String>,
}

/// A block in a user message or a tool result: text or image.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum UserContent {
    #[serde(rename = "text")]
    Text(TextContent),
    #[serde(rename = "image")]
    Image(ImageContent),
}

impl UserContent {
    pub fn text(text: impl Into<SharedText>) -> Self {
        Self::Text(TextContent::new(text))
    }

    /// The text of a text block, `None` for other blocks.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

/// A block in an assistant message: text, thinking or a tool call.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum AssistantContent {
    #[serde(rename = "text")]
    Text(TextContent),
    #[serde(rename = "thinking")]
    Thinking(ThinkingContent),
    #[serde(rename = "toolCall")]
    ToolCall(ToolCall),
}

impl AssistantContent {
    pub fn text(text: impl Into<SharedText>) -> Self {
        Self::Text(TextContent::new(text))
    }
}

deserialize_tag_first!(UserContent, "type", "a content block", {
    "text" => Text(TextContent),
    "image" => Image(ImageContent),
});

deserialize_tag_first!(AssistantContent, "type", "a content block", {
    "text" => Text(TextContent),
    "thinking" => Thinking(ThinkingContent),
    "toolCall" => ToolCall(ToolCall),
});
