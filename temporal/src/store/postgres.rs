//! The Postgres store: a row per session (`pi_sessions`) and a row per line (`pi_session_lines`, the header
//! at position 0), the line kept as text exactly as pi writes it. An append runs in one transaction that
//! holds the session's row, so concurrent appends to a session queue up and an entry id is stored once.

use std::collections::HashSet;
use std::sync::Arc;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tokio_postgres::NoTls;

use super::events::EventBus;
use super::{EntryLine, HeaderLine, SessionLines, SessionStore, StoreError, StoredSession, check_session_id};

/// The tables, created when missing (under an advisory lock, so workers starting together do not race).
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS pi_sessions (
    id text PRIMARY KEY,
    cwd text NOT NULL,
    created text NOT NULL,
    next_seq bigint NOT NULL,
    modified timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS pi_session_lines (
    session_id text NOT NULL REFERENCES pi_sessions (id) ON DELETE CASCADE,
    seq bigint NOT NULL,
    entry_id text,
    line text NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE UNIQUE INDEX IF NOT EXISTS pi_session_lines_entry ON pi_session_lines (session_id, entry_id);
CREATE TABLE IF NOT EXISTS pi_session_settings (
    session_id text PRIMARY KEY REFERENCES pi_sessions (id) ON DELETE CASCADE,
    settings text NOT NULL
);
DROP TABLE IF EXISTS pi_session_events;
CREATE TABLE IF NOT EXISTS pi_event_counters (
    session_id text PRIMARY KEY,
    last bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS pi_events (
    session_id text NOT NULL,
    number bigint NOT NULL,
    source bigint NOT NULL,
    body text NOT NULL,
    PRIMARY KEY (session_id, number)
);
CREATE UNIQUE INDEX IF NOT EXISTS pi_events_source ON pi_events (session_id, source);
CREATE TABLE IF NOT EXISTS pi_deleted_sessions (
    id text PRIMARY KEY,
    deleted timestamptz NOT NULL DEFAULT now()
);
";

/// Whether session `$1` was deleted (and not imported again since): a step still running then must not
/// bring it back with its last append or events.
pub(super) const WAS_DELETED: &str = "SELECT EXISTS (SELECT 1 FROM pi_deleted_sessions WHERE id = $1)";

/// The advisory lock key the schema is created under ("pi-store" in ASCII).
const SCHEMA_LOCK: i64 = 0x7069_2d73_746f_7265;

/// Connections kept open to the database.
const POOL_SIZE: usize = 16;

/// Inserts lines `$3`/`$4` (entry ids and texts, in order) at positions `$2`, `$2 + 1`, ...
const INSERT_LINES: &str = "INSERT INTO pi_session_lines (session_id, seq, entry_id, line)
     SELECT $1, $2 + lines.ord - 1, lines.entry_id, lines.line
     FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS lines (entry_id, line, ord)";

/// Sessions in a Postgres database.
#[derive(Clone)]
pub struct PostgresStore {
    pool: Pool,
    /// For the listening connection of [`EventBus`], which is not pooled.
    config: Arc<tokio_postgres::Config>,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("PostgresStore").finish_non_exhaustive()
    }
}

impl PostgresStore {
    /// Connects to the database `url` names and creates the tables if they are missing.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let config: tokio_postgres::Config =
            url.parse().map_err(|error| StoreError::Address { given: redacted(url), problem: format!("{error}") })?;
        let manager =
            Manager::from_config(config.clone(), NoTls, ManagerConfig { recycling_method: RecyclingMethod::Fast });
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(Runtime::Tokio1)
            .build()
            .map_err(|error| StoreError::Postgres(error.to_string()))?;
        let store = Self { pool, config: Arc::new(config) };
        store.create_schema().await.map_err(|error| match error {
            StoreError::Postgres(message) => StoreError::Postgres(format!("{}: {message}", redacted(url))),
            other => other,
        })?;
        Ok(store)
    }

    /// The events of this database's sessions (see [`EventBus`]).
    pub fn event_bus(&self) -> EventBus {
        EventBus::new(self.pool.clone(), self.config.clone())
    }

    async fn client(&self) -> Result<deadpool_postgres::Object, StoreError> {
        pooled_client(&self.pool).await
    }

    /// Whether session `id` is stored.
    pub async fn exists(&self, id: &str) -> Result<bool, StoreError> {
        let client = self.client().await?;
        let row = client.query_opt("SELECT 1 FROM pi_sessions WHERE id = $1", &[&id]).await.map_err(postgres_error)?;
        Ok(row.is_some())
    }

    /// Keeps what a stored session runs with (its engine's settings, as text), replacing what was kept.
    pub async fn save_settings(&self, id: &str, settings: &str) -> Result<(), StoreError> {
        let client = self.client().await?;
        client
            .execute(
                "INSERT INTO pi_session_settings (session_id, settings) VALUES ($1, $2)
                 ON CONFLICT (session_id) DO UPDATE SET settings = EXCLUDED.settings",
                &[&id, &settings],
            )
            .await
            .map_err(postgres_error)?;
        Ok(())
    }

    /// What session `id` runs with, if anything was kept.
    pub async fn settings(&self, id: &str) -> Result<Option<String>, StoreError> {
        let client = self.client().await?;
        let row = client
            .query_opt("SELECT settings FROM pi_session_settings WHERE session_id = $1", &[&id])
            .await
            .map_err(postgres_error)?;
        Ok(row.map(|row| row.get(0)))
    }

    async fn create_schema(&self) -> Result<(), StoreError> {
        let mut client = self.client().await?;
        let transaction = client.transaction().await.map_err(postgres_error)?;
        transaction.execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK]).await.map_err(postgres_error)?;
        transaction.batch_execute(SCHEMA).await.map_err(postgres_error)?;
        transaction.commit().await.map_err(postgres_error)
    }
}

impl SessionStore for PostgresStore {
    async fn export(&self, id: &str) -> Result<Option<String>, StoreError> {
        let client = self.client().await?;
        let rows = client
            .query("SELECT line FROM pi_session_lines WHERE session_id = $1 ORDER BY seq", &[&id])
            .await
            .map_err(postgres_error)?;
        if rows.is_empty() {
            return Ok(None);
        }
        let mut text = String::new();
        for row in rows {
            text.push_str(row.get::<_, &str>(0));
            text.push('\n');
        }
        Ok(Some(text))
    }

    async fn append(&self, header: &HeaderLine, entries: &[EntryLine]) -> Result<usize, StoreError> {
        check_session_id(&header.id)?;
        let mut client = self.client().await?;
        let transaction = client.transaction().await.map_err(postgres_error)?;
        let id = header.id.as_str();
        let created = transaction
            .execute(
                "INSERT INTO pi_sessions (id, cwd, created, next_seq) VALUES ($1, $2, $3, 1) ON CONFLICT (id) DO NOTHING",
                &[&id, &header.cwd, &header.timestamp],
            )
            .await
            .map_err(postgres_error)?;
        if created == 1 {
            let deleted: bool = transaction.query_one(WAS_DELETED, &[&id]).await.map_err(postgres_error)?.get(0);
            if deleted {
                return Err(StoreError::Deleted(id.to_owned()));
            }
            transaction
                .execute(
                    "INSERT INTO pi_session_lines (session_id, seq, entry_id, line) VALUES ($1, 0, NULL, $2)",
                    &[&id, &header.text],
                )
                .await
                .map_err(postgres_error)?;
        }
        // Holding the session's row until commit queues other appends to it behind this one.
        let next: i64 = transaction
            .query_one("SELECT next_seq FROM pi_sessions WHERE id = $1 FOR UPDATE", &[&id])
            .await
            .map_err(postgres_error)?
            .get(0);
        let ids: Vec<&str> = entries.iter().map(|entry| entry.id.as_str()).collect();
        let rows = transaction
            .query("SELECT entry_id FROM pi_session_lines WHERE session_id = $1 AND entry_id = ANY($2)", &[&id, &ids])
            .await
            .map_err(postgres_error)?;
        let mut taken: HashSet<&str> = rows.iter().map(|row| row.get::<_, &str>(0)).collect();
        let fresh: Vec<&EntryLine> = entries.iter().filter(|entry| taken.insert(entry.id.as_str())).collect();
        if !fresh.is_empty() {
            insert_lines(&transaction, id, next, &fresh).await?;
            transaction
                .execute(
                    "UPDATE pi_sessions SET next_seq = $2, modified = now() WHERE id = $1",
                    &[&id, &(next + fresh.len() as i64)],
                )
                .await
                .map_err(postgres_error)?;
        }
        transaction.commit().await.map_err(postgres_error)?;
        Ok(fresh.len())
    }

    async fn import(&self, session: &SessionLines) -> Result<(), StoreError> {
        let header = &session.header;
        check_session_id(&header.id)?;
        let mut client = self.client().await?;
        let transaction = client.transaction().await.map_err(postgres_error)?;
        let next = session.entries.len() as i64 + 1;
        let created = transaction
            .execute(
                "INSERT INTO pi_sessions (id, cwd, created, next_seq) VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING",
                &[&header.id, &header.cwd, &header.timestamp, &next],
            )
            .await
            .map_err(postgres_error)?;
        if created == 0 {
            return Err(StoreError::Exists(header.id.clone()));
        }
        transaction
            .execute(
                "INSERT INTO pi_session_lines (session_id, seq, entry_id, line) VALUES ($1, 0, NULL, $2)",
                &[&header.id, &header.text],
            )
            .await
            .map_err(postgres_error)?;
        // Importing a deleted session's id again is asking for it back.
        transaction
            .execute("DELETE FROM pi_deleted_sessions WHERE id = $1", &[&header.id])
            .await
            .map_err(postgres_error)?;
        let entries: Vec<&EntryLine> = session.entries.iter().collect();
        insert_lines(&transaction, &header.id, 1, &entries).await?;
        transaction.commit().await.map_err(postgres_error)
    }

    async fn list(&self) -> Result<Vec<StoredSession>, StoreError> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT id, cwd, created, next_seq - 1, extract(epoch FROM modified)::bigint FROM pi_sessions
                 ORDER BY created DESC, id",
                &[],
            )
            .await
            .map_err(postgres_error)?;
        Ok(rows
            .iter()
            .map(|row| StoredSession {
                id: row.get(0),
                cwd: row.get(1),
                created: row.get(2),
                entries: u64::try_from(row.get::<_, i64>(3)).unwrap_or(0),
                modified: u64::try_from(row.get::<_, i64>(4)).unwrap_or(0),
            })
            .collect())
    }

    async fn delete(&self, id: &str) -> Result<bool, StoreError> {
        let mut client = self.client().await?;
        let transaction = client.transaction().await.map_err(postgres_error)?;
        // Its lines go with it (a foreign key's cascade), and so do the events kept for its clients.
        let deleted =
            transaction.execute("DELETE FROM pi_sessions WHERE id = $1", &[&id]).await.map_err(postgres_error)?;
        for table in ["pi_events", "pi_event_counters"] {
            let statement = format!("DELETE FROM {table} WHERE session_id = $1");
            transaction.execute(&statement, &[&id]).await.map_err(postgres_error)?;
        }
        if deleted > 0 {
            transaction
                .execute("INSERT INTO pi_deleted_sessions (id) VALUES ($1) ON CONFLICT (id) DO NOTHING", &[&id])
                .await
                .map_err(postgres_error)?;
        }
        transaction.commit().await.map_err(postgres_error)?;
        Ok(deleted > 0)
    }
}

async fn insert_lines(
    transaction: &deadpool_postgres::Transaction<'_>,
    id: &str,
    first_seq: i64,
    entries: &[&EntryLine],
) -> Result<(), StoreError> {
    if entries.is_empty() {
        return Ok(());
    }
    let ids: Vec<&str> = entries.iter().map(|entry| entry.id.as_str()).collect();
    let texts: Vec<&str> = entries.iter().map(|entry| entry.text.as_str()).collect();
    transaction.execute(INSERT_LINES, &[&id, &first_seq, &ids, &texts]).await.map_err(postgres_error)?;
    Ok(())
}

/// A connection from `pool`; a failure says why the connection could not be made.
pub(super) async fn pooled_client(pool: &Pool) -> Result<deadpool_postgres::Object, StoreError> {
    pool.get().await.map_err(|error| StoreError::Postgres(error_chain(&error)))
}

/// The server's own message when it sent one (the client's display of a database error is only "db error").
pub(super) fn postgres_error(error: tokio_postgres::Error) -> StoreError {
    match error.as_db_error() {
        Some(db) => StoreError::Postgres(format!("{} ({})", db.message(), db.code().code())),
        None => StoreError::Postgres(error_chain(&error)),
    }
}

/// An error and its causes, `: `-separated (the client's own display leaves out why a connection failed).
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.ends_with(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// `url` with any password replaced, for messages: `postgres://user:secret@host/db` → `postgres://user:***@host/db`.
pub(crate) fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_owned() };
    let (authority, tail) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
    let authority = match authority.rsplit_once('@') {
        Some((credentials, host)) => match credentials.split_once(':') {
            Some((user, _)) => format!("{user}:***@{host}"),
            None => authority.to_owned(),
        },
        None => authority.to_owned(),
    };
    // A password may also come as a query parameter.
    let tail = match tail.find("password=") {
        Some(start) => {
            let end = tail[start..].find('&').map_or(tail.len(), |offset| start + offset);
            format!("{}password=***{}", &tail[..start], &tail[end..])
        }
        None => tail.to_owned(),
    };
    format!("{scheme}://{authority}{tail}")
}

#[cfg(test)]
mod tests {
    use super::redacted;

    #[test]
    fn passwords_never_reach_a_message() {
        assert_eq!(redacted("postgres://pi:s3cret@db:5432/pi"), "postgres://pi:***@db:5432/pi");
        assert_eq!(redacted("postgres://pi@db/pi"), "postgres://pi@db/pi");
        assert_eq!(
            redacted("postgres://db/pi?user=pi&password=s3cret&x=1"),
            "postgres://db/pi?user=pi&password=***&x=1"
        );
        assert_eq!(redacted("postgres://a:b@c:d@db/pi"), "postgres://a:***@db/pi");
    }
}
