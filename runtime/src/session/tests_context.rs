//! Tests of `build_session_context` (pi-facts case 19, settings restoration, summaries, deep sessions) and of
//! the coding agent's `convert_to_llm`.

use serde_json::json;

use super::*;
use crate::protocol::{
    AgentMessage, AssistantContent, AssistantMessage, BashExecutionMessage, BranchSummaryMessage,
    CompactionSummaryMessage, CustomMessage, Message, MessageContent, ToolResultMessage, UserContent, UserMessage,
};

fn user(text: &str) -> AgentMessage {
    AgentMessage::User(UserMessage { content: MessageContent::Blocks(vec![UserContent::text(text)]), timestamp: 1 })
}

fn assistant(text: &str, model: &str) -> AgentMessage {
    AgentMessage::Assistant(AssistantMessage {
        content: vec![AssistantContent::text(text)],
        provider: "mock".into(),
        model: model.into(),
        timestamp: 2,
        ..AssistantMessage::default()
    })
}

fn ts(n: usize) -> String {
    format!("2026-03-15T22:{:02}:{:02}.123Z", n / 60 % 60, n % 60)
}

fn entry(id: &str, parent: Option<&str>, kind: EntryKind) -> SessionEntry {
    let n = id.parse::<usize>().unwrap_or(0);
    SessionEntry { id: id.into(), parent_id: parent.map(Into::into), timestamp: ts(n), kind }
}

fn msg(id: &str, parent: Option<&str>, message: AgentMessage) -> SessionEntry {
    entry(id, parent, EntryKind::Message { message })
}

fn compaction(id: &str, parent: &str, summary: &str, first_kept: &str) -> SessionEntry {
    let kind = EntryKind::Compaction {
        summary: summary.into(),
        first_kept_entry_id: first_kept.into(),
        tokens_before: 5000,
        details: None,
        from_hook: None,
    };
    entry(id, Some(parent), kind)
}

/// One label per message: the text of user/assistant messages, the role for the rest.
fn texts(context: &SessionContext) -> Vec<String> {
    context
        .messages
        .iter()
        .map(|m| match m {
            AgentMessage::User(u) => u.content.text(),
            AgentMessage::Assistant(a) => a.text(),
            AgentMessage::CompactionSummary(c) => format!("summary:{}", c.summary),
            AgentMessage::BranchSummary(b) => format!("branch:{}", b.summary),
            other => other.role().to_owned(),
        })
        .collect()
}

/// `[1u, 2a, 3u, 4a, 5 compaction(firstKept=3), 6u, 7a]`.
fn compacted_session() -> Vec<SessionEntry> {
    vec![
        msg("1", None, user("1")),
        msg("2", Some("1"), assistant("2", "m")),
        msg("3", Some("2"), user("3")),
        msg("4", Some("3"), assistant("4", "m")),
        compaction("5", "4", "S", "3"),
        msg("6", Some("5"), user("6")),
        msg("7", Some("6"), assistant("7", "m")),
    ]
}

#[test]
fn a_compaction_emits_its_summary_then_the_kept_entries_then_the_rest() {
    let entries = compacted_session();
    let context = build_session_context(&entries, Some("7"));
    assert_eq!(texts(&context), ["summary:S", "3", "4", "6", "7"]);
    let AgentMessage::CompactionSummary(summary) = &context.messages[0] else { panic!("{context:?}") };
    assert_eq!(summary.tokens_before, 5000);
    assert_eq!(summary.timestamp, iso_to_ms(&ts(5)));
    assert_eq!(iso_to_ms("2026-03-15T22:40:18.123Z"), 1_773_614_418_123);
}

#[test]
fn only_the_last_compaction_on_the_path_counts() {
    let mut entries = compacted_session();
    entries.push(compaction("8", "7", "T", "6"));
    entries.push(msg("9", Some("8"), user("9")));
    assert_eq!(texts(&build_session_context(&entries, Some("9"))), ["summary:T", "6", "7", "9"]);
    // A compaction on another branch does not count.
    entries.push(msg("10", Some("4"), user("10")));
    assert_eq!(texts(&build_session_context(&entries, Some("10"))), ["1", "2", "3", "4", "10"]);
}

#[test]
fn a_null_leaf_gives_nothing_and_an_unknown_leaf_falls_back_to_the_last_entry() {
    let entries = compacted_session();
    let none = build_session_context(&entries, None);
    assert!(none.messages.is_empty());
    assert_eq!(none.thinking_level, "off");
    assert_eq!(none.model, None);
    assert_eq!(texts(&build_session_context(&entries, Some("nope"))), ["summary:S", "3", "4", "6", "7"]);
    assert!(build_session_context(&[], Some("nope")).messages.is_empty());
}

#[test]
fn a_missing_parent_ends_the_path_at_that_entry() {
    let entries = vec![msg("1", None, user("1")), msg("2", Some("missing"), user("2"))];
    assert_eq!(texts(&build_session_context(&entries, Some("2"))), ["2"]);
}

#[test]
fn parents_are_found_just_before_their_child_or_by_id_across_branches() {
    // 1 ← 2 ← 3 and 2 ← 4: entry 4's parent is not the entry before it.
    let entries = vec![
        msg("1", None, user("1")),
        msg("2", Some("1"), user("2")),
        msg("3", Some("2"), user("3")),
        msg("4", Some("2"), user("4")),
        msg("5", Some("4"), user("5")),
    ];
    assert_eq!(texts(&build_session_context(&entries, Some("5"))), ["1", "2", "4", "5"]);
    assert_eq!(texts(&build_session_context(&entries, Some("3"))), ["1", "2", "3"]);
}

#[test]
fn over_a_repeated_id_the_tree_takes_the_last_entry_with_it_as_pi_does() {
    // "1" twice; "2" names "1" as its parent and follows the first of them.
    let entries = vec![msg("1", None, user("first")), msg("2", Some("1"), user("2")), msg("1", None, user("second"))];
    let tree = crate::session::SessionTree::from_entries(entries.clone());
    assert_eq!(texts(&tree.context_at(Some("2"))), ["second", "2"]);
    // The free function takes ids as unique and finds the parent just before.
    assert_eq!(texts(&build_session_context(&entries, Some("2"))), ["first", "2"]);
}

#[test]
fn thinking_level_and_model_come_from_the_latest_entries_on_the_path() {
    let entries = vec![
        entry("1", None, EntryKind::ModelChange { provider: "p".into(), model_id: "first".into() }),
        entry("2", Some("1"), EntryKind::ThinkingLevelChange { thinking_level: "high".into() }),
        msg("3", Some("2"), user("u")),
        msg("4", Some("3"), assistant("a", "from-assistant")),
        entry("5", Some("4"), EntryKind::ThinkingLevelChange { thinking_level: "low".into() }),
        entry("6", Some("3"), EntryKind::ModelChange { provider: "q".into(), model_id: "branch".into() }),
    ];
    let context = build_session_context(&entries, Some("5"));
    assert_eq!(context.thinking_level, "low");
    assert_eq!(context.model, Some(("mock".into(), "from-assistant".into())));
    let other = build_session_context(&entries, Some("6"));
    assert_eq!(other.thinking_level, "high");
    assert_eq!(other.model, Some(("q".into(), "branch".into())));
}

#[test]
fn a_fallbacks_answers_do_not_choose_the_model_a_resumed_session_runs_on() {
    let fallback = EntryKind::Custom { custom_type: MODEL_FALLBACK_ENTRY.into(), data: None };
    let entries = vec![
        entry("1", None, EntryKind::ModelChange { provider: "mock".into(), model_id: "chosen".into() }),
        msg("2", Some("1"), user("u")),
        msg("3", Some("2"), assistant("failed", "chosen")),
        entry("4", Some("3"), fallback),
        msg("5", Some("4"), assistant("a", "backup")),
        msg("6", Some("5"), user("again")),
        msg("7", Some("6"), assistant("b", "later")),
    ];
    assert_eq!(build_session_context(&entries, Some("5")).model, Some(("mock".into(), "chosen".into())));
    // The next prompt ran on a model again: its answer counts.
    assert_eq!(build_session_context(&entries, Some("7")).model, Some(("mock".into(), "later".into())));
}

#[test]
fn custom_messages_and_branch_summaries_join_the_context_and_other_entries_do_not() {
    let content = MessageContent::Text("from an extension".into());
    let entries = vec![
        msg("1", None, user("u")),
        entry("2", Some("1"), EntryKind::Custom { custom_type: "state".into(), data: Some(json!({"x": 1})) }),
        entry(
            "3",
            Some("2"),
            EntryKind::CustomMessage {
                custom_type: "ext".into(),
                content: content.clone(),
                display: true,
                details: Some(json!({"d": 2})),
            },
        ),
        entry("4", Some("3"), EntryKind::Label { target_id: "1".into(), label: Some("start".into()) }),
        entry("5", Some("4"), EntryKind::SessionInfo { name: Some("n".into()) }),
        entry(
            "6",
            Some("5"),
            EntryKind::BranchSummary {
                from_id: "1".into(),
                summary: "went elsewhere".into(),
                details: None,
                from_hook: None,
            },
        ),
        entry(
            "7",
            Some("6"),
            EntryKind::BranchSummary { from_id: "1".into(), summary: String::new(), details: None, from_hook: None },
        ),
    ];
    let context = build_session_context(&entries, Some("7"));
    let expected_custom = AgentMessage::Custom(CustomMessage {
        custom_type: "ext".into(),
        content,
        display: true,
        details: Some(json!({"d": 2})),
        timestamp: iso_to_ms(&ts(3)),
    });
    let expected_branch = AgentMessage::BranchSummary(BranchSummaryMessage {
        summary: "went elsewhere".into(),
        from_id: "1".into(),
        timestamp: iso_to_ms(&ts(6)),
    });
    assert_eq!(context.messages, vec![user("u"), expected_custom, expected_branch]);
}

#[test]
fn a_hundred_thousand_entries_in_a_line_do_not_overflow_the_stack() {
    let count: usize = 100_000;
    let entries: Vec<SessionEntry> = (0..count)
        .map(|i| SessionEntry {
            id: format!("{i:08x}"),
            parent_id: i.checked_sub(1).map(|p| format!("{p:08x}")),
            timestamp: ts(i),
            kind: EntryKind::Message { message: user("x") },
        })
        .collect();
    let last = format!("{:08x}", count - 1);
    assert_eq!(build_session_context(&entries, Some(&last)).messages.len(), count);
    let tree = SessionTree::from_entries(entries);
    assert_eq!(tree.context().messages.len(), count);
    assert_eq!(convert_to_llm(&tree.context().messages).len(), count);
}

fn bash(output: &str) -> BashExecutionMessage {
    BashExecutionMessage {
        command: "ls".into(),
        output: output.into(),
        exit_code: Some(0),
        cancelled: false,
        truncated: false,
        full_output_path: None,
        timestamp: 77,
        exclude_from_context: None,
    }
}

fn user_text(message: &Message) -> (String, i64) {
    match message {
        Message::User(UserMessage { content, timestamp }) => (content.text(), *timestamp),
        other => panic!("not a user message: {other:?}"),
    }
}

#[test]
fn bash_runs_become_user_text() {
    assert_eq!(bash_execution_to_text(&bash("a\nb")), "Ran `ls`\n```\na\nb\n```");
    assert_eq!(bash_execution_to_text(&bash("")), "Ran `ls`\n(no output)");
    let failed = BashExecutionMessage { exit_code: Some(2), ..bash("x") };
    assert_eq!(bash_execution_to_text(&failed), "Ran `ls`\n```\nx\n```\n\nCommand exited with code 2");
    let cancelled = BashExecutionMessage { cancelled: true, exit_code: None, ..bash("x") };
    assert_eq!(bash_execution_to_text(&cancelled), "Ran `ls`\n```\nx\n```\n\n(command cancelled)");
    let truncated = BashExecutionMessage { truncated: true, full_output_path: Some("/tmp/o.log".into()), ..bash("x") };
    assert!(bash_execution_to_text(&truncated).ends_with("\n\n[Output truncated. Full output: /tmp/o.log]"));
    let no_path = BashExecutionMessage { truncated: true, ..bash("x") };
    // Like pi, a truncated run without a saved full output gets no note.
    assert_eq!(bash_execution_to_text(&no_path), "Ran `ls`\n```\nx\n```");

    let converted = convert_to_llm(&[
        AgentMessage::BashExecution(bash("out")),
        AgentMessage::BashExecution(BashExecutionMessage { exclude_from_context: Some(true), ..bash("hidden") }),
    ]);
    assert_eq!(converted.len(), 1);
    assert_eq!(user_text(&converted[0]), ("Ran `ls`\n```\nout\n```".to_owned(), 77));
}

#[test]
fn convert_to_llm_keeps_llm_roles_and_turns_the_others_into_user_messages() {
    let tool_result = AgentMessage::ToolResult(ToolResultMessage {
        tool_call_id: "c1".into(),
        tool_name: "read".into(),
        content: vec![UserContent::text("file")],
        details: None,
        is_error: false,
        timestamp: 3,
        duration_ms: None,
    });
    let custom = AgentMessage::Custom(CustomMessage {
        custom_type: "ext".into(),
        content: MessageContent::Text("hello".into()),
        display: false,
        details: None,
        timestamp: 4,
    });
    let branch =
        AgentMessage::BranchSummary(BranchSummaryMessage { summary: "B".into(), from_id: "root".into(), timestamp: 5 });
    let compacted = AgentMessage::CompactionSummary(CompactionSummaryMessage {
        summary: "C".into(),
        tokens_before: 9,
        timestamp: 6,
    });
    let messages = [user("u"), assistant("a", "m"), tool_result.clone(), custom, branch, compacted];
    let converted = convert_to_llm(&messages);
    assert_eq!(converted.len(), 6);
    assert_eq!(
        converted[0],
        Message::User(UserMessage { content: MessageContent::Blocks(vec![UserContent::text("u")]), timestamp: 1 })
    );
    assert_eq!(converted[1], messages[1].as_llm_message().unwrap());
    assert_eq!(converted[2], tool_result.as_llm_message().unwrap());
    assert_eq!(
        converted[3],
        Message::User(UserMessage { content: MessageContent::Blocks(vec![UserContent::text("hello")]), timestamp: 4 })
    );
    assert_eq!(
        user_text(&converted[4]),
        (
            "The following is a summary of a branch that this conversation came back from:\n\n<summary>\nB</summary>"
                .to_owned(),
            5
        )
    );
    assert_eq!(
        user_text(&converted[5]),
        (
            "The conversation history before this point was compacted into the following summary:\n\n<summary>\nC\n</summary>"
                .to_owned(),
            6
        )
    );
    assert_eq!((coding_agent_convert_to_llm())(&messages), converted);
}

#[test]
fn context_edits_drop_or_replace_their_target_from_then_on() {
    let edit = |id: &str, parent: &str, target: &str, replacement: Option<AgentMessage>| {
        entry(id, Some(parent), EntryKind::ContextEdit { target_id: target.into(), replacement })
    };
    let entries = vec![
        msg("u1", None, user("hi")),
        msg("a1", Some("u1"), assistant("broken", "m")),
        edit("e1", "a1", "a1", None),
        msg("a2", Some("e1"), assistant("fine", "m")),
        edit("e2", "a2", "u1", Some(user("hello"))),
    ];
    assert_eq!(texts(&build_session_context(&entries, Some("e2"))), ["hello", "fine"]);
    // Before the edits, on the path up to `a1`, the answer is still there.
    assert_eq!(texts(&build_session_context(&entries, Some("a1"))), ["hi", "broken"]);
    // pi 1.5 writes `replacement: null`; the line reads back as the same entry.
    let line = r#"{"type":"context_edit","id":"e1","parentId":"a1","timestamp":"2026-11-27T13:14:34.067Z","targetId":"a1","replacement":null}"#;
    let parsed: SessionEntry = serde_json::from_str(line).unwrap();
    assert!(matches!(&parsed.kind, EntryKind::ContextEdit { target_id, replacement: None } if target_id == "a1"));
    assert_eq!(serde_json::to_string(&parsed).unwrap(), line);
}
