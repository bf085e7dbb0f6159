//! What `serve`'s routes ask of whatever runs the sessions: the embedded engine (sessions as tasks of this
//! process, files on disk, see [`super::registry::Registry`]) or another one (pi-temporal's, where sessions
//! are workflows and live in Postgres). The routes keep the API's shape (bodies, refusals, events as
//! server-sent events); an engine carries out each verb.

use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;

use axum::http::StatusCode;
use futures_util::Stream;
use serde_json::Value;
use tokio::sync::OwnedSemaphorePermit;

use super::actor::PromptAccepted;
use super::api_error::ApiError;
use super::batches::{BatchRequest, BatchStarted, BatchStatus};
use super::metrics::Metrics;
use super::registry::{NewSession, SessionSummary};
use crate::cli::rpc::RpcCommand;
use crate::protocol::ImageContent;

/// What an engine's verb resolves to.
pub type EngineFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, ApiError>> + Send + 'a>>;

/// A session's events from some number on: each event's number (1, 2, 3, ...) and its JSON line. It ends
/// when the session closes.
pub type EventStream = Pin<Box<dyn Stream<Item = (u64, Arc<str>)> + Send>>;

/// A prompt for a session (the body of `POST /v1/sessions/{id}/prompt`).
pub struct PromptRequest {
    pub message: String,
    pub images: Vec<ImageContent>,
    pub idempotency_key: Option<String>,
    /// One of the server's turns (`--max-turns`), for the engine to hold while the run lasts.
    pub permit: OwnedSemaphorePermit,
}

/// The sessions behind `serve`'s API.
pub trait SessionEngine: Send + Sync {
    /// Starts a new session; returns its id.
    fn create(&self, request: NewSession) -> EngineFuture<'_, String>;

    /// The sessions (working in `cwd` when given), newest first.
    fn list<'a>(&'a self, cwd: Option<&'a Path>) -> EngineFuture<'a, Vec<SessionSummary>>;

    /// Ends session `id` and deletes what is stored of it.
    fn delete<'a>(&'a self, id: &'a str) -> EngineFuture<'a, ()>;

    /// Carries out an RPC command on session `id`; returns the reply's data and the session's id afterwards
    /// (a fork continues as a new session).
    fn command<'a>(&'a self, id: &'a str, command: RpcCommand) -> EngineFuture<'a, (Value, String)>;

    /// Starts (or queues) a prompt of session `id`.
    fn prompt<'a>(&'a self, id: &'a str, prompt: PromptRequest) -> EngineFuture<'a, PromptAccepted>;

    /// The events of session `id` after number `after`, then each new one.
    fn events<'a>(&'a self, id: &'a str, after: u64) -> EngineFuture<'a, EventStream>;

    /// The session as pi's JSONL file, byte for byte.
    fn export_jsonl<'a>(&'a self, id: &'a str) -> EngineFuture<'a, Vec<u8>>;

    /// The session as pi's HTML page.
    fn export_html<'a>(&'a self, id: &'a str) -> EngineFuture<'a, Vec<u8>>;

    /// Stores a pi session file as a session; returns its id.
    fn import<'a>(&'a self, bytes: &'a [u8]) -> EngineFuture<'a, String>;

    /// Answers an extension's dialog with `line` (RPC's `extension_ui_response`); false when the answer is
    /// not a valid one.
    fn answer_dialog<'a>(&'a self, id: &'a str, line: String) -> EngineFuture<'a, bool>;

    /// Whether the engine runs batches itself ([`SessionEngine::start_batch`]); otherwise the server runs
    /// them over the engine's sessions.
    fn runs_batches(&self) -> bool {
        false
    }

    /// Starts a batch run: a session per repository, each running the prompt, `concurrency` at once (the
    /// request checked already). Only called when [`SessionEngine::runs_batches`].
    fn start_batch(&self, request: BatchRequest, concurrency: u32) -> EngineFuture<'_, BatchStarted> {
        let _ = (request, concurrency);
        Box::pin(async { Err(ApiError::internal("this engine runs no batches of its own")) })
    }

    /// Batch `id`'s progress and answers. Only called when [`SessionEngine::runs_batches`].
    fn batch<'a>(&'a self, id: &'a str) -> EngineFuture<'a, BatchStatus> {
        let _ = id;
        Box::pin(async { Err(ApiError::internal("this engine runs no batches of its own")) })
    }

    /// The counters `/metrics` reports.
    fn metrics(&self) -> &Metrics;

    /// How many sessions this server has open now.
    fn open_sessions(&self) -> usize;

    /// The server is stopping: abort what runs here and save.
    fn stop(&self) -> EngineFuture<'_, ()>;
}

/// The refusal of a verb an engine does not carry out (yet).
pub fn not_supported(verb: &str, engine: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_IMPLEMENTED,
        "not_supported",
        format!("{verb} is not available with serve --engine {engine}; the embedded engine has it"),
    )
}

/// `cwd` resolved (symbolic links followed) when it is an absolute directory under one of `roots`; refused
/// otherwise (400, or 403 `cwd_outside_roots`).
pub fn allowed_cwd(roots: &[PathBuf], cwd: &Path) -> Result<PathBuf, ApiError> {
    if !cwd.is_absolute() {
        return Err(ApiError::bad_request(format!("cwd {}: expected an absolute path", cwd.display())));
    }
    let resolved =
        std::fs::canonicalize(cwd).map_err(|error| ApiError::bad_request(format!("cwd {}: {error}", cwd.display())))?;
    if !resolved.is_dir() {
        return Err(ApiError::bad_request(format!("cwd {}: not a directory", cwd.display())));
    }
    under_root(roots, &resolved).ok_or_else(|| outside_roots(roots, cwd))
}

/// 403 `cwd_outside_roots`: `cwd` lies under none of `roots`.
fn outside_roots(roots: &[PathBuf], cwd: &Path) -> ApiError {
    let roots: Vec<String> = roots.iter().map(|root| root.display().to_string()).collect();
    ApiError::new(
        StatusCode::FORBIDDEN,
        "cwd_outside_roots",
        format!("cwd {} is outside the server's roots ({}); start serve with --root", cwd.display(), roots.join(", ")),
    )
}

/// `cwd` resolved, when it lies under one of `roots`.
pub fn under_root(roots: &[PathBuf], cwd: &Path) -> Option<PathBuf> {
    let resolved = std::fs::canonicalize(cwd).ok()?;
    roots.iter().any(|root| resolved.starts_with(root)).then_some(resolved)
}

/// [`allowed_cwd`] for an engine whose sessions run on other machines (the workers hold the checkouts): a
/// path that exists here is resolved as embedded serve resolves it; one that does not is compared as text,
/// with `.` and `..` taken out.
pub fn allowed_remote_cwd(roots: &[PathBuf], cwd: &Path) -> Result<PathBuf, ApiError> {
    if !cwd.is_absolute() || cwd.exists() {
        return allowed_cwd(roots, cwd);
    }
    under_remote_root(roots, cwd).ok_or_else(|| outside_roots(roots, cwd))
}

/// [`under_root`] for an engine whose sessions run on other machines (see [`allowed_remote_cwd`]).
pub fn under_remote_root(roots: &[PathBuf], cwd: &Path) -> Option<PathBuf> {
    if cwd.exists() {
        return under_root(roots, cwd);
    }
    let normal = normalize_lexically(cwd)?;
    roots.iter().any(|root| normal.starts_with(root)).then_some(normal)
}

/// An absolute `path` with `.` and `..` taken out by its text alone; `None` for a relative path or one whose
/// `..` climbs above the root.
pub fn normalize_lexically(path: &Path) -> Option<PathBuf> {
    use std::path::Component;
    if !path.is_absolute() {
        return None;
    }
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir | Component::Normal(_) => normal.push(component),
            Component::CurDir => {}
            Component::ParentDir => {
                if !normal.pop() {
                    return None;
                }
            }
        }
    }
    Some(normal)
}

/// The agent flags a new session's request adds to the server's (`--provider`, `--model`, `--thinking`,
/// `--tools` / `--no-tools`).
pub fn session_flags(request: &NewSession) -> Vec<String> {
    let mut argv = Vec::new();
    for (flag, value) in
        [("--provider", &request.provider), ("--model", &request.model), ("--thinking", &request.thinking)]
    {
        if let Some(value) = value {
            argv.extend([flag.to_owned(), value.clone()]);
        }
    }
    match &request.tools {
        Some(tools) if tools.is_empty() => argv.push("--no-tools".to_owned()),
        Some(tools) => argv.extend(["--tools".to_owned(), tools.join(",")]),
        None => {}
    }
    argv
}

/// Checks an imported session file: UTF-8, a session header first, an id and a timestamp that can name a
/// file. Returns the header.
pub fn check_import(bytes: &[u8]) -> Result<crate::session::SessionHeader, ApiError> {
    let text = std::str::from_utf8(bytes).map_err(|_| ApiError::bad_request("the session file is not UTF-8 text"))?;
    let header = crate::session::parse_session_text(text)
        .ok_or_else(|| {
            ApiError::bad_request(
                "not a session file: its first line must be a session header ({\"type\":\"session\",...})",
            )
        })?
        .header;
    // Both name the file: nothing in them may lead out of the sessions folder.
    let safe = |text: &str, extra: &str| {
        !text.is_empty()
            && !text.starts_with('.')
            && text.chars().all(|c| c.is_ascii_alphanumeric() || extra.contains(c))
    };
    if !safe(&header.id, "-_.") {
        return Err(ApiError::bad_request(format!(
            "session id {:?}: expected letters, digits, `-`, `_` or `.`",
            header.id
        )));
    }
    if !safe(&header.timestamp, "-:.TZ+") {
        return Err(ApiError::bad_request(format!(
            "session timestamp {:?}: expected an ISO 8601 time",
            header.timestamp
        )));
    }
    Ok(header)
}

/// The refusal of an import whose id is taken.
pub fn session_exists(id: &str) -> ApiError {
    ApiError::new(
        StatusCode::CONFLICT,
        "session_exists",
        format!("a session with id {id} exists already; delete it first to replace it"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_missing_here_is_judged_by_its_text() {
        assert_eq!(normalize_lexically(Path::new("/srv/./repos/a/../b")), Some(PathBuf::from("/srv/repos/b")));
        assert_eq!(normalize_lexically(Path::new("/srv/..")), Some(PathBuf::from("/")));
        assert_eq!(normalize_lexically(Path::new("/srv/../..")), None);
        assert_eq!(normalize_lexically(Path::new("srv")), None);

        let roots = [PathBuf::from("/nowhere-here/repos")];
        let inside = allowed_remote_cwd(&roots, Path::new("/nowhere-here/repos/./app")).expect("under the root");
        assert_eq!(inside, PathBuf::from("/nowhere-here/repos/app"));
        let escaped = allowed_remote_cwd(&roots, Path::new("/nowhere-here/repos/../etc")).expect_err("outside");
        assert_eq!(escaped.status, StatusCode::FORBIDDEN);
        assert!(allowed_remote_cwd(&roots, Path::new("repos/app")).is_err(), "a relative path is refused");
        assert_eq!(under_remote_root(&roots, Path::new("/nowhere-here/other")), None);

        // A path that exists here is resolved as embedded serve resolves it: /tmp is outside these roots.
        let here = std::env::temp_dir();
        assert!(allowed_remote_cwd(&roots, &here).is_err());
        let roots = [std::fs::canonicalize(&here).expect("canonical")];
        assert_eq!(under_remote_root(&roots, &here), Some(roots[0].clone()));
    }
}
