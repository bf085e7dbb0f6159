//! The file store: pi's session files in a folder laid out as the agent's own sessions folder (one
//! `--<cwd>--` folder per working directory, one `<timestamp>_<id>.jsonl` per session), written with the
//! runtime's writer: a new file appears whole, later lines are appended under the writer's lock.

use std::borrow::Cow;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use pi_runtime::session::{
    create_session_file, list_session_files, open_session_file_for_append, read_session_header, session_dir_for_cwd,
    session_file_name,
};

use super::{EntryLine, HeaderLine, SessionLines, SessionStore, StoreError, StoredSession, check_session_id};

/// Session files under one folder.
#[derive(Debug, Clone)]
pub struct JsonlStore {
    root: PathBuf,
}

impl JsonlStore {
    pub fn new(root: PathBuf) -> Self {
        Self { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The file of session `id`: in the root itself (a `--session-dir` folder) or one of its cwd folders.
    fn locate(&self, id: &str) -> Option<PathBuf> {
        let suffix = format!("_{id}.jsonl");
        let holds = |path: &Path| {
            path.file_name().is_some_and(|name| name.to_string_lossy().ends_with(&suffix))
                && read_session_header(path).is_some_and(|header| header.id == id)
        };
        let folders = std::iter::once(self.root.clone()).chain(self.cwd_folders());
        folders.flat_map(|folder| files_in(&folder)).find(|path| holds(path))
    }

    fn cwd_folders(&self) -> impl Iterator<Item = PathBuf> {
        let read = std::fs::read_dir(&self.root).into_iter().flatten().filter_map(Result::ok);
        read.filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir())).map(|entry| entry.path())
    }

    fn new_path(&self, header: &HeaderLine) -> PathBuf {
        session_dir_for_cwd(&self.root, Path::new(&header.cwd)).join(session_file_name(&header.timestamp, &header.id))
    }

    fn export_now(&self, id: &str) -> Result<Option<String>, StoreError> {
        check_session_id(id)?;
        let Some(path) = self.locate(id) else { return Ok(None) };
        let bytes = std::fs::read(&path).map_err(|source| files_error("read", &path, source))?;
        String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| StoreError::invalid(format!("{} is not UTF-8 text", path.display())))
    }

    fn append_now(&self, header: &HeaderLine, entries: &[EntryLine]) -> Result<usize, StoreError> {
        check_session_id(&header.id)?;
        let path = match self.locate(&header.id) {
            Some(path) => path,
            None => {
                let session = SessionLines { header: header.clone(), entries: entries.to_vec(), torn_tail: false };
                match self.create(&session) {
                    Ok(()) => return Ok(entries.len()),
                    // Another writer created it meanwhile: append to theirs.
                    Err(StoreError::Exists(_)) => self.locate(&header.id).ok_or_else(|| {
                        StoreError::invalid(format!("session {} vanished while it was written", header.id))
                    })?,
                    Err(error) => return Err(error),
                }
            }
        };
        let writer = open_session_file_for_append(&path)?;
        let text = std::fs::read_to_string(&path).map_err(|source| files_error("read", &path, source))?;
        let stored: std::collections::HashSet<Cow<'_, str>> = text.lines().filter_map(line_id).collect();
        let mut added = String::new();
        let mut count = 0;
        for entry in entries.iter().filter(|entry| !stored.contains(entry.id.as_str())) {
            added.push_str(&entry.text);
            added.push('\n');
            count += 1;
        }
        if count > 0 {
            writer.file().write_all(added.as_bytes()).map_err(|source| files_error("append to", &path, source))?;
        }
        Ok(count)
    }

    fn create(&self, session: &SessionLines) -> Result<(), StoreError> {
        let path = self.new_path(&session.header);
        if let Some(folder) = path.parent() {
            std::fs::create_dir_all(folder).map_err(|source| files_error("create the folder of", &path, source))?;
        }
        if path.exists() {
            return Err(StoreError::Exists(session.header.id.clone()));
        }
        match create_session_file(&path, &session.to_text()) {
            Ok(_) => Ok(()),
            Err(pi_runtime::session::SessionError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::AlreadyExists =>
            {
                Err(StoreError::Exists(session.header.id.clone()))
            }
            Err(error) => Err(error.into()),
        }
    }

    fn import_now(&self, session: &SessionLines) -> Result<(), StoreError> {
        check_session_id(&session.header.id)?;
        if self.locate(&session.header.id).is_some() {
            return Err(StoreError::Exists(session.header.id.clone()));
        }
        self.create(session)
    }

    fn list_now(&self) -> Vec<StoredSession> {
        let folders = std::iter::once(self.root.clone()).chain(self.cwd_folders());
        let mut sessions: Vec<StoredSession> = folders
            .flat_map(|folder| files_in(&folder))
            .filter_map(|path| {
                let header = read_session_header(&path)?;
                let text = std::fs::read(&path).ok()?;
                let lines = text.split(|byte| *byte == b'\n').filter(|line| !line.is_empty()).count();
                let modified = std::fs::metadata(&path)
                    .and_then(|metadata| metadata.modified())
                    .ok()
                    .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |elapsed| elapsed.as_secs());
                Some(StoredSession {
                    id: header.id,
                    cwd: header.cwd,
                    created: header.timestamp,
                    entries: lines.saturating_sub(1) as u64,
                    modified,
                })
            })
            .collect();
        sessions.sort_by(|a, b| b.created.cmp(&a.created).then_with(|| a.id.cmp(&b.id)));
        sessions
    }

    fn delete_now(&self, id: &str) -> Result<bool, StoreError> {
        check_session_id(id)?;
        let Some(path) = self.locate(id) else { return Ok(false) };
        std::fs::remove_file(&path).map_err(|source| files_error("delete", &path, source))?;
        Ok(true)
    }
}

impl SessionStore for JsonlStore {
    async fn export(&self, id: &str) -> Result<Option<String>, StoreError> {
        let (store, id) = (self.clone(), id.to_owned());
        blocking(move || store.export_now(&id)).await
    }

    async fn append(&self, header: &HeaderLine, entries: &[EntryLine]) -> Result<usize, StoreError> {
        let (store, header, entries) = (self.clone(), header.clone(), entries.to_vec());
        blocking(move || store.append_now(&header, &entries)).await
    }

    async fn import(&self, session: &SessionLines) -> Result<(), StoreError> {
        let (store, session) = (self.clone(), session.clone());
        blocking(move || store.import_now(&session)).await
    }

    async fn list(&self) -> Result<Vec<StoredSession>, StoreError> {
        let store = self.clone();
        blocking(move || Ok(store.list_now())).await
    }

    async fn delete(&self, id: &str) -> Result<bool, StoreError> {
        let (store, id) = (self.clone(), id.to_owned());
        blocking(move || store.delete_now(&id)).await
    }
}

/// File work runs off the async threads (a held lock is waited for, briefly, by sleeping).
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|error| Err(StoreError::invalid(format!("the file store's task failed: {error}"))))
}

/// The `*.jsonl` files directly in `folder` (the runtime's listing, without the times).
fn files_in(folder: &Path) -> Vec<PathBuf> {
    list_session_files(folder).into_iter().map(|(path, _)| path).collect()
}

/// The `id` of an entry line, if it is one (the header and torn lines have none).
fn line_id(line: &str) -> Option<Cow<'_, str>> {
    #[derive(serde::Deserialize)]
    struct WithId<'a> {
        #[serde(borrow)]
        id: Option<Cow<'a, str>>,
        #[serde(rename = "type", borrow)]
        kind: Option<Cow<'a, str>>,
    }
    let parsed: WithId<'_> = serde_json::from_str(line).ok()?;
    if parsed.kind.as_deref() == Some("session") { None } else { parsed.id }
}

fn files_error(action: &'static str, path: &Path, source: std::io::Error) -> StoreError {
    StoreError::Files(pi_runtime::session::SessionError::Io { action, path: path.to_owned(), source })
}
