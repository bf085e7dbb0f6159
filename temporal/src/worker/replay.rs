//! Replaying recorded session (and batch) workflow histories against this build's workflow code, without a server:
//! a history recorded by an older build must replay the same commands, or workers of this build would
//! fail the sessions it left running (Temporal's determinism rule).

use temporalio_client::WorkflowHistory;
use temporalio_sdk::workflow_replayer::{WorkflowReplayer, WorkflowReplayerOptions};

use super::batch::BatchWorkflow;
use super::workflow::SessionWorkflow;

/// Why a history did not replay.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplayError {
    #[error("the history is not a workflow history in Temporal's JSON: {0}")]
    History(String),
    #[error("the history does not replay on this build's workflows: {0}")]
    Mismatch(String),
    #[error("the replay did not finish within {0} s (nothing was found wrong before it stopped)")]
    Unfinished(u64),
}

/// Replays one history (Temporal's JSON form, as `temporal workflow show --output json` and
/// `<agent> history <id>` give it).
pub async fn replay_history(json: &[u8]) -> Result<(), ReplayError> {
    let history = WorkflowHistory::from_json(json).map_err(|error| ReplayError::History(error.to_string()))?;
    let options = WorkflowReplayerOptions::new()
        .register_workflow::<SessionWorkflow>()
        .map_err(|error| ReplayError::Mismatch(error.to_string()))?
        .register_workflow::<BatchWorkflow>()
        .map_err(|error| ReplayError::Mismatch(error.to_string()))?
        .build();
    let replayer = WorkflowReplayer::new(options).map_err(|error| ReplayError::Mismatch(error.to_string()))?;
    match tokio::time::timeout(REPLAY_LIMIT, replayer.replay_workflow(history)).await {
        Ok(replayed) => replayed.map_err(|error| ReplayError::Mismatch(format!("{error:?}"))),
        Err(_) => Err(ReplayError::Unfinished(REPLAY_LIMIT.as_secs())),
    }
}

/// How long a replay may take. The SDK's replayer has been seen to wait forever on the history of a run
/// that continued as new and had taken no step yet.
const REPLAY_LIMIT: std::time::Duration = std::time::Duration::from_secs(30);
