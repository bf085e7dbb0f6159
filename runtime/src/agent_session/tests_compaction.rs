//! The session's own compaction by pi's rules, over the scripted provider: a first turn that failed before
//! any usage was reported measures nothing and compacts nothing; an overflow is recovered from only when it
//! came from the current model; a session that ended in an overflow is compacted before the next prompt;
//! an overflow that persists after one compact-and-retry is reported, not retried again.

use std::sync::{Arc, Mutex};

use tempfile::TempDir;

use super::*;
use crate::agent::{Agent, AgentOptions};
use crate::ai::{Model, ProviderRegistry, ScriptedProvider, ScriptedResponse};
use crate::protocol::{CompactionReason, SessionOnlyEvent};
use crate::session::SessionManager;

const OVERFLOW: &str = "prompt is too long: 213462 tokens > 200000 maximum";

/// A session over scripted responses whose model has `window` tokens, recording its session events.
fn session(
    dir: &TempDir,
    window: u64,
    responses: Vec<ScriptedResponse>,
) -> (AgentSession, ScriptedProvider, Arc<Mutex<Vec<SessionOnlyEvent>>>) {
    let provider = ScriptedProvider::new(responses);
    let mut registry = ProviderRegistry::new();
    registry.register(Arc::new(provider.clone()));
    let registry = Arc::new(registry);
    let mut model = Model::new("test", "test-model", "scripted", "http://127.0.0.1:9");
    model.context_window = window;
    let agent = Agent::new(AgentOptions {
        model: Some(model),
        system_prompt: "You are a test.".into(),
        api_key: Some("test-key".into()),
        convert_to_llm: Some(crate::session::coding_agent_convert_to_llm()),
        ..AgentOptions::new(registry.clone())
    });
    let events = Arc::new(Mutex::new(Vec::new()));
    let recorded = events.clone();
    let emit: SessionEventSink = Arc::new(move |event: &SessionOnlyEvent| recorded.lock().unwrap().push(event.clone()));
    let manager = SessionManager::create(&dir.path().join("sessions"), dir.path()).unwrap();
    let session = AgentSession::new(agent, manager, SessionSettings::default(), registry, None, emit).unwrap();
    (session, provider, events)
}

fn compaction_ends(events: &Mutex<Vec<SessionOnlyEvent>>) -> Vec<(CompactionReason, bool, Option<String>)> {
    events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|event| match event {
            SessionOnlyEvent::CompactionEnd { reason, aborted, error_message, result, .. } => {
                Some((*reason, *aborted || result.is_none(), error_message.clone()))
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_first_turn_that_failed_before_any_usage_is_not_compacted() {
    let dir = TempDir::new().unwrap();
    // A window so small that counting the prompt itself would pass the threshold.
    let (session, provider, events) = session(&dir, 10, vec![ScriptedResponse::error("400 the stream ended badly")]);
    session.prompt("a prompt long enough to pass a ten-token window on its own".into()).await.unwrap();
    assert_eq!(provider.requests().len(), 1, "no summary of an empty conversation was asked for");
    assert!(compaction_ends(&events).is_empty());
}

#[tokio::test]
async fn an_overflow_counts_only_when_it_came_from_the_current_model() {
    for same_model in [false, true] {
        let dir = TempDir::new().unwrap();
        let responses = vec![
            ScriptedResponse::text("First answer."),
            ScriptedResponse::error(OVERFLOW),
            ScriptedResponse::text("## Goal\nSummary."),
            ScriptedResponse::text("Answer after the overflow."),
        ];
        let (session, provider, events) = session(&dir, 128_000, responses);
        session.prompt("first".into()).await.unwrap();
        // The overflow is left as the session's last answer (as when the process ended after it).
        session.set_auto_compaction(false);
        session.prompt("second".into()).await.unwrap();
        session.set_auto_compaction(true);
        if !same_model {
            session.agent().set_model(Model::new("test", "bigger-model", "scripted", "http://127.0.0.1:9"));
        }
        session.prompt("third".into()).await.unwrap();
        let ends = compaction_ends(&events);
        if same_model {
            assert_eq!(ends, [(CompactionReason::Overflow, false, None)], "compacted before the prompt");
            assert_eq!(provider.requests().len(), 4, "the summary, then the prompt");
        } else {
            assert!(ends.is_empty(), "another model's overflow says nothing about this one: {ends:?}");
            assert_eq!(provider.requests().len(), 3);
        }
    }
}

#[tokio::test]
async fn an_overflow_after_one_compact_and_retry_is_reported_not_retried_again() {
    let dir = TempDir::new().unwrap();
    let responses = vec![
        ScriptedResponse::text("First answer."),
        ScriptedResponse::error(OVERFLOW),
        ScriptedResponse::text("## Goal\nSummary."),
        ScriptedResponse::error(OVERFLOW),
    ];
    let (session, provider, events) = session(&dir, 128_000, responses);
    session.prompt("first".into()).await.unwrap();
    session.prompt("second".into()).await.unwrap();
    assert_eq!(provider.requests().len(), 4, "the prompt, the summary, one retry");
    let ends = compaction_ends(&events);
    assert_eq!(ends.len(), 2, "{ends:?}");
    assert_eq!((ends[0].0, ends[0].1), (CompactionReason::Overflow, false));
    assert_eq!((ends[1].0, ends[1].1), (CompactionReason::Overflow, true));
    assert!(ends[1].2.as_deref().is_some_and(|text| text.contains("still overflows")), "{ends:?}");
}

mod decision {
    use super::super::compaction_check::{CheckPoint, CompactionFacts, CompactionStep, decide_compaction};
    use super::OVERFLOW;
    use crate::ai::Model;
    use crate::compaction::CompactionSettings;
    use crate::protocol::{AgentMessage, AssistantMessage, StopReason, Usage, UserMessage};

    fn model() -> Model {
        let mut model = Model::new("test", "test-model", "scripted", "http://127.0.0.1:9");
        model.context_window = 100_000;
        model
    }

    fn answer(stop_reason: StopReason, total_tokens: u64, timestamp: i64) -> AgentMessage {
        AgentMessage::Assistant(AssistantMessage {
            provider: "test".into(),
            model: "test-model".into(),
            stop_reason,
            timestamp,
            usage: Usage { total_tokens, ..Usage::default() },
            error_message: (stop_reason == StopReason::Error).then(|| OVERFLOW.to_owned()),
            ..AssistantMessage::default()
        })
    }

    fn decide(point: CheckPoint, last: AgentMessage, compacted_at: i64, attempted: bool) -> (CompactionStep, bool) {
        let (model, settings) = (model(), CompactionSettings::default());
        let messages = [AgentMessage::User(UserMessage::text("hi")), last];
        let facts = CompactionFacts {
            point,
            messages: &messages,
            settings: &settings,
            model: Some(&model),
            compacted_at,
            overflow_recovery_attempted: attempted,
        };
        let decision = decide_compaction(&facts);
        (decision.step, decision.ends_overflow_streak)
    }

    #[test]
    fn a_context_past_the_window_minus_the_reserve_is_compacted_and_a_small_one_is_not() {
        let full = answer(StopReason::Stop, 90_000, 10);
        assert_eq!(decide(CheckPoint::AfterRun, full, 0, false), (CompactionStep::Threshold, true));
        let small = answer(StopReason::Stop, 1_000, 10);
        assert_eq!(decide(CheckPoint::AfterRun, small, 0, false), (CompactionStep::Nothing, true));
    }

    #[test]
    fn an_aborted_answer_counts_before_a_prompt_only() {
        let aborted = || answer(StopReason::Aborted, 90_000, 10);
        assert_eq!(decide(CheckPoint::AfterRun, aborted(), 0, false).0, CompactionStep::Nothing);
        assert_eq!(decide(CheckPoint::BeforePrompt, aborted(), 0, false).0, CompactionStep::Threshold);
    }

    #[test]
    fn an_overflow_is_recovered_from_once_then_reported() {
        let overflow = || answer(StopReason::Error, 0, 10);
        assert_eq!(decide(CheckPoint::AfterRun, overflow(), 0, false), (CompactionStep::RecoverOverflow, false));
        assert_eq!(decide(CheckPoint::AfterRun, overflow(), 0, true), (CompactionStep::OverflowPersists, false));
    }

    #[test]
    fn an_answer_from_before_the_latest_compaction_is_not_measured() {
        let old = answer(StopReason::Error, 0, 10);
        assert_eq!(decide(CheckPoint::AfterRun, old, 20, false).0, CompactionStep::Nothing);
    }
}
