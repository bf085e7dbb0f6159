//! `<agent> history <id>`: a session workflow's history as Temporal's JSON (to keep for a replay test, or
//! to read when a session misbehaves), and `--replay FILE`: whether a kept history replays on this build.

use std::io::Write as _;
use std::path::PathBuf;

use clap::Parser;
use temporalio_client::Client;

use crate::worker::replay::replay_history;
use crate::worker::workflow::SessionWorkflow;
use crate::worker::{ClusterArgs, ClusterError, connect};

#[derive(Debug, Parser)]
#[command(no_binary_name = true, about = "Print a session workflow's history as JSON, or replay a kept one")]
pub(super) struct HistoryArgs {
    /// The session whose history to print
    #[arg(required_unless_present = "replay")]
    id: Option<String>,
    /// Replay this history file on this build's workflow code instead (no server needed)
    #[arg(long, conflicts_with = "id")]
    replay: Option<PathBuf>,
    /// The Temporal server's frontend (HOST:PORT)
    #[arg(long, default_value = "127.0.0.1:7233")]
    temporal_address: String,
    /// The Temporal namespace
    #[arg(long, default_value = "default")]
    namespace: String,
}

/// Runs `<agent> history ARGS`.
pub(super) async fn history(args: HistoryArgs) -> Result<(), String> {
    if let Some(path) = &args.replay {
        let json = std::fs::read(path).map_err(|error| format!("cannot read {}: {error}", path.display()))?;
        replay_history(&json).await.map_err(|error| format!("{}: {error}", path.display()))?;
        eprintln!("{} replays on this build", path.display());
        return Ok(());
    }
    let id = args.id.clone().unwrap_or_default();
    let cluster = ClusterArgs {
        temporal_address: args.temporal_address.clone(),
        namespace: args.namespace.clone(),
        store: String::new(),
        task_queue: None,
    };
    let client: Client = connect(&cluster).await.map_err(|error: ClusterError| error.to_string())?;
    let json = client
        .get_workflow_handle::<SessionWorkflow>(id.as_str())
        .fetch_history(temporalio_client::WorkflowFetchHistoryOptions::default())
        .to_json()
        .await
        .map_err(|error| format!("cannot fetch the history of session {id}: {error}"))?;
    let mut out = std::io::stdout().lock();
    out.write_all(&json).and_then(|()| out.write_all(b"\n")).map_err(|error| error.to_string())
}
