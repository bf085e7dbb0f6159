//! Tests of `SessionTree`: appends and branching (pi-facts case 20), labels, orphans, sorting, session names,
//! forks, id generation and a 100,000-entry session.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;
use crate::protocol::{AgentMessage, AssistantContent, AssistantMessage, MessageContent, UserContent, UserMessage};

fn user(text: &str) -> AgentMessage {
    AgentMessage::User(UserMessage { content: MessageContent::Blocks(vec![UserContent::text(text)]), timestamp: 1 })
}

fn assistant(text: &str) -> AgentMessage {
    AgentMessage::Assistant(AssistantMessage {
        content: vec![AssistantContent::text(text)],
        provider: "mock".into(),
        model: "m".into(),
        ..AssistantMessage::default()
    })
}

fn ts(n: usize) -> String {
    format!("2026-03-15T22:{:02}:{:02}.000Z", n / 60 % 60, n % 60)
}

/// A tree with ids `e1`, `e2`, … and timestamps one second apart.
fn tree() -> SessionTree {
    let ids = Arc::new(AtomicUsize::new(0));
    let clock = Arc::new(AtomicUsize::new(0));
    SessionTree::new()
        .with_id_generator(Box::new(move |taken| {
            loop {
                let id = format!("e{}", ids.fetch_add(1, Ordering::Relaxed) + 1);
                if !taken(&id) {
                    return id;
                }
            }
        }))
        .with_clock(Box::new(move || ts(clock.fetch_add(1, Ordering::Relaxed))))
}

fn add(tree: &mut SessionTree, message: AgentMessage) -> String {
    tree.append_message(message).id.clone()
}

fn entry(id: &str, parent: Option<&str>, timestamp: usize) -> SessionEntry {
    SessionEntry {
        id: id.into(),
        parent_id: parent.map(Into::into),
        timestamp: ts(timestamp),
        kind: EntryKind::Message { message: user(id) },
    }
}

/// Each node as `id[child, child]`, depth first (small trees only).
fn shape(nodes: &[TreeNode<'_>]) -> String {
    let parts: Vec<String> = nodes
        .iter()
        .map(|n| if n.children.is_empty() { n.id().to_owned() } else { format!("{}[{}]", n.id(), shape(&n.children)) })
        .collect();
    parts.join(",")
}

fn context_texts(tree: &SessionTree) -> Vec<String> {
    tree.context()
        .messages
        .iter()
        .map(|m| match m {
            AgentMessage::User(u) => u.content.text(),
            AgentMessage::Assistant(a) => a.text(),
            other => other.role().to_owned(),
        })
        .collect()
}

#[test]
fn branching_keeps_both_paths_and_the_context_follows_the_leaf() {
    let mut t = tree();
    let u1 = add(&mut t, user("u1"));
    let a1 = add(&mut t, assistant("a1"));
    let u2 = add(&mut t, user("u2"));
    t.branch(&a1).unwrap();
    let u3 = add(&mut t, user("u3"));
    assert_eq!(shape(&t.get_tree()), format!("{u1}[{a1}[{u2},{u3}]]"));
    assert_eq!(context_texts(&t), ["u1", "a1", "u3"]);
    assert_eq!(t.leaf_id(), Some(u3.as_str()));
    assert_eq!(t.children(&a1).iter().map(|e| e.id.as_str()).collect::<Vec<_>>(), [u2.as_str(), u3.as_str()]);
    assert_eq!(t.path_to(&u2).iter().map(|e| e.id.as_str()).collect::<Vec<_>>(), [&u1, &a1, &u2]);

    let forked = t.entries_for_fork(&u3).unwrap();
    assert_eq!(forked.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(), [&u1, &a1, &u3]);
    assert!(holds_assistant_message(&forked));
    assert!(!holds_assistant_message(&t.entries_for_fork(&u1).unwrap()));
}

#[test]
fn appends_chain_under_the_leaf_and_reset_leaf_starts_a_new_root() {
    let mut t = tree();
    let first = t.append_model_change("mock", "m").clone();
    assert_eq!((first.id.as_str(), first.parent_id.as_deref(), first.timestamp.as_str()), ("e1", None, ts(0).as_str()));
    let second = t.append_thinking_level_change("high").clone();
    assert_eq!(second.parent_id.as_deref(), Some("e1"));
    t.append_custom("state", None);
    t.append_custom_message("ext", MessageContent::Text("hi".into()), true, None);
    t.append_compaction("S", "e2", 10, None, Some(true));
    t.append_branch_summary("e1", "B", None, None);
    assert_eq!(t.len(), 6);
    assert_eq!(t.leaf_entry().map(|e| e.kind.type_name()), Some("branch_summary"));
    t.reset_leaf();
    assert_eq!(t.leaf_id(), None);
    assert!(t.context().messages.is_empty());
    let root = add(&mut t, user("again"));
    assert_eq!(t.entry(&root).and_then(|e| e.parent_id.clone()), None);
    assert_eq!(shape(&t.get_tree()), "e1[e2[e3[e4[e5[e6]]]]],e7");
}

#[test]
fn unknown_ids_are_errors_that_name_the_id() {
    let mut t = tree();
    add(&mut t, user("u"));
    let err = t.branch("zzzz9999").unwrap_err();
    assert_eq!(err, SessionTreeError::EntryNotFound { id: "zzzz9999".into() });
    assert!(err.to_string().contains("zzzz9999"), "{err}");
    assert!(t.branch_with_summary(Some("nope"), "s", None, None).is_err());
    let label_err = t.append_label("nope", Some("x".into())).unwrap_err();
    assert!(label_err.to_string().contains("nope"), "{label_err}");
    assert!(t.entries_for_fork("nope").is_err());
    assert_eq!(t.len(), 1, "failed operations append nothing");
    assert_eq!(t.leaf_id(), Some("e1"));
}

#[test]
fn branch_with_summary_attaches_at_the_target_or_at_a_new_root() {
    let mut t = tree();
    let u1 = add(&mut t, user("u1"));
    add(&mut t, assistant("a1"));
    let summary = t.branch_with_summary(Some(&u1), "explored", None, Some(false)).unwrap().clone();
    assert_eq!(summary.parent_id.as_deref(), Some(u1.as_str()));
    let EntryKind::BranchSummary { from_id, .. } = &summary.kind else { panic!("{summary:?}") };
    assert_eq!(from_id, &u1);
    assert_eq!(t.leaf_id(), Some(summary.id.as_str()));
    assert_eq!(context_texts(&t), ["u1", "branchSummary"]);

    let at_root = t.branch_with_summary(None, "from scratch", None, None).unwrap().clone();
    assert_eq!(at_root.parent_id, None);
    assert!(matches!(&at_root.kind, EntryKind::BranchSummary { from_id, .. } if from_id == "root"));
}

#[test]
fn labels_resolve_to_the_latest_and_none_clears() {
    let mut t = tree();
    let u1 = add(&mut t, user("u1"));
    let a1 = add(&mut t, assistant("a1"));
    t.append_label(&u1, Some("first".into())).unwrap();
    t.append_label(&u1, Some("start".into())).unwrap();
    t.append_label(&a1, Some("answer".into())).unwrap();
    assert_eq!(t.label(&u1), Some("start"));
    t.append_label(&a1, None).unwrap();
    assert_eq!(t.label(&a1), None);
    let roots = t.get_tree();
    assert_eq!(roots[0].label.as_deref(), Some("start"));
    assert_eq!(roots[0].children[0].label, None);
    // Label entries are tree entries too.
    assert_eq!(shape(&roots), "e1[e2[e3[e4[e5[e6]]]]]");

    let reloaded = SessionTree::from_entries(t.entries().to_vec());
    assert_eq!(reloaded.label(&u1), Some("start"));
    assert_eq!(reloaded.label(&a1), None);
    assert_eq!(reloaded.leaf_id(), Some("e6"));
}

#[test]
fn a_fork_drops_label_entries_rechains_the_path_and_recreates_the_labels() {
    let mut t = tree();
    let u1 = add(&mut t, user("u1"));
    t.append_label(&u1, Some("start".into())).unwrap(); // e2, on the path
    let a1 = add(&mut t, assistant("a1"));
    t.append_label(&a1, Some("answer".into())).unwrap();
    let u2 = add(&mut t, user("u2"));
    let forked = t.entries_for_fork(&u2).unwrap();
    let ids: Vec<&str> = forked.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(&ids[..3], [&u1, &a1, &u2]);
    assert_eq!(forked[1].parent_id.as_deref(), Some(u1.as_str()), "re-chained past the dropped label");
    assert_eq!(forked.len(), 5);
    let labels: Vec<(&str, Option<&str>, Option<&str>)> = forked[3..]
        .iter()
        .map(|e| match &e.kind {
            EntryKind::Label { target_id, label } => (target_id.as_str(), label.as_deref(), e.parent_id.as_deref()),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(labels, [(u1.as_str(), Some("start"), Some(u2.as_str())), (a1.as_str(), Some("answer"), Some(ids[3]))]);
    assert_eq!(forked[3].timestamp, t.entry("e2").unwrap().timestamp);
    let forked_tree = SessionTree::from_entries(forked);
    assert_eq!(forked_tree.label(&u1), Some("start"));
    assert_eq!(context_texts(&forked_tree), ["u1", "a1", "u2"]);
}

#[test]
fn orphans_become_roots_and_children_are_sorted_by_timestamp() {
    let entries = vec![
        entry("r", None, 0),
        entry("late", Some("r"), 9),
        entry("early", Some("r"), 3),
        entry("orphan", Some("missing"), 1),
        entry("self", Some("self"), 2),
        entry("mid", Some("r"), 5),
    ];
    let t = SessionTree::from_entries(entries);
    assert_eq!(shape(&t.get_tree()), "r[early,mid,late],orphan,self");
    assert_eq!(t.leaf_id(), Some("mid"));
    assert_eq!(t.path_to("orphan").len(), 1);
    assert!(t.path_to("unknown").is_empty());
}

#[test]
fn a_parent_cycle_does_not_hang_the_walks() {
    let t = SessionTree::from_entries(vec![entry("a", Some("b"), 0), entry("b", Some("a"), 1)]);
    assert_eq!(t.path_to("a").iter().map(|e| e.id.as_str()).collect::<Vec<_>>(), ["b", "a"]);
    assert!(t.get_tree().is_empty());
    assert_eq!(t.context().messages.len(), 2);
}

#[test]
fn the_session_name_is_the_latest_session_info() {
    let mut t = tree();
    assert_eq!(t.session_name(), None);
    t.append_session_info("first");
    t.append_session_info("  my\nsession\r\n ");
    assert_eq!(t.session_name(), Some("my session"));
    t.append_session_info("   ");
    assert_eq!(t.session_name(), None, "an empty name clears it");
}

#[test]
fn default_ids_are_eight_hex_characters_and_avoid_collisions() {
    let id = new_entry_id(|_| false);
    assert_eq!(id.len(), 8);
    assert!(id.chars().all(|c| c.is_ascii_hexdigit()), "{id}");
    assert_eq!(new_entry_id(|_| true).len(), 36, "a full UUID once eight characters keep colliding");
    let stamp = iso_timestamp_now();
    assert_eq!((stamp.len(), &stamp[10..11], &stamp[19..20], &stamp[23..]), (24, "T", ".", "Z"), "{stamp}");
    let mut t = SessionTree::new();
    let a = add(&mut t, user("a"));
    let b = add(&mut t, user("b"));
    assert_ne!(a, b);
    assert_eq!(t.entry(&b).and_then(|e| e.parent_id.clone()), Some(a));
}

#[test]
fn a_hundred_thousand_entries_in_a_line_do_not_overflow_the_stack() {
    let count = 100_000;
    let mut t = tree();
    for i in 0..count {
        add(&mut t, user(&i.to_string()));
    }
    let roots = t.get_tree();
    assert_eq!(roots.len(), 1);
    let mut depth = 0;
    let mut node = roots.first();
    while let Some(current) = node {
        depth += 1;
        node = current.children.first();
    }
    assert_eq!(depth, count);
    drop(roots);
    let leaf = t.leaf_id().unwrap().to_owned();
    assert_eq!(t.path_to(&leaf).len(), count);
    assert_eq!(t.context().messages.len(), count);
    assert_eq!(t.entries_for_fork(&leaf).unwrap().len(), count);
}

#[test]
fn planned_ids_name_the_next_messages_and_tool_results_by_their_call() {
    use crate::protocol::ToolResultMessage;
    let mut manager = SessionManager::in_memory(std::path::Path::new("/tmp"));
    let result = |call: &str| {
        AgentMessage::ToolResult(ToolResultMessage {
            tool_call_id: call.into(),
            tool_name: "bash".into(),
            content: vec![UserContent::text("ok")],
            details: None,
            is_error: false,
            duration_ms: None,
            timestamp: 1,
        })
    };
    let tool_results = [("c1".to_owned(), "res00001".to_owned()), ("c2".to_owned(), "res00002".to_owned())];
    manager.plan_message_ids(PlannedIds {
        in_order: ["user0001".to_owned(), "answer01".to_owned()].into(),
        tool_results: tool_results.into_iter().collect(),
    });
    assert_eq!(manager.append_message(user("hi")).expect("appended"), "user0001");
    assert_eq!(manager.append_message(assistant("calls")).expect("appended"), "answer01");
    // Results come in whatever order the tools finish; each takes its call's id.
    assert_eq!(manager.append_message(result("c2")).expect("appended"), "res00002");
    assert_eq!(manager.append_message(result("c1")).expect("appended"), "res00001");
    let random = manager.append_message(user("later")).expect("appended");
    assert_eq!(random.len(), 8, "once the plan is used up, ids are random again");
    // A planned id that is taken already is not reused: the entry gets a fresh one.
    manager.plan_message_ids(PlannedIds { in_order: ["user0001".to_owned()].into(), ..PlannedIds::default() });
    assert_ne!(manager.append_message(user("again")).expect("appended"), "user0001");
}
