//! The session tree as selector rows: one row per message-like entry in depth-first order, indented where
//! the tree branches, with labels; the entries that only change settings are skipped (their children stay).

use pi_tui::select_list::SelectItem;

use crate::protocol::{AgentMessage, AssistantContent};
use crate::session::{EntryKind, SessionEntry, SessionTree, TreeNode};

/// Row text at most (the rest is cut).
const ROW_TEXT: usize = 120;

/// The rows, and the row standing for the current leaf (the leaf or its nearest shown ancestor).
pub fn tree_items(tree: &SessionTree) -> (Vec<SelectItem>, Option<String>) {
    let mut items = Vec::new();
    let roots = tree.get_tree();
    let branching = roots.len() > 1;
    for root in &roots {
        walk(root, usize::from(branching), &mut items);
    }
    let shown: std::collections::HashSet<&str> = items.iter().map(|item| item.value.as_str()).collect();
    let leaf = tree.leaf_id().map(|leaf| tree.path_to(leaf)).and_then(|path| {
        path.iter().rev().map(|entry| entry.id.as_str()).find(|id| shown.contains(id)).map(str::to_owned)
    });
    (items, leaf)
}

fn walk(node: &TreeNode<'_>, depth: usize, items: &mut Vec<SelectItem>) {
    let mut child_depth = depth;
    if let Some(text) = row_text(node.entry) {
        let mut label = format!("{}• {text}", "  ".repeat(depth));
        if let Some(tag) = &node.label {
            label = format!("{label}  [{tag}]");
        }
        items.push(SelectItem::new(node.entry.id.clone(), label));
    }
    if node.children.len() > 1 {
        child_depth += 1;
    }
    for child in &node.children {
        walk(child, child_depth, items);
    }
}

fn row_text(entry: &SessionEntry) -> Option<String> {
    let text = match &entry.kind {
        EntryKind::Message { message } => match message {
            AgentMessage::User(user) => format!("user: {}", user.content.text()),
            AgentMessage::Assistant(assistant) => {
                let text = assistant.text();
                if text.trim().is_empty() {
                    let calls: Vec<String> = assistant
                        .content
                        .iter()
                        .filter_map(|content| match content {
                            AssistantContent::ToolCall(call) => {
                                Some(format!("[{}: {}]", call.name, main_argument(&call.arguments)))
                            }
                            _ => None,
                        })
                        .collect();
                    if calls.is_empty() {
                        return None;
                    }
                    calls.join(" ")
                } else {
                    format!("assistant: {text}")
                }
            }
            AgentMessage::BashExecution(bash) => format!("!{}", bash.command),
            _ => return None,
        },
        EntryKind::Compaction { .. } => "[compaction]".to_owned(),
        EntryKind::BranchSummary { .. } => "[summary of a branch]".to_owned(),
        EntryKind::CustomMessage { custom_type, .. } => format!("[{custom_type}]"),
        _ => return None,
    };
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    Some(flat.chars().take(ROW_TEXT).collect())
}

fn main_argument(arguments: &serde_json::Value) -> String {
    for key in ["path", "command", "pattern"] {
        if let Some(value) = arguments.get(key).and_then(serde_json::Value::as_str) {
            return value.to_owned();
        }
    }
    String::new()
}
