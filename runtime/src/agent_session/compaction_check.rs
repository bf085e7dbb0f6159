//! When the session compacts on its own, by pi's rules: after a run and before each prompt, looking at the
//! last answer. An overflow error from the current model (and not from before the latest compaction) is
//! compacted and retried once; otherwise the context is compacted when it passes the window minus the
//! reserve, measured by the last answer's usage (for a failed answer, the last usage any answer reported;
//! with none at all, as after a first turn that failed, nothing is measured and nothing is compacted).

use std::sync::atomic::Ordering;

use super::AgentSession;
use super::auto_retry::drop_last_assistant;
use crate::agent::AgentError;
use crate::ai::Model;
use crate::ai::is_context_overflow;
use crate::compaction::{CompactionSettings, estimate_context_tokens, should_compact, usage_context_tokens};
use crate::protocol::{AgentMessage, AssistantMessage, CompactionReason, SessionOnlyEvent, StopReason};

/// What the session says when an overflow persists after one compact-and-retry.
const OVERFLOW_RECOVERY_FAILED: &str = "The context still overflows after compacting once and retrying; \
    shorten the conversation (/compact, /tree) or switch to a model with a larger context window.";

/// When the check runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CheckPoint {
    /// After a run: an aborted answer is left alone; an overflow is retried at once.
    AfterRun,
    /// Before a prompt: an aborted answer counts too; the prompt is the retry.
    BeforePrompt,
}

impl AgentSession {
    /// A new user prompt: an overflow may be compacted and retried again.
    pub(super) fn reset_overflow_recovery(&self) {
        self.overflow_recovery_attempted.store(false, Ordering::SeqCst);
    }

    pub(super) async fn check_compaction_after_run(&self) -> Result<(), AgentError> {
        self.check_compaction(CheckPoint::AfterRun).await
    }

    pub(super) async fn check_compaction_before_prompt(&self) -> Result<(), AgentError> {
        self.check_compaction(CheckPoint::BeforePrompt).await
    }

    async fn check_compaction(&self, point: CheckPoint) -> Result<(), AgentError> {
        // After a run, a retried overflow is checked again when the retry ends.
        loop {
            let model = self.agent.model();
            let settings = self.settings().compaction;
            let compacted_at = self.latest_compaction_ms();
            let overflow_recovery_attempted = self.overflow_recovery_attempted.load(Ordering::SeqCst);
            let decision = self.agent.with_messages(|messages| {
                decide_compaction(&CompactionFacts {
                    point,
                    messages,
                    settings: &settings,
                    model: model.as_ref(),
                    compacted_at,
                    overflow_recovery_attempted,
                })
            });
            if decision.ends_overflow_streak {
                self.reset_overflow_recovery();
            }
            match decision.step {
                CompactionStep::Nothing => return Ok(()),
                CompactionStep::Threshold => {
                    self.compact(CompactionReason::Threshold, false).await;
                    return Ok(());
                }
                CompactionStep::OverflowPersists => {
                    self.report_persisting_overflow();
                    return Ok(());
                }
                CompactionStep::RecoverOverflow => {
                    if !self.recover_from_overflow(point).await? {
                        return Ok(());
                    }
                }
            }
        }
    }

    fn report_persisting_overflow(&self) {
        (self.emit)(&SessionOnlyEvent::CompactionEnd {
            reason: CompactionReason::Overflow,
            result: None,
            aborted: false,
            will_retry: false,
            error_message: Some(OVERFLOW_RECOVERY_FAILED.to_owned()),
        });
    }

    /// Drops the failed answer, compacts and (after a run) retries, once. Returns whether a retry ran (its
    /// answer is then checked again).
    async fn recover_from_overflow(&self, point: CheckPoint) -> Result<bool, AgentError> {
        self.overflow_recovery_attempted.store(true, Ordering::SeqCst);
        drop_last_assistant(&self.agent);
        let retry = point == CheckPoint::AfterRun;
        if self.compact(CompactionReason::Overflow, retry).await && retry {
            // The compacted context is rebuilt from the session file, which keeps the failed answer.
            if self
                .agent
                .messages()
                .last()
                .and_then(AgentMessage::as_assistant)
                .is_some_and(|answer| answer.stop_reason == StopReason::Error)
            {
                drop_last_assistant(&self.agent);
            }
            self.run_with_retry(self.agent.continue_()).await?;
            return Ok(true);
        }
        Ok(false)
    }
}

/// What the compaction check looks at.
pub(super) struct CompactionFacts<'a> {
    pub point: CheckPoint,
    /// The agent's context.
    pub messages: &'a [AgentMessage],
    pub settings: &'a CompactionSettings,
    /// The current model.
    pub model: Option<&'a Model>,
    /// When the latest compaction was made (ms; 0 for none).
    pub compacted_at: i64,
    /// Whether this overflow streak was compacted and retried already.
    pub overflow_recovery_attempted: bool,
}

/// What the session does about its context's size next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CompactionStep {
    Nothing,
    /// The context passed the window minus the reserve: compact it.
    Threshold,
    /// The current model overflowed: drop the failed answer, compact and (after a run) retry.
    RecoverOverflow,
    /// It overflowed again after one compact-and-retry: report it and stop.
    OverflowPersists,
}

/// The compaction check's decision, and whether the last answer ended an overflow streak (it did not fail).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct CompactionDecision {
    pub step: CompactionStep,
    pub ends_overflow_streak: bool,
}

/// The compaction decision core: no I/O, only the facts.
pub(super) fn decide_compaction(facts: &CompactionFacts<'_>) -> CompactionDecision {
    let nothing = CompactionDecision { step: CompactionStep::Nothing, ends_overflow_streak: false };
    let Some(last) = facts.messages.iter().rev().find_map(AgentMessage::as_assistant) else { return nothing };
    if !facts.settings.enabled || (facts.point == CheckPoint::AfterRun && last.stop_reason == StopReason::Aborted) {
        return nothing;
    }
    let ends_overflow_streak = last.stop_reason != StopReason::Error;
    let decision = |step| CompactionDecision { step, ends_overflow_streak };
    let Some(model) = facts.model else { return decision(CompactionStep::Nothing) };
    let compacted_at = facts.compacted_at;
    // An answer from before the latest compaction describes a context that is gone. (pi compares with
    // `<=`; an answer is stamped when its request starts, which can be the compaction's millisecond
    // when the retry follows at once, and an answer from before a compaction is always older than it.)
    if compacted_at > 0 && last.timestamp < compacted_at {
        return decision(CompactionStep::Nothing);
    }
    let same_model = last.provider == model.provider && last.model == model.id;
    if same_model && is_context_overflow(last, Some(model.context_window)) {
        let attempted = facts.overflow_recovery_attempted && !ends_overflow_streak;
        return decision(if attempted { CompactionStep::OverflowPersists } else { CompactionStep::RecoverOverflow });
    }
    match context_tokens(last, facts.messages, compacted_at) {
        Some(tokens) if should_compact(tokens, model.context_window, facts.settings) => {
            decision(CompactionStep::Threshold)
        }
        _ => decision(CompactionStep::Nothing),
    }
}

/// The context's size by the answers' usage: the last answer's own, or for a failed one the last usage
/// reported after the latest compaction; `None` when there is nothing to measure by.
fn context_tokens(last: &AssistantMessage, messages: &[AgentMessage], compacted_at: i64) -> Option<u64> {
    if last.stop_reason != StopReason::Error {
        return Some(usage_context_tokens(&last.usage));
    }
    let estimate = estimate_context_tokens(messages);
    let index = estimate.last_usage_index?;
    match messages.get(index) {
        Some(AgentMessage::Assistant(measured)) if compacted_at > 0 && measured.timestamp < compacted_at => None,
        _ => Some(estimate.tokens),
    }
}
