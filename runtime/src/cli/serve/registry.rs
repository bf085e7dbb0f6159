//! The server's sessions: the ones open now (each a task on a session thread), and the session files on disk,
//! which are opened on first use. A session's working directory must lie under one of the roots.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use axum::http::StatusCode;
use serde::Serialize;
use tokio::sync::{mpsc, oneshot};
use tokio_util::task::LocalPoolHandle;

use super::actor::{Opened, Request, SessionSpec, run_session};
use super::api_error::ApiError;
use super::engine::{allowed_cwd, check_import, session_exists, session_flags, under_root};
use super::events::{EVENT_BUDGET_BYTES, EventLog};
use super::metrics::Metrics;
use super::turns::TurnMarkers;
use crate::AgentDefinition;
use crate::cli::rpc::ui::PendingDialogs;
use crate::extension::Extensions;
use crate::session::{SessionHeader, list_session_files, read_session_header, session_dir_for_cwd, session_file_name};
use crate::tools::AgentTool;

/// What every session of this server is made of.
pub struct AgentParts {
    pub definition: Arc<AgentDefinition>,
    /// The agent's flags given to `serve`.
    pub agent_args: Vec<String>,
    pub rust_tools: Vec<Arc<dyn AgentTool>>,
    pub extensions: Extensions,
}

/// An open session, as the HTTP side reaches it.
pub struct SessionHandle {
    pub requests: mpsc::UnboundedSender<Request>,
    pub events: Arc<EventLog>,
    pub dialogs: PendingDialogs,
    pub cwd: PathBuf,
    pub opened_at: SystemTime,
}

/// How a new session starts (the body of `POST /v1/sessions`).
#[derive(Debug, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewSession {
    /// The working directory; the first root when absent.
    pub cwd: Option<String>,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub thinking: Option<String>,
    /// The active tools; an empty list means none.
    pub tools: Option<Vec<String>>,
}

/// One page of sessions, newest first.
#[derive(Debug, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionList {
    pub sessions: Vec<SessionSummary>,
    /// How many sessions there are in all.
    pub total: usize,
    /// The `offset` of the next page, when there is one.
    pub next_offset: Option<usize>,
}

/// One session in a listing.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct SessionSummary {
    pub id: String,
    pub cwd: String,
    /// Seconds since the Unix epoch of the last change.
    pub modified: u64,
    /// Whether the session is open in this server now.
    pub open: bool,
}

/// The sessions, open and on disk.
pub struct Registry {
    live: Mutex<HashMap<String, Arc<SessionHandle>>>,
    /// Held while a session file is opened, so two requests never open the same file twice.
    opening: tokio::sync::Mutex<()>,
    pool: LocalPoolHandle,
    parts: AgentParts,
    roots: Vec<PathBuf>,
    /// Where session files are: one folder for every working directory, or one folder for all.
    session_dirs: SessionDirs,
    /// Set once the server stops: no session opens any more.
    stopping: std::sync::atomic::AtomicBool,
    /// The turns under way, on disk.
    markers: TurnMarkers,
    pub metrics: Arc<Metrics>,
}

/// Where the session files of this agent are kept.
pub enum SessionDirs {
    /// `<sessions>/--<cwd>--/` folders.
    PerCwd(PathBuf),
    /// One folder (`--session-dir`, the session-dir variable, the YAML's `session.dir`).
    Single(PathBuf),
}

impl Registry {
    pub fn new(parts: AgentParts, roots: Vec<PathBuf>, session_dirs: SessionDirs, threads: usize) -> Self {
        let markers = TurnMarkers::new(&crate::cli::agent_dir(&parts.definition));
        Self {
            markers,
            metrics: Arc::default(),
            live: Mutex::default(),
            opening: tokio::sync::Mutex::new(()),
            pool: LocalPoolHandle::new(threads),
            parts,
            roots,
            session_dirs,
            stopping: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Starts a new session.
    pub async fn create(&self, request: NewSession) -> Result<(String, Arc<SessionHandle>), ApiError> {
        let cwd = match &request.cwd {
            Some(cwd) => allowed_cwd(&self.roots, Path::new(cwd))?,
            None => self.roots.first().cloned().ok_or_else(|| ApiError::internal("the server has no roots"))?,
        };
        let argv = session_flags(&request);
        self.start(cwd, argv).await
    }

    /// The open session `id`, opening its file when it is not open.
    pub async fn get(&self, id: &str) -> Result<Arc<SessionHandle>, ApiError> {
        if let Some(handle) = self.live_handle(id) {
            return Ok(handle);
        }
        let _opening = self.opening.lock().await;
        if let Some(handle) = self.live_handle(id) {
            return Ok(handle);
        }
        let (path, header) = self.find_file(id).ok_or_else(|| ApiError::not_found(id))?;
        let cwd = allowed_cwd(&self.roots, Path::new(&header.cwd))?;
        let path = path.to_string_lossy().into_owned();
        let (_, handle) = self.start(cwd, vec!["--session".to_owned(), path]).await?;
        Ok(handle)
    }

    /// Runs a session task for `cwd` with the server's flags plus `argv`.
    async fn start(&self, cwd: PathBuf, argv: Vec<String>) -> Result<(String, Arc<SessionHandle>), ApiError> {
        if self.stopping.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "stopping", "the server is stopping"));
        }
        let spec = SessionSpec {
            definition: self.parts.definition.clone(),
            // A session is driven by a program, as in RPC mode (dialogs are confirms, for one).
            argv: ["--mode".to_owned(), "rpc".to_owned()]
                .into_iter()
                .chain(self.parts.agent_args.iter().cloned())
                .chain(argv)
                .collect(),
            cwd: cwd.clone(),
            rust_tools: self.parts.rust_tools.clone(),
            extensions: self.parts.extensions.clone(),
            markers: self.markers.clone(),
            metrics: self.metrics.clone(),
        };
        let events = Arc::new(EventLog::new(EVENT_BUDGET_BYTES));
        let (requests, receiver) = mpsc::unbounded_channel();
        let (opened_sender, opened) = oneshot::channel();
        let log = events.clone();
        drop(self.pool.spawn_pinned(move || run_session(spec, log, opened_sender, receiver)));
        let Opened { id, dialogs } =
            opened.await.map_err(|_| ApiError::internal("the session task failed to start"))??;
        let handle = Arc::new(SessionHandle { requests, events, dialogs, cwd, opened_at: SystemTime::now() });
        self.lock().insert(id.clone(), handle.clone());
        Ok((id, handle))
    }

    /// Stores `bytes`, a pi session file, as a session of this server (byte for byte); returns its id.
    pub fn import(&self, bytes: &[u8]) -> Result<String, ApiError> {
        let header = check_import(bytes)?;
        allowed_cwd(&self.roots, Path::new(&header.cwd))?;
        if self.live_handle(&header.id).is_some() || self.find_file(&header.id).is_some() {
            return Err(session_exists(&header.id));
        }
        let dir = match &self.session_dirs {
            SessionDirs::Single(dir) => dir.clone(),
            SessionDirs::PerCwd(root) => session_dir_for_cwd(root, Path::new(&header.cwd)),
        };
        let path = dir.join(session_file_name(&header.timestamp, &header.id));
        let written = std::fs::create_dir_all(&dir).and_then(|()| {
            use std::io::Write as _;
            let mut file = std::fs::File::options().write(true).create_new(true).open(&path)?;
            file.write_all(bytes)?;
            file.sync_all()
        });
        written.map_err(|error| ApiError::internal(format!("cannot write {}: {error}", path.display())))?;
        Ok(header.id)
    }

    /// Finishes the turns a crash left unfinished (their markers are still on disk): each session is opened
    /// again and told to carry on. Sessions that cannot be opened are reported and left as they are.
    pub async fn recover_interrupted_turns(&self) {
        for marker in self.markers.all() {
            let id = marker.session_id.clone();
            let opened = match self.find_file(&id) {
                Some(_) => self.get(&id).await,
                None => match allowed_cwd(&self.roots, &marker.cwd) {
                    Ok(cwd) => self.start(cwd, vec!["--session-id".to_owned(), id.clone()]).await.map(|(_, h)| h),
                    Err(error) => Err(error),
                },
            };
            match opened {
                Ok(handle) => {
                    eprintln!("Resuming session {id}: its turn was cut short when the server stopped");
                    let _ = handle.requests.send(Request::Resume { marker });
                }
                Err(error) => {
                    eprintln!("Warning: cannot resume session {id}: {}; its turn stays unfinished", error.message);
                }
            }
        }
    }

    /// Files the open session under its new id (after a fork).
    pub fn rename(&self, old: &str, new: &str) {
        let mut live = self.lock();
        if let Some(handle) = live.remove(old) {
            live.insert(new.to_owned(), handle);
        }
    }

    /// Closes the session `id` (aborting what runs, saving what finished); with `delete`, removes its file
    /// too. Returns whether there was such a session.
    pub async fn close(&self, id: &str, delete: bool) -> Result<(), ApiError> {
        let handle = self.lock().remove(id);
        let file = self.find_file(id).map(|(path, _)| path);
        if handle.is_none() && file.is_none() {
            return Err(ApiError::not_found(id));
        }
        let file = match handle {
            Some(handle) => {
                close_handle(&handle).await;
                // Closing saves an answer cut short, which can write the session's first line.
                file.or_else(|| self.find_file(id).map(|(path, _)| path))
            }
            None => file,
        };
        if delete && let Some(path) = file {
            std::fs::remove_file(&path)
                .map_err(|error| ApiError::internal(format!("cannot delete {}: {error}", path.display())))?;
        }
        Ok(())
    }

    /// Closes every open session (the server is stopping).
    pub async fn close_all(&self) {
        self.stopping.store(true, std::sync::atomic::Ordering::SeqCst);
        // A session that was opening meanwhile is in the map once this lock is free.
        let _opening = self.opening.lock().await;
        let handles: Vec<Arc<SessionHandle>> = self.lock().drain().map(|(_, handle)| handle).collect();
        futures_util::future::join_all(handles.iter().map(|handle| close_handle(handle))).await;
    }

    /// The sessions whose directory lies under a root (and equals `cwd` when given), newest first.
    pub fn list(&self, cwd: Option<&Path>) -> Result<Vec<SessionSummary>, ApiError> {
        let wanted = cwd.map(|cwd| allowed_cwd(&self.roots, cwd)).transpose()?;
        let live: HashMap<String, Arc<SessionHandle>> = self.lock().clone();
        let mut seen = std::collections::HashSet::new();
        let mut sessions = Vec::new();
        for (_, header, modified) in self.session_files() {
            let Some(cwd) = under_root(&self.roots, Path::new(&header.cwd)) else { continue };
            if wanted.as_ref().is_some_and(|wanted| *wanted != cwd) || !seen.insert(header.id.clone()) {
                continue;
            }
            let open = live.contains_key(&header.id);
            sessions.push(SessionSummary { id: header.id, cwd: header.cwd, modified: unix_seconds(modified), open });
        }
        // Open sessions that have no file yet (nothing is written before the first answer).
        for (id, handle) in live {
            if seen.contains(&id) || wanted.as_ref().is_some_and(|wanted| *wanted != handle.cwd) {
                continue;
            }
            let cwd = handle.cwd.to_string_lossy().into_owned();
            sessions.push(SessionSummary { id, cwd, modified: unix_seconds(handle.opened_at), open: true });
        }
        sessions.sort_by(|a, b| b.modified.cmp(&a.modified).then_with(|| a.id.cmp(&b.id)));
        Ok(sessions)
    }

    /// The session file of `id` and its header.
    pub fn find_file(&self, id: &str) -> Option<(PathBuf, SessionHeader)> {
        let suffix = format!("_{id}.jsonl");
        self.session_folders()
            .into_iter()
            .flat_map(|dir| list_session_files(&dir))
            .filter(|(path, _)| path.file_name().is_some_and(|name| name.to_string_lossy().ends_with(&suffix)))
            .find_map(|(path, _)| read_session_header(&path).filter(|header| header.id == id).map(|h| (path, h)))
    }

    fn session_files(&self) -> Vec<(PathBuf, SessionHeader, SystemTime)> {
        self.session_folders()
            .into_iter()
            .flat_map(|dir| list_session_files(&dir))
            .filter_map(|(path, modified)| read_session_header(&path).map(|header| (path, header, modified)))
            .collect()
    }

    fn session_folders(&self) -> Vec<PathBuf> {
        match &self.session_dirs {
            SessionDirs::Single(dir) => vec![dir.clone()],
            SessionDirs::PerCwd(root) => std::fs::read_dir(root)
                .into_iter()
                .flatten()
                .flatten()
                .map(|entry| entry.path())
                .filter(|path| path.is_dir())
                .collect(),
        }
    }

    /// How many sessions are open.
    pub fn open_count(&self) -> usize {
        self.lock().len()
    }

    /// The open session `id`; a session whose task has ended (it failed) is dropped, so it opens again.
    fn live_handle(&self, id: &str) -> Option<Arc<SessionHandle>> {
        let mut live = self.lock();
        if live.get(id).is_some_and(|handle| handle.requests.is_closed()) {
            live.remove(id);
        }
        live.get(id).cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<SessionHandle>>> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

async fn close_handle(handle: &SessionHandle) {
    let (reply, closed) = oneshot::channel();
    if handle.requests.send(Request::Close { reply }).is_ok() {
        let _ = closed.await;
    }
}

fn unix_seconds(time: SystemTime) -> u64 {
    time.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_secs())
}
