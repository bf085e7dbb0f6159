//! Batch runs: one prompt over many repositories. A batch is a workflow of its own (its id is the batch's
//! id) whose children are the batch's session workflows, each with the session's id: the child gets the
//! prompt and a close, runs its turn like any session, and ends once idle. At most `concurrency` children
//! run at once: that many lanes each take the next session when theirs ended. The batch's progress is its
//! `progress` query; the sessions' results are in the store.

use serde::{Deserialize, Serialize};
use temporalio_macros::{workflow, workflow_methods};
use temporalio_sdk::{
    ChildWorkflowOptions, SignalWorkflowOptions, WorkflowContext, WorkflowContextView, WorkflowResult,
};

pub use pi_runtime::cli::serve::BatchItemStatus;

use super::workflow::{SessionStart, SessionWorkflow};
use crate::flow::SessionInput;

/// What a batch starts with.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchStart {
    pub batch_id: String,
    pub prompt: String,
    /// The batch's sessions, created (headers and settings stored) before the batch starts.
    pub sessions: Vec<BatchSession>,
    /// How many sessions run at once.
    pub concurrency: u32,
    /// What every session's workflow starts with (its id filled in per session).
    pub session: SessionStart,
}

/// One session of a batch and the repository it works in.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchSession {
    pub session_id: String,
    pub repo: String,
}

/// A batch's session, with where it is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchItem {
    #[serde(flatten)]
    pub session: BatchSession,
    pub status: BatchItemStatus,
    /// Why the session's workflow failed (its turn's own errors are in its answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What the `progress` query answers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchProgress {
    pub prompt: String,
    pub concurrency: u32,
    pub items: Vec<BatchItem>,
}

#[workflow]
#[derive(Default)]
pub struct BatchWorkflow {
    progress: BatchProgress,
    /// The next session a free lane takes.
    next: usize,
}

#[workflow_methods]
impl BatchWorkflow {
    #[run]
    pub async fn run(ctx: &mut WorkflowContext<Self>, start: BatchStart) -> WorkflowResult<()> {
        ctx.state_mut(|state| {
            state.progress = BatchProgress {
                prompt: start.prompt.clone(),
                concurrency: start.concurrency,
                items: start
                    .sessions
                    .iter()
                    .map(|session| BatchItem { session: session.clone(), ..BatchItem::default() })
                    .collect(),
            };
        });
        let lanes = start.concurrency.clamp(1, start.sessions.len().max(1) as u32);
        let lanes = (0..lanes).map(|_| lane(ctx.clone(), start.clone()));
        temporalio_sdk::workflows::join_all(lanes).await;
        Ok(())
    }

    #[query]
    pub fn progress(&self, _ctx: &WorkflowContextView) -> BatchProgress {
        self.progress.clone()
    }
}

/// Runs the batch's sessions one after another, each the next one no lane has taken, until none is left.
async fn lane(ctx: WorkflowContext<BatchWorkflow>, start: BatchStart) {
    loop {
        let taken = ctx.state_mut(|state| {
            let index = state.next;
            let item = state.progress.items.get_mut(index)?;
            item.status = BatchItemStatus::Running;
            state.next += 1;
            Some(index)
        });
        let Some(index) = taken else { return };
        let session = &start.sessions[index];
        let outcome = run_session(&ctx, &start, session).await;
        ctx.state_mut(|state| {
            if let Some(item) = state.progress.items.get_mut(index) {
                match outcome {
                    Ok(()) => item.status = BatchItemStatus::Done,
                    Err(error) => {
                        item.status = BatchItemStatus::Failed;
                        item.error = Some(error);
                    }
                }
            }
        });
    }
}

/// One session of the batch as a child workflow: started, given the prompt (keyed by the batch, so a
/// repeated signal runs once) and a close, and awaited.
async fn run_session(
    ctx: &WorkflowContext<BatchWorkflow>,
    start: &BatchStart,
    session: &BatchSession,
) -> Result<(), String> {
    let input = SessionStart { session_id: session.session_id.clone(), ..start.session.clone() };
    let options = ChildWorkflowOptions::builder().workflow_id(session.session_id.clone()).build();
    let child = ctx
        .start_child_workflow(SessionWorkflow::run, input, options)
        .await
        .map_err(|error| format!("the session's workflow did not start: {error:?}"))?;
    let prompt = SessionInput::Prompt {
        text: start.prompt.clone(),
        images: Vec::new(),
        idempotency_key: Some(start.batch_id.clone()),
    };
    child
        .signal(SessionWorkflow::input, prompt, SignalWorkflowOptions::default())
        .await
        .map_err(|error| format!("the prompt did not reach the session: {error:?}"))?;
    child
        .signal(SessionWorkflow::close, (), SignalWorkflowOptions::default())
        .await
        .map_err(|error| format!("the session could not be closed: {error:?}"))?;
    child.result().await.map_err(|error| format!("the session's workflow failed: {error:?}"))
}
