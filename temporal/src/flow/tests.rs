//! The session flow without Temporal: each scenario feeds inputs and activity outcomes and checks the
//! activities handed out, with their announcements and entry ids.

use pi_runtime::protocol::StopReason;

use super::*;

/// Entry ids e1, e2, ... in the order the flow asks for them.
#[derive(Default)]
struct Ids(u32);

impl Ids {
    fn next(&mut self) -> impl FnMut() -> String + '_ {
        move || {
            self.0 += 1;
            format!("e{}", self.0)
        }
    }
}

fn prompt(text: &str) -> SessionInput {
    SessionInput::Prompt { text: text.to_owned(), images: Vec::new(), idempotency_key: None }
}

fn steer(text: &str) -> SessionInput {
    SessionInput::Steer { text: text.to_owned(), images: Vec::new() }
}

fn follow_up(text: &str) -> SessionInput {
    SessionInput::FollowUp { text: text.to_owned(), images: Vec::new() }
}

fn user(id: &str, text: &str) -> UserInput {
    UserInput::user(id.to_owned(), text.to_owned(), Vec::new())
}

fn answered(stop_reason: StopReason, calls: &[&str]) -> ModelReport {
    ModelReport {
        stop_reason,
        tool_call_ids: calls.iter().map(|call| (*call).to_owned()).collect(),
        step_entries: Vec::new(),
        handled: false,
    }
}

fn turn_end(answer: &str, results: &[&str]) -> Option<TurnEnd> {
    Some(TurnEnd {
        answer_entry_id: answer.to_owned(),
        tool_result_entry_ids: results.iter().map(|id| (*id).to_owned()).collect(),
    })
}

fn entries(ids: &[&str]) -> Vec<String> {
    ids.iter().map(|id| (*id).to_owned()).collect()
}

#[test]
fn a_prompt_is_one_model_call_then_the_end_of_the_run() {
    let (mut flow, mut ids) = (SessionFlow::default(), Ids::default());
    assert_eq!(flow.next_action(&mut ids.next()), Action::Wait);
    flow.receive(prompt("hi"), &mut ids.next());
    let call = flow.next_action(&mut ids.next());
    let expected_announce = Announcements { agent_start: true, messages: vec![user("e1", "hi")], ..Default::default() };
    assert_eq!(call, Action::CallModel { announce: expected_announce, answer_entry_id: "e2".into(), retry_attempt: 0 });
    // Asked again (a replayed activation), the same activity with the same ids.
    assert_eq!(flow.next_action(&mut ids.next()), call);
    flow.model_answered(&answered(StopReason::Stop, &[]), &mut ids.next()).expect("answer");
    let finish = flow.next_action(&mut ids.next());
    let announce = Announcements { turn_end: turn_end("e2", &[]), ..Default::default() };
    let run_entries = entries(&["e1", "e2"]);
    let expected =
        Action::FinishRun { announce, run_entries, retry_attempt: 0, check_output: true, fallbacks_tried: 0 };
    assert_eq!(finish, expected);
    assert!(flow.is_running());
    flow.run_finished(None, &mut ids.next()).expect("finished");
    assert!(!flow.is_running());
    assert_eq!(flow.next_action(&mut ids.next()), Action::Wait);
    assert_eq!(flow.turns(), 1);
}

#[test]
fn tool_calls_run_as_a_batch_then_a_second_announced_turn() {
    let (mut flow, mut ids) = (SessionFlow::default(), Ids::default());
    flow.receive(prompt("fix it"), &mut ids.next());
    flow.next_action(&mut ids.next());
    flow.model_answered(&answered(StopReason::ToolUse, &["call_a", "call_b"]), &mut ids.next()).expect("answer");
    let tools = flow.next_action(&mut ids.next());
    let slots = vec![
        ToolResultSlot { tool_call_id: "call_a".into(), entry_id: "e3".into() },
        ToolResultSlot { tool_call_id: "call_b".into(), entry_id: "e4".into() },
    ];
    assert_eq!(
        tools,
        Action::RunTools { announce: Announcements::default(), answer_entry_id: "e2".into(), results: slots }
    );
    flow.tools_ran().expect("ran");
    let second = flow.next_action(&mut ids.next());
    let announce = Announcements { turn_end: turn_end("e2", &["e3", "e4"]), turn_start: true, ..Default::default() };
    assert_eq!(second, Action::CallModel { announce, answer_entry_id: "e5".into(), retry_attempt: 0 });
    flow.model_answered(&answered(StopReason::Stop, &[]), &mut ids.next()).expect("answer");
    let Action::FinishRun { run_entries, .. } = flow.next_action(&mut ids.next()) else { panic!("the run ends") };
    assert_eq!(run_entries, entries(&["e1", "e2", "e3", "e4", "e5"]));
    assert_eq!(flow.turns(), 2);
}

#[test]
fn steering_during_the_tools_starts_the_next_turn_without_another_poll() {
    let (mut flow, mut ids) = (SessionFlow::default(), Ids::default());
    flow.receive(prompt("go"), &mut ids.next());
    flow.next_action(&mut ids.next());
    flow.model_answered(&answered(StopReason::ToolUse, &["call_a"]), &mut ids.next()).expect("answer");
    flow.next_action(&mut ids.next());
    flow.receive(steer("stop, use tabs"), &mut ids.next());
    flow.receive(steer("and spaces after"), &mut ids.next());
    flow.tools_ran().expect("ran");
    let Action::CallModel { announce, answer_entry_id, .. } = flow.next_action(&mut ids.next()) else {
        panic!("model")
    };
    // One at a time (pi's default): the first steering message now, the second at the next poll.
    assert_eq!(announce.messages, vec![user("e4", "stop, use tabs")]);
    assert!(announce.turn_start);
    assert_eq!(answer_entry_id, "e6");
    assert_eq!(flow.queued_counts(), (0, 1, 0));
}

#[test]
fn follow_ups_reopen_the_run_after_the_answer() {
    let mut flow = SessionFlow::new(Drain::OneAtATime, Drain::All);
    let mut ids = Ids::default();
    flow.receive(prompt("one"), &mut ids.next());
    flow.next_action(&mut ids.next());
    flow.receive(follow_up("two"), &mut ids.next());
    flow.receive(follow_up("three"), &mut ids.next());
    flow.model_answered(&answered(StopReason::Stop, &[]), &mut ids.next()).expect("answer");
    let Action::CallModel { announce, .. } = flow.next_action(&mut ids.next()) else { panic!("a second turn") };
    assert_eq!(announce.turn_end, turn_end("e2", &[]));
    assert!(announce.turn_start && !announce.agent_start);
    assert_eq!(announce.messages, vec![user("e3", "two"), user("e4", "three")], "follow-ups drained all at once");
}

#[test]
fn a_prompt_during_a_run_waits_for_its_own_run() {
    let (mut flow, mut ids) = (SessionFlow::default(), Ids::default());
    flow.receive(prompt("first"), &mut ids.next());
    flow.next_action(&mut ids.next());
    flow.receive(prompt("second"), &mut ids.next());
    assert_eq!(flow.queued_counts(), (1, 0, 0));
    flow.model_answered(&answered(StopReason::Stop, &[]), &mut ids.next()).expect("answer");
    assert!(matches!(flow.next_action(&mut ids.next()), Action::FinishRun { .. }));
    flow.run_finished(None, &mut ids.next()).expect("finished");
    let Action::CallModel { announce, .. } = flow.next_action(&mut ids.next()) else { panic!("the second run") };
    assert!(announce.agent_start);
    assert_eq!(announce.messages, vec![user("e3", "second")]);
}

#[test]
fn an_error_or_abort_ends_the_run_even_with_tool_calls() {
    for stop_reason in [StopReason::Error, StopReason::Aborted] {
        let (mut flow, mut ids) = (SessionFlow::default(), Ids::default());
        flow.receive(prompt("go"), &mut ids.next());
        flow.next_action(&mut ids.next());
        flow.receive(follow_up("later"), &mut ids.next());
        flow.model_answered(&answered(stop_reason, &["call_a"]), &mut ids.next()).expect("answer");
        let Action::FinishRun { announce, run_entries, .. } = flow.next_action(&mut ids.next()) else {
            panic!("the run ends on {stop_reason:?}")
        };
        assert_eq!(announce.turn_end.map(|end| end.answer_entry_id), Some("e2".to_owned()));
        assert_eq!(run_entries, entries(&["e1", "e2"]));
    }
}

#[test]
fn abort_drops_what_waits_to_steer_or_follow_up() {
    let (mut flow, mut ids) = (SessionFlow::default(), Ids::default());
    flow.receive(prompt("go"), &mut ids.next());
    flow.next_action(&mut ids.next());
    flow.receive(steer("a"), &mut ids.next());
    flow.receive(follow_up("b"), &mut ids.next());
    flow.receive(SessionInput::Abort, &mut ids.next());
    assert_eq!(flow.queued_counts(), (0, 0, 0));
}

#[test]
fn outcomes_that_answer_no_waiting_activity_are_refused() {
    let (mut flow, mut ids) = (SessionFlow::default(), Ids::default());
    let idle = flow.run_finished(None, &mut ids.next()).expect_err("no run");
    assert_eq!(idle.waited, "no run");
    flow.receive(prompt("go"), &mut ids.next());
    flow.next_action(&mut ids.next());
    let error = flow.tools_ran().expect_err("the model is awaited");
    assert_eq!(error.to_string(), "the session workflow got tool results while it waited for the model's answer");
    // The refused outcome changed nothing.
    assert!(matches!(flow.next_action(&mut ids.next()), Action::CallModel { .. }));
}

#[test]
fn the_flow_survives_serialization_mid_run() {
    let (mut flow, mut ids) = (SessionFlow::default(), Ids::default());
    flow.receive(prompt("go"), &mut ids.next());
    flow.next_action(&mut ids.next());
    flow.model_answered(&answered(StopReason::ToolUse, &["call_a"]), &mut ids.next()).expect("answer");
    let before = flow.next_action(&mut ids.next());
    let text = serde_json::to_string(&flow).expect("serializes");
    let mut restored: SessionFlow = serde_json::from_str(&text).expect("deserializes");
    assert_eq!(restored, flow);
    assert_eq!(restored.next_action(&mut ids.next()), before);
    restored.tools_ran().expect("ran");
    assert!(matches!(restored.next_action(&mut ids.next()), Action::CallModel { .. }));
}

#[test]
fn a_prompt_sent_again_under_its_key_is_dropped() {
    let (mut flow, mut ids) = (SessionFlow::default(), Ids::default());
    let keyed = |text: &str| SessionInput::Prompt {
        text: text.to_owned(),
        images: Vec::new(),
        idempotency_key: Some("key-1".to_owned()),
    };
    flow.receive(keyed("go"), &mut ids.next());
    flow.receive(keyed("go"), &mut ids.next());
    flow.receive(prompt("other"), &mut ids.next());
    assert_eq!(flow.queued_counts().0, 2, "the repeated key queued nothing");
}

#[test]
fn a_run_at_its_end_step_no_longer_streams() {
    let (mut flow, mut ids) = (SessionFlow::default(), Ids::default());
    flow.receive(prompt("hi"), &mut ids.next());
    assert!(matches!(flow.next_action(&mut ids.next()), Action::CallModel { .. }));
    assert!(flow.is_streaming());
    flow.model_answered(&answered(StopReason::Stop, &[]), &mut ids.next()).expect("answer");
    assert!(matches!(flow.next_action(&mut ids.next()), Action::FinishRun { .. }));
    assert!(flow.is_running() && !flow.is_streaming(), "agent_end is being emitted: a prompt may come");
    flow.run_finished(None, &mut ids.next()).expect("finished");
    assert!(!flow.is_running());
}

#[test]
fn a_prompt_a_command_takes_starts_no_run_and_the_next_prompt_starts_one() {
    let (mut flow, mut ids) = (SessionFlow::default(), Ids::default());
    flow.receive(prompt("/name notes"), &mut ids.next());
    flow.receive(steer("meanwhile"), &mut ids.next());
    let Action::CallModel { announce, .. } = flow.next_action(&mut ids.next()) else { panic!("a model call") };
    assert_eq!(announce.messages, [user("e1", "/name notes"), user("e2", "meanwhile")]);
    let handled = ModelReport { handled: true, ..answered(StopReason::Stop, &[]) };
    flow.model_answered(&handled, &mut ids.next()).expect("taken");
    assert!(!flow.is_running() && !flow.is_streaming(), "no run");
    assert_eq!(flow.queued_counts(), (0, 1, 0), "the steering waits");
    assert_eq!(flow.turns(), 0, "no turn was taken");
    flow.receive(prompt("hi"), &mut ids.next());
    let Action::CallModel { announce, .. } = flow.next_action(&mut ids.next()) else { panic!("a model call") };
    assert!(announce.agent_start, "a new run");
    assert_eq!(announce.messages, [user("e4", "hi"), user("e2", "meanwhile")], "the steering enters its first turn");
}

/// Ends the run under way with `follow_on`, as the end step reported it.
fn finish_with(flow: &mut SessionFlow, ids: &mut Ids, follow_on: Option<RunFollowOn>) {
    assert!(matches!(flow.next_action(&mut ids.next()), Action::FinishRun { .. }));
    flow.run_finished(follow_on.as_ref(), &mut ids.next()).expect("finished");
}

#[test]
fn a_retry_waits_its_delay_then_continues_the_agent_without_a_new_message() {
    let (mut flow, mut ids) = (SessionFlow::default(), Ids::default());
    flow.receive(prompt("hi"), &mut ids.next());
    flow.next_action(&mut ids.next());
    flow.model_answered(&answered(StopReason::Error, &[]), &mut ids.next()).expect("answer");
    finish_with(&mut flow, &mut ids, Some(RunFollowOn::Retry { attempt: 1, delay_ms: 2000 }));
    assert_eq!(flow.next_action(&mut ids.next()), Action::Backoff { delay_ms: 2000, attempt: 1 });
    assert!(flow.is_streaming(), "a prompt waits behind the retry, as behind the run");
    flow.receive(steer("meanwhile"), &mut ids.next());
    flow.backoff_over(false).expect("waited");
    let Action::CallModel { announce, answer_entry_id, retry_attempt } = flow.next_action(&mut ids.next()) else {
        panic!("the retried call")
    };
    assert_eq!(retry_attempt, 1);
    assert!(announce.agent_start && announce.turn_end.is_none(), "a run of its own: {announce:?}");
    assert_eq!(announce.messages, vec![user("e3", "meanwhile")], "only the steering that came meanwhile");
    // Failing again: the streak goes on; the finish step hears which attempt it is.
    flow.model_answered(&answered(StopReason::Error, &[]), &mut ids.next()).expect("answer");
    let Action::FinishRun { retry_attempt, run_entries, .. } = flow.next_action(&mut ids.next()) else {
        panic!("the end")
    };
    assert_eq!((retry_attempt, run_entries), (1, vec!["e3".to_owned(), answer_entry_id]));
    flow.run_finished(Some(&RunFollowOn::Retry { attempt: 2, delay_ms: 4000 }), &mut ids.next()).expect("end");
    flow.backoff_over(false).expect("waited");
    let Action::CallModel { retry_attempt, .. } = flow.next_action(&mut ids.next()) else { panic!("the call") };
    assert_eq!(retry_attempt, 2);
    // An answer that is no error ends the streak: the run's end is decided afresh.
    flow.model_answered(&answered(StopReason::Stop, &[]), &mut ids.next()).expect("answer");
    let Action::FinishRun { retry_attempt, check_output, .. } = flow.next_action(&mut ids.next()) else {
        panic!("the end")
    };
    assert_eq!((retry_attempt, check_output), (0, true));
    flow.run_finished(None, &mut ids.next()).expect("settled");
    assert!(!flow.is_running());
}

#[test]
fn an_abort_during_the_delay_cancels_the_retry_and_ends_the_run() {
    let (mut flow, mut ids) = (SessionFlow::default(), Ids::default());
    flow.receive(prompt("hi"), &mut ids.next());
    flow.next_action(&mut ids.next());
    flow.model_answered(&answered(StopReason::Error, &[]), &mut ids.next()).expect("answer");
    finish_with(&mut flow, &mut ids, Some(RunFollowOn::Retry { attempt: 1, delay_ms: 60_000 }));
    flow.receive(prompt("next"), &mut ids.next());
    assert!(flow.retry_cancelled().is_err(), "not before the delay is over");
    flow.backoff_over(true).expect("cut short");
    assert_eq!(flow.next_action(&mut ids.next()), Action::CancelRetry { attempt: 1 });
    flow.retry_cancelled().expect("cancelled");
    let Action::CallModel { announce, retry_attempt, .. } = flow.next_action(&mut ids.next()) else {
        panic!("the queued prompt's run")
    };
    assert_eq!((announce.messages, retry_attempt), (vec![user("e3", "next")], 0));
}

#[test]
fn an_answer_failing_the_output_schema_is_sent_back_once_as_a_custom_message() {
    let (mut flow, mut ids) = (SessionFlow::default(), Ids::default());
    flow.receive(prompt("triage"), &mut ids.next());
    flow.next_action(&mut ids.next());
    flow.model_answered(&answered(StopReason::Stop, &[]), &mut ids.next()).expect("answer");
    let correction = RunFollowOn::Correct { custom_type: "output_correction".into(), text: "fix it".into() };
    finish_with(&mut flow, &mut ids, Some(correction));
    let Action::CallModel { announce, .. } = flow.next_action(&mut ids.next()) else { panic!("the correction") };
    let expected = UserInput { custom_type: Some("output_correction".into()), ..user("e3", "fix it") };
    assert!(announce.agent_start);
    assert_eq!(announce.messages, vec![expected]);
    flow.model_answered(&answered(StopReason::Error, &[]), &mut ids.next()).expect("answer");
    let Action::FinishRun { check_output, .. } = flow.next_action(&mut ids.next()) else { panic!("the end") };
    assert!(!check_output, "a correction's answer is not checked again");
    // Even through a retry of the correction.
    flow.run_finished(Some(&RunFollowOn::Retry { attempt: 1, delay_ms: 1 }), &mut ids.next()).expect("end");
    flow.backoff_over(false).expect("waited");
    flow.next_action(&mut ids.next());
    flow.model_answered(&answered(StopReason::Stop, &[]), &mut ids.next()).expect("answer");
    let Action::FinishRun { check_output, .. } = flow.next_action(&mut ids.next()) else { panic!("the end") };
    assert!(!check_output);
}

#[test]
fn a_fallback_model_serves_the_rest_of_the_chain_with_fresh_retries() {
    let (mut flow, mut ids) = (SessionFlow::default(), Ids::default());
    flow.receive(prompt("hi"), &mut ids.next());
    flow.next_action(&mut ids.next());
    assert_eq!(flow.fallback_model(), None);
    flow.model_answered(&answered(StopReason::Error, &[]), &mut ids.next()).expect("answer");
    finish_with(&mut flow, &mut ids, Some(RunFollowOn::Fallback { model: "mock/m2".into(), tried: 1 }));
    // At once, with no delay: a run of its own on the fallback.
    let Action::CallModel { announce, retry_attempt, .. } = flow.next_action(&mut ids.next()) else {
        panic!("the fallback's call")
    };
    assert!(announce.agent_start && announce.messages.is_empty());
    assert_eq!((flow.fallback_model(), retry_attempt), (Some("mock/m2"), 0));
    flow.model_answered(&answered(StopReason::Error, &[]), &mut ids.next()).expect("answer");
    let Action::FinishRun { fallbacks_tried, .. } = flow.next_action(&mut ids.next()) else { panic!("the end") };
    assert_eq!(fallbacks_tried, 1, "the next fallback is the chain's second");
    // A retry on the fallback stays on it.
    flow.run_finished(Some(&RunFollowOn::Retry { attempt: 1, delay_ms: 5 }), &mut ids.next()).expect("end");
    flow.backoff_over(false).expect("waited");
    assert_eq!(flow.fallback_model(), Some("mock/m2"));
    flow.next_action(&mut ids.next());
    flow.model_answered(&answered(StopReason::Stop, &[]), &mut ids.next()).expect("answer");
    finish_with(&mut flow, &mut ids, None);
    // The next prompt starts on the session's own model again.
    flow.receive(prompt("again"), &mut ids.next());
    flow.next_action(&mut ids.next());
    assert_eq!(flow.fallback_model(), None);
}
