//! The session's entries for pi 1.5's `get_entries` (append order, optionally after a cursor) and `get_tree`
//! (nested `{entry, children, label?, labelTimestamp?}` nodes), written as JSON text: each entry exactly as
//! its session-file line, and the tree without recursion, so a long session cannot exhaust the stack.

use serde_json::Value;

use crate::session::{SessionEntry, SessionManager, TreeNode};

/// `{"entries":[…],"leafId":…}`: every entry (no header) in append order, branches and compacted history
/// included, or only those after the entry `since` names. An unknown `since` is an error text.
pub fn entries_json(manager: &SessionManager, since: Option<&Value>) -> Result<String, String> {
    let entries = manager.entries();
    let start = match since {
        None => 0,
        Some(cursor) => {
            let found = cursor.as_str().and_then(|id| entries.iter().position(|entry| entry.id == id));
            match found {
                Some(index) => index + 1,
                None => return Err(format!("no entry {cursor} in this session (`since` takes an entry id)")),
            }
        }
    };
    let mut out = String::from("{\"entries\":[");
    for (index, entry) in entries[start..].iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        push_entry(&mut out, entry)?;
    }
    out.push_str("],\"leafId\":");
    push_leaf(&mut out, manager)?;
    out.push('}');
    Ok(out)
}

/// `{"tree":[…],"leafId":…}`: the roots (orphans too) with their children, oldest first; a labelled entry's
/// node carries its label and when it was set.
pub fn tree_json(manager: &SessionManager) -> Result<String, String> {
    enum Step<'t, 'e> {
        Open(&'t TreeNode<'e>),
        Close(&'t TreeNode<'e>),
        Comma,
    }
    fn push_nodes<'t, 'e>(stack: &mut Vec<Step<'t, 'e>>, nodes: &'t [TreeNode<'e>]) {
        for (index, node) in nodes.iter().enumerate().rev() {
            stack.push(Step::Open(node));
            if index > 0 {
                stack.push(Step::Comma);
            }
        }
    }
    let tree = manager.tree();
    let roots = tree.get_tree();
    let mut out = String::from("{\"tree\":[");
    let mut stack = Vec::new();
    push_nodes(&mut stack, &roots);
    while let Some(step) = stack.pop() {
        match step {
            Step::Open(node) => {
                out.push_str("{\"entry\":");
                push_entry(&mut out, node.entry)?;
                out.push_str(",\"children\":[");
                stack.push(Step::Close(node));
                push_nodes(&mut stack, &node.children);
            }
            Step::Close(node) => {
                out.push(']');
                if let Some(label) = &node.label {
                    out.push_str(",\"label\":");
                    out.push_str(&to_json(label)?);
                    if let Some(timestamp) = tree.label_timestamp(node.id()) {
                        out.push_str(",\"labelTimestamp\":");
                        out.push_str(&to_json(timestamp)?);
                    }
                }
                out.push('}');
            }
            Step::Comma => out.push(','),
        }
    }
    out.push_str("],\"leafId\":");
    push_leaf(&mut out, manager)?;
    out.push('}');
    Ok(out)
}

fn push_entry(out: &mut String, entry: &SessionEntry) -> Result<(), String> {
    out.push_str(&entry.to_line().map_err(|error| format!("cannot write entry {}: {error}", entry.id))?);
    Ok(())
}

fn push_leaf(out: &mut String, manager: &SessionManager) -> Result<(), String> {
    out.push_str(&to_json(&manager.tree().leaf_id())?);
    Ok(())
}

fn to_json(value: &(impl serde::Serialize + ?Sized)) -> Result<String, String> {
    serde_json::to_string(value).map_err(|error| error.to_string())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::protocol::{AgentMessage, UserMessage};

    fn session() -> (SessionManager, Vec<String>) {
        let mut manager = SessionManager::in_memory(std::path::Path::new("/work"));
        let ids = vec![
            manager.append_model_change("mock", "m").expect("append"),
            manager.append_message(AgentMessage::User(UserMessage::text("one"))).expect("append"),
            manager.append_message(AgentMessage::User(UserMessage::text("two"))).expect("append"),
        ];
        (manager, ids)
    }

    fn parse(text: &str) -> Value {
        serde_json::from_str(text).expect("valid JSON")
    }

    #[test]
    fn entries_come_in_append_order_after_the_cursor() {
        let (manager, ids) = session();
        let all = parse(&entries_json(&manager, None).expect("entries"));
        let listed: Vec<&str> =
            all["entries"].as_array().expect("array").iter().filter_map(|e| e["id"].as_str()).collect();
        assert_eq!(listed, ids);
        assert_eq!(all["leafId"], json!(ids[2]));
        assert_eq!(all["entries"][1]["parentId"], json!(ids[0]));
        let after = parse(&entries_json(&manager, Some(&json!(ids[1]))).expect("entries"));
        assert_eq!(after["entries"].as_array().map(Vec::len), Some(1));
        assert_eq!(after["entries"][0]["message"]["content"][0]["text"], "two");
        for cursor in [json!("nope"), json!(null), json!(5)] {
            assert!(entries_json(&manager, Some(&cursor)).is_err(), "{cursor}");
        }
        let empty = SessionManager::in_memory(std::path::Path::new("/work"));
        assert_eq!(entries_json(&empty, None).expect("entries"), "{\"entries\":[],\"leafId\":null}");
    }

    #[test]
    fn the_tree_nests_branches_and_shows_labels() {
        let (mut manager, ids) = session();
        manager.branch(&ids[1]).expect("branch");
        let side = manager.append_message(AgentMessage::User(UserMessage::text("side"))).expect("append");
        manager.append_label(&ids[1], Some("here".into())).expect("label");
        let tree = parse(&tree_json(&manager).expect("tree"));
        let root = &tree["tree"][0];
        assert_eq!(root["entry"]["id"], json!(ids[0]));
        let one = &root["children"][0];
        let keys: Vec<&str> = one.as_object().expect("node").keys().map(String::as_str).collect();
        assert_eq!(keys, ["entry", "children", "label", "labelTimestamp"]);
        assert_eq!(one["label"], "here");
        let children: Vec<&str> =
            one["children"].as_array().expect("children").iter().filter_map(|c| c["entry"]["id"].as_str()).collect();
        assert_eq!(children, [ids[2].as_str(), side.as_str()]);
        assert!(root.get("label").is_none());
        assert!(tree["leafId"].is_string());
    }

    #[test]
    fn a_long_session_does_not_recurse() {
        let mut manager = SessionManager::in_memory(std::path::Path::new("/work"));
        for index in 0..20_000 {
            manager.append_message(AgentMessage::User(UserMessage::text(format!("m{index}")))).expect("append");
        }
        let text = tree_json(&manager).expect("tree");
        assert!(text.starts_with("{\"tree\":[{\"entry\":") && text.ends_with('}'));
        assert_eq!(text.matches("\"children\":[").count(), 20_000);
    }
}
