//! AgentSession tests over the scripted provider and a real session file: messages saved as they finish,
//! manual compaction with instructions, and tree navigation with and without a branch summary.

use std::sync::Arc;

use tempfile::TempDir;

use super::*;
use crate::agent::{Agent, AgentOptions};
use crate::ai::{Model, ProviderRegistry, ScriptedProvider, ScriptedResponse};
use crate::protocol::{AgentMessage, MessageContent, SessionOnlyEvent};
use crate::session::{EntryKind, SessionManager, load_session_file};

fn session(dir: &TempDir, responses: Vec<ScriptedResponse>) -> (AgentSession, ScriptedProvider) {
    let emit: SessionEventSink = Arc::new(|_: &SessionOnlyEvent| {});
    session_with_sink(dir, responses, emit)
}

fn session_with_sink(
    dir: &TempDir,
    responses: Vec<ScriptedResponse>,
    emit: SessionEventSink,
) -> (AgentSession, ScriptedProvider) {
    let provider = ScriptedProvider::new(responses);
    let mut registry = ProviderRegistry::new();
    registry.register(Arc::new(provider.clone()));
    let registry = Arc::new(registry);
    let agent = Agent::new(AgentOptions {
        model: Some(Model::new("test", "test-model", "scripted", "http://127.0.0.1:9")),
        system_prompt: "You are a test.".into(),
        api_key: Some("test-key".into()),
        convert_to_llm: Some(crate::session::coding_agent_convert_to_llm()),
        ..AgentOptions::new(registry.clone())
    });
    let manager = SessionManager::create(&dir.path().join("sessions"), dir.path()).unwrap();
    let session = AgentSession::new(agent, manager, SessionSettings::default(), registry, None, emit).unwrap();
    (session, provider)
}

fn user_text(message: &AgentMessage) -> Option<String> {
    match message {
        AgentMessage::User(user) => match &user.content {
            MessageContent::Text(text) => Some(text.clone()),
            MessageContent::Blocks(blocks) => blocks.iter().find_map(|b| b.as_text().map(str::to_owned)),
        },
        _ => None,
    }
}

#[tokio::test]
async fn finished_messages_reach_the_session_file() {
    let dir = TempDir::new().unwrap();
    let (session, _provider) = session(&dir, vec![ScriptedResponse::text("Hello back.")]);
    session.prompt("Hello".into()).await.unwrap();
    let path = session.manager().path().map(ToOwned::to_owned).expect("written after the first answer");
    let loaded = load_session_file(&path).unwrap();
    let kinds: Vec<&str> = loaded.entries.iter().map(|entry| entry.kind.type_name()).collect();
    assert_eq!(kinds, ["model_change", "thinking_level_change", "message", "message"]);
    assert!(session.write_error().is_none());
}

#[tokio::test]
async fn manual_compaction_sends_the_instructions_and_replaces_the_context() {
    let dir = TempDir::new().unwrap();
    let long = "word ".repeat(40_000);
    let (session, provider) = session(
        &dir,
        vec![
            ScriptedResponse::text("First answer."),
            ScriptedResponse::text("Second."),
            ScriptedResponse::text("## Goal\nKeep going."),
        ],
    );
    session.prompt("First".into()).await.unwrap();
    // A long second prompt: the kept part starts at it, so the first exchange is summarized.
    session.prompt(long).await.unwrap();
    let mut cheap = Model::new("test", "cheap-model", "scripted", "http://127.0.0.1:9");
    cheap.context_window = 64_000;
    session.set_summary_model(Some((cheap, None)));
    let result = session.compact_now(Some("the API design")).await.unwrap().expect("compacted");
    assert!(result["summary"].as_str().unwrap().contains("Keep going."));
    let summary_request = provider.requests().last().cloned().unwrap();
    assert_eq!(summary_request.model_id, "cheap-model", "the summary model wrote the summary");
    let asked = summary_request.context.messages.last().map(|m| format!("{m:?}")).unwrap_or_default();
    assert!(asked.contains("Additional focus: the API design"), "{asked}");
    let messages = session.agent().messages();
    assert!(matches!(messages.first(), Some(AgentMessage::CompactionSummary(_))), "{:?}", messages.first());
    let entries = session.manager().entries().to_vec();
    assert!(entries.iter().any(|entry| matches!(entry.kind, EntryKind::Compaction { .. })));
}

#[tokio::test]
async fn navigating_to_a_user_message_hands_back_its_text_and_summarizes_the_branch_left() {
    let dir = TempDir::new().unwrap();
    let (session, _provider) = session(
        &dir,
        vec![
            ScriptedResponse::text("A1"),
            ScriptedResponse::text("A2"),
            ScriptedResponse::text("## Goal\nExplored option two."),
        ],
    );
    session.prompt("Option one".into()).await.unwrap();
    session.prompt("Option two".into()).await.unwrap();
    let second_user = session
        .manager()
        .entries()
        .iter()
        .rev()
        .find(|entry| entry.message().and_then(user_text).as_deref() == Some("Option two"))
        .map(|entry| entry.id.clone())
        .unwrap();
    let navigation = session.navigate_tree(&second_user, true, None).await.unwrap();
    assert_eq!(navigation.editor_text.as_deref(), Some("Option two"));
    let summary_id = navigation.summary_entry_id.expect("a branch summary was written");
    let manager = session.manager();
    let summary = manager.tree().entry(&summary_id).unwrap();
    let EntryKind::BranchSummary { summary: text, .. } = &summary.kind else { panic!("{summary:?}") };
    assert!(text.contains("Explored option two."), "{text}");
    // The context is the first exchange plus the summary of the branch that was left.
    let roles: Vec<&str> = session.agent().messages().iter().map(AgentMessage::role).collect();
    assert_eq!(roles, ["user", "assistant", "branchSummary"]);
}

#[tokio::test]
async fn navigating_without_a_summary_just_moves_the_leaf() {
    let dir = TempDir::new().unwrap();
    let (session, provider) = session(&dir, vec![ScriptedResponse::text("A1"), ScriptedResponse::text("A2")]);
    session.prompt("One".into()).await.unwrap();
    let first_answer = session.manager().tree().leaf_id().map(str::to_owned).unwrap();
    session.prompt("Two".into()).await.unwrap();
    let navigation = session.navigate_tree(&first_answer, false, None).await.unwrap();
    assert_eq!(navigation, Navigation { editor_text: None, summary_entry_id: None });
    assert_eq!(session.manager().tree().leaf_id(), Some(first_answer.as_str()));
    assert_eq!(session.agent().messages().len(), 2);
    assert_eq!(provider.requests().len(), 2, "no summary request");
    assert!(session.navigate_tree("nope0000", false, None).await.unwrap_err().contains("nope0000"));
}

#[tokio::test(start_paused = true)]
async fn abort_ends_a_retry_wait_and_the_next_prompt_starts_afresh() {
    let dir = TempDir::new().unwrap();
    let events = Arc::new(std::sync::Mutex::new(Vec::new()));
    let emit: SessionEventSink = {
        let events = events.clone();
        Arc::new(move |event: &SessionOnlyEvent| events.lock().unwrap().push(event.clone()))
    };
    let responses = vec![ScriptedResponse::error("503 Service Unavailable"), ScriptedResponse::text("Later.")];
    let (session, provider) = session_with_sink(&dir, responses, emit);
    let aborter = async {
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        session.abort();
    };
    let (result, ()) = tokio::join!(session.prompt("hi".into()), aborter);
    result.unwrap();
    assert_eq!(provider.requests().len(), 1, "the retry never ran");
    let ended =
        SessionOnlyEvent::AutoRetryEnd { success: false, attempt: 1, final_error: Some("Retry cancelled".into()) };
    assert_eq!(events.lock().unwrap().last(), Some(&ended));
    session.prompt("again".into()).await.unwrap();
    assert_eq!(provider.requests().len(), 2, "a new prompt is not cancelled by the old abort");
}

/// Passes requests to a scripted provider, noting the session id each one carried.
struct SessionIdProbe {
    inner: ScriptedProvider,
    seen: Arc<std::sync::Mutex<Vec<Option<String>>>>,
}

impl crate::ai::ApiProvider for SessionIdProbe {
    fn api(&self) -> &str {
        "scripted"
    }

    fn stream(
        &self,
        model: &Model,
        context: &crate::ai::LlmContext,
        options: crate::ai::StreamOptions,
    ) -> crate::ai::AssistantMessageStream {
        self.seen.lock().unwrap().push(options.session_id.clone());
        self.inner.stream(model, context, options)
    }
}

#[tokio::test]
async fn requests_carry_the_id_of_the_session_they_belong_to() {
    let dir = TempDir::new().unwrap();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let inner = ScriptedProvider::new(vec![ScriptedResponse::text("One."), ScriptedResponse::text("Two.")]);
    let mut registry = ProviderRegistry::new();
    registry.register(Arc::new(SessionIdProbe { inner, seen: seen.clone() }));
    let registry = Arc::new(registry);
    let agent = Agent::new(AgentOptions {
        model: Some(Model::new("test", "test-model", "scripted", "http://127.0.0.1:9")),
        api_key: Some("test-key".into()),
        ..AgentOptions::new(registry.clone())
    });
    let manager = SessionManager::create(&dir.path().join("sessions"), dir.path()).unwrap();
    let first_id = manager.session_id().to_owned();
    let emit: SessionEventSink = Arc::new(|_: &SessionOnlyEvent| {});
    let session = AgentSession::new(agent, manager, SessionSettings::default(), registry, None, emit).unwrap();
    session.prompt("Hello".into()).await.unwrap();
    assert!(session.new_session(None).await.unwrap());
    let second_id = session.manager().session_id().to_owned();
    session.prompt("Again".into()).await.unwrap();
    assert_ne!(first_id, second_id);
    assert_eq!(*seen.lock().unwrap(), [Some(first_id), Some(second_id)]);
}
