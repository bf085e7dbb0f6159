//! One session of `serve`: a task pinned to one of the server's session threads that owns the agent session
//! and carries out the API's requests as RPC commands, the same dispatcher `--mode rpc` uses. Replies go back
//! to the request that asked; events go to the session's [`EventLog`].

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::{Arc, Mutex, PoisonError};

use axum::http::StatusCode;
use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, mpsc, oneshot};

use super::api_error::ApiError;
use super::events::EventLog;
use super::metrics::Metrics;
use super::turns::{TurnMarker, TurnMarkers};
use crate::AgentDefinition;
use crate::agent_session::AgentSession;
use crate::cli::model_catalog::ModelCatalog;
use crate::cli::rpc::output::{RpcLineSink, RpcOutput};
use crate::cli::rpc::ui::PendingDialogs;
use crate::cli::rpc::{Rpc, RpcCommand, open_rpc_session};
use crate::cli::{CliError, agent_dir, parse_args, project_trust, setup};
use crate::extension::{Extensions, SessionChangeReason, SessionShutdownEvent};
use crate::protocol::ImageContent;
use crate::tools::AgentTool;

/// What a session is opened with; everything here crosses to the session's thread.
pub struct SessionSpec {
    pub definition: Arc<AgentDefinition>,
    /// The agent's flags: the server's, then the request's (model, thinking level, tools, session file).
    pub argv: Vec<String>,
    pub cwd: PathBuf,
    pub rust_tools: Vec<Arc<dyn AgentTool>>,
    pub extensions: Extensions,
    pub markers: TurnMarkers,
    pub metrics: Arc<Metrics>,
}

/// A session that opened.
pub struct Opened {
    pub id: String,
    pub dialogs: PendingDialogs,
}

/// What the API asks of a session.
pub enum Request {
    /// An RPC command; the reply line comes back with the session's id afterwards (a fork changes it).
    Command { command: RpcCommand, reply: oneshot::Sender<(String, String)> },
    /// A prompt, answered once its run has started (or it was handled, or refused). The permit is held
    /// until the run ends.
    Prompt {
        message: String,
        images: Vec<ImageContent>,
        idempotency_key: Option<String>,
        permit: Option<OwnedSemaphorePermit>,
        reply: oneshot::Sender<Result<PromptAccepted, ApiError>>,
    },
    /// Finish the turn a crash cut short.
    Resume { marker: TurnMarker },
    /// Stop: abort what runs, save, and end the task.
    Close { reply: oneshot::Sender<()> },
}

/// A prompt the session took.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct PromptAccepted {
    pub turn_id: String,
    /// `started`, or `handled` when a command of the agent took it without a run.
    pub disposition: String,
}

/// Idempotency keys remembered per session (the oldest are forgotten first).
const REMEMBERED_KEYS: usize = 1024;

/// Runs one session until it is closed: opens it (reporting on `opened`), then serves `requests`.
pub async fn run_session(
    spec: SessionSpec,
    events: Arc<EventLog>,
    opened: oneshot::Sender<Result<Opened, ApiError>>,
    mut requests: mpsc::UnboundedReceiver<Request>,
) {
    let sink = Arc::new(ServeSink { events: events.clone(), waiting: Mutex::default() });
    let name = spec.definition.name.clone();
    let (markers, cwd, metrics) = (spec.markers.clone(), spec.cwd.clone(), spec.metrics.clone());
    let (prepared, catalog) = match prepare(spec) {
        Ok(ready) => ready,
        Err(error) => {
            let _ = opened.send(Err(error));
            return;
        }
    };
    // The stream starts as `--mode json` starts: with the session header.
    match serde_json::to_string(prepared.session.header()) {
        Ok(line) => {
            events.push(line);
        }
        Err(error) => eprintln!("Error: cannot serialize a session header: {error}"),
    }
    let mcp = prepared.mcp.clone();
    let wired = match open_rpc_session(prepared, catalog, &name, RpcOutput::new(sink.clone()), true).await {
        Ok(wired) => wired,
        Err(error) => {
            let _ = opened.send(Err(ApiError::bad_request(error.to_string())));
            return;
        }
    };
    let (rpc, session) = (Rc::new(wired.rpc), wired.session);
    let observer = metrics.clone();
    session.subscribe(move |event| observer.observe(event));
    let id = session.manager().session_id().to_owned();
    if opened.send(Ok(Opened { id, dialogs: wired.dialogs })).is_err() {
        rpc.finish().await;
        return;
    }
    let serving = Serving {
        rpc: rpc.clone(),
        session: session.clone(),
        sink,
        markers,
        metrics,
        cwd,
        next_id: Cell::new(0),
        keys: RefCell::default(),
    };
    let close_reply = loop {
        tokio::select! {
            request = requests.recv() => match request {
                Some(request) => if let Some(reply) = serving.handle(request).await {
                    break Some(reply);
                },
                None => break None,
            },
            // An extension woke the idle agent (the panels' Spine, a triggered message).
            () = session.deferred_ready() => rpc.run_deferred(),
        }
    };
    rpc.finish().await;
    let shutdown = SessionShutdownEvent { reason: SessionChangeReason::Quit, target_session_file: None };
    session.extensions().emit_session_shutdown(&shutdown).await;
    if let Some(run) = mcp {
        run.manager.shutdown().await;
    }
    events.close();
    if let Some(reply) = close_reply {
        let _ = reply.send(());
    }
}

/// Resolves the session's flags, trust, model and session file, as a run on the command line would.
fn prepare(spec: SessionSpec) -> Result<(setup::Prepared, ModelCatalog), ApiError> {
    let SessionSpec { definition, argv, cwd, rust_tools, extensions, .. } = spec;
    let mut args = parse_args(&definition, argv).map_err(|error| ApiError::bad_request(clap_message(&error)))?;
    project_trust::decide_in(&definition, &mut args, None, &cwd);
    let agent_dir = agent_dir(&definition);
    let refused = |error: CliError| ApiError::bad_request(error.to_string());
    let prepared = setup::prepare_in(&definition, &args, rust_tools, extensions, &cwd, &agent_dir).map_err(refused)?;
    let start_provider = prepared.agent.model().map(|model| model.provider);
    let catalog = ModelCatalog::load(&definition, &agent_dir, args.api_key.as_deref(), start_provider.as_deref())
        .map_err(refused)?
        .with_pi_compat(prepared.pi_compat)
        .with_scope(&prepared.model_scope);
    Ok((prepared, catalog))
}

/// A flag error as one line, without clap's usage footer.
pub fn clap_message(error: &clap::Error) -> String {
    let text = error.to_string();
    let first = text.lines().next().unwrap_or_default();
    first.strip_prefix("error: ").unwrap_or(first).to_owned()
}

/// The open session's side of the requests.
struct Serving {
    rpc: Rc<Rpc>,
    session: Rc<AgentSession>,
    sink: Arc<ServeSink>,
    markers: TurnMarkers,
    metrics: Arc<Metrics>,
    cwd: PathBuf,
    next_id: Cell<u64>,
    /// Idempotency keys and the turns they started, oldest first.
    keys: RefCell<Vec<(String, PromptAccepted)>>,
}

impl Serving {
    /// Carries out one request; a `Close` gives back its reply, to be sent once the session has stopped.
    async fn handle(&self, request: Request) -> Option<oneshot::Sender<()>> {
        match request {
            Request::Command { command, reply } => {
                let (id, answer) = self.expect_reply();
                if let Some(direct) = self.rpc.run(Some(id), command).await {
                    self.rpc.out.reply(&direct);
                }
                let rpc = self.rpc.clone();
                tokio::task::spawn_local(async move {
                    if let Ok(line) = answer.await {
                        let _ = reply.send((line, rpc.session_id()));
                    }
                });
            }
            Request::Prompt { message, images, idempotency_key, permit, reply } => {
                if let Some(key) = &idempotency_key
                    && let Some((_, earlier)) = self.keys.borrow().iter().find(|(known, _)| known == key)
                {
                    let _ = reply.send(Ok(earlier.clone()));
                    return None;
                }
                if self.rpc.is_busy() {
                    let message = "the session is working on a prompt; steer it (POST .../steer), queue a follow-up \
                                   (POST .../follow_up), or abort it first";
                    let _ = reply.send(Err(ApiError::new(StatusCode::CONFLICT, "session_busy", message)));
                    return None;
                }
                let turn_id = uuid::Uuid::now_v7().to_string();
                if let Some(key) = idempotency_key.clone() {
                    let accepted = PromptAccepted { turn_id: turn_id.clone(), disposition: "started".into() };
                    self.remember(key, accepted);
                }
                self.start_prompt(message, images, turn_id, permit, Some(reply)).await;
            }
            Request::Resume { marker } => self.resume(marker).await,
            Request::Close { reply } => return Some(reply),
        }
        None
    }

    /// Runs a prompt as turn `turn_id`, marked on disk until its run ends; `reply` hears whether it started.
    async fn start_prompt(
        &self,
        message: String,
        images: Vec<ImageContent>,
        turn_id: String,
        permit: Option<OwnedSemaphorePermit>,
        reply: Option<oneshot::Sender<Result<PromptAccepted, ApiError>>>,
    ) {
        let session_id = self.rpc.session_id();
        let leaf = self.session.manager().tree().leaf_id().map(str::to_owned);
        let marker = TurnMarker {
            session_id: session_id.clone(),
            cwd: self.cwd.clone(),
            leaf,
            message: message.clone(),
            images: images.clone(),
            turn_id: turn_id.clone(),
        };
        if let Err(error) = self.markers.write(&marker) {
            eprintln!(
                "Warning: cannot mark the turn of session {session_id} (it cannot be finished after a crash): {error}"
            );
        }
        let (id, answer) = self.expect_reply();
        let command = RpcCommand::Prompt { message, images, streaming_behavior: None };
        if let Some(direct) = self.rpc.run(Some(id), command).await {
            self.rpc.out.reply(&direct);
        }
        let (rpc, markers, metrics) = (self.rpc.clone(), self.markers.clone(), self.metrics.clone());
        let started_at = std::time::Instant::now();
        tokio::task::spawn_local(async move {
            let outcome = match answer.await {
                Ok(line) => prompt_outcome(&line, turn_id),
                Err(_) => Err(ApiError::session_gone()),
            };
            let started = matches!(&outcome, Ok(accepted) if accepted.disposition == "started");
            if let Some(reply) = reply {
                let _ = reply.send(outcome);
            }
            if started {
                metrics.turn_started();
                rpc.prompts_done().await;
                metrics.turn_finished(started_at.elapsed());
            }
            markers.remove(&session_id);
            drop(permit);
        });
    }

    /// Finishes the turn `marker` left unfinished: sends the prompt again when the session file never got
    /// it, else carries on from what the file holds.
    async fn resume(&self, marker: TurnMarker) {
        let file_exists = self.session.manager().path().is_some_and(Path::exists);
        let leaf = self.session.manager().tree().leaf_id().map(str::to_owned);
        if !file_exists || leaf == marker.leaf {
            self.start_prompt(marker.message, marker.images, marker.turn_id, None, None).await;
            return;
        }
        self.rpc.resume_interrupted();
        let (rpc, markers) = (self.rpc.clone(), self.markers.clone());
        tokio::task::spawn_local(async move {
            rpc.prompts_done().await;
            markers.remove(&marker.session_id);
        });
    }

    /// A fresh command id, and the reply that will come for it.
    fn expect_reply(&self) -> (Value, oneshot::Receiver<String>) {
        let number = self.next_id.get() + 1;
        self.next_id.set(number);
        let id = format!("serve-{number}");
        let (sender, receiver) = oneshot::channel();
        self.sink.waiting.lock().unwrap_or_else(PoisonError::into_inner).insert(id.clone(), sender);
        (Value::String(id), receiver)
    }

    fn remember(&self, key: String, accepted: PromptAccepted) {
        let mut keys = self.keys.borrow_mut();
        if keys.len() >= REMEMBERED_KEYS {
            keys.remove(0);
        }
        keys.push((key, accepted));
    }
}

/// What a prompt's reply line says: started or handled, or the refusal.
fn prompt_outcome(line: &str, turn_id: String) -> Result<PromptAccepted, ApiError> {
    let reply: Value = serde_json::from_str(line).map_err(|error| ApiError::internal(error.to_string()))?;
    if reply["success"] == Value::Bool(true) {
        let disposition = reply["data"]["disposition"].as_str().unwrap_or("started").to_owned();
        return Ok(PromptAccepted { turn_id, disposition });
    }
    let error = reply["error"].as_str().unwrap_or("the prompt was refused");
    Err(ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "prompt_failed", error))
}

/// Routes the RPC session's lines: a reply to the request waiting for it, everything else to the events
/// (a reply nobody waits for, such as a late failure, is an event too, as it is a line in `--mode rpc`).
struct ServeSink {
    events: Arc<EventLog>,
    waiting: Mutex<HashMap<String, oneshot::Sender<String>>>,
}

impl RpcLineSink for ServeSink {
    fn event(&self, line: String) {
        self.events.push(line);
    }

    fn reply(&self, id: Option<&Value>, line: String) {
        let waiter = match id {
            Some(Value::String(id)) => self.waiting.lock().unwrap_or_else(PoisonError::into_inner).remove(id),
            _ => None,
        };
        match waiter {
            Some(waiter) => {
                if let Err(line) = waiter.send(line) {
                    self.events.push(line);
                }
            }
            None => {
                self.events.push(line);
            }
        }
    }
}
