//! `serve --engine temporal`: the HTTP API of `serve` as a stateless tier. Sessions are workflows on
//! Temporal and live in Postgres; a prompt, steering, a follow-up or an abort is a signal; state comes from
//! the workflow's query and the store; events come through the event bus. Any number of replicas may run
//! side by side: none holds a session.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use pi_runtime::cli::rpc::RpcCommand;
use pi_runtime::cli::serve::{
    ApiError, BatchAnswer, BatchRequest, BatchSessionRef, BatchSessionStatus, BatchStarted, BatchStatus, EngineFuture,
    EngineSetup, EventStream, Metrics, NewSession, PromptAccepted, PromptRequest, SessionEngine, SessionSummary,
    StatusCode, allowed_remote_cwd, batch_not_found, check_import, no_session_file, not_supported, session_exists,
    session_flags, under_remote_root,
};
use pi_runtime::session::new_session_id;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::client::{SessionClient, SessionSettings};
use crate::flow::SessionInput;
use crate::serve_turns::{FollowedTurns, follow_turn};
use crate::store::{SessionLines, SessionStore, StoreError, is_message_line};
use crate::worker::batch::{BatchItemStatus, BatchSession};
use crate::worker::commands::SessionCommand;
use crate::worker::{ClusterArgs, ClusterError};

/// The engine's name, in its refusals.
const ENGINE: &str = "temporal";

/// How long an abort waits for the run to stop before it answers anyway.
const ABORT_WAIT: Duration = Duration::from_secs(30);

/// `serve`'s sessions on the cluster.
pub struct TemporalEngine {
    client: Arc<SessionClient>,
    /// The agent's name (its pages' titles).
    agent: String,
    roots: Vec<PathBuf>,
    /// The agent's flags given to `serve`, for every new session.
    agent_args: Vec<String>,
    /// The workspace whose workers run the tools of this server's sessions.
    workspace: String,
    /// This replica's turns (see [`follow_turn`]).
    metrics: Arc<Metrics>,
    followed: FollowedTurns,
    /// Cancelled when the server stops: the open event streams end.
    stopping: CancellationToken,
}

impl TemporalEngine {
    /// Connects to the cluster for `setup`'s agent.
    pub async fn connect(cluster: &ClusterArgs, workspace: String, setup: EngineSetup) -> Result<Self, ClusterError> {
        let client = Arc::new(SessionClient::connect(cluster, &setup.definition.name).await?);
        Ok(Self {
            client,
            agent: setup.definition.name.clone(),
            roots: setup.roots,
            agent_args: setup.agent_args,
            workspace,
            metrics: Arc::default(),
            followed: FollowedTurns::default(),
            stopping: CancellationToken::new(),
        })
    }

    /// Session `id`'s settings; 404 when no such session is stored.
    async fn session_settings(&self, id: &str) -> Result<SessionSettings, ApiError> {
        if !self.client.store().exists(id).await.map_err(store_error)? {
            return Err(ApiError::not_found(id));
        }
        let kept = self.client.settings(id).await.map_err(cluster_error)?;
        Ok(kept.unwrap_or_else(|| self.settings_for(Vec::new())))
    }

    fn settings_for(&self, request_flags: Vec<String>) -> SessionSettings {
        let argv = self.agent_args.iter().cloned().chain(request_flags).collect();
        SessionSettings { argv, workspace: self.workspace.clone(), ..SessionSettings::default() }
    }

    async fn send(&self, id: &str, input: SessionInput) -> Result<(), ApiError> {
        let settings = self.session_settings(id).await?;
        self.client.send(id, &settings, input).await.map_err(cluster_error)
    }

    /// pi's `get_state` for what the cluster knows of the session.
    async fn state(&self, id: &str) -> Result<Value, ApiError> {
        let text = self.client.store().export(id).await.map_err(store_error)?.ok_or_else(|| ApiError::not_found(id))?;
        let lines = SessionLines::parse(&text).map_err(store_error)?;
        let message_count = lines.entries.iter().filter(|entry| entry.is_message()).count();
        // A session whose workflow has not started (created, imported) is idle.
        let status = self.client.status(id).await.unwrap_or_default();
        let mut state = json!({
            "sessionId": id,
            "isStreaming": status.running,
            "isCompacting": false,
            "messageCount": message_count,
            "pendingMessageCount": status.queued_steering + status.queued_follow_ups,
        });
        // The model and level of the session's last step or settings command (none before the first).
        if let Some(settings) = status.settings {
            if let Some(model) = settings.model {
                state["model"] = model;
            }
            state["thinkingLevel"] = json!(settings.thinking_level);
        }
        Ok(state)
    }

    /// The last answer stored in session `id`.
    async fn last_answer(&self, id: &str) -> Result<Option<BatchAnswer>, ApiError> {
        let Some(text) = self.client.store().export(id).await.map_err(store_error)? else { return Ok(None) };
        Ok(BatchAnswer::last_in(&text))
    }

    /// Aborts the session's run; answers once the run it stops has stopped, as the RPC abort does (a prompt
    /// queued behind it may start its own run meanwhile).
    async fn abort(&self, id: &str) -> Result<(), ApiError> {
        let before = self.client.status(id).await.unwrap_or_default();
        self.send(id, SessionInput::Abort).await?;
        // The turns this replica started hear of the run's end first (and let their permits go).
        self.followed.run_ended(id, ABORT_WAIT).await;
        if before.running || before.queued_prompts > 0 {
            self.client.wait_for_run_end(id, before.runs, ABORT_WAIT).await;
        }
        Ok(())
    }

    /// A settings command, carried out by the session's workflow between steps. A compaction, a fork and a
    /// clone abort what runs first, as pi's do; a model or thinking change is kept for the session's
    /// workflow to start with; a fork or a clone answers with the new session's id (its settings the
    /// parent's).
    async fn settings_command(&self, id: &str, command: SessionCommand) -> Result<(Value, String), ApiError> {
        let mut settings = self.session_settings(id).await?;
        if command.stops_the_run() {
            let status = self.client.status(id).await.unwrap_or_default();
            if status.running || status.queued_prompts > 0 {
                self.abort(id).await?;
            }
        }
        let done = self.client.command(id, &settings, command).await.map_err(cluster_error)?;
        if let Some(error) = done.error {
            return Err(ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "command_failed", error));
        }
        if let Some(argv) = done.argv {
            settings.argv = argv;
            self.client.save_settings(id, &settings).await.map_err(cluster_error)?;
        }
        let data = if done.data.is_null() { json!({}) } else { done.data };
        let Some(forked) = done.forked else { return Ok((data, id.to_owned())) };
        self.client.save_settings(&forked, &settings).await.map_err(cluster_error)?;
        let text = self.client.store().export(&forked).await.map_err(store_error)?.unwrap_or_default();
        let header = text.lines().next().unwrap_or_default();
        self.client.publish_header(&forked, header).await.map_err(cluster_error)?;
        Ok((data, forked))
    }
}

impl SessionEngine for TemporalEngine {
    fn create(&self, request: NewSession) -> EngineFuture<'_, String> {
        Box::pin(async move {
            let cwd = match &request.cwd {
                Some(cwd) => allowed_remote_cwd(&self.roots, Path::new(cwd))?,
                None => self.roots.first().cloned().ok_or_else(|| ApiError::internal("the server has no roots"))?,
            };
            let id = self.client.create(&cwd, None).await.map_err(cluster_error)?;
            let settings = self.settings_for(session_flags(&request));
            self.client.save_settings(&id, &settings).await.map_err(cluster_error)?;
            Ok(id)
        })
    }

    fn list<'a>(&'a self, cwd: Option<&'a Path>) -> EngineFuture<'a, Vec<SessionSummary>> {
        Box::pin(async move {
            let wanted = cwd.map(|cwd| allowed_remote_cwd(&self.roots, cwd)).transpose()?;
            let stored = self.client.store().list().await.map_err(store_error)?;
            let mut sessions: Vec<SessionSummary> = stored
                .into_iter()
                .filter(|session| {
                    let resolved = under_remote_root(&self.roots, Path::new(&session.cwd));
                    resolved.is_some() && (wanted.is_none() || resolved == wanted)
                })
                .map(|session| SessionSummary {
                    id: session.id,
                    cwd: session.cwd,
                    modified: session.modified,
                    open: false,
                })
                .collect();
            sessions.sort_by(|a, b| b.modified.cmp(&a.modified).then_with(|| a.id.cmp(&b.id)));
            Ok(sessions)
        })
    }

    fn delete<'a>(&'a self, id: &'a str) -> EngineFuture<'a, ()> {
        Box::pin(async move {
            if let Ok(status) = self.client.status(id).await {
                if status.running {
                    let _ = self.client.send(id, &self.session_settings(id).await?, SessionInput::Abort).await;
                }
                let _ = self.client.close(id).await;
            }
            match self.client.store().delete(id).await.map_err(store_error)? {
                true => Ok(()),
                false => Err(ApiError::not_found(id)),
            }
        })
    }

    fn command<'a>(&'a self, id: &'a str, command: RpcCommand) -> EngineFuture<'a, (Value, String)> {
        Box::pin(async move {
            let input = match command {
                RpcCommand::GetState => return Ok((self.state(id).await?, id.to_owned())),
                RpcCommand::Steer { message, images } => {
                    SessionInput::Steer { text: message, images: images_json(&images) }
                }
                RpcCommand::FollowUp { message, images } => {
                    SessionInput::FollowUp { text: message, images: images_json(&images) }
                }
                RpcCommand::Abort => {
                    self.abort(id).await?;
                    return Ok((json!({}), id.to_owned()));
                }
                other => match SessionCommand::from_rpc(&other) {
                    Some(command) => return self.settings_command(id, command).await,
                    None => return Err(not_supported("this verb", ENGINE)),
                },
            };
            self.send(id, input).await?;
            Ok((json!({}), id.to_owned()))
        })
    }

    fn prompt<'a>(&'a self, id: &'a str, prompt: PromptRequest) -> EngineFuture<'a, PromptAccepted> {
        Box::pin(async move {
            let settings = self.session_settings(id).await?;
            let turn_id = match &prompt.idempotency_key {
                Some(key) => keyed_turn_id(id, key),
                None => new_session_id(),
            };
            let input = SessionInput::Prompt {
                text: prompt.message,
                images: images_json(&prompt.images),
                idempotency_key: prompt.idempotency_key,
            };
            let after = self.client.bus().last_number(id).await.map_err(store_error)?;
            if input_is_keyed(&input) {
                // A client's retry: the workflow drops a key it has seen, so it is sent as it is.
                self.client.send(id, &settings, input).await.map_err(cluster_error)?;
            } else if !self.client.prompt_if_idle(id, &settings, input).await.map_err(cluster_error)? {
                return Err(ApiError::new(
                    StatusCode::CONFLICT,
                    "session_busy",
                    "the session is running a prompt; steer it, queue a follow-up, or abort it first",
                ));
            }
            self.metrics.turn_started();
            let (client, metrics, stopping) = (self.client.clone(), self.metrics.clone(), self.stopping.clone());
            let turn = follow_turn(client, metrics, stopping, id.to_owned(), after, prompt.permit);
            self.followed.add(id, turn);
            Ok(PromptAccepted { turn_id, disposition: "started".to_owned() })
        })
    }

    fn events<'a>(&'a self, id: &'a str, after: u64) -> EngineFuture<'a, EventStream> {
        Box::pin(async move {
            if !self.client.store().exists(id).await.map_err(store_error)? {
                return Err(ApiError::not_found(id));
            }
            let watch = self.client.bus().watch(id, after).await.map_err(store_error)?;
            let events = futures::stream::unfold(watch, |mut watch| async move {
                match watch.next().await {
                    Some(Ok((number, line))) => Some(((number, Arc::<str>::from(line)), watch)),
                    Some(Err(error)) => {
                        eprintln!("Warning: an event stream ended: {error}");
                        None
                    }
                    None => None,
                }
            });
            let stopping = self.stopping.clone().cancelled_owned();
            let stream: EventStream = Box::pin(events.take_until(stopping));
            Ok(stream)
        })
    }

    fn export_jsonl<'a>(&'a self, id: &'a str) -> EngineFuture<'a, Vec<u8>> {
        Box::pin(async move {
            let text =
                self.client.store().export(id).await.map_err(store_error)?.ok_or_else(|| ApiError::not_found(id))?;
            // As pi writes its file once the first answer arrives, there is no file before.
            let answered =
                text.lines().skip(1).any(|line| line.contains(r#""role":"assistant""#) && is_message_line(line));
            if !answered {
                return Err(no_session_file());
            }
            Ok(text.into_bytes())
        })
    }

    fn export_html<'a>(&'a self, id: &'a str) -> EngineFuture<'a, Vec<u8>> {
        Box::pin(async move {
            let lines = self.export_jsonl(id).await?;
            let page = pi_runtime::export_html::session_file_page(&self.agent, &lines, id)
                .map_err(|error| ApiError::internal(format!("cannot render session {id}: {error}")))?;
            Ok(page.into_bytes())
        })
    }

    fn import<'a>(&'a self, bytes: &'a [u8]) -> EngineFuture<'a, String> {
        Box::pin(async move {
            let header = check_import(bytes)?;
            allowed_remote_cwd(&self.roots, Path::new(&header.cwd))?;
            let text =
                std::str::from_utf8(bytes).map_err(|_| ApiError::bad_request("the session file is not UTF-8"))?;
            let lines = SessionLines::parse(text).map_err(|error| ApiError::bad_request(error.to_string()))?;
            match self.client.store().import(&lines).await {
                Ok(()) => {}
                Err(StoreError::Exists(id)) => return Err(session_exists(&id)),
                Err(error) => return Err(store_error(error)),
            }
            self.client.save_settings(&header.id, &self.settings_for(Vec::new())).await.map_err(cluster_error)?;
            self.client.publish_header(&header.id, &lines.header.text).await.map_err(cluster_error)?;
            Ok(header.id)
        })
    }

    fn answer_dialog<'a>(&'a self, id: &'a str, line: String) -> EngineFuture<'a, bool> {
        Box::pin(async move {
            let answer: Value = serde_json::from_str(&line).unwrap_or_default();
            if answer["type"] != "extension_ui_response" {
                return Ok(false);
            }
            if !self.client.store().exists(id).await.map_err(store_error)? {
                return Err(ApiError::not_found(id));
            }
            // The step waiting for it hears it on the bus; an answer nobody waits for is dropped, as over RPC.
            self.client.bus().answer_dialog(id, &line).await.map_err(store_error)?;
            Ok(true)
        })
    }

    fn runs_batches(&self) -> bool {
        true
    }

    fn start_batch(&self, request: BatchRequest, concurrency: u32) -> EngineFuture<'_, BatchStarted> {
        Box::pin(async move {
            let cwds = request
                .repos
                .iter()
                .map(|repo| allowed_remote_cwd(&self.roots, repo))
                .collect::<Result<Vec<_>, _>>()?;
            let settings = self.settings_for(Vec::new());
            let mut sessions = Vec::with_capacity(cwds.len());
            for cwd in &cwds {
                let id = self.client.create(cwd, None).await.map_err(cluster_error)?;
                self.client.save_settings(&id, &settings).await.map_err(cluster_error)?;
                sessions.push(BatchSession { session_id: id, repo: cwd.to_string_lossy().into_owned() });
            }
            let id = format!("batch-{}", new_session_id());
            let refs = sessions
                .iter()
                .map(|session| BatchSessionRef { id: session.session_id.clone(), repo: session.repo.clone() })
                .collect();
            self.client
                .start_batch(&id, &request.prompt, sessions, concurrency, &settings)
                .await
                .map_err(cluster_error)?;
            Ok(BatchStarted { id, sessions: refs })
        })
    }

    fn batch<'a>(&'a self, id: &'a str) -> EngineFuture<'a, BatchStatus> {
        Box::pin(async move {
            if !id.starts_with("batch-") {
                return Err(batch_not_found(id));
            }
            let progress =
                self.client.batch_progress(id).await.map_err(cluster_error)?.ok_or_else(|| batch_not_found(id))?;
            let mut sessions = Vec::with_capacity(progress.items.len());
            for item in progress.items {
                let answer = match item.status {
                    BatchItemStatus::Done => self.last_answer(&item.session.session_id).await?,
                    _ => None,
                };
                sessions.push(BatchSessionStatus {
                    id: item.session.session_id,
                    repo: item.session.repo,
                    status: item.status,
                    answer,
                    error: item.error,
                });
            }
            Ok(BatchStatus::new(id.to_owned(), progress.prompt, progress.concurrency, sessions))
        })
    }

    fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    fn open_sessions(&self) -> usize {
        0
    }

    fn stop(&self) -> EngineFuture<'_, ()> {
        // The sessions run on the workers and go on; only this replica's streams end.
        self.stopping.cancel();
        Box::pin(async { Ok(()) })
    }
}

fn input_is_keyed(input: &SessionInput) -> bool {
    matches!(input, SessionInput::Prompt { idempotency_key: Some(_), .. })
}

fn images_json(images: &[pi_runtime::protocol::ImageContent]) -> Vec<Value> {
    images.iter().filter_map(|image| serde_json::to_value(image).ok()).collect()
}

/// The turn id of a prompt sent under `key`: the same whichever replica takes it, however often it is sent.
fn keyed_turn_id(session: &str, key: &str) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(format!("{session}\n{key}").as_bytes());
    let hex: String = digest.iter().take(16).map(|byte| format!("{byte:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
}

fn store_error(error: StoreError) -> ApiError {
    match error {
        StoreError::NotFound(id) => ApiError::not_found(&id),
        StoreError::Invalid(message) => ApiError::bad_request(message),
        other => ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "store_unavailable", other.to_string()),
    }
}

fn cluster_error(error: ClusterError) -> ApiError {
    match error {
        ClusterError::Store(error) => store_error(error),
        other => ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "cluster_unavailable", other.to_string()),
    }
}
