//! Where an activity's step runs: the session is exported from the store into a working copy, opened with
//! the agent's usual set-up, stepped once, and what the step wrote is appended to the store (idempotent by
//! entry id). The step's events go out on the event bus, numbered from the base the workflow gave.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use pi_runtime::AgentDefinition;
use pi_runtime::agent_session::{AgentSession, SessionEventSink};
use pi_runtime::cli::open_step_session;
use pi_runtime::extension::Extensions;
use pi_runtime::protocol::{AgentEvent, SessionOnlyEvent, WireEvent};
use pi_runtime::tools::AgentTool;
use tokio::sync::mpsc;

use super::activities::StepTarget;
use crate::store::{EventBus, PostgresStore, SessionLines, SessionStore, StoreError};

/// What every activity of a worker shares: the agent, the store and the bus.
pub struct StepHost {
    pub definition: AgentDefinition,
    pub rust_tools: Vec<Arc<dyn AgentTool>>,
    pub extensions: Extensions,
    pub store: PostgresStore,
    pub bus: EventBus,
    /// Where working copies of session files are written.
    pub scratch: PathBuf,
}

/// Why a step could not be carried out.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StepError {
    #[error("session {0} is not in the store")]
    UnknownSession(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot open session {session}: {message}")]
    Open { session: String, message: String },
    #[error("the step on session {session} failed: {message}")]
    Step { session: String, message: String },
    #[error("cannot write the working copy {path}: {source}")]
    Scratch { path: PathBuf, source: std::io::Error },
}

/// A session opened for one step.
pub struct OpenStep {
    pub session: AgentSession,
    pub stored: SessionLines,
    path: PathBuf,
    publisher: Option<(mpsc::UnboundedSender<Option<String>>, tokio::task::JoinHandle<()>)>,
}

impl StepHost {
    /// The session as stored now.
    pub async fn stored(&self, session_id: &str) -> Result<SessionLines, StepError> {
        let text = self.store.export(session_id).await?.ok_or_else(|| StepError::UnknownSession(session_id.into()))?;
        Ok(SessionLines::parse(&text)?)
    }

    /// Opens the session `target` names, on the fallback model serving its run if one took over.
    pub async fn open_target(&self, target: &StepTarget) -> Result<OpenStep, StepError> {
        let open = self.open(&target.session_id, &target.argv, target.event_base).await?;
        let Some(model) = &target.fallback else { return Ok(open) };
        if let Err(message) = open.session.use_fallback_model(model) {
            self.close(open).await?;
            return Err(StepError::Open { session: target.session_id.clone(), message });
        }
        Ok(open)
    }

    /// Opens `session_id` from the store with the agent's flags `argv`; its events are published from
    /// `event_base` on.
    pub async fn open(&self, session_id: &str, argv: &[String], event_base: u64) -> Result<OpenStep, StepError> {
        let stored = self.stored(session_id).await?;
        std::fs::create_dir_all(&self.scratch)
            .map_err(|source| StepError::Scratch { path: self.scratch.clone(), source })?;
        // A file per step: two steps of one session may overlap in a worker (a retry beside a late attempt).
        static STEPS: AtomicU64 = AtomicU64::new(0);
        let step = STEPS.fetch_add(1, Ordering::Relaxed);
        let path = self.scratch.join(format!("{session_id}.{step}.jsonl"));
        std::fs::write(&path, stored.to_text()).map_err(|source| StepError::Scratch { path: path.clone(), source })?;
        let (sender, publisher) = self.publisher(session_id, event_base);
        let emit = session_event_sink(sender.clone());
        let mut flags = argv.to_vec();
        flags.extend(["--session".to_owned(), path.to_string_lossy().into_owned()]);
        let cwd = PathBuf::from(&stored.header.cwd);
        let opened =
            open_step_session(&self.definition, flags, &cwd, self.rust_tools.clone(), self.extensions.clone(), emit)
                .await;
        let opened = match opened {
            Ok(opened) => opened,
            Err(error) => {
                let _ = std::fs::remove_file(&path);
                let _ = sender.send(None);
                return Err(StepError::Open { session: session_id.to_owned(), message: error.to_string() });
            }
        };
        opened.extensions().set_ui(super::bus_ui::bus_ui(self.bus.clone(), session_id, sender.clone()));
        let level = opened.agent().pi_compat();
        let agent_events = sender.clone();
        opened.subscribe(move |event: &AgentEvent| {
            if let Ok(line) = serde_json::to_string(&WireEvent::new(event, level)) {
                let _ = agent_events.send(Some(line));
            }
        });
        Ok(OpenStep { session: opened, stored, path, publisher: Some((sender, publisher)) })
    }

    /// A task that publishes the step's event lines in order, numbered from `base`.
    fn publisher(
        &self,
        session_id: &str,
        base: u64,
    ) -> (mpsc::UnboundedSender<Option<String>>, tokio::task::JoinHandle<()>) {
        // `None` ends the stream: the session may keep its listeners (and so a sender) alive after the step.
        let (sender, mut lines) = mpsc::unbounded_channel::<Option<String>>();
        let (bus, session) = (self.bus.clone(), session_id.to_owned());
        let task = tokio::spawn(async move {
            let mut number = base;
            let mut ended = false;
            while !ended {
                // What waits goes out together: one transaction however many events a busy step made.
                let mut batch = Vec::new();
                match lines.recv().await {
                    Some(Some(line)) => batch.push(line),
                    Some(None) | None => break,
                }
                while batch.len() < PUBLISH_BATCH {
                    match lines.try_recv() {
                        Ok(Some(line)) => batch.push(line),
                        Ok(None) | Err(mpsc::error::TryRecvError::Disconnected) => {
                            ended = true;
                            break;
                        }
                        Err(mpsc::error::TryRecvError::Empty) => break,
                    }
                }
                let events: Vec<(u64, String)> = batch
                    .into_iter()
                    .map(|line| {
                        number += 1;
                        (number, line)
                    })
                    .collect();
                if let Err(error) = bus.publish_all(&session, &events).await {
                    eprintln!("Warning: events of session {session} were not published: {error}");
                }
            }
        });
        (sender, task)
    }

    /// Appends what the step wrote to the store, waits for its events to go out, and closes the session.
    pub async fn close(&self, mut step: OpenStep) -> Result<(), StepError> {
        let session_id = step.stored.header.id.clone();
        let known = step.stored.entries.len();
        drop(step.session);
        let text = std::fs::read_to_string(&step.path)
            .map_err(|source| StepError::Scratch { path: step.path.clone(), source })?;
        let written = SessionLines::parse(&text)?;
        let _ = std::fs::remove_file(&step.path);
        if written.entries.len() > known {
            self.store.append(&written.header, &written.entries[known..]).await?;
        }
        if let Some((sender, task)) = step.publisher.take() {
            let _ = sender.send(None);
            if let Err(error) = task.await {
                eprintln!("Warning: the events of session {session_id} stopped: {error}");
            }
        }
        Ok(())
    }
}

impl OpenStep {
    /// Where events the step emits itself (beside the session's own) go: out on the bus, in order.
    pub fn session_events(&self) -> SessionEventSink {
        match &self.publisher {
            Some((sender, _)) => session_event_sink(sender.clone()),
            None => Arc::new(|_: &SessionOnlyEvent| {}),
        }
    }

    /// The ids of the entries stored before the step.
    pub fn stored_ids(&self) -> impl Iterator<Item = &str> {
        self.stored.entries.iter().map(|entry| entry.id.as_str())
    }
}

/// Session-only events as lines for the step's publisher.
fn session_event_sink(lines: mpsc::UnboundedSender<Option<String>>) -> SessionEventSink {
    Arc::new(move |event: &SessionOnlyEvent| {
        if let Ok(line) = serde_json::to_string(event) {
            let _ = lines.send(Some(line));
        }
    })
}

/// The most events one transaction publishes.
const PUBLISH_BATCH: usize = 256;
