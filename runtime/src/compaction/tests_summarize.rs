//! compact() and the branch summary against the scripted provider: the request it receives, the merged
//! split-turn text, file tags, errors and cancellation.

use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::branch_summary::*;
use super::estimate::CompactionSettings;
use super::prepare::prepare_compaction;
use super::prompts::*;
use super::serialize::serialize_agent_messages;
use super::summarize::{CompactionError, compact};
use super::tests_support::*;
use crate::ai::{ScriptedProvider, ScriptedResponse, ThinkingLevel};
use crate::protocol::AgentMessage;
use crate::session::SessionEntry;

fn settings(keep: u64) -> CompactionSettings {
    CompactionSettings { keep_recent_tokens: keep, ..CompactionSettings::default() }
}

/// A finished first turn (read then edit of src/main.rs), then a long second turn.
fn two_turns() -> Vec<SessionEntry> {
    chain(vec![
        message(user("Fix the bug in main.rs")),
        message(tool_call("read", json!({"path": "src/main.rs"}))),
        message(tool_result("fn main() {}")),
        message(tool_call("read", json!({"path": "Cargo.toml"}))),
        message(tool_result("[package]")),
        message(tool_call("edit", json!({"path": "src/main.rs", "oldText": "a", "newText": "b"}))),
        message(tool_result("ok")),
        message(user(chars(400))),
        message(assistant(chars(400))),
    ])
}

fn messages_of(entries: &[SessionEntry]) -> Vec<AgentMessage> {
    entries.iter().filter_map(|e| e.message().cloned()).collect()
}

#[tokio::test]
async fn compact_sends_the_transcript_and_appends_file_tags() {
    let entries = two_turns();
    let prep = prepare_compaction(&entries, &settings(150)).unwrap();
    assert_eq!(prep.first_kept_entry_id, "e7");
    let (registry, provider) = scripted_registry(ScriptedProvider::new([ScriptedResponse::text("## Goal\nFix it")]));
    let model = scripted_model(true);
    let cancel = CancellationToken::new();
    let result = compact(&prep, &model, &registry, Some("key"), Some("the tests"), &cancel).await.unwrap();

    assert_eq!(
        result.summary,
        "## Goal\nFix it\n\n<read-files>\nCargo.toml\n</read-files>\n\n<modified-files>\nsrc/main.rs\n</modified-files>"
    );
    assert_eq!(result.first_kept_entry_id, "e7");
    assert_eq!(result.tokens_before, prep.tokens_before);
    assert_eq!(result.details, Some(json!({"readFiles": ["Cargo.toml"], "modifiedFiles": ["src/main.rs"]})));

    let requests = provider.scripted.requests();
    assert_eq!(requests.len(), 1);
    let context = &requests[0].context;
    assert_eq!(context.system_prompt, SUMMARIZATION_SYSTEM_PROMPT);
    assert!(context.system_prompt.contains("Do NOT continue the conversation"));
    assert!(context.tools.is_empty());
    let transcript = serialize_agent_messages(&messages_of(&entries[..7]));
    assert!(
        transcript.starts_with("[User]: Fix the bug in main.rs\n\n[Assistant tool calls]: read(path=\"src/main.rs\")")
    );
    assert_eq!(
        request_text(context),
        format!(
            "<conversation>\n{transcript}\n</conversation>\n\n{SUMMARIZATION_PROMPT}\n\nAdditional focus: the tests"
        )
    );
    let seen = provider.seen.lock().unwrap().clone();
    assert_eq!(seen[0].max_tokens, Some(13_107));
    assert_eq!(seen[0].reasoning, Some(ThinkingLevel::High));
    assert_eq!(seen[0].api_key.as_deref(), Some("key"));
}

#[tokio::test]
async fn a_previous_summary_switches_to_the_update_prompt() {
    let mut entries = two_turns();
    let mut earlier = chain(vec![
        message(user("old")),
        crate::session::EntryKind::Compaction {
            summary: "PREVIOUS".into(),
            first_kept_entry_id: "e0".into(),
            tokens_before: 5000,
            details: Some(json!({"readFiles": ["old.rs"], "modifiedFiles": []})),
            from_hook: None,
        },
    ]);
    for (i, entry) in entries.iter_mut().enumerate() {
        entry.id = format!("n{i}");
    }
    earlier.append(&mut entries);
    let prep = prepare_compaction(&earlier, &settings(150)).unwrap();
    let (registry, provider) = scripted_registry(ScriptedProvider::new([ScriptedResponse::text("UPDATED")]));
    let model = scripted_model(false);
    let result = compact(&prep, &model, &registry, None, None, &CancellationToken::new()).await.unwrap();
    assert!(result.summary.starts_with("UPDATED\n\n<read-files>\nCargo.toml\nold.rs\n</read-files>"));
    let text = request_text(&provider.scripted.requests()[0].context);
    assert!(text.ends_with(&format!(
        "</conversation>\n\n<previous-summary>\nPREVIOUS\n</previous-summary>\n\n{UPDATE_SUMMARIZATION_PROMPT}"
    )));
    assert!(UPDATE_SUMMARIZATION_PROMPT.contains("PRESERVE") && UPDATE_SUMMARIZATION_PROMPT.contains("ADD"));
    assert_eq!(provider.seen.lock().unwrap()[0].reasoning, None);
}

#[tokio::test(start_paused = true)]
async fn a_split_turn_summarizes_history_and_prefix_concurrently() {
    let entries = case_16_entries();
    let prep = prepare_compaction(&entries, &settings(100)).unwrap();
    assert!(prep.is_split_turn);
    let slow = |text: &str| ScriptedResponse::text(text).with_delay(Duration::from_millis(100));
    let (registry, provider) = scripted_registry(ScriptedProvider::new([slow("HISTORY"), slow("PREFIX")]));
    let model = scripted_model(false);
    let started = tokio::time::Instant::now();
    let result = compact(&prep, &model, &registry, None, None, &CancellationToken::new()).await.unwrap();
    // Each scripted answer takes five 100 ms steps; run one after the other they would take a second.
    assert!(started.elapsed() < Duration::from_millis(900), "{:?}", started.elapsed());
    assert_eq!(
        result.summary,
        "HISTORY\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX\n\n<read-files>\na.txt\n</read-files>"
    );
    let requests = provider.scripted.requests();
    assert!(request_text(&requests[0].context).ends_with(SUMMARIZATION_PROMPT));
    let prefix = request_text(&requests[1].context);
    let prefix_transcript = serialize_agent_messages(&messages_of(&entries[2..5]));
    assert_eq!(
        prefix,
        format!("<conversation>\n{prefix_transcript}\n</conversation>\n\n{TURN_PREFIX_SUMMARIZATION_PROMPT}")
    );
    let seen = provider.seen.lock().unwrap().clone();
    assert_eq!((seen[0].max_tokens, seen[1].max_tokens), (Some(13_107), Some(8192)));
}

#[tokio::test]
async fn case_17_has_no_prior_history() {
    let entries = case_17_entries();
    let prep = prepare_compaction(&entries, &settings(150)).unwrap();
    let (registry, provider) = scripted_registry(ScriptedProvider::new([ScriptedResponse::text("PREFIX")]));
    let result =
        compact(&prep, &scripted_model(false), &registry, None, None, &CancellationToken::new()).await.unwrap();
    assert_eq!(result.summary, "No prior history.\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX");
    assert_eq!(result.first_kept_entry_id, "e2");
    assert_eq!(provider.scripted.requests().len(), 1);
}

#[tokio::test]
async fn llm_errors_and_cancellation_become_compaction_errors() {
    let prep = prepare_compaction(&two_turns(), &settings(150)).unwrap();
    let model = scripted_model(false);
    let (registry, _) = scripted_registry(ScriptedProvider::new([ScriptedResponse::error("overloaded")]));
    let error = compact(&prep, &model, &registry, None, None, &CancellationToken::new()).await.unwrap_err();
    assert_eq!(error, CompactionError::Summarization("overloaded".into()));
    assert_eq!(error.to_string(), "Summarization failed: overloaded");

    let (registry, _) = scripted_registry(ScriptedProvider::new([ScriptedResponse::text("x").hanging_after(1)]));
    let cancel = CancellationToken::new();
    let canceller = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        canceller.cancel();
    });
    let error = compact(&prep, &model, &registry, None, None, &cancel).await.unwrap_err();
    assert_eq!(error, CompactionError::Aborted);

    let split = prepare_compaction(&case_16_entries(), &settings(100)).unwrap();
    let responses = [ScriptedResponse::text("HISTORY"), ScriptedResponse::error("bad prefix")];
    let (registry, _) = scripted_registry(ScriptedProvider::new(responses));
    let error = compact(&split, &model, &registry, None, None, &CancellationToken::new()).await.unwrap_err();
    assert_eq!(error.to_string(), "Turn prefix summarization failed: bad prefix");
}

/// u1 → a1 → {u2 → a2 (old leaf, after a read and its result), u3 (target)}.
fn tree() -> Vec<SessionEntry> {
    let mut entries = chain(vec![
        message(user("root question")),
        message(assistant("root answer")),
        message(user("try approach A")),
        message(tool_call("write", json!({"path": "a.rs", "content": ""}))),
        message(tool_result(chars(4000))),
        message(assistant("A done")),
        message(user("try approach B")),
    ]);
    entries[6].parent_id = Some("e1".into());
    entries
}

#[test]
fn branch_entries_run_from_the_old_leaf_to_the_common_ancestor() {
    let entries = tree();
    let collected = collect_branch_entries(&entries, Some("e5"), "e6");
    assert_eq!(collected.common_ancestor_id.as_deref(), Some("e1"));
    let ids: Vec<&str> = collected.entries.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, ["e2", "e3", "e4", "e5"]);
    assert_eq!(collect_branch_entries(&entries, None, "e6"), CollectedBranch::default());

    let prepared = prepare_branch_entries(&collected.entries, 0);
    assert_eq!(prepared.messages.len(), 3, "the tool result is skipped");
    assert_eq!(prepared.file_ops.file_lists().modified_files, ["a.rs"]);
    // With a budget of 5 tokens only the newest message fits ("A done" is 2 tokens, the write call 9).
    let tight = prepare_branch_entries(&collected.entries, 5);
    assert_eq!(tight.messages, vec![collected.entries[3].message().unwrap().clone()]);
    assert_eq!(tight.file_ops.file_lists().modified_files, ["a.rs"], "file ops of the overflowing message count");
}

#[test]
fn a_summary_that_overflows_is_kept_while_under_ninety_percent() {
    let summary = |n| crate::session::EntryKind::BranchSummary {
        from_id: "x".into(),
        summary: chars(n),
        details: Some(json!({"readFiles": ["r.rs"], "modifiedFiles": []})),
        from_hook: None,
    };
    let entries = chain(vec![summary(400), message(user(chars(40)))]);
    let prepared = prepare_branch_entries(&entries, 100);
    assert_eq!(prepared.messages.len(), 2);
    assert_eq!(prepared.total_tokens, 110);
    assert_eq!(prepared.file_ops.file_lists().read_files, ["r.rs"]);
    let crowded = chain(vec![summary(400), message(user(chars(380)))]);
    assert_eq!(prepare_branch_entries(&crowded, 100).messages.len(), 1);
}

#[tokio::test]
async fn the_branch_summary_gets_the_preamble_and_file_tags() {
    let entries = tree();
    let collected = collect_branch_entries(&entries, Some("e5"), "e6");
    let (registry, provider) = scripted_registry(ScriptedProvider::new([ScriptedResponse::text("## Goal\nA")]));
    let options = BranchSummaryOptions {
        reserve_tokens: 16_384,
        custom_instructions: Some("be short".into()),
        replace_instructions: false,
    };
    let model = scripted_model(true);
    let result =
        generate_branch_summary(&collected.entries, &model, &registry, None, &options, &CancellationToken::new())
            .await
            .unwrap();
    assert_eq!(
        result.summary,
        format!("{BRANCH_SUMMARY_PREAMBLE}## Goal\nA\n\n<modified-files>\na.rs\n</modified-files>")
    );
    assert!(result.summary.starts_with(
        "The user explored a different conversation branch before returning here.\nSummary of that exploration:\n\n"
    ));
    let context = &provider.scripted.requests()[0].context;
    assert_eq!(context.system_prompt, SUMMARIZATION_SYSTEM_PROMPT);
    assert!(
        request_text(context)
            .ends_with(&format!("</conversation>\n\n{BRANCH_SUMMARY_PROMPT}\n\nAdditional focus: be short"))
    );
    let seen = provider.seen.lock().unwrap().clone();
    assert_eq!((seen[0].max_tokens, seen[0].reasoning), (Some(BRANCH_SUMMARY_MAX_TOKENS), None));

    let empty =
        generate_branch_summary(&[], &model, &registry, None, &options, &CancellationToken::new()).await.unwrap();
    assert_eq!(empty.summary, "No content to summarize");
}
