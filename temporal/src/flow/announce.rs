//! What an activity emits (as events) and records (as entries) before its own work: the run's start, a
//! turn's start, the messages that enter the context, and the end of the previous turn. The flow decides
//! these without I/O and hands them to the next activity, so events keep pi's order without the workflow
//! touching the event stream.

use serde::{Deserialize, Serialize};

use super::UserInput;

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
