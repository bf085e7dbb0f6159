//! Writing one session file the way pi does: nothing touches the disk until the session holds an assistant
//! message; then the folder is created and the file appears with the header plus every entry so far (written
//! and synced under a temporary name, locked, then linked into place, so it never exists half-written);
//! after that each entry is appended as one complete line. Nothing ever rewrites a file in place.
//!
//! Durability: later lines are appended with one `write(2)` each on an `O_APPEND` descriptor and never
//! fsynced. A killed process therefore loses nothing the kernel accepted, and at worst leaves a torn final
//! line, which loading skips and the next writer cuts off. A power loss can drop the last few lines; an fsync
//! per entry would cost milliseconds on every tool result for little gain, so pi's behaviour (no fsync) is
//! kept.

use std::fs;
use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};

use super::entries::{SessionEntry, SessionHeader};
use super::ids::{iso_timestamp_now, new_session_id};
use super::load::{LoadedSession, SessionError, session_text};
use super::lock::LockedSessionFile;
use super::paths::session_file_name;
use crate::protocol::AgentMessage;

/// Choices for a new session's header.
#[derive(Debug, Clone, Default)]
pub struct NewSessionOptions {
    /// The session id; a new uuid v7 when `None`.
    pub session_id: Option<String>,
    /// The file this session was forked from (`parentSession`).
    pub parent_session: Option<String>,
}

/// The session file being written (or, for `--no-session`, a session that is never written).
#[derive(Debug)]
pub struct SessionStore {
    header: SessionHeader,
    target: Target,
}

#[derive(Debug)]
enum Target {
    Memory,
    File { path: PathBuf, writer: Option<LockedSessionFile> },
}

impl SessionStore {
    /// A new session in `dir` (the folder for `cwd`, see [`super::session_dir_for_cwd`]). Nothing is created
    /// on disk until [`SessionStore::record`] sees an assistant message.
    pub fn create(dir: &Path, cwd: &Path, options: NewSessionOptions) -> Self {
        let header = new_header(cwd, options);
        let path = dir.join(session_file_name(&header.timestamp, &header.id));
        Self { header, target: Target::File { path, writer: None } }
    }

    /// Continues the existing file at `path` (already loaded as `loaded`): takes the writer lock now, so a
    /// second writer fails here with [`SessionError::Locked`]. A final line torn by a crash is cut off (it is
    /// not JSON, so loading skipped it), so the file holds only whole lines again; a whole entry that only
    /// lacks its newline gets one. Either way the next entry starts on a line of its own.
    pub fn open(path: &Path, loaded: &LoadedSession) -> Result<Self, SessionError> {
        let writer = open_session_file_for_append(path)?;
        Ok(Self { header: loaded.header.clone(), target: Target::File { path: path.to_owned(), writer: Some(writer) } })
    }

    /// A session kept in memory only (`--no-session`): nothing is ever written.
    pub fn in_memory(cwd: &Path, options: NewSessionOptions) -> Self {
        Self { header: new_header(cwd, options), target: Target::Memory }
    }

    pub fn header(&self) -> &SessionHeader {
        &self.header
    }

    /// The session file (which may not exist yet); `None` in memory.
    pub fn path(&self) -> Option<&Path> {
        match &self.target {
            Target::Memory => None,
            Target::File { path, .. } => Some(path),
        }
    }

    /// Whether the file exists and is being written by this store.
    pub fn is_persisted(&self) -> bool {
        matches!(&self.target, Target::File { writer: Some(_), .. })
    }

    /// Persists `entry`, just added to the session; `all_entries` is every entry of the session in order, `entry`
    /// included as the last one. Before the first assistant message nothing is written; the entry that makes
    /// one present writes the header and all entries at once; later entries are appended one line each.
    pub fn record(&mut self, entry: &SessionEntry, all_entries: &[SessionEntry]) -> Result<(), SessionError> {
        let Target::File { path, writer } = &mut self.target else { return Ok(()) };
        if let Some(writer) = writer {
            let mut line = entry.to_line().map_err(|source| SessionError::Encode { path: path.clone(), source })?;
            line.push('\n');
            return append(writer, line.as_bytes());
        }
        let includes_entry = all_entries.last().is_some_and(|last| last.id == entry.id);
        let mut pending: Vec<&SessionEntry> = all_entries.iter().collect();
        if !includes_entry {
            pending.push(entry);
        }
        if !pending.iter().any(|entry| is_assistant_message(entry)) {
            return Ok(());
        }
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(|source| SessionError::io("create the folder of", path, source))?;
        }
        let mut text = serde_json::to_string(&self.header)
            .map_err(|source| SessionError::Encode { path: path.clone(), source })?;
        text.push('\n');
        for entry in pending {
            text.push_str(&entry.to_line().map_err(|source| SessionError::Encode { path: path.clone(), source })?);
            text.push('\n');
        }
        *writer = Some(create_whole(path, text.as_bytes())?);
        Ok(())
    }
}

fn new_header(cwd: &Path, options: NewSessionOptions) -> SessionHeader {
    let id = options.session_id.unwrap_or_else(new_session_id);
    let mut header = SessionHeader::new(id, iso_timestamp_now(), cwd.to_string_lossy());
    header.parent_session = options.parent_session;
    header
}

fn is_assistant_message(entry: &SessionEntry) -> bool {
    matches!(entry.message(), Some(AgentMessage::Assistant(_)))
}

/// Creates the session file `path` holding `text` (its header line and entries, each ending in a newline)
/// and returns it locked for appending. The file appears whole, and an existing one is never replaced (that
/// is an error).
pub fn create_session_file(path: &Path, text: &str) -> Result<LockedSessionFile, SessionError> {
    create_whole(path, text.as_bytes())
}

/// Opens the existing session file `path` for appending: locked (another writer gives
/// [`SessionError::Locked`]), with a final line torn by a crash cut off, so the next line starts on its own.
pub fn open_session_file_for_append(path: &Path) -> Result<LockedSessionFile, SessionError> {
    let writer = LockedSessionFile::open_for_append(path, false)?;
    repair_torn_tail(&writer)?;
    Ok(writer)
}

/// One `write(2)` of a whole buffer on the `O_APPEND` descriptor (a regular file takes it whole; the rare short
/// write is finished by `write_all`).
fn append(writer: &LockedSessionFile, bytes: &[u8]) -> Result<(), SessionError> {
    let mut file = writer.file();
    file.write_all(bytes).map_err(|source| SessionError::io("append to", writer.path(), source))
}

/// Creates the session file `path` holding `contents` and returns it locked for appending. The file appears
/// whole: `contents` is written and synced under a temporary name in the same folder (locked before anything
/// else can see it), then linked to `path`, so a crash or a failed write at any moment leaves either no
/// session file or one with its header and first entries, never an empty or half-written one. An existing
/// `path` is never replaced.
fn create_whole(path: &Path, contents: &[u8]) -> Result<LockedSessionFile, SessionError> {
    let temporary = temporary_path(path);
    let created = (|| -> Result<LockedSessionFile, SessionError> {
        let io = |source| SessionError::io("create", path, source);
        let file = fs::File::options().append(true).create_new(true).open(&temporary).map_err(io)?;
        let locked = LockedSessionFile::lock(file, path)?;
        let mut file = locked.file();
        file.write_all(contents).map_err(io)?;
        file.sync_all().map_err(io)?;
        match fs::hard_link(&temporary, path) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => return Err(io(error)),
            // A file system without hard links: rename instead (the name is a new one, see `create`).
            Err(_) if !path.exists() => fs::rename(&temporary, path).map_err(io)?,
            Err(error) => return Err(io(error)),
        }
        Ok(locked)
    })();
    let _ = fs::remove_file(&temporary);
    created
}

/// A hidden name beside `path` for writing it before it appears (never listed as a session: not `.jsonl`).
fn temporary_path(path: &Path) -> PathBuf {
    let dir = path.parent().filter(|dir| !dir.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    dir.join(format!(".{name}.{}.{}.tmp", std::process::id(), super::ids::new_entry_id(|_| false)))
}

/// Cuts a final line that a crash tore (bytes after the last newline that are not JSON) and ends a whole last
/// line that only lacks its newline. `writer` holds the lock, so nobody appends meanwhile.
fn repair_torn_tail(writer: &LockedSessionFile) -> Result<(), SessionError> {
    let path = writer.path();
    let read_error = |source| SessionError::io("read", path, source);
    let mut file = fs::File::open(path).map_err(read_error)?;
    let length = file.metadata().map_err(read_error)?.len();
    // Read backwards a block at a time until the last newline (or the start of the file).
    let mut tail: Vec<u8> = Vec::new();
    let mut tail_start = length;
    while tail_start > 0 {
        let block = TAIL_BLOCK.min(tail_start);
        let mut bytes = vec![0_u8; block as usize];
        file.seek(SeekFrom::Start(tail_start - block)).map_err(read_error)?;
        file.read_exact(&mut bytes).map_err(read_error)?;
        if let Some(newline) = bytes.iter().rposition(|byte| *byte == b'\n') {
            bytes.drain(..=newline);
            bytes.append(&mut tail);
            tail = bytes;
            tail_start = tail_start - block + newline as u64 + 1;
            break;
        }
        bytes.append(&mut tail);
        tail = bytes;
        tail_start -= block;
    }
    if tail.is_empty() {
        return Ok(());
    }
    // Judged as loading judges lines (decoded lossily), so a line loading takes is never cut.
    if serde_json::from_str::<serde::de::IgnoredAny>(&String::from_utf8_lossy(&tail)).is_ok() {
        return append(writer, b"\n");
    }
    writer.file().set_len(tail_start).map_err(|source| SessionError::io("cut the torn last line of", path, source))
}

/// Bytes read at a time when looking for the last newline.
const TAIL_BLOCK: u64 = 64 * 1024;

/// Writes a complete session file for a branched session (header with `parentSession`, then `entries`),
/// atomically: readers see either no file or the whole of it.
pub fn write_forked_session(path: &Path, header: &SessionHeader, entries: &[SessionEntry]) -> Result<(), SessionError> {
    let text =
        session_text(header, entries).map_err(|source| SessionError::Encode { path: path.to_owned(), source })?;
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(|source| SessionError::io("create the folder of", path, source))?;
    }
    write_file_atomically(path, text.as_bytes())
}

/// Replaces `path` with `contents` through a temporary file in the same folder and a rename, so the file is
/// never seen half-written.
pub(crate) fn write_file_atomically(path: &Path, contents: &[u8]) -> Result<(), SessionError> {
    let temporary = temporary_path(path);
    let result = (|| -> std::io::Result<()> {
        let mut file = fs::File::options().write(true).create_new(true).open(&temporary)?;
        file.write_all(contents)?;
        file.sync_all()?;
        fs::rename(&temporary, path)
    })();
    result.map_err(|source| {
        let _ = fs::remove_file(&temporary);
        SessionError::io("rewrite", path, source)
    })
}
