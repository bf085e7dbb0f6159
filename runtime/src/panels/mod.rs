//! Context Pilot's prompt pipeline (seed 003), the `panels` context strategy: context items (panels) sorted
//! most stable first and sent as `dynamic_panel` tool call/result pairs, a footer, the system prompt repeated,
//! then the conversation cleaned for the API; old conversation detached into frozen history panels; the
//! prefix-cache cost of every panel tracked across requests. It produces the request's message list, so
//! providers still only serialize.

mod assemble;
mod cache;
mod config;
mod conversation;
mod detach;
mod engine;
mod extension;
mod live_sources;
mod render;
mod report;
pub mod sources;
mod spine;
mod state;
mod tools;
mod tools_panels;
mod tools_state;

pub use assemble::{
    PanelRequest, assemble_request, assemble_request_owned, clean_conversation, clean_owned_conversation,
};
pub use cache::{CachePrices, CacheTracker, PanelCacheCost};
pub use config::{
    BuiltinPanel, CommandPanelDefinition, ContextDefinition, ContextStrategy, DEFAULT_COMMAND_REFRESH_SECS,
    DEFAULT_COMMAND_TIMEOUT_SECS, DEFAULT_GIT_REFRESH_SECS, DEFAULT_MAX_AUTO_CONTINUATIONS, FIRST_DYNAMIC_PANEL,
    PanelsDefinition,
};
pub use conversation::{LiveConversation, live_conversation, message_timestamp};
pub use detach::{DetachLimits, detach_point};
pub use engine::{PanelsCore, RequestInput};
pub use extension::{PanelsExtension, SPINE_MESSAGE_TYPE, context_summary, library_entries};
pub use render::{LibraryEntry, LibraryKind};
pub use report::{ContextReport, PanelReport};
pub use state::{OpenFile, PanelState, STATE_ENTRY_TYPE};

/// The id of the conversation's own context element; it is sent as real messages, never as a panel.
pub const CONVERSATION_ID: &str = "chat";

/// One panel's content for a request (Context Pilot's `ContextItem`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextItem {
    /// `P1`, `P5`, `P12`, … (`chat` is the conversation).
    pub id: String,
    /// The panel's name: `Todo List`, `File: src/main.rs`.
    pub header: String,
    pub content: String,
    /// When the content last changed (ms since the epoch): the sort key, so stable panels come first.
    pub last_refresh_ms: i64,
}

/// The texts the pipeline writes around the panels (seed 003's prompt constants). An agent may override them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PanelTexts {
    /// Before the first panel.
    pub header: String,
    /// Under each panel's header; `{iso_time}` is the panel's last refresh.
    pub timestamp: String,
    /// Opens the footer; the recent messages' times and the current date and time follow it.
    pub footer: String,
    /// The footer's tool result.
    pub footer_ack: String,
    /// Before the repeated system prompt.
    pub reinjection: String,
    /// The assistant's answer to the repeated system prompt.
    pub reinjection_ack: String,
}

impl Default for PanelTexts {
    fn default() -> Self {
        Self {
            header: "Beginning of dynamic panel display. All content displayed below may be considered up to date."
                .to_owned(),
            timestamp: "Panel automatically generated at {iso_time}".to_owned(),
            footer: "End of dynamic panel displays.".to_owned(),
            footer_ack: "Panel display complete. Proceeding with conversation.".to_owned(),
            reinjection: "System instructions (repeated for emphasis):\n\n".to_owned(),
            reinjection_ack: "Understood. I will follow these instructions.".to_owned(),
        }
    }
}

/// Tokens of a text as the pipeline counts them (`ceil(chars / 4)`, as compaction estimates).
pub fn estimate_text_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_engine;
