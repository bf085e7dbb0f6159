//! The conversation under the panels strategy: messages are numbered `#1..#N` in the context since the last
//! compaction; the model's summaries (`tl_dr`) and deletions apply to them; old complete turns are detached
//! into frozen history chunks; what stays live is converted for the API. State that no longer matches the
//! context (after a compaction or a move in the session tree) is dropped.

use super::state::{DetachedChunk, MessageEditAction, PanelState};
use super::{DetachLimits, detach_point};
use crate::protocol::{
    AgentMessage, AssistantContent, AssistantMessage, Message, MessageContent, StopReason, ToolResultMessage,
    UserContent, UserMessage,
};
use crate::session::convert_to_llm;

/// When a message was made (every kind carries its time).
pub fn message_timestamp(message: &AgentMessage) -> i64 {
    match message {
        AgentMessage::User(m) => m.timestamp,
        AgentMessage::Assistant(m) => m.timestamp,
        AgentMessage::ToolResult(m) => m.timestamp,
        AgentMessage::BashExecution(m) => m.timestamp,
        AgentMessage::Custom(m) => m.timestamp,
        AgentMessage::BranchSummary(m) => m.timestamp,
        AgentMessage::CompactionSummary(m) => m.timestamp,
        AgentMessage::System(m) => m.timestamp,
    }
}

/// Drops detached chunks and message edits that no longer match `messages` (the message at their number has
/// another time, or is gone). A chunk that fails takes the later ones with it. Returns whether anything was
/// dropped.
pub fn validate(state: &mut PanelState, messages: &[AgentMessage]) -> bool {
    let time_at = |number: usize| number.checked_sub(1).and_then(|index| messages.get(index)).map(message_timestamp);
    let chunks_before = state.detached.len();
    let mut expected_start = 1;
    let keep = state
        .detached
        .iter()
        .take_while(|chunk| {
            let holds = chunk.start == expected_start
                && chunk.end >= chunk.start
                && time_at(chunk.start) == Some(chunk.first_timestamp)
                && time_at(chunk.end) == Some(chunk.last_timestamp);
            expected_start = chunk.end + 1;
            holds
        })
        .count();
    state.detached.truncate(keep);
    let edits_before = state.message_edits.len();
    state.message_edits.retain(|edit| time_at(edit.number) == Some(edit.timestamp));
    state.detached.len() != chunks_before || state.message_edits.len() != edits_before
}

/// Detaches old complete turns from the live conversation while the four limits allow it; each new chunk
/// gets a panel id and `now_ms` as its time. Returns how many chunks were made.
pub fn detach(state: &mut PanelState, messages: &[AgentMessage], limits: &DetachLimits, now_ms: i64) -> usize {
    let mut made = 0;
    loop {
        let start = state.live_start();
        let Some(live) = messages.get(start - 1..) else { return made };
        let Some(cut) = detach_point(live, limits) else { return made };
        let end = start + cut - 1;
        let panel_id = state.allocate_panel();
        state.detached.push(DetachedChunk {
            panel_id,
            start,
            end,
            first_timestamp: message_timestamp(&messages[start - 1]),
            last_timestamp: message_timestamp(&messages[end - 1]),
            detached_at: now_ms,
        });
        made += 1;
    }
}

/// The live conversation for the API, with the number of the message each entry came from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LiveConversation {
    pub messages: Vec<Message>,
    pub numbers: Vec<usize>,
}

/// The messages after the detached chunks, with deletions left out and summaries in place of their messages.
pub fn live_conversation(state: &PanelState, messages: &[AgentMessage]) -> LiveConversation {
    let start = state.live_start();
    let mut live = LiveConversation::default();
    for (index, message) in messages.iter().enumerate().skip(start - 1) {
        let number = index + 1;
        let converted = match state.edit_of(number) {
            Some(MessageEditAction::Delete) => continue,
            Some(MessageEditAction::Summarize { tl_dr }) => summarized(message, number, tl_dr),
            None => convert_to_llm(std::slice::from_ref(message)).into_iter().next(),
        };
        if let Some(converted) = converted {
            live.messages.push(converted);
            live.numbers.push(number);
        }
    }
    live
}

/// A message replaced by its summary: an assistant message keeps only the text (its tool calls go, and their
/// results are then skipped as orphans); a tool result keeps its call; anything else becomes user text.
fn summarized(message: &AgentMessage, number: usize, tl_dr: &str) -> Option<Message> {
    let text = format!("[#{number} summarized] {tl_dr}");
    Some(match message {
        AgentMessage::Assistant(answer) => Message::Assistant(AssistantMessage {
            content: vec![AssistantContent::text(text)],
            stop_reason: StopReason::Stop,
            ..answer.clone()
        }),
        AgentMessage::ToolResult(result) => {
            Message::ToolResult(ToolResultMessage { content: vec![UserContent::text(text)], ..result.clone() })
        }
        other => Message::User(UserMessage {
            content: MessageContent::Blocks(vec![UserContent::text(text)]),
            timestamp: message_timestamp(other),
        }),
    })
}

/// The frozen text of a detached chunk: each message with its number and role, summaries and deletions
/// applied.
pub fn render_history(state: &PanelState, chunk: &DetachedChunk, messages: &[AgentMessage]) -> String {
    let mut text = format!("Messages #{} to #{} (detached from the conversation)\n", chunk.start, chunk.end);
    for number in chunk.start..=chunk.end {
        let Some(message) = messages.get(number - 1) else { break };
        match state.edit_of(number) {
            Some(MessageEditAction::Delete) => continue,
            Some(MessageEditAction::Summarize { tl_dr }) => {
                text.push_str(&format!("\n#{number} {} (summarized): {tl_dr}\n", message_label(message)));
                continue;
            }
            None => {}
        }
        for converted in convert_to_llm(std::slice::from_ref(message)) {
            text.push_str(&format!("\n#{number} {}", message_label(message)));
            push_message_text(&mut text, &converted);
        }
    }
    text
}

fn message_label(message: &AgentMessage) -> &'static str {
    match message {
        AgentMessage::User(_) => "user",
        AgentMessage::Assistant(_) => "assistant",
        AgentMessage::ToolResult(_) => "tool result",
        AgentMessage::BashExecution(_) => "user command",
        AgentMessage::Custom(_) => "notice",
        AgentMessage::BranchSummary(_) => "branch summary",
        AgentMessage::CompactionSummary(_) => "compaction summary",
        AgentMessage::System(_) => "system prompt",
    }
}

fn push_message_text(text: &mut String, message: &Message) {
    match message {
        Message::User(user) => {
            text.push_str(": ");
            text.push_str(&user.content.text());
            text.push('\n');
        }
        Message::Assistant(answer) => {
            text.push_str(": ");
            for block in &answer.content {
                match block {
                    AssistantContent::Text(block) => text.push_str(block.text.as_str()),
                    AssistantContent::ToolCall(call) => {
                        text.push_str(&format!("\n  -> {}({})", call.name, call.arguments));
                    }
                    _ => {}
                }
            }
            text.push('\n');
        }
        Message::ToolResult(result) => {
            let joined: Vec<&str> = result.content.iter().filter_map(UserContent::as_text).collect();
            let flag = if result.is_error { " error" } else { "" };
            text.push_str(&format!(" ({}{flag}): {}\n", result.tool_name, joined.join("\n")));
        }
    }
}
