//! What a session gives the agent: the messages on the path from the root to a leaf (pi's
//! `buildSessionContext`, with compaction applied), the thinking level and model restored from that path,
//! and the coding agent's `convertToLlm`, which turns its own message roles into user messages.

use foldhash::HashMap;
use std::sync::Arc;

use super::entries::{EntryKind, SessionEntry};

/// The `customType` of the entry recording that a run moved to a fallback model (pi-gen's fallbacks).
pub const MODEL_FALLBACK_ENTRY: &str = "model_fallback";
use crate::agent::ConvertToLlmFn;
use crate::protocol::{
    AgentMessage, BashExecutionMessage, BranchSummaryMessage, CompactionSummaryMessage, CustomMessage, Message,
    MessageContent, UserContent, UserMessage,
};

/// Put before a compaction summary when it is sent to the LLM (pi's `COMPACTION_SUMMARY_PREFIX`).
pub const COMPACTION_SUMMARY_PREFIX: &str =
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
/// Put after a compaction summary (pi's `COMPACTION_SUMMARY_SUFFIX`).
pub const COMPACTION_SUMMARY_SUFFIX: &str = "\n</summary>";
/// Put before a branch summary when it is sent to the LLM (pi's `BRANCH_SUMMARY_PREFIX`).
pub const BRANCH_SUMMARY_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
/// Put after a branch summary; pi has no newline before the closing tag here.
pub const BRANCH_SUMMARY_SUFFIX: &str = "</summary>";

/// The thinking level of a session that never changed it.
pub const DEFAULT_THINKING_LEVEL: &str = "off";

/// The agent's view of a session at one leaf.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionContext {
    /// The messages to give the agent, oldest first.
    pub messages: Vec<AgentMessage>,
    /// The latest thinking level on the path (`"off"` when none).
    pub thinking_level: String,
    /// `(provider, model_id)` from the latest model change or assistant message on the path.
    pub model: Option<(String, String)>,
}

impl Default for SessionContext {
    fn default() -> Self {
        Self { messages: Vec::new(), thinking_level: DEFAULT_THINKING_LEVEL.to_owned(), model: None }
    }
}

/// Milliseconds since the epoch of an ISO 8601 timestamp (`2026-03-15T22:40:18.123Z`); 0 when it does not
/// parse (where JavaScript would give `NaN`).
pub fn iso_to_ms(timestamp: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(timestamp).map(|t| t.timestamp_millis()).unwrap_or(0)
}

/// The context at `leaf` (pi's `buildSessionContext`). `None` gives no messages; an id that is not in
/// `entries` falls back to the last entry.
///
/// Ids are taken to be unique, as pi and this runtime write them: a parent is looked for first just before
/// its child, and the id map is built only if a walk has to jump (a branch). Over a file that repeats an id,
/// [`super::SessionTree::context_at`] gives pi's answer (the last entry with that id).
pub fn build_session_context(entries: &[SessionEntry], leaf: Option<&str>) -> SessionContext {
    let by_id = std::cell::OnceCell::new();
    let lookup = |id: &str| {
        let by_id = by_id.get_or_init(|| {
            entries.iter().enumerate().map(|(i, e)| (e.id.as_str(), i)).collect::<HashMap<&str, usize>>()
        });
        by_id.get(id).copied()
    };
    build_indexed(entries, lookup, true, leaf)
}

/// [`build_session_context`] over an id → index lookup. With `adjacent_parents`, a parent is first looked
/// for just before its child (exact when ids are unique).
pub(crate) fn build_indexed(
    entries: &[SessionEntry],
    lookup: impl Fn(&str) -> Option<usize>,
    adjacent_parents: bool,
    leaf: Option<&str>,
) -> SessionContext {
    let Some(leaf) = leaf else { return SessionContext::default() };
    let last = entries.len().checked_sub(1);
    let leaf_is_last = last.is_some_and(|last| entries[last].id == leaf);
    let Some(leaf_index) = (if leaf_is_last { last } else { lookup(leaf).or(last) }) else {
        return SessionContext::default();
    };
    let path: Vec<&SessionEntry> =
        path_indices(entries, &lookup, adjacent_parents, leaf_index).into_iter().map(|i| &entries[i]).collect();

    let mut context = SessionContext::default();
    let mut compaction_at = None;
    let mut thinking_level = None;
    let mut model = None;
    // Answers of a fallback model (after a `model_fallback` entry, until the next user message) do not
    // choose the model a resumed session runs on: the user's choice does.
    let mut on_fallback = false;
    for (position, entry) in path.iter().enumerate() {
        match &entry.kind {
            EntryKind::ThinkingLevelChange { thinking_level: level } => thinking_level = Some(level),
            EntryKind::ModelChange { provider, model_id } => model = Some((provider.as_str(), model_id.as_str())),
            EntryKind::Custom { custom_type, .. } if custom_type == MODEL_FALLBACK_ENTRY => on_fallback = true,
            EntryKind::Message { message: AgentMessage::User(_) } => on_fallback = false,
            EntryKind::Message { message: AgentMessage::Assistant(assistant) } if !on_fallback => {
                model = Some((assistant.provider.as_str(), assistant.model.as_str()));
            }
            EntryKind::Compaction { .. } => compaction_at = Some(position),
            _ => {}
        }
    }
    if let Some(level) = thinking_level {
        context.thinking_level = level.clone();
    }
    context.model = model.map(|(provider, id)| (provider.to_owned(), id.to_owned()));

    let compaction = compaction_at.and_then(|position| match &path[position].kind {
        EntryKind::Compaction { first_kept_entry_id, .. } => Some((position, path[position], first_kept_entry_id)),
        _ => None,
    });
    // pi 1.5's context edits on the path: the last one for an entry wins.
    let edits: HashMap<&str, Option<&AgentMessage>> = path
        .iter()
        .filter_map(|entry| match &entry.kind {
            EntryKind::ContextEdit { target_id, replacement } => Some((target_id.as_str(), replacement.as_ref())),
            _ => None,
        })
        .collect();
    let push = |messages: &mut Vec<AgentMessage>, entry: &SessionEntry| match edits.get(entry.id.as_str()) {
        Some(replacement) => messages.extend(replacement.cloned()),
        None => push_entry_message(messages, entry),
    };
    match compaction {
        Some((position, entry, first_kept)) => {
            context.messages.extend(entry_message(entry));
            let kept = path[..position].iter().skip_while(|e| e.id != *first_kept);
            for entry in kept.chain(&path[position + 1..]) {
                push(&mut context.messages, entry);
            }
        }
        None => path.iter().for_each(|entry| push(&mut context.messages, entry)),
    }
    context
}

/// The indices from the root down to `start`, following `parent_id` without recursion. A parent that is
/// missing ends the walk (the entry is then a root); a cycle ends it at the first repeated entry. With
/// `adjacent_parents` the entry just before is tried first: pi appends almost every entry under the one
/// before it, and comparing one id there costs far less than a lookup by id (exact when ids are unique).
pub(crate) fn path_indices(
    entries: &[SessionEntry],
    lookup: &impl Fn(&str) -> Option<usize>,
    adjacent_parents: bool,
    start: usize,
) -> Vec<usize> {
    let mut path = Vec::new();
    let mut seen = vec![false; entries.len()];
    let mut current = (start < entries.len()).then_some(start);
    while let Some(index) = current {
        if std::mem::replace(&mut seen[index], true) {
            break;
        }
        path.push(index);
        current = entries[index].parent_id.as_deref().and_then(|parent| {
            let previous = index.checked_sub(1).filter(|&previous| adjacent_parents && entries[previous].id == parent);
            previous.or_else(|| lookup(parent))
        });
    }
    path.reverse();
    path
}

/// The agent message an entry stands for: messages as they are; custom messages, branch summaries and
/// compactions as their agent messages, stamped with the entry's time; nothing for the other kinds.
pub fn entry_message(entry: &SessionEntry) -> Option<AgentMessage> {
    let timestamp = || iso_to_ms(&entry.timestamp);
    match &entry.kind {
        EntryKind::Message { message } => Some(message.clone()),
        EntryKind::CustomMessage { custom_type, content, display, details } => {
            Some(AgentMessage::Custom(CustomMessage {
                custom_type: custom_type.clone(),
                content: content.clone(),
                display: *display,
                details: details.clone(),
                timestamp: timestamp(),
            }))
        }
        EntryKind::BranchSummary { from_id, summary, .. } => Some(AgentMessage::BranchSummary(BranchSummaryMessage {
            summary: summary.clone(),
            from_id: from_id.clone(),
            timestamp: timestamp(),
        })),
        EntryKind::Compaction { summary, tokens_before, .. } => {
            Some(AgentMessage::CompactionSummary(CompactionSummaryMessage {
                summary: summary.clone(),
                tokens_before: *tokens_before,
                timestamp: timestamp(),
            }))
        }
        _ => None,
    }
}

/// The message an entry contributes to the context on the path, if any (the compaction in force is placed
/// by [`build_session_context`] itself).
fn push_entry_message(messages: &mut Vec<AgentMessage>, entry: &SessionEntry) {
    match &entry.kind {
        EntryKind::Compaction { .. } => {}
        // pi skips a branch summary whose text is empty.
        EntryKind::BranchSummary { summary, .. } if summary.is_empty() => {}
        _ => messages.extend(entry_message(entry)),
    }
}

/// The text a `!command` run is sent to the LLM as (pi's `bashExecutionToText`).
pub fn bash_execution_to_text(bash: &BashExecutionMessage) -> String {
    let mut text = format!("Ran `{}`\n", bash.command);
    if bash.output.is_empty() {
        text.push_str("(no output)");
    } else {
        text.push_str("```\n");
        text.push_str(&bash.output);
        text.push_str("\n```");
    }
    if bash.cancelled {
        text.push_str("\n\n(command cancelled)");
    } else if let Some(code) = bash.exit_code.filter(|code| *code != 0) {
        text.push_str(&format!("\n\nCommand exited with code {code}"));
    }
    if bash.truncated
        && let Some(path) = &bash.full_output_path
    {
        text.push_str(&format!("\n\n[Output truncated. Full output: {path}]"));
    }
    text
}

/// The coding agent's convertToLlm: the LLM roles pass through; bash runs (unless excluded from the
/// context), custom messages and summaries become user messages stamped with the source message's time.
pub fn convert_to_llm(messages: &[AgentMessage]) -> Vec<Message> {
    messages.iter().filter_map(convert_one).collect()
}

/// [`convert_to_llm`] as an agent loop stage.
pub fn coding_agent_convert_to_llm() -> ConvertToLlmFn {
    Arc::new(convert_to_llm)
}

fn convert_one(message: &AgentMessage) -> Option<Message> {
    let user = |text: String, timestamp: i64| {
        Message::User(UserMessage { content: MessageContent::Blocks(vec![UserContent::text(text)]), timestamp })
    };
    Some(match message {
        // The request carries the system prompt itself; pi 1.5's record of it is not a conversation message.
        AgentMessage::System(_) => return None,
        AgentMessage::User(m) => Message::User(m.clone()),
        AgentMessage::Assistant(m) => Message::Assistant(m.clone()),
        AgentMessage::ToolResult(m) => Message::ToolResult(m.clone()),
        AgentMessage::BashExecution(bash) => {
            if bash.exclude_from_context == Some(true) {
                return None;
            }
            user(bash_execution_to_text(bash), bash.timestamp)
        }
        AgentMessage::Custom(custom) => Message::User(UserMessage {
            content: MessageContent::Blocks(custom.content.to_blocks()),
            timestamp: custom.timestamp,
        }),
        AgentMessage::BranchSummary(branch) => {
            user(format!("{BRANCH_SUMMARY_PREFIX}{}{BRANCH_SUMMARY_SUFFIX}", branch.summary), branch.timestamp)
        }
        AgentMessage::CompactionSummary(compaction) => user(
            format!("{COMPACTION_SUMMARY_PREFIX}{}{COMPACTION_SUMMARY_SUFFIX}", compaction.summary),
            compaction.timestamp,
        ),
    })
}
