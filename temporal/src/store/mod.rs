//! Where sessions live when agents scale out: one interface, [`SessionStore`], over pi's JSONL files (the
//! default; the same folders the agent's command line uses) and over Postgres (one row per line). Both keep
//! every line as pi wrote it, so an export is the pi file byte for byte, and both take appends idempotently
//! by entry id, so an activity that runs twice does not write an entry twice.

mod events;
mod jsonl;
mod lines;
mod notices;
mod postgres;

use std::future::Future;
use std::path::PathBuf;

pub use events::{EventBus, EventWatch};
pub use jsonl::JsonlStore;
pub use lines::{EntryLine, HeaderLine, SessionLines, check_session_id, is_message_line};
pub use notices::{AbortNotices, DialogAnswers};
pub use postgres::PostgresStore;

/// What went wrong in a store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The text given is not a session file (or not one a store can keep); the message names the line.
    #[error("not a usable session file: {0}")]
    Invalid(String),
    /// No session with this id is stored.
    #[error("no session with id {0} is stored")]
    NotFound(String),
    /// The session was deleted; what a step still running adds is dropped.
    #[error("session {0} was deleted")]
    Deleted(String),
    /// A session with this id is stored already.
    #[error("a session with id {0} is stored already; delete it first to replace it")]
    Exists(String),
    /// Reading or writing the session files failed.
    #[error("{0}")]
    Files(#[from] pi_runtime::session::SessionError),
    /// Postgres refused or could not be reached.
    #[error("postgres: {0}")]
    Postgres(String),
    /// The `--store` value names no store.
    #[error("--store {given:?}: {problem}; expected postgres://USER@HOST:PORT/DATABASE or a folder (file:/path)")]
    Address { given: String, problem: String },
}

impl StoreError {
    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Self::Invalid(message.into())
    }
}

/// One stored session, as listings show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSession {
    pub id: String,
    pub cwd: String,
    /// The header's timestamp.
    pub created: String,
    /// Entry lines stored (the header not counted).
    pub entries: u64,
    /// Seconds since the Unix epoch of the last change.
    pub modified: u64,
}

/// Sessions kept as pi's lines.
pub trait SessionStore: Send + Sync {
    /// The session's file, every line ending in a newline; `None` when no session has this id.
    fn export(&self, id: &str) -> impl Future<Output = Result<Option<String>, StoreError>> + Send;

    /// Adds `entries` to the session `header` opens, creating it (header first) when it is not stored yet.
    /// Entries whose id is stored already are skipped, so repeating an append changes nothing. Returns how
    /// many lines were added.
    fn append(
        &self,
        header: &HeaderLine,
        entries: &[EntryLine],
    ) -> impl Future<Output = Result<usize, StoreError>> + Send;

    /// Stores a whole session file as a new session; [`StoreError::Exists`] when its id is stored already.
    fn import(&self, session: &SessionLines) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Every stored session, newest first.
    fn list(&self) -> impl Future<Output = Result<Vec<StoredSession>, StoreError>> + Send;

    /// Removes the session; whether there was one.
    fn delete(&self, id: &str) -> impl Future<Output = Result<bool, StoreError>> + Send;
}

/// The store a `--store` value names: `postgres://` (or `postgresql://`) URLs are Postgres; `file:/path`
/// or a plain path is a folder of session files laid out as the agent's own (`<folder>/--<cwd>--/`).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum AnyStore {
    Files(JsonlStore),
    Postgres(PostgresStore),
}

impl AnyStore {
    /// Opens the store `address` names; Postgres is connected to and its tables are created if missing.
    pub async fn open(address: &str) -> Result<Self, StoreError> {
        if address.starts_with("postgres://") || address.starts_with("postgresql://") {
            return Ok(Self::Postgres(PostgresStore::connect(address).await?));
        }
        let folder = address.strip_prefix("file://").or_else(|| address.strip_prefix("file:")).unwrap_or(address);
        if folder.is_empty() || folder.contains("://") {
            return Err(StoreError::Address {
                given: address.to_owned(),
                problem: "not a Postgres URL or a folder".to_owned(),
            });
        }
        Ok(Self::Files(JsonlStore::new(PathBuf::from(folder))))
    }
}

impl SessionStore for AnyStore {
    async fn export(&self, id: &str) -> Result<Option<String>, StoreError> {
        match self {
            Self::Files(store) => store.export(id).await,
            Self::Postgres(store) => store.export(id).await,
        }
    }

    async fn append(&self, header: &HeaderLine, entries: &[EntryLine]) -> Result<usize, StoreError> {
        match self {
            Self::Files(store) => store.append(header, entries).await,
            Self::Postgres(store) => store.append(header, entries).await,
        }
    }

    async fn import(&self, session: &SessionLines) -> Result<(), StoreError> {
        match self {
            Self::Files(store) => store.import(session).await,
            Self::Postgres(store) => store.import(session).await,
        }
    }

    async fn list(&self) -> Result<Vec<StoredSession>, StoreError> {
        match self {
            Self::Files(store) => store.list().await,
            Self::Postgres(store) => store.list().await,
        }
    }

    async fn delete(&self, id: &str) -> Result<bool, StoreError> {
        match self {
            Self::Files(store) => store.delete(id).await,
            Self::Postgres(store) => store.delete(id).await,
        }
    }
}
