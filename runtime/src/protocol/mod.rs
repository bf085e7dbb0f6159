//! Pure data shared by every layer: messages, content blocks, usage, and the event enums.
//!
//! JSON field names and tags are pi's (camelCase, `role`, `type`), so a message line from a pi
//! session file or a pi json-mode line parses and re-serializes to the same JSON.

mod compat;
mod content;
mod events;
pub(crate) mod js_number;
mod messages;
mod shared_text;
mod tag_first;
mod tagged;
#[cfg(test)]
mod tests_wire;
mod usage;
mod wire_event;

pub use compat::{InvalidPiCompat, PiCompat};
pub use content::{AssistantContent, ImageContent, TextContent, ThinkingContent, ToolCall, UserContent};
pub use events::{
    AgentEvent, AgentSessionEvent, AgentToolResult, AssistantMessageEvent, CompactionReason, DoneReason, ErrorReason,
    SessionOnlyEvent,
};
pub use js_number::now_ms;
pub use messages::{
    AgentMessage, AssistantMessage, BashExecutionMessage, BranchSummaryMessage, CompactionSummaryMessage,
    CustomMessage, Message, MessageContent, SystemMessage, ToolResultMessage, UserMessage,
};
pub use shared_text::SharedText;
pub use usage::{Cost, StopReason, Usage};
pub use wire_event::WireEvent;
