//! `<agent> worker`: runs session workflows and their activities for a Temporal server, with sessions in
//! Postgres. A worker polls the sessions' queue (workflows, model calls, the ends of runs) and its
//! workspace's tool queue (tool batches run where the checkout is); any number of workers may run.

pub mod activities;
pub mod batch;
mod bus_ui;
pub mod commands;
pub mod replay;
mod run_end;
pub mod step_host;
mod step_ids;
pub mod workflow;

use std::sync::Arc;

use clap::Parser;
use pi_runtime::AgentDefinition;
use pi_runtime::extension::Extensions;
use pi_runtime::tools::AgentTool;
use temporalio_client::{Client, ClientOptions, Connection, ConnectionOptions};
use temporalio_sdk::{Runtime, Worker, WorkerOptions};

use crate::store::PostgresStore;
use activities::SessionActivities;
use step_host::StepHost;
use workflow::SessionWorkflow;

/// Heartbeats reach the server at least this often, so a session's heartbeat timeout (how soon a dead
/// worker's step is retried or marked interrupted) holds even when it is long.
const HEARTBEAT_THROTTLE: std::time::Duration = std::time::Duration::from_secs(1);

/// Where the Temporal server and the store are (shared by `worker` and the clients).
#[derive(Debug, Clone, clap::Args)]
pub struct ClusterArgs {
    /// The Temporal server's frontend (HOST:PORT)
    #[arg(long, default_value = "127.0.0.1:7233")]
    pub temporal_address: String,
    /// The Temporal namespace
    #[arg(long, default_value = "default")]
    pub namespace: String,
    /// The session store: postgres://USER@HOST:PORT/DATABASE
    #[arg(long)]
    pub store: String,
    /// What this agent's task queues are named after (default: the agent's name), so agents sharing a
    /// Temporal namespace never take each other's work
    #[arg(long)]
    pub task_queue: Option<String>,
}

impl ClusterArgs {
    /// The task queue of `agent`'s session workflows, model calls and ends of runs.
    pub fn sessions_queue(&self, agent: &str) -> String {
        format!("{}-sessions", self.task_queue.as_deref().unwrap_or(agent))
    }

    /// The task queue whose workers run the tools of `agent`'s sessions in `workspace`.
    pub fn tool_queue(&self, agent: &str, workspace: &str) -> String {
        format!("{}-tools-{workspace}", self.task_queue.as_deref().unwrap_or(agent))
    }
}

#[derive(Debug, Parser)]
#[command(no_binary_name = true, about = "Run session workflows and their model and tool steps for Temporal")]
pub struct WorkerArgs {
    #[command(flatten)]
    cluster: ClusterArgs,
    /// The workspace whose tools this worker runs (sessions name theirs when they start)
    #[arg(long, default_value = "default")]
    workspace: String,
    /// Run only the workspace's tools, not workflows and model calls
    #[arg(long)]
    tools_only: bool,
}

/// Why a worker or client could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClusterError {
    #[error("bad Temporal address {address}: {message}")]
    Address { address: String, message: String },
    #[error("cannot reach Temporal at {address}: {message}")]
    Connect { address: String, message: String },
    #[error("the Temporal worker failed: {0}")]
    Worker(String),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}

/// Connects to the Temporal server of `cluster`.
pub async fn connect(cluster: &ClusterArgs) -> Result<Client, ClusterError> {
    let address = &cluster.temporal_address;
    let url = if address.contains("://") { address.clone() } else { format!("http://{address}") };
    let bad = |message: String| ClusterError::Address { address: address.clone(), message };
    let url = url::Url::parse(&url).map_err(|error| bad(error.to_string()))?;
    let unreachable = |message: String| ClusterError::Connect { address: address.clone(), message };
    let connection = Connection::connect(ConnectionOptions::new(url).build())
        .await
        .map_err(|error| unreachable(error.to_string()))?;
    Client::new(connection, ClientOptions::new(cluster.namespace.clone()).build())
        .map_err(|error| unreachable(error.to_string()))
}

/// Runs `<agent> worker ARGS` until interrupted (SIGINT or SIGTERM), then stops the workers.
pub async fn run_worker(
    definition: AgentDefinition,
    rust_tools: Vec<Arc<dyn AgentTool>>,
    extensions: Extensions,
    args: WorkerArgs,
) -> Result<(), ClusterError> {
    // Temporal's workers are not `Send`: they run on a local set.
    tokio::task::LocalSet::new().run_until(serve_queues(definition, rust_tools, extensions, args)).await
}

async fn serve_queues(
    definition: AgentDefinition,
    rust_tools: Vec<Arc<dyn AgentTool>>,
    extensions: Extensions,
    args: WorkerArgs,
) -> Result<(), ClusterError> {
    let store = PostgresStore::connect(&args.cluster.store).await?;
    let bus = store.event_bus();
    let client = connect(&args.cluster).await?;
    let scratch = std::env::temp_dir().join(format!("pi-worker-{}", std::process::id()));
    let sessions_queue = args.cluster.sessions_queue(&definition.name);
    let tool_queue = args.cluster.tool_queue(&definition.name, &args.workspace);
    let host = Arc::new(StepHost { definition, rust_tools, extensions, store, bus, scratch: scratch.clone() });
    let runtime =
        Runtime::from_current_tokio(Default::default()).map_err(|error| ClusterError::Worker(error.to_string()))?;
    let failed = |error: &dyn std::fmt::Display| ClusterError::Worker(error.to_string());
    let mut workers = Vec::new();
    if !args.tools_only {
        let options = WorkerOptions::new(sessions_queue.clone())
            .max_heartbeat_throttle_interval(HEARTBEAT_THROTTLE)
            .register_workflow::<SessionWorkflow>()
            .map_err(|error| failed(&error))?
            .register_workflow::<batch::BatchWorkflow>()
            .map_err(|error| failed(&error))?
            .register_activities(SessionActivities { host: host.clone() })
            .build();
        workers.push(Worker::new(&runtime, client.clone(), options).map_err(|error| failed(&error))?);
    }
    let tools = WorkerOptions::new(tool_queue.clone())
        .max_heartbeat_throttle_interval(HEARTBEAT_THROTTLE)
        .register_activities(SessionActivities { host })
        .build();
    workers.push(Worker::new(&runtime, client, tools).map_err(|error| failed(&error))?);
    let stops: Vec<_> = workers.iter().map(Worker::shutdown_handle).collect();
    eprintln!("Worker ready: queues {sessions_queue} and {tool_queue}");
    let mut running = Vec::new();
    for mut worker in workers {
        running.push(tokio::task::spawn_local(async move { worker.run().await.map_err(|error| error.to_string()) }));
    }
    let stopped = async {
        let interrupt = tokio::signal::ctrl_c();
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut terminate) => tokio::select! {
                _ = interrupt => {},
                _ = terminate.recv() => {},
            },
            Err(_) => {
                let _ = interrupt.await;
            }
        }
    };
    stopped.await;
    // Workers must stop before the runtime goes away.
    for stop in stops {
        stop();
    }
    let mut failure = None;
    for task in running {
        match task.await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => failure = Some(error),
            Err(error) => failure = Some(error.to_string()),
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    failure.map_or(Ok(()), |error| Err(ClusterError::Worker(error)))
}
