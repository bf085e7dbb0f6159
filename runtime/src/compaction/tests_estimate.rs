//! Token estimates, the compaction trigger (case 18), settings, serialization and file tags.

use serde_json::json;

use super::estimate::*;
use super::file_ops::{FileOperations, format_file_tags};
use super::serialize::{serialize_agent_messages, serialize_conversation};
use super::tests_support::*;
use crate::protocol::{
    AgentMessage, AssistantContent, AssistantMessage, BashExecutionMessage, CompactionSummaryMessage, ImageContent,
    StopReason, ThinkingContent, ToolCall, ToolResultMessage, Usage, UserContent,
};

fn with_usage(message: AgentMessage, total: u64, stop: StopReason) -> AgentMessage {
    let AgentMessage::Assistant(mut assistant) = message else { panic!("not an assistant") };
    assistant.usage = Usage { input: 1, output: 2, total_tokens: total, ..Usage::default() };
    assistant.stop_reason = stop;
    AgentMessage::Assistant(assistant)
}

#[test]
fn estimates_are_a_quarter_of_the_characters_rounded_up() {
    assert_eq!(estimate_tokens(&user(chars(400))), 100);
    assert_eq!(estimate_tokens(&user(chars(401))), 101);
    // "read" + {"path":"a.txt"} = 4 + 16 characters.
    assert_eq!(estimate_tokens(&tool_call("read", json!({"path": "a.txt"}))), 5);
    let thinking = AgentMessage::Assistant(AssistantMessage {
        content: vec![
            AssistantContent::Thinking(ThinkingContent {
                thinking: chars(6).into(),
                thinking_signature: None,
                redacted: None,
            }),
            AssistantContent::text(chars(6)),
        ],
        ..Default::default()
    });
    assert_eq!(estimate_tokens(&thinking), 3);
    let image = UserContent::Image(ImageContent { data: "AAAA".into(), mime_type: "image/png".into() });
    let result = AgentMessage::ToolResult(ToolResultMessage {
        tool_call_id: "c".into(),
        tool_name: "read".into(),
        content: vec![UserContent::text(chars(8)), image],
        details: None,
        is_error: false,
        timestamp: 0,
        duration_ms: None,
    });
    assert_eq!(estimate_tokens(&result), 1202);
    let bash = AgentMessage::BashExecution(BashExecutionMessage {
        command: "ls".into(),
        output: chars(7),
        exit_code: Some(0),
        cancelled: false,
        truncated: false,
        full_output_path: None,
        timestamp: 0,
        exclude_from_context: None,
    });
    assert_eq!(estimate_tokens(&bash), 3);
    let summary = AgentMessage::CompactionSummary(CompactionSummaryMessage {
        summary: chars(10),
        tokens_before: 5,
        timestamp: 0,
    });
    assert_eq!(estimate_tokens(&summary), 3);
    // UTF-16 units, as JavaScript counts: one emoji is two.
    assert_eq!(estimate_tokens(&user("😀😀")), 1);
}

#[test]
fn context_tokens_use_the_last_valid_usage_plus_what_follows() {
    let messages = vec![
        user(chars(40)),
        with_usage(assistant(chars(40)), 1000, StopReason::Stop),
        user(chars(40)),
        with_usage(assistant(chars(40)), 99_999, StopReason::Aborted),
    ];
    let estimate = estimate_context_tokens(&messages);
    assert_eq!(
        estimate,
        ContextTokenEstimate { tokens: 1020, usage_tokens: 1000, trailing_tokens: 20, last_usage_index: Some(1) }
    );
    // A zero total falls back to the sum of the parts (1 + 2).
    let zero_total = vec![with_usage(assistant("a"), 0, StopReason::ToolUse), user(chars(4))];
    assert_eq!(estimate_context_tokens(&zero_total).tokens, 4);
    // Without usage everything is estimated.
    let none = vec![user(chars(40)), with_usage(assistant(chars(40)), 500, StopReason::Error)];
    assert_eq!(
        estimate_context_tokens(&none),
        ContextTokenEstimate { tokens: 20, usage_tokens: 0, trailing_tokens: 20, last_usage_index: None }
    );
}

#[test]
fn case_18_should_compact_is_strict() {
    let settings = CompactionSettings { reserve_tokens: 10_000, ..CompactionSettings::default() };
    assert!(should_compact(95_000, 100_000, &settings));
    assert!(!should_compact(89_000, 100_000, &settings));
    assert!(!should_compact(90_000, 100_000, &settings));
    let disabled = CompactionSettings { enabled: false, ..settings };
    assert!(!should_compact(95_000, 100_000, &disabled));
    assert!(should_compact(1, 100, &CompactionSettings { reserve_tokens: 1000, ..settings }));
}

#[test]
fn settings_use_pis_names_and_defaults() {
    let defaults = CompactionSettings::default();
    assert_eq!(defaults, CompactionSettings { enabled: true, reserve_tokens: 16_384, keep_recent_tokens: 20_000 });
    let parsed: CompactionSettings = serde_json::from_value(json!({"reserveTokens": 1000})).unwrap();
    assert_eq!(parsed, CompactionSettings { reserve_tokens: 1000, ..defaults });
    assert_eq!(
        serde_json::to_value(defaults).unwrap(),
        json!({"enabled": true, "reserveTokens": 16384, "keepRecentTokens": 20000})
    );
}

#[test]
fn serialization_labels_each_part() {
    let call = |id: &str, name: &str, arguments| {
        AssistantContent::ToolCall(ToolCall { id: id.into(), name: name.into(), arguments, thought_signature: None })
    };
    let turn = AgentMessage::Assistant(AssistantMessage {
        content: vec![
            AssistantContent::text("Let me look."),
            AssistantContent::Thinking(ThinkingContent {
                thinking: "hmm".into(),
                thinking_signature: None,
                redacted: None,
            }),
            call("1", "read", json!({"path": "a.rs", "offset": 3})),
            call("2", "bash", json!({"command": "ls \"x\""})),
        ],
        ..Default::default()
    });
    let long = format!("{}tail", chars(2000));
    let messages = vec![user("Fix a.rs"), turn, tool_result(long), tool_result(""), user("")];
    let expected = format!(
        "[User]: Fix a.rs\n\n[Assistant thinking]: hmm\n\n[Assistant]: Let me look.\n\n\
         [Assistant tool calls]: read(path=\"a.rs\", offset=3); bash(command=\"ls \\\"x\\\"\")\n\n\
         [Tool result]: {}\n\n[... 4 more characters truncated]",
        chars(2000)
    );
    assert_eq!(serialize_conversation(&llm(&messages)), expected);
}

#[test]
fn agent_only_messages_serialize_as_user_text() {
    let bash = AgentMessage::BashExecution(BashExecutionMessage {
        command: "make".into(),
        output: String::new(),
        exit_code: Some(2),
        cancelled: false,
        truncated: false,
        full_output_path: None,
        timestamp: 0,
        exclude_from_context: None,
    });
    let summary = AgentMessage::CompactionSummary(CompactionSummaryMessage {
        summary: "S".into(),
        tokens_before: 1,
        timestamp: 0,
    });
    assert_eq!(
        serialize_agent_messages(&[bash, summary]),
        "[User]: Ran `make`\n(no output)\n\nCommand exited with code 2\n\n\
         [User]: The conversation history before this point was compacted into the following summary:\n\n\
         <summary>\nS\n</summary>"
    );
}

#[test]
fn file_lists_split_read_from_modified() {
    let mut ops = FileOperations::default();
    for message in [
        tool_call("read", json!({"path": "b.rs"})),
        tool_call("read", json!({"path": "a.rs"})),
        tool_call("read", json!({"path": "c.rs"})),
        tool_call("edit", json!({"path": "c.rs", "oldText": "x", "newText": "y"})),
        tool_call("write", json!({"path": "d.rs", "content": ""})),
        tool_call("bash", json!({"path": "ignored.rs"})),
        tool_call("read", json!({"offset": 1})),
        user("read e.rs"),
    ] {
        ops.add_message(&message);
    }
    ops.add_details(&json!({"readFiles": ["z.rs"], "modifiedFiles": ["y.rs"]}));
    let lists = ops.file_lists();
    assert_eq!(lists.read_files, ["a.rs", "b.rs", "z.rs"]);
    assert_eq!(lists.modified_files, ["c.rs", "d.rs", "y.rs"]);
    assert_eq!(
        lists.to_details(),
        json!({"readFiles": ["a.rs", "b.rs", "z.rs"], "modifiedFiles": ["c.rs", "d.rs", "y.rs"]})
    );
    assert_eq!(
        lists.format_tags(),
        "\n\n<read-files>\na.rs\nb.rs\nz.rs\n</read-files>\n\n<modified-files>\nc.rs\nd.rs\ny.rs\n</modified-files>"
    );
}

#[test]
fn empty_file_blocks_are_left_out() {
    let one = vec!["a.rs".to_owned()];
    assert_eq!(format_file_tags(&[], &[]), "");
    assert_eq!(format_file_tags(&one, &[]), "\n\n<read-files>\na.rs\n</read-files>");
    assert_eq!(format_file_tags(&[], &one), "\n\n<modified-files>\na.rs\n</modified-files>");
}

#[test]
fn settings_json_overrides_the_agents_compaction_defaults_field_by_field() {
    let base = CompactionSettings { enabled: true, reserve_tokens: 4096, keep_recent_tokens: 20_000 };
    let value = serde_json::json!({"keepRecentTokens": 500, "reserveTokens": "lots"});
    let merged = base.with_settings(Some(&value));
    assert_eq!(merged, CompactionSettings { keep_recent_tokens: 500, ..base });
    assert_eq!(base.with_settings(None), base);
}
