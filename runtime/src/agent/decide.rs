//! The loop's decision core: given what the run has seen so far ([`LoopState`]), what happens next
//! ([`Step`]): poll a queue, start a turn, call the model, run tools, end the turn, finish. It does no I/O and
//! holds only plain data, so one core serves every way of running the loop: the in-process executors of
//! [`super::run_agent_loop`] (CLI modes, RPC, `serve`) and a durable workflow that records each outcome.

use serde::{Deserialize, Serialize};

use crate::protocol::StopReason;

/// The next thing the loop does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Step {
    /// Ask the steering queue for messages typed while the agent worked; answer with
    /// [`Outcome::SteeringPolled`].
    PollSteering,
    /// Start a turn: announce it with `turn_start` unless it is the run's first (whose start was announced
    /// with `agent_start`), then append the queued messages to the context. Answer with [`Outcome::TurnStarted`].
    StartTurn { announce: bool },
    /// Stream the model's answer to the context; answer with [`Outcome::Answered`].
    CallModel,
    /// Execute the tool calls of the answer; answer with [`Outcome::ToolsRan`].
    RunTools,
    /// Close the turn with `turn_end` (the answer and its tool results); answer with [`Outcome::TurnEnded`].
    EndTurn,
    /// The agent would stop: ask the follow-up queue; answer with [`Outcome::FollowUpsPolled`].
    PollFollowUps,
    /// The run is over: emit `agent_end`.
    Finish,
}

/// What carrying out a [`Step`] produced, as far as the next decision needs to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// Whether the steering queue gave any messages (the executor keeps them until the next turn starts).
    SteeringPolled {
        queued: bool,
    },
    TurnStarted,
    /// The model's answer ended for `stop_reason`; `tool_calls` tells whether its content calls tools
    /// (whatever the stop reason says).
    Answered {
        stop_reason: StopReason,
        tool_calls: bool,
    },
    /// The tools ran; `steering` tells whether steering messages arrived while they did (they skip the
    /// poll after the turn).
    ToolsRan {
        steering: bool,
    },
    TurnEnded,
    FollowUpsPolled {
        queued: bool,
    },
}

/// Where the run stands between steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
enum Phase {
    /// The prompts are in; the steering queue has not been asked yet.
    Started,
    /// Between turns: another turn runs if the last answer called tools or messages are queued.
    BetweenTurns,
    /// A turn has started and its queued messages are in the context.
    InTurn,
    /// The model answered; `ends_run` when it failed or was aborted.
    Answered { ends_run: bool, tool_calls: bool },
    /// The answer's tools ran; `steered` when steering arrived meanwhile.
    ToolsRan { steered: bool },
    /// `turn_end` is out and no steering is known yet.
    TurnEnded,
    /// Nothing more to do.
    Done,
}

/// The run's control state: which phase it is in, whether a turn has run yet, whether the last answer
/// called tools and whether messages wait to enter the context. Plain, serializable data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoopState {
    phase: Phase,
    first_turn: bool,
    more_tool_calls: bool,
    queued: bool,
}

/// An outcome that does not answer the step the state asked for: the executor and the core disagree
/// (a bug, or a recorded history that does not belong to this run).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the agent loop got {outcome:?} while it waited for the outcome of {step:?}")]
pub struct UnexpectedOutcome {
    pub step: Step,
    pub outcome: Outcome,
}

impl Default for LoopState {
    fn default() -> Self {
        Self::new()
    }
}

impl LoopState {
    /// A run whose prompts (if any) are already in the context.
    pub fn new() -> Self {
        Self { phase: Phase::Started, first_turn: true, more_tool_calls: true, queued: false }
    }

    /// Whether the run is over.
    pub fn is_done(&self) -> bool {
        self.phase == Phase::Done
    }

    /// The next step. Pure: asking twice gives the same answer.
    pub fn decide(&self) -> Step {
        match self.phase {
            Phase::Started => Step::PollSteering,
            Phase::BetweenTurns if self.more_tool_calls || self.queued => {
                Step::StartTurn { announce: !self.first_turn }
            }
            Phase::BetweenTurns => Step::PollFollowUps,
            Phase::InTurn => Step::CallModel,
            Phase::Answered { ends_run: true, .. } => Step::EndTurn,
            Phase::Answered { tool_calls: true, .. } => Step::RunTools,
            Phase::Answered { .. } | Phase::ToolsRan { .. } => Step::EndTurn,
            Phase::TurnEnded => Step::PollSteering,
            Phase::Done => Step::Finish,
        }
    }

    /// Takes in what the last step produced; refuses an outcome that does not answer it.
    pub fn observe(&mut self, outcome: Outcome) -> Result<(), UnexpectedOutcome> {
        let step = self.decide();
        match (step, outcome) {
            (Step::PollSteering, Outcome::SteeringPolled { queued }) => {
                self.queued = queued;
                self.phase = Phase::BetweenTurns;
            }
            (Step::StartTurn { .. }, Outcome::TurnStarted) => {
                self.first_turn = false;
                self.queued = false;
                self.phase = Phase::InTurn;
            }
            (Step::CallModel, Outcome::Answered { stop_reason, tool_calls }) => {
                let ends_run = matches!(stop_reason, StopReason::Error | StopReason::Aborted);
                if !ends_run {
                    self.more_tool_calls = tool_calls;
                }
                self.phase = Phase::Answered { ends_run, tool_calls };
            }
            (Step::RunTools, Outcome::ToolsRan { steering }) => {
                self.queued = steering;
                self.phase = Phase::ToolsRan { steered: steering };
            }
            (Step::EndTurn, Outcome::TurnEnded) => {
                self.phase = match self.phase {
                    Phase::Answered { ends_run: true, .. } => Phase::Done,
                    // Steering that came in during the tools is the next turn's input; no poll.
                    Phase::ToolsRan { steered: true } => Phase::BetweenTurns,
                    _ => Phase::TurnEnded,
                };
            }
            (Step::PollFollowUps, Outcome::FollowUpsPolled { queued }) => {
                if queued {
                    // Follow-ups reopen the inner loop as a fresh start would.
                    self.queued = true;
                    self.more_tool_calls = true;
                    self.phase = Phase::BetweenTurns;
                } else {
                    self.phase = Phase::Done;
                }
            }
            (step, outcome) => return Err(UnexpectedOutcome { step, outcome }),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STOP: Outcome = Outcome::Answered { stop_reason: StopReason::Stop, tool_calls: false };
    const TOOLS: Outcome = Outcome::Answered { stop_reason: StopReason::ToolUse, tool_calls: true };
    const NOTHING: Outcome = Outcome::SteeringPolled { queued: false };
    const NO_FOLLOW_UP: Outcome = Outcome::FollowUpsPolled { queued: false };

    /// Feeds `outcomes` in order and returns each step decided before them, plus the last one.
    fn steps(outcomes: &[Outcome]) -> Vec<Step> {
        let mut state = LoopState::new();
        let mut steps = Vec::new();
        for outcome in outcomes {
            steps.push(state.decide());
            state.observe(*outcome).expect("the outcome answers the step");
        }
        steps.push(state.decide());
        steps
    }

    #[test]
    fn a_plain_answer_is_one_turn_then_both_queues_are_asked() {
        let steps = steps(&[NOTHING, Outcome::TurnStarted, STOP, Outcome::TurnEnded, NOTHING, NO_FOLLOW_UP]);
        assert_eq!(
            steps,
            [
                Step::PollSteering,
                Step::StartTurn { announce: false },
                Step::CallModel,
                Step::EndTurn,
                Step::PollSteering,
                Step::PollFollowUps,
                Step::Finish,
            ]
        );
    }

    #[test]
    fn tool_calls_bring_a_second_announced_turn() {
        let steps = steps(&[
            NOTHING,
            Outcome::TurnStarted,
            TOOLS,
            Outcome::ToolsRan { steering: false },
            Outcome::TurnEnded,
            NOTHING,
        ]);
        assert_eq!(
            steps[2..],
            [Step::CallModel, Step::RunTools, Step::EndTurn, Step::PollSteering, Step::StartTurn { announce: true }]
        );
    }

    #[test]
    fn steering_during_tools_skips_the_poll_after_the_turn() {
        let steps =
            steps(&[NOTHING, Outcome::TurnStarted, TOOLS, Outcome::ToolsRan { steering: true }, Outcome::TurnEnded]);
        assert_eq!(steps.last(), Some(&Step::StartTurn { announce: true }));
    }

    #[test]
    fn steering_after_a_plain_answer_starts_another_turn() {
        let queued = Outcome::SteeringPolled { queued: true };
        let steps = steps(&[NOTHING, Outcome::TurnStarted, STOP, Outcome::TurnEnded, queued]);
        assert_eq!(steps.last(), Some(&Step::StartTurn { announce: true }));
    }

    #[test]
    fn a_failed_or_aborted_answer_ends_the_run_even_when_it_calls_tools() {
        for stop_reason in [StopReason::Error, StopReason::Aborted] {
            let failed = Outcome::Answered { stop_reason, tool_calls: true };
            let steps = steps(&[NOTHING, Outcome::TurnStarted, failed, Outcome::TurnEnded]);
            assert_eq!(steps[3..], [Step::EndTurn, Step::Finish]);
        }
    }

    #[test]
    fn follow_ups_reopen_the_loop_and_the_run_ends_when_none_are_left() {
        let follow_up = Outcome::FollowUpsPolled { queued: true };
        let turn = [Outcome::TurnStarted, STOP, Outcome::TurnEnded, NOTHING];
        let mut outcomes = vec![NOTHING];
        outcomes.extend(turn);
        outcomes.push(follow_up);
        outcomes.extend(turn);
        outcomes.push(NO_FOLLOW_UP);
        let steps = steps(&outcomes);
        assert_eq!(steps[6], Step::StartTurn { announce: true });
        assert_eq!(steps.last(), Some(&Step::Finish));
        assert_eq!(steps.iter().filter(|step| **step == Step::CallModel).count(), 2);
    }

    #[test]
    fn an_outcome_that_does_not_answer_the_step_is_refused_and_changes_nothing() {
        let mut state = LoopState::new();
        let before = state;
        let error = state.observe(Outcome::TurnEnded).expect_err("a turn cannot end before it starts");
        assert_eq!(error, UnexpectedOutcome { step: Step::PollSteering, outcome: Outcome::TurnEnded });
        assert_eq!(state, before);
        for outcome in [NOTHING, Outcome::TurnStarted, STOP, Outcome::TurnEnded, NOTHING, NO_FOLLOW_UP] {
            state.observe(outcome).expect("in order");
        }
        assert!(state.is_done());
        assert!(state.observe(NOTHING).is_err(), "nothing follows the end");
    }

    #[test]
    fn the_state_survives_a_round_trip_through_json() {
        let mut state = LoopState::new();
        for outcome in [NOTHING, Outcome::TurnStarted, TOOLS] {
            state.observe(outcome).expect("in order");
        }
        let json = serde_json::to_string(&state).expect("serializes");
        let back: LoopState = serde_json::from_str(&json).expect("deserializes");
        assert_eq!(back, state);
        assert_eq!(back.decide(), Step::RunTools);
    }
}
