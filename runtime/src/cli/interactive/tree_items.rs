//! The session tree as selector rows: one row per entry the filter shows, in depth-first order, indented
//! where the tree branches, with labels (and when they were set, on request). pi's filters: the default
//! view (messages, summaries; no settings changes), no tools, user messages only, labeled entries only, all.

use pi_tui::select_list::SelectItem;

use crate::protocol::{AgentMessage, AssistantContent};
use crate::session::{EntryKind, SessionEntry, SessionTree, TreeNode};

/// Row text at most (the rest is cut).
const ROW_TEXT: usize = 120;

/// Which entries the tree shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TreeFilter {
    /// Messages, tool calls, compactions and summaries; settings changes are left out.
    #[default]
    Default,
    /// The default view without tool calls and results.
    NoTools,
    UserOnly,
    LabeledOnly,
    /// Every entry, settings changes and tool results too.
    All,
}

impl TreeFilter {
    const ORDER: [Self; 5] = [Self::Default, Self::NoTools, Self::UserOnly, Self::LabeledOnly, Self::All];

    /// What the selector's title says of it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::NoTools => "no tools",
            Self::UserOnly => "user messages",
            Self::LabeledOnly => "labeled",
            Self::All => "all entries",
        }
    }

    /// The filter after this one (Ctrl+O), or before it.
    pub fn cycle(self, backwards: bool) -> Self {
        let at = Self::ORDER.iter().position(|filter| *filter == self).unwrap_or(0);
        let count = Self::ORDER.len();
        Self::ORDER[if backwards { (at + count - 1) % count } else { (at + 1) % count }]
    }
}

/// How the rows are made.
#[derive(Debug, Clone, Copy, Default)]
pub struct TreeView {
    pub filter: TreeFilter,
    /// Show when each label was set.
    pub label_times: bool,
}

/// The rows, and the row standing for the current leaf (the leaf or its nearest shown ancestor).
pub fn tree_items(tree: &SessionTree, view: TreeView) -> (Vec<SelectItem>, Option<String>) {
    let mut items = Vec::new();
    let roots = tree.get_tree();
    let branching = roots.len() > 1;
    for root in &roots {
        walk(tree, root, usize::from(branching), view, &mut items);
    }
    let shown: std::collections::HashSet<&str> = items.iter().map(|item| item.value.as_str()).collect();
    let leaf = tree.leaf_id().map(|leaf| tree.path_to(leaf)).and_then(|path| {
        path.iter().rev().map(|entry| entry.id.as_str()).find(|id| shown.contains(id)).map(str::to_owned)
    });
    (items, leaf)
}

fn walk(tree: &SessionTree, node: &TreeNode<'_>, depth: usize, view: TreeView, items: &mut Vec<SelectItem>) {
    let shown = match view.filter {
        TreeFilter::LabeledOnly if node.label.is_none() => None,
        filter => row_text(node.entry, filter),
    };
    if let Some(text) = shown {
        let mut row = format!("{}• {text}", "  ".repeat(depth));
        if let Some(tag) = &node.label {
            match tree.label_timestamp(node.id()).filter(|_| view.label_times) {
                Some(time) => row = format!("{row}  [{tag} · {}]", short_time(time)),
                None => row = format!("{row}  [{tag}]"),
            }
        }
        items.push(SelectItem::new(node.entry.id.clone(), row).with_opaque_value());
    }
    let child_depth = if node.children.len() > 1 { depth + 1 } else { depth };
    for child in &node.children {
        walk(tree, child, child_depth, view, items);
    }
}

/// `2026-11-25T14:03:07.123Z` as `2026-11-25 14:03`.
fn short_time(iso: &str) -> String {
    iso.chars().take(16).collect::<String>().replace('T', " ")
}

fn row_text(entry: &SessionEntry, filter: TreeFilter) -> Option<String> {
    let all = filter == TreeFilter::All;
    let tools = !matches!(filter, TreeFilter::NoTools | TreeFilter::UserOnly);
    let text = match &entry.kind {
        EntryKind::Message { message: AgentMessage::User(user) } => format!("user: {}", user.content.text()),
        _ if filter == TreeFilter::UserOnly => return None,
        EntryKind::Message { message } => match message {
            AgentMessage::Assistant(assistant) => {
                let text = assistant.text();
                if !text.trim().is_empty() {
                    format!("assistant: {text}")
                } else if tools {
                    let calls = tool_calls(&assistant.content);
                    if calls.is_empty() && !all {
                        return None;
                    }
                    if calls.is_empty() { "assistant: (no text)".to_owned() } else { calls }
                } else {
                    return None;
                }
            }
            AgentMessage::ToolResult(result) if all => format!("[{} result]", result.tool_name),
            AgentMessage::BashExecution(bash) => format!("!{}", bash.command),
            _ => return None,
        },
        EntryKind::Compaction { .. } => "[compaction]".to_owned(),
        EntryKind::BranchSummary { .. } => "[summary of a branch]".to_owned(),
        EntryKind::CustomMessage { custom_type, .. } => format!("[{custom_type}]"),
        EntryKind::ModelChange { provider, model_id } if all => format!("[model: {provider}/{model_id}]"),
        EntryKind::ThinkingLevelChange { thinking_level } if all => format!("[thinking: {thinking_level}]"),
        EntryKind::Custom { custom_type, .. } if all => format!("[custom: {custom_type}]"),
        EntryKind::SessionInfo { name } if all => format!("[name: {}]", name.as_deref().unwrap_or("(cleared)")),
        EntryKind::Label { label, .. } if all => format!("[label: {}]", label.as_deref().unwrap_or("(cleared)")),
        _ => return None,
    };
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    Some(flat.chars().take(ROW_TEXT).collect())
}

/// `[read: notes.txt] [bash: ls]` for the tool calls of an answer without text.
fn tool_calls(content: &[AssistantContent]) -> String {
    let calls: Vec<String> = content
        .iter()
        .filter_map(|content| match content {
            AssistantContent::ToolCall(call) => Some(format!("[{}: {}]", call.name, main_argument(&call.arguments))),
            _ => None,
        })
        .collect();
    calls.join(" ")
}

fn main_argument(arguments: &serde_json::Value) -> String {
    for key in ["path", "command", "pattern"] {
        if let Some(value) = arguments.get(key).and_then(serde_json::Value::as_str) {
            return value.to_owned();
        }
    }
    String::new()
}
