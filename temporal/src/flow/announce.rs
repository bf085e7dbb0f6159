//! What an activity emits (as events) and records (as entries) before its own work: the run's start, a
//! turn's start, the messages that enter the context, and the end of the previous turn. The flow decides
//! these without I/O and hands them to the next activity, so events keep pi's order without the workflow
//! touching the event stream. The messages are user messages from the API, or (for an output correction)
//! the session's own custom message.

use serde::{Deserialize, Serialize};

/// Announcements for the next activity, in the order it emits them: `turn_end` of the previous turn,
/// `agent_start`, `turn_start`, then each message (`message_start` / `message_end`, recorded as an entry).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Announcements {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_end: Option<TurnEnd>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub agent_start: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub turn_start: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<UserInput>,
}

/// A turn's end: its answer and tool results, by entry id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnEnd {
    pub answer_entry_id: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_result_entry_ids: Vec<String>,
}

/// A message that enters the context: from the API, a user message entry with its text, images (as pi's
/// image content blocks) and the entry id it gets; from the session itself (an output correction), a
/// custom message of `custom_type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserInput {
    pub entry_id: String,
    pub text: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<serde_json::Value>,
    /// A custom message (shown) of this type rather than a user message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom_type: Option<String>,
}

impl UserInput {
    /// A user message from the API.
    pub fn user(entry_id: String, text: String, images: Vec<serde_json::Value>) -> Self {
        Self { entry_id, text, images, custom_type: None }
    }
}
