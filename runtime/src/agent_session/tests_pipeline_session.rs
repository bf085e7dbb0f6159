//! Session operations with extensions: compactions written by an extension, the key check, prompts queued
//! while streaming, and tree moves an extension cancels.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use tempfile::TempDir;

use super::*;

/// Writes the compaction itself.
struct OwnSummary;

impl Extension for OwnSummary {
    fn name(&self) -> &str {
        "own-summary"
    }

    async fn session_before_compact(
        &self,
        event: &SessionBeforeCompactEvent,
        _ctx: &ExtensionContext,
    ) -> HookResult<CompactDecision> {
        let first_kept = event.preparation["firstKeptEntryId"].as_str().unwrap_or_default().to_owned();
        Ok(CompactDecision {
            cancel: false,
            compaction: Some(ExtensionCompaction {
                summary: "summary by the extension".into(),
                first_kept_entry_id: first_kept,
                tokens_before: 1,
                details: None,
            }),
        })
    }
}

#[tokio::test]
async fn an_extension_can_write_the_compaction_itself() {
    let dir = TempDir::new().unwrap();
    let long = "word ".repeat(40_000);
    let responses = vec![ScriptedResponse::text("First answer."), ScriptedResponse::text("Second.")];
    let (session, provider) = make_session(&dir, responses, Extensions::new().with(OwnSummary));
    session.prompt(long).await.unwrap();
    session.prompt("again".into()).await.unwrap();
    let result = session.compact_now(None).await.unwrap().expect("compacted");
    assert_eq!(result["summary"], "summary by the extension");
    assert_eq!(provider.requests().len(), 2, "no summary request went to the model");
    let entries = load_session_file(session.manager().path().unwrap()).unwrap().entries;
    let compaction = entries.iter().find(|entry| matches!(entry.kind, EntryKind::Compaction { .. })).unwrap();
    let line = serde_json::to_value(compaction).unwrap();
    assert_eq!(line["fromHook"], true);
    assert!(matches!(session.agent().messages()[0], AgentMessage::CompactionSummary(_)));
}

#[tokio::test]
async fn no_api_key_is_refused_before_anything_is_sent() {
    let dir = TempDir::new().unwrap();
    let (session, provider) = make_session(&dir, vec![ScriptedResponse::text("never")], Extensions::new());
    *session.api_key.lock().expect("key lock") = None;
    let error = session.prompt("hi".into()).await.unwrap_err();
    assert_eq!(error, AgentError::NoApiKey("test".into()));
    assert!(provider.requests().is_empty());
}

#[tokio::test]
async fn a_prompt_while_streaming_is_queued_by_its_streaming_behavior() {
    let dir = TempDir::new().unwrap();
    let responses = vec![
        ScriptedResponse::text("slow first answer").with_delay(std::time::Duration::from_millis(200)),
        ScriptedResponse::text("answer to the follow-up"),
    ];
    let (session, provider) = make_session(&dir, responses, Extensions::new());
    let second = async {
        while !session.agent().is_streaming() {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        let refused = session.prompt("no behavior".into()).await;
        let options = PromptOptions { streaming_behavior: Some(StreamingBehavior::FollowUp), ..Default::default() };
        let queued = session.prompt_with("and then this".into(), options).await;
        (refused, queued)
    };
    let (first, (refused, queued)) = tokio::join!(session.prompt("first".into()), second);
    first.unwrap();
    queued.unwrap();
    assert_eq!(refused.unwrap_err(), AgentError::StreamingBehaviorRequired);
    let requests = provider.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(texts(&requests[1].context), ["user: first", "assistant: slow first answer", "user: and then this"]);
}

/// Refuses every move in the session tree and counts the moves it was told about.
struct StayPut(Arc<AtomicUsize>);

impl Extension for StayPut {
    fn name(&self) -> &str {
        "stay-put"
    }

    async fn session_before_tree(
        &self,
        event: &SessionBeforeTreeEvent,
        _ctx: &ExtensionContext,
    ) -> HookResult<CancelResult> {
        Ok(CancelResult { cancel: !event.preparation.target_id.is_empty() })
    }

    async fn session_tree(&self, _event: &SessionTreeEvent, _ctx: &ExtensionContext) -> HookResult<()> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

#[tokio::test]
async fn an_extension_can_cancel_a_move_in_the_session_tree() {
    let dir = TempDir::new().unwrap();
    let moved = Arc::new(AtomicUsize::new(0));
    let (session, _provider) =
        make_session(&dir, vec![ScriptedResponse::text("one")], Extensions::new().with(StayPut(moved.clone())));
    session.prompt("first".into()).await.unwrap();
    let (first_id, leaf) = {
        let manager = session.manager();
        let first = manager.entries().iter().find(|entry| matches!(entry.kind, EntryKind::Message { .. })).unwrap();
        (first.id.clone(), manager.tree().leaf_id().map(str::to_owned))
    };
    let error = session.navigate_tree(&first_id, false, None).await.unwrap_err();
    assert!(error.contains("cancelled"), "{error}");
    assert_eq!(session.manager().tree().leaf_id().map(str::to_owned), leaf, "the leaf did not move");
    assert_eq!(moved.load(Ordering::SeqCst), 0);
}

/// A tool registered by an extension, with its own line and guideline for the system prompt.
struct Clock {
    schema: Value,
    guidelines: Vec<String>,
}

impl crate::tools::AgentTool for Clock {
    fn name(&self) -> &str {
        "clock"
    }
    fn label(&self) -> &str {
        "Clock"
    }
    fn description(&self) -> &str {
        "Tells the time"
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    fn prompt_snippet(&self) -> Option<&str> {
        Some("Read the project clock")
    }
    fn prompt_guidelines(&self) -> &[String] {
        &self.guidelines
    }
    fn execute(&self, _args: Value, _ctx: crate::tools::ToolContext) -> crate::tools::ToolFuture<'_> {
        Box::pin(async { Ok(crate::protocol::AgentToolResult::text("12:00")) })
    }
}

/// Registers the clock, queues a follow-up after every tool, and signs every finished answer.
struct ClockExtension;

impl Extension for ClockExtension {
    fn name(&self) -> &str {
        "clock"
    }

    fn register(&self, registrar: &mut ExtensionRegistrar) {
        registrar.tool(Arc::new(Clock {
            schema: json!({"type": "object", "properties": {}}),
            guidelines: vec!["Ask the clock before guessing the time".to_owned()],
        }));
    }

    async fn tool_execution_end(&self, _event: &ToolExecutionEndEvent, ctx: &ExtensionContext) -> HookResult<()> {
        let message = ExtensionMessage { display: true, ..ExtensionMessage::text("reminder", "double-check the time") };
        ctx.send_message(message, SendOptions { deliver_as: Some(Delivery::FollowUp), ..SendOptions::default() });
        Ok(())
    }

    async fn message_end(&self, event: &MessageEvent, _ctx: &ExtensionContext) -> HookResult<Option<AgentMessage>> {
        let AgentMessage::Assistant(answer) = &event.message else { return Ok(None) };
        let mut signed = answer.clone();
        signed.content.push(crate::protocol::AssistantContent::text(" (signed)"));
        Ok(Some(AgentMessage::Assistant(signed)))
    }
}

#[tokio::test]
async fn registered_tools_follow_ups_and_replaced_messages() {
    let dir = TempDir::new().unwrap();
    let responses = vec![
        ScriptedResponse::tool_call("clock", json!({})),
        ScriptedResponse::text("It is noon."),
        ScriptedResponse::text("Still noon."),
    ];
    let (session, provider) = make_session(&dir, responses, Extensions::new().with(ClockExtension));
    assert_eq!(session.active_tools(), ["read", "bash", "clock"]);
    session.prompt("What time is it?".into()).await.unwrap();
    let requests = provider.requests();
    assert_eq!(requests.len(), 3, "the follow-up started one more turn");
    let first = &requests[0].context;
    assert!(first.system_prompt.contains("- clock: Read the project clock"), "{}", first.system_prompt);
    assert!(first.system_prompt.contains("- Ask the clock before guessing the time"), "{}", first.system_prompt);
    assert_eq!(first.tools.iter().map(|tool| tool.name.as_str()).collect::<Vec<_>>(), ["read", "bash", "clock"]);
    assert_eq!(texts(&requests[1].context).last().unwrap(), "tool: 12:00");
    assert_eq!(
        texts(&requests[2].context)[3..],
        ["assistant: It is noon. (signed)", "user: double-check the time"],
        "the replaced answer and the follow-up reach the next call"
    );
    let entries = load_session_file(session.manager().path().unwrap()).unwrap().entries;
    let saved: Vec<String> = entries
        .iter()
        .filter_map(|entry| match &entry.kind {
            EntryKind::Message { message: AgentMessage::Assistant(answer) } => Some(answer.text()),
            EntryKind::CustomMessage { custom_type, display, .. } => Some(format!("{custom_type} {display}")),
            _ => None,
        })
        .collect();
    assert_eq!(saved, [" (signed)", "It is noon. (signed)", "reminder true", "Still noon. (signed)"]);
}
