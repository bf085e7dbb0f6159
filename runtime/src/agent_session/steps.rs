//! A run whose loop a driver keeps elsewhere (a durable workflow): the session carries out one step at a
//! time ([`crate::agent::Agent::run_step`]), recording each message under the id the driver named for it.
//! What follows a run's end is the session's to decide as in-process runs do (auto-retry, the compaction
//! check, the output schema), and the driver's to carry out: it waits out a retry's delay and starts the
//! next run itself, so that a wait of a minute holds no worker.

use std::time::Duration;

use super::AgentSession;
use super::auto_retry::{RetryDecision, RetryState, drop_last_assistant};
use super::link::lock;
use crate::agent::{AgentError, StepReport, StepRequest};
use crate::protocol::{AgentMessage, AssistantMessage, StopReason};
use crate::session::PlannedIds;

/// What follows the end of a stepped run; the driver carries it out.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum SteppedRunEnd {
    /// Nothing more: the session settled.
    Settled,
    /// The answer failed in a way worth retrying (`auto_retry_start` was emitted): after `delay`, a run
    /// with no new message continues the agent, as retry `attempt` of the streak.
    Retry { attempt: u32, delay: Duration },
    /// The answer does not match the output schema: a run with `correction` as its prompt follows (its own
    /// answer is not checked again).
    Correct { correction: Box<AgentMessage> },
    /// The answer failed and a fallback model takes over (`model_fallback` was emitted and recorded): a run
    /// with no new message continues the agent on `model` (`provider/id[:level]`, as the chain names it),
    /// with fresh retries. `tried` fallbacks of the chain are used up.
    Fallback { model: String, tried: usize },
}

/// Where a chain of stepped runs stands (the driver keeps it between steps).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SteppedChain {
    /// The retry under way (0: none).
    pub retry_attempt: u32,
    /// Whether the chain's final answer is checked against the output schema (not after a correction).
    pub check_output: bool,
    /// The fallback models already tried in this chain (the next is the chain's next one).
    pub fallbacks_tried: usize,
    /// The chain was aborted: no fallback takes over, and the answer is not sent back for correction.
    pub aborted: bool,
}

impl AgentSession {
    /// Carries out one step; the messages it records take the `ids` the driver named (see [`PlannedIds`]),
    /// so a repeated step writes the same entries.
    pub async fn run_step(&self, request: StepRequest, ids: PlannedIds) -> Result<StepReport, AgentError> {
        self.manager().plan_message_ids(ids);
        let report = self.agent.run_step(request).await;
        self.manager().plan_message_ids(PlannedIds::default());
        report
    }

    /// Ends a stepped run: `request`'s `agent_end` (at level 1.5 with `willRetry`), then what pi does after a
    /// run: auto-retry of a failed answer, the compaction check, the output schema, and (at level 1.5)
    /// `agent_settled` once nothing follows.
    pub async fn finish_stepped_run(
        &self,
        request: StepRequest,
        chain: SteppedChain,
    ) -> Result<SteppedRunEnd, AgentError> {
        let probe = self.retry_probe(RetryState::resumed(chain.retry_attempt));
        *lock(&self.link.retry_probe) = Some(probe.clone());
        let ended = self.agent.run_step(request).await;
        *lock(&self.link.retry_probe) = None;
        ended?;
        let last = self.agent.with_messages(|messages| messages.last().and_then(AgentMessage::as_assistant).cloned());
        let decision = lock(&probe.state).after_run(&probe.settings, last.as_ref(), probe.context_window);
        match decision {
            RetryDecision::Retry { event, delay } => {
                (self.emit)(&event);
                if let Some(on_drop) = &probe.on_drop {
                    on_drop();
                }
                drop_last_assistant(&self.agent);
                let attempt = lock(&probe.state).attempt();
                return Ok(SteppedRunEnd::Retry { attempt, delay });
            }
            RetryDecision::GiveUp(event) => (self.emit)(&event),
            RetryDecision::Done => {}
        }
        let mut next = chain.fallbacks_tried;
        if !chain.aborted && self.switch_to_fallback(&mut next, &mut None) {
            let models = lock(&self.fallbacks).as_ref().map(|fallbacks| fallbacks.models.clone()).unwrap_or_default();
            let model = models.get(next.saturating_sub(1)).cloned().unwrap_or_default();
            return Ok(SteppedRunEnd::Fallback { model, tried: next });
        }
        self.settle_stepped_run(chain.check_output && !chain.aborted).await
    }

    /// The wait before retry `attempt` was cancelled (an abort): `auto_retry_end` says so, then the session
    /// settles as after any run.
    pub async fn cancel_stepped_retry(&self, attempt: u32) -> Result<SteppedRunEnd, AgentError> {
        (self.emit)(&RetryState::resumed(attempt).cancelled());
        self.settle_stepped_run(false).await
    }

    /// Before the first model call of retry run: the failed answer leaves the agent's context, as it did
    /// before the wait (the session file keeps it).
    pub fn drop_failed_answer(&self) {
        let failed = self.agent.with_messages(|messages| {
            matches!(messages.last(), Some(AgentMessage::Assistant(answer)) if answer.stop_reason == StopReason::Error)
        });
        if failed {
            drop_last_assistant(&self.agent);
        }
    }

    /// After retry `attempt` (0: none), an answer that is not an error ends the streak: `auto_retry_end`
    /// with success follows its `message_end`.
    pub fn report_retried_answer(&self, attempt: u32, answer: &AssistantMessage) {
        if let Some(event) = RetryState::resumed(attempt).on_assistant_message(answer) {
            (self.emit)(&event);
        }
    }

    /// The compaction check after a run, then the output schema (when `check_output`), then at level 1.5
    /// `agent_settled`.
    async fn settle_stepped_run(&self, check_output: bool) -> Result<SteppedRunEnd, AgentError> {
        self.check_compaction_after_run().await?;
        if check_output && let Some(correction) = self.output_correction() {
            return Ok(SteppedRunEnd::Correct { correction: Box::new(correction) });
        }
        self.report_settled();
        Ok(SteppedRunEnd::Settled)
    }
}
