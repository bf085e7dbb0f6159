//! The data the page's script needs beside the rendered entries: the tree (id, parent, kind, a short text
//! for each entry) and the session file itself for download, embedded so that nothing is fetched.

use base64::Engine as _;
use serde_json::{Value, json};

use super::entries::EntryContext;
use crate::protocol::{AgentMessage, AssistantContent, UserContent};
use crate::session::{EntryKind, SessionEntry};

/// How much of an entry's text the tree shows (and searches).
const PREVIEW_CHARS: usize = 240;

/// The tree as JSON, safe inside a `<script>` element.
pub fn tree_index_json(entries: &[SessionEntry], leaf_id: Option<&str>, context: &EntryContext<'_>) -> String {
    let nodes: Vec<Value> = entries.iter().map(|entry| node(entry, context)).collect();
    let index = json!({ "leafId": leaf_id, "entries": nodes });
    script_safe(&index.to_string())
}

/// The session file as base64, for the download button.
pub fn jsonl_base64(jsonl: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(jsonl)
}

/// JSON with `<`, `>` and `&` written as escapes, so that no `</script>` in a message ends the element.
fn script_safe(json: &str) -> String {
    json.replace('<', "\\u003c").replace('>', "\\u003e").replace('&', "\\u0026")
}

fn node(entry: &SessionEntry, context: &EntryContext<'_>) -> Value {
    let (kind, text, flags) = describe(&entry.kind);
    let mut node = json!({ "id": entry.id, "parent": entry.parent_id, "kind": kind, "text": preview(&text) });
    if let Some(label) = context.label(&entry.id) {
        node["label"] = json!(label);
    }
    if flags.error {
        node["error"] = json!(true);
    }
    if flags.tools_only {
        node["toolsOnly"] = json!(true);
    }
    node
}

#[derive(Default)]
struct Flags {
    error: bool,
    /// An assistant message with tool calls and no text.
    tools_only: bool,
}

fn describe(kind: &EntryKind) -> (&'static str, String, Flags) {
    let (kind, text) = match kind {
        EntryKind::Message { message } => return describe_message(message),
        EntryKind::ModelChange { provider, model_id } => ("model", format!("{provider}/{model_id}")),
        EntryKind::ThinkingLevelChange { thinking_level } => ("thinking", thinking_level.clone()),
        EntryKind::Compaction { summary, .. } => ("compaction", summary.clone()),
        EntryKind::BranchSummary { summary, .. } => ("branch-summary", summary.clone()),
        EntryKind::Custom { custom_type, .. } => ("custom", custom_type.clone()),
        EntryKind::CustomMessage { custom_type, content, display, .. } => {
            (if *display { "custom-message" } else { "custom" }, format!("{custom_type}: {}", content.text()))
        }
        EntryKind::Label { label, .. } => ("label", label.clone().unwrap_or_else(|| "(label cleared)".to_owned())),
        EntryKind::SessionInfo { name } => ("session-info", name.clone().unwrap_or_default()),
        EntryKind::ContextEdit { .. } => ("context-edit", String::new()),
        other => ("other", other.type_name().to_owned()),
    };
    (kind, text, Flags::default())
}

fn describe_message(message: &AgentMessage) -> (&'static str, String, Flags) {
    let mut flags = Flags::default();
    let (kind, text) = match message {
        AgentMessage::User(user) => {
            let mut text = user.content.text();
            if user.content.to_blocks().iter().any(|block| matches!(block, UserContent::Image(_))) {
                text.push_str(" [image]");
            }
            ("user", text)
        }
        AgentMessage::Assistant(answer) => {
            let mut text = String::new();
            let mut calls = Vec::new();
            for block in &answer.content {
                match block {
                    AssistantContent::Text(part) => {
                        text.push_str(&part.text);
                        text.push(' ');
                    }
                    AssistantContent::ToolCall(call) => calls.push(call_summary(&call.name, &call.arguments)),
                    AssistantContent::Thinking(_) => {}
                }
            }
            if text.trim().is_empty() {
                flags.tools_only = !calls.is_empty();
                text = calls.join(", ");
            }
            if let Some(error) = &answer.error_message {
                flags.error = true;
                if text.trim().is_empty() {
                    text = error.clone();
                }
            }
            ("assistant", text)
        }
        AgentMessage::ToolResult(result) => {
            flags.error = result.is_error;
            let first = result.content.iter().find_map(UserContent::as_text).unwrap_or_default();
            ("tool-result", format!("{}: {}", result.tool_name, first.lines().next().unwrap_or_default()))
        }
        AgentMessage::BashExecution(run) => ("bash", run.command.clone()),
        AgentMessage::Custom(custom) => {
            ("custom-message", format!("{}: {}", custom.custom_type, custom.content.text()))
        }
        AgentMessage::CompactionSummary(summary) => ("compaction", summary.summary.clone()),
        AgentMessage::BranchSummary(summary) => ("branch-summary", summary.summary.clone()),
        AgentMessage::System(_) => ("system", "system prompt".to_owned()),
    };
    (kind, text, flags)
}

/// `read: notes.md`, `bash: cat x`: the tool and its first argument.
fn call_summary(name: &str, arguments: &Value) -> String {
    let first = arguments
        .as_object()
        .and_then(|map| map.values().find_map(Value::as_str))
        .map(|value| value.lines().next().unwrap_or_default().to_owned());
    match first {
        Some(value) => format!("{name}: {value}"),
        None => name.to_owned(),
    }
}

/// Whitespace collapsed, markdown's emphasis and code marks dropped, cut at [`PREVIEW_CHARS`].
fn preview(text: &str) -> String {
    let mut out = String::new();
    let words = text.split_whitespace().map(|word| word.trim_start_matches('#').replace(['*', '`'], ""));
    for (count, word) in words.filter(|word| !word.is_empty()).enumerate() {
        if count > 0 {
            out.push(' ');
        }
        out.push_str(&word);
        if out.chars().count() > PREVIEW_CHARS {
            let cut: String = out.chars().take(PREVIEW_CHARS).collect();
            return cut + "…";
        }
    }
    out
}
