//! An agent event as a json-mode or RPC client sees it at a compatibility level. At 0.73 that is the event
//! itself; pi 1.5 slims `message_update` to the new piece and the usage so far (no cumulative `message`, no
//! `partial`), and names the tool in `toolcall_start`.

use serde::ser::{Serialize, SerializeMap, Serializer};

use super::compat::PiCompat;
use super::content::AssistantContent;
use super::events::{AgentEvent, AssistantMessageEvent};
use super::messages::AssistantMessage;

/// Serializes `event` in the shape of `level`.
#[derive(Debug, Clone, Copy)]
pub struct WireEvent<'a> {
    pub event: &'a AgentEvent,
    pub level: PiCompat,
}

impl<'a> WireEvent<'a> {
    pub fn new(event: &'a AgentEvent, level: PiCompat) -> Self {
        Self { event, level }
    }
}

impl Serialize for WireEvent<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match (self.level, self.event) {
            (PiCompat::V1_5, AgentEvent::MessageUpdate { assistant_message_event, .. }) => {
                let partial = assistant_message_event.message();
                let mut map = serializer.serialize_map(Some(3))?;
                map.serialize_entry("type", "message_update")?;
                map.serialize_entry("usage", &partial.usage)?;
                map.serialize_entry("assistantMessageEvent", &SlimUpdate(assistant_message_event))?;
                map.end()
            }
            _ => self.event.serialize(serializer),
        }
    }
}

/// pi 1.5's `assistantMessageEvent`: the piece without the message built so far.
struct SlimUpdate<'a>(&'a AssistantMessageEvent);

impl Serialize for SlimUpdate<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use AssistantMessageEvent as E;
        let mut map = serializer.serialize_map(None)?;
        match self.0 {
            E::TextStart { content_index, .. } => piece(&mut map, "text_start", *content_index)?,
            E::TextDelta { content_index, delta, .. } => {
                piece(&mut map, "text_delta", *content_index)?;
                map.serialize_entry("delta", delta)?;
            }
            E::TextEnd { content_index, content, .. } => {
                piece(&mut map, "text_end", *content_index)?;
                map.serialize_entry("content", content)?;
            }
            E::ThinkingStart { content_index, .. } => piece(&mut map, "thinking_start", *content_index)?,
            E::ThinkingDelta { content_index, delta, .. } => {
                piece(&mut map, "thinking_delta", *content_index)?;
                map.serialize_entry("delta", delta)?;
            }
            E::ThinkingEnd { content_index, content, .. } => {
                piece(&mut map, "thinking_end", *content_index)?;
                map.serialize_entry("content", content)?;
            }
            E::ToolcallStart { content_index, partial } => {
                piece(&mut map, "toolcall_start", *content_index)?;
                if let Some((id, name)) = tool_call_at(partial, *content_index) {
                    map.serialize_entry("id", id)?;
                    map.serialize_entry("toolName", name)?;
                }
            }
            E::ToolcallDelta { content_index, delta, .. } => {
                piece(&mut map, "toolcall_delta", *content_index)?;
                map.serialize_entry("delta", delta)?;
            }
            E::ToolcallEnd { content_index, tool_call, .. } => {
                piece(&mut map, "toolcall_end", *content_index)?;
                map.serialize_entry("toolCall", &TaggedToolCall(tool_call))?;
            }
            // `start`, `done` and `error` never travel in a `message_update`; shown whole if they ever do.
            E::Start { .. } => map.serialize_entry("type", "start")?,
            E::Done { reason, .. } => {
                map.serialize_entry("type", "done")?;
                map.serialize_entry("reason", reason)?;
            }
            E::Error { reason, .. } => {
                map.serialize_entry("type", "error")?;
                map.serialize_entry("reason", reason)?;
            }
        }
        map.end()
    }
}

/// A tool call written with its `"type":"toolCall"` tag, as in `toolcall_end`.
struct TaggedToolCall<'a>(&'a super::content::ToolCall);

impl Serialize for TaggedToolCall<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        super::tagged::tool_call::serialize(self.0, serializer)
    }
}

fn piece<M: SerializeMap>(map: &mut M, kind: &str, content_index: usize) -> Result<(), M::Error> {
    map.serialize_entry("type", kind)?;
    map.serialize_entry("contentIndex", &content_index)
}

/// The id and name of the tool call being streamed at `index`.
fn tool_call_at(partial: &AssistantMessage, index: usize) -> Option<(&str, &str)> {
    match partial.content.get(index)? {
        AssistantContent::ToolCall(call) => Some((call.id.as_str(), call.name.as_str())),
        _ => None,
    }
}
