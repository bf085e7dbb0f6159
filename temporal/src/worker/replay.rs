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
/// `<agent> history <id>` give it). A history in which no workflow task has completed yet (a run that
/// continued as new a moment ago holds only its start) has nothing to replay and passes: the SDK's replayer
/// would wait for a task forever.
pub async fn replay_history(json: &[u8]) -> Result<(), ReplayError> {
    let history = WorkflowHistory::from_json(json).map_err(|error| ReplayError::History(error.to_string()))?;
    if !has_completed_task(json) {
        return Ok(());
    }
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

/// Whether any workflow task of the history completed. Events are named by their attributes (this
/// project's `history`) or by `eventType` (the Temporal CLI's JSON); a history in neither shape is replayed
/// anyway, for the replayer to judge.
fn has_completed_task(json: &[u8]) -> bool {
    let Ok(history) = serde_json::from_slice::<serde_json::Value>(json) else { return true };
    let events = history["events"].as_array().map(Vec::as_slice).unwrap_or_default();
    let kind = |event: &serde_json::Value| -> Option<String> {
        match event["attributes"].as_object().and_then(|attributes| attributes.keys().next()) {
            Some(attributes) => Some(attributes.clone()),
            None => event["eventType"].as_str().map(str::to_owned),
        }
    };
    let kinds: Vec<String> = events.iter().filter_map(kind).collect();
    kinds.is_empty()
        || kinds
            .iter()
            .any(|kind| kind == "WorkflowTaskCompletedEventAttributes" || kind == "EVENT_TYPE_WORKFLOW_TASK_COMPLETED")
}

/// How long a replay may take, in case the SDK's replayer waits for more history in a case not foreseen.
const REPLAY_LIMIT: std::time::Duration = std::time::Duration::from_secs(30);
