//! Keys from subscription logins: auth.json's OAuth entries, renewed when they expire under auth.json's lock
//! (pi and other agents sharing the file renew once and see each other's tokens), with every other entry of
//! the file kept as it is; and the writes of `/login` and `/logout`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::file_lock::FileLock;
use crate::agent::GetApiKeyFn;
use crate::ai::oauth::{OAuthCredentials, OAuthError, OAuthServer, SubscriptionProvider, now_ms, refresh};

/// Why auth.json could not be read, renewed or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuthFileError {
    #[error("cannot use {path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{path}:{line}:{column}: not valid JSON; the file was left unchanged (fix it or remove the broken entry)")]
    Invalid { path: String, line: usize, column: usize },
    #[error("{0}")]
    Renewal(#[from] OAuthError),
}

/// The OAuth credentials of a run, by provider, renewed on demand.
pub struct OAuthKeyring {
    auth_path: PathBuf,
    server: OAuthServer,
    /// The provider `--api-key` was given for: its key wins over a login, as in pi.
    overridden: Option<String>,
    known: tokio::sync::Mutex<BTreeMap<String, OAuthCredentials>>,
}

impl OAuthKeyring {
    /// The OAuth entries of the auth.json at `auth_path` (read now; a missing or broken file has none).
    pub fn load(auth_path: &Path, server: OAuthServer, overridden: Option<String>) -> OAuthKeyring {
        let known = read_entries(auth_path)
            .map(|entries| {
                entries
                    .iter()
                    .filter_map(|(provider, entry)| Some((provider.clone(), OAuthCredentials::from_entry(entry)?)))
                    .collect()
            })
            .unwrap_or_default();
        OAuthKeyring { auth_path: auth_path.to_owned(), server, overridden, known: tokio::sync::Mutex::new(known) }
    }

    /// The key for `provider` when it has a login: the access token, renewed first when it has expired.
    /// `Ok(None)` when the provider has no login (its other keys apply).
    pub async fn key_for(&self, provider: &str) -> Result<Option<String>, String> {
        if self.overridden.as_deref() == Some(provider) {
            return Ok(None);
        }
        let Some(kind) = SubscriptionProvider::from_id(provider) else { return Ok(None) };
        let mut known = self.known.lock().await;
        let Some(current) = known.get(provider) else { return Ok(None) };
        if !current.is_expired(now_ms()) {
            return Ok(Some(current.access.clone()));
        }
        match renew_in_file(&self.auth_path, kind, &self.server).await {
            Ok(Some(fresh)) => {
                let key = fresh.access.clone();
                known.insert(provider.to_owned(), fresh);
                Ok(Some(key))
            }
            Ok(None) => {
                known.remove(provider);
                Ok(None)
            }
            Err(error) => Err(format!(
                "Authentication failed for \"{provider}\": the login could not be renewed ({error}). Run '/login {provider}' to log in again."
            )),
        }
    }

    /// Remembers a new login (already written to auth.json).
    pub async fn remember(&self, provider: &str, credentials: OAuthCredentials) {
        self.known.lock().await.insert(provider.to_owned(), credentials);
    }

    /// Forgets a login (already removed from auth.json).
    pub async fn forget(&self, provider: &str) {
        self.known.lock().await.remove(provider);
    }

    /// The agent's per-call key lookup.
    pub fn lookup(self: &Arc<Self>) -> GetApiKeyFn {
        let keyring = self.clone();
        Arc::new(move |provider: &str| {
            let keyring = keyring.clone();
            let provider = provider.to_owned();
            Box::pin(async move { keyring.key_for(&provider).await })
        })
    }
}

/// Under auth.json's lock: reads the entry again (another process may have renewed it), renews it if it is
/// still expired, and writes the file back with the new entry. `None` when the entry is gone.
pub async fn renew_in_file(
    path: &Path,
    provider: SubscriptionProvider,
    server: &OAuthServer,
) -> Result<Option<OAuthCredentials>, AuthFileError> {
    let _lock = FileLock::acquire_patiently(path).await.map_err(|source| io_error(path, source))?;
    let mut entries = read_entries(path)?;
    let Some(current) = entries.get(provider.id()).and_then(OAuthCredentials::from_entry) else { return Ok(None) };
    if !current.is_expired(now_ms()) {
        return Ok(Some(current));
    }
    let fresh = refresh(provider, &current, server).await?;
    entries.insert(provider.id().to_owned(), fresh.to_entry());
    write_entries(path, &entries)?;
    Ok(Some(fresh))
}

/// Sets (`Some`) or removes (`None`) `provider`'s entry of auth.json, under its lock, keeping the others.
pub fn store_entry(path: &Path, provider: &str, entry: Option<Value>) -> Result<(), AuthFileError> {
    let _lock = FileLock::acquire(path).map_err(|source| io_error(path, source))?;
    let mut entries = read_entries(path)?;
    match entry {
        Some(entry) => {
            entries.insert(provider.to_owned(), entry);
        }
        None => {
            entries.shift_remove(provider);
        }
    }
    write_entries(path, &entries)
}

/// auth.json's entries in file order; a missing or empty file has none.
fn read_entries(path: &Path) -> Result<Map<String, Value>, AuthFileError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(source) => return Err(io_error(path, source)),
    };
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    let invalid = |line, column| AuthFileError::Invalid { path: path.display().to_string(), line, column };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(entries)) => Ok(entries),
        Ok(_) => Err(invalid(1, 1)),
        Err(error) => Err(invalid(error.line(), error.column())),
    }
}

/// Writes the entries as pi does (two-space JSON, mode 600) through a temporary file renamed over auth.json,
/// so a crash never leaves half a file.
fn write_entries(path: &Path, entries: &Map<String, Value>) -> Result<(), AuthFileError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let text = serde_json::to_string_pretty(entries).unwrap_or_else(|_| "{}".to_owned());
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(format!(".{}.tmp", std::process::id()));
    let temporary = PathBuf::from(temporary);
    let written = (|| {
        let mut file =
            std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&temporary)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    written.map_err(|source| {
        let _ = std::fs::remove_file(&temporary);
        io_error(path, source)
    })
}

fn io_error(path: &Path, source: std::io::Error) -> AuthFileError {
    AuthFileError::Io { path: path.display().to_string(), source }
}

// The tests renew logins against the mock server of the `testing` feature.
#[cfg(all(test, feature = "testing"))]
#[path = "oauth_keys_tests.rs"]
mod tests;
