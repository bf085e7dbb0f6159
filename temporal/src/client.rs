//! Talking to sessions that run on Temporal: create one (its header goes to the store), send it inputs
//! (the session's workflow starts with the first, and again after it was closed), ask its status, follow
//! its events on the bus. What `submit` and the API tier use; it holds no session state of its own.

use std::path::Path;
use std::time::Duration;

use pi_runtime::session::{SessionHeader, iso_timestamp_now, new_session_id};
use temporalio_client::errors::WorkflowQueryError;
use temporalio_client::{
    Client, WorkflowIdConflictPolicy, WorkflowQueryOptions, WorkflowSignalOptions, WorkflowStartOptions,
    WorkflowUpdateWithStartOptions,
};

use crate::flow::SessionInput;
use crate::store::{EventBus, HeaderLine, PostgresStore, SessionStore};
use crate::worker::batch::{BatchProgress, BatchSession, BatchStart, BatchWorkflow};
use crate::worker::commands::{CommandDone, SessionCommand};
use crate::worker::workflow::{SessionStart, SessionStatus, SessionWorkflow};
use crate::worker::{ClusterArgs, ClusterError, connect};

/// A session's run settings: the agent's flags and the workspace whose worker runs its tools.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSettings {
    pub argv: Vec<String>,
    pub workspace: String,
    /// Seconds without a heartbeat after which a step's worker is taken as dead (`None`: 10).
    pub heartbeat_timeout_secs: Option<u64>,
    /// Turns after which the session's workflow continues as new (`None`: 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns_per_run: Option<u32>,
}

/// The publisher's number of a session's header event (steps name theirs after `2^24`).
const HEADER_EVENT: u64 = 0;

/// How long an abort's notice is repeated at most while the step under way goes on.
const ABORT_NOTICE_FOR: Duration = Duration::from_secs(30);

/// A connection to the cluster: Temporal, the store and the event bus.
pub struct SessionClient {
    client: Client,
    store: PostgresStore,
    bus: EventBus,
    cluster: ClusterArgs,
    /// The agent whose sessions these are (its task queues are named after it).
    agent: String,
}

impl SessionClient {
    /// Connects to `cluster` for the sessions of agent `agent` (its name).
    pub async fn connect(cluster: &ClusterArgs, agent: &str) -> Result<Self, ClusterError> {
        let store = PostgresStore::connect(&cluster.store).await?;
        let bus = store.event_bus();
        let client = connect(cluster).await?;
        Ok(Self { client, store, bus, cluster: cluster.clone(), agent: agent.to_owned() })
    }

    pub fn store(&self) -> &PostgresStore {
        &self.store
    }

    pub fn bus(&self) -> &EventBus {
        &self.bus
    }

    /// Stores a new session's header (working directory `cwd`) and returns its id.
    pub async fn create(&self, cwd: &Path, session_id: Option<String>) -> Result<String, ClusterError> {
        let id = session_id.unwrap_or_else(new_session_id);
        let header = SessionHeader::new(id.clone(), iso_timestamp_now(), cwd.to_string_lossy());
        let text = serde_json::to_string(&header).map_err(|error| ClusterError::Worker(error.to_string()))?;
        self.store.append(&HeaderLine::parse(&text)?, &[]).await?;
        self.publish_header(&id, &text).await?;
        Ok(id)
    }

    /// Publishes a session's header as its first event (as `--mode json` and embedded `serve` begin).
    pub async fn publish_header(&self, id: &str, header: &str) -> Result<(), ClusterError> {
        Ok(self.bus.publish(id, HEADER_EVENT, header).await?)
    }

    /// Keeps the settings session `id` runs with (used whenever its workflow starts).
    pub async fn save_settings(&self, id: &str, settings: &SessionSettings) -> Result<(), ClusterError> {
        let text = serde_json::to_string(settings).map_err(|error| ClusterError::Worker(error.to_string()))?;
        Ok(self.store.save_settings(id, &text).await?)
    }

    /// The settings kept for session `id`.
    pub async fn settings(&self, id: &str) -> Result<Option<SessionSettings>, ClusterError> {
        let Some(text) = self.store.settings(id).await? else { return Ok(None) };
        serde_json::from_str(&text).map(Some).map_err(|error| ClusterError::Worker(format!("session {id}: {error}")))
    }

    /// Sends `input` to session `id`, starting its workflow with `settings` when it is not running.
    pub async fn send(&self, id: &str, settings: &SessionSettings, input: SessionInput) -> Result<(), ClusterError> {
        let start = self.start_of(id, settings);
        let options = WorkflowStartOptions::new(self.cluster.sessions_queue(&self.agent), id)
            .id_conflict_policy(WorkflowIdConflictPolicy::UseExisting)
            .build();
        let abort = matches!(input, SessionInput::Abort);
        self.client
            .signal_with_start_workflow(SessionWorkflow::run, start, SessionWorkflow::input, input, options)
            .await
            .map_err(|error| ClusterError::Worker(format!("cannot reach session {id}: {error}")))?;
        if abort {
            self.abort_step_under_way(id).await?;
        }
        Ok(())
    }

    /// Sends prompt `input` to session `id` unless a run streams or a prompt waits there (decided by the
    /// workflow, so replicas racing cannot both start one); whether it was taken.
    pub async fn prompt_if_idle(
        &self,
        id: &str,
        settings: &SessionSettings,
        input: SessionInput,
    ) -> Result<bool, ClusterError> {
        let start = self.start_of(id, settings);
        let options = self.update_with_start(id);
        self.client
            .execute_update_with_start_workflow(
                SessionWorkflow::run,
                start,
                SessionWorkflow::prompt_if_idle,
                input,
                options,
            )
            .await
            .map_err(|error| ClusterError::Worker(format!("cannot reach session {id}: {error}")))
    }

    /// Carries out a settings command on session `id` (starting its workflow with `settings` when it is not
    /// running), once no step of it is under way; answers with what the command did.
    pub async fn command(
        &self,
        id: &str,
        settings: &SessionSettings,
        command: SessionCommand,
    ) -> Result<CommandDone, ClusterError> {
        let start = self.start_of(id, settings);
        let options = self.update_with_start(id);
        self.client
            .execute_update_with_start_workflow(SessionWorkflow::run, start, SessionWorkflow::command, command, options)
            .await
            .map_err(|error| ClusterError::Worker(format!("cannot reach session {id}: {error}")))
    }

    /// Starts a batch's workflow (its sessions stored already); `settings` are its sessions'.
    pub async fn start_batch(
        &self,
        batch_id: &str,
        prompt: &str,
        sessions: Vec<BatchSession>,
        concurrency: u32,
        settings: &SessionSettings,
    ) -> Result<(), ClusterError> {
        let start = BatchStart {
            batch_id: batch_id.to_owned(),
            prompt: prompt.to_owned(),
            sessions,
            concurrency,
            session: self.start_of("", settings),
        };
        let options = WorkflowStartOptions::new(self.cluster.sessions_queue(&self.agent), batch_id).build();
        self.client
            .start_workflow(BatchWorkflow::run, start, options)
            .await
            .map(drop)
            .map_err(|error| ClusterError::Worker(format!("cannot start batch {batch_id}: {error}")))
    }

    /// Batch `id`'s progress, from its workflow.
    /// `None` when there is no such batch.
    pub async fn batch_progress(&self, id: &str) -> Result<Option<BatchProgress>, ClusterError> {
        let handle = self.client.get_workflow_handle::<BatchWorkflow>(id);
        match handle.query(BatchWorkflow::progress, (), WorkflowQueryOptions::default()).await {
            Ok(progress) => Ok(Some(progress)),
            Err(WorkflowQueryError::NotFound(_)) => Ok(None),
            Err(error) => Err(ClusterError::Worker(format!("cannot ask batch {id}: {error}"))),
        }
    }

    /// An update to session `id`'s workflow, started when it is not running.
    fn update_with_start(&self, id: &str) -> WorkflowUpdateWithStartOptions {
        WorkflowUpdateWithStartOptions::new(
            self.cluster.sessions_queue(&self.agent),
            id,
            WorkflowIdConflictPolicy::UseExisting,
        )
        .build()
    }

    /// What session `id`'s workflow starts with.
    fn start_of(&self, id: &str, settings: &SessionSettings) -> SessionStart {
        SessionStart {
            session_id: id.to_owned(),
            argv: settings.argv.clone(),
            tool_queue: self.cluster.tool_queue(&self.agent, &settings.workspace),
            heartbeat_timeout_secs: settings.heartbeat_timeout_secs,
            turns_per_run: settings.turns_per_run,
            carried: None,
        }
    }

    /// The workflow starts the run's later steps cancelled; the step under way hears of the abort through the
    /// event bus. A notice reaches only who listens at that moment, so it is repeated until that step is
    /// over (a step that was just starting listens a little later).
    async fn abort_step_under_way(&self, id: &str) -> Result<(), ClusterError> {
        let Ok(status) = self.status(id).await else {
            // The workflow cannot be asked (not started, or gone): any step of the session is told once.
            return Ok(self.bus.request_abort(id, None).await?);
        };
        let (step, until) = (status.steps, tokio::time::Instant::now() + ABORT_NOTICE_FOR);
        let mut running = status.running;
        while running && tokio::time::Instant::now() < until {
            self.bus.request_abort(id, Some(step)).await?;
            tokio::time::sleep(Duration::from_millis(200)).await;
            running = self.status(id).await.is_ok_and(|now| now.running && now.steps == step);
        }
        Ok(())
    }

    /// The session's status, from its workflow.
    pub async fn status(&self, id: &str) -> Result<SessionStatus, ClusterError> {
        let handle = self.client.get_workflow_handle::<SessionWorkflow>(id);
        handle
            .query(SessionWorkflow::status, (), WorkflowQueryOptions::default())
            .await
            .map_err(|error| ClusterError::Worker(format!("cannot ask session {id}: {error}")))
    }

    /// Ends the session's workflow once it is idle.
    pub async fn close(&self, id: &str) -> Result<(), ClusterError> {
        let handle = self.client.get_workflow_handle::<SessionWorkflow>(id);
        handle
            .signal(SessionWorkflow::close, (), WorkflowSignalOptions::default())
            .await
            .map_err(|error| ClusterError::Worker(format!("cannot close session {id}: {error}")))
    }

    /// Waits (at most `limit`) until session `id`, which had ended `runs` runs, has ended another or runs
    /// nothing, polling its status.
    pub async fn wait_for_run_end(&self, id: &str, runs: u64, limit: Duration) {
        let ended = async {
            while self.status(id).await.is_ok_and(|status| status.running && status.runs == runs) {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        };
        let _ = tokio::time::timeout(limit, ended).await;
    }

    /// Waits until session `id` has ended `runs` runs and is idle, polling its status.
    pub async fn wait_for_runs(&self, id: &str, runs: u64) -> Result<SessionStatus, ClusterError> {
        loop {
            let status = self.status(id).await?;
            if status.runs >= runs && !status.running && status.queued_prompts == 0 {
                return Ok(status);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}
