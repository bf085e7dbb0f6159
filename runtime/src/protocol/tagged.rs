//! Fields that pi writes with their type tag although the Rust type has none: the `toolCall` of a
//! `toolcall_end` event (`"type":"toolCall"`) and the `toolResults` of `turn_end` (`"role":"toolResult"`).

/// A [`ToolCall`](super::ToolCall) written as a `toolCall` content block.
pub mod tool_call {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::protocol::{AssistantContent, ToolCall};

    pub fn serialize<S: Serializer>(call: &ToolCall, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(tag = "type")]
        enum Tagged<'a> {
            #[serde(rename = "toolCall")]
            ToolCall(&'a ToolCall),
        }
        Tagged::ToolCall(call).serialize(serializer)
    }

    /// Accepts the block with or without its tag.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<ToolCall, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Tagged(AssistantContent),
            Bare(ToolCall),
        }
        match Either::deserialize(deserializer)? {
            Either::Tagged(AssistantContent::ToolCall(call)) | Either::Bare(call) => Ok(call),
            Either::Tagged(_) => Err(serde::de::Error::custom("expected a toolCall block")),
        }
    }
}

/// [`ToolResultMessage`](super::ToolResultMessage)s written as messages with `"role":"toolResult"`.
pub mod tool_results {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::protocol::{AgentMessage, ToolResultMessage};

    #[derive(Serialize)]
    #[serde(tag = "role")]
    enum Tagged<'a> {
        #[serde(rename = "toolResult")]
        ToolResult(&'a ToolResultMessage),
    }

    pub fn serialize<S: Serializer>(results: &[ToolResultMessage], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(results.iter().map(Tagged::ToolResult))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<ToolResultMessage>, D::Error> {
        Vec::<AgentMessage>::deserialize(deserializer)?
            .into_iter()
            .map(|message| match message {
                AgentMessage::ToolResult(result) => Ok(result),
                other => Err(serde::de::Error::custom(format!("expected a toolResult message, got {}", other.role()))),
            })
            .collect()
    }
}

/// An [`AssistantMessage`](super::AssistantMessage) written with `"role":"assistant"`, as pi writes the
/// `partial`, `message` and `error` of assistant-message events.
pub mod assistant {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::protocol::{AgentMessage, AssistantMessage};

    #[derive(Serialize)]
    #[serde(tag = "role")]
    enum Tagged<'a> {
        #[serde(rename = "assistant")]
        Assistant(&'a AssistantMessage),
    }

    pub fn serialize<S: Serializer>(message: &AssistantMessage, serializer: S) -> Result<S::Ok, S::Error> {
        Tagged::Assistant(message).serialize(serializer)
    }

    /// Accepts the message with or without its `role`.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<AssistantMessage, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Tagged(AgentMessage),
            Bare(AssistantMessage),
        }
        match Either::deserialize(deserializer)? {
            Either::Tagged(AgentMessage::Assistant(message)) | Either::Bare(message) => Ok(message),
            Either::Tagged(other) => {
                Err(serde::de::Error::custom(format!("expected an assistant message, got {}", other.role())))
            }
        }
    }
}
