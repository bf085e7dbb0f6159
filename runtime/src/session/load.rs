//! Reading a session file: one JSON value per line, malformed lines (such as a final line torn by a crash)
//! skipped and counted, old versions migrated and the file rewritten, then typed entries.
//! Reading takes no lock: a writer only ever appends whole lines.

use std::borrow::Cow;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::entries::{EntryKind, SessionEntry, SessionHeader};
use super::migrate::{header_version, migrate_to_current};
use super::store::write_file_atomically;
use crate::protocol::AgentMessage;

/// What can go wrong reading or writing a session file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    #[error("could not {action} session file {path}: {source}")]
    Io {
        /// What was being done, e.g. "read" or "append to".
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "session file {path} has no valid session header on its first line; it cannot be continued (start a new \
         session instead)"
    )]
    NoHeader { path: PathBuf },
    #[error(
        "session file {path} is being written by another process; continue it there, or use --no-session or \
         fork it into a new session"
    )]
    Locked { path: PathBuf },
    /// A tree operation named an entry the session does not have.
    #[error("{0}")]
    Tree(String),
    #[error("could not encode a session entry for {path}: {source}")]
    Encode {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
}

impl SessionError {
    pub(crate) fn io(action: &'static str, path: &Path, source: std::io::Error) -> Self {
        Self::Io { action, path: path.to_owned(), source }
    }
}

/// A session file as loaded.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedSession {
    pub header: SessionHeader,
    /// The entries in file order.
    pub entries: Vec<SessionEntry>,
    /// Non-empty lines that were not JSON, not an entry, or a second header.
    pub skipped_lines: usize,
    /// Whether the file was an older version and was upgraded (by [`load_session_file`], also rewritten).
    pub migrated: bool,
}

impl LoadedSession {
    /// What the user should hear about the file before it is used: a header version newer than this
    /// runtime knows (written by a newer pi; it is read as the current version, and what cannot be read is
    /// skipped).
    pub fn version_warning(&self, path: &Path) -> Option<String> {
        let version = self.header.version.filter(|version| *version > super::CURRENT_SESSION_VERSION)?;
        let current = super::CURRENT_SESSION_VERSION;
        let skipped = match self.skipped_lines {
            0 => String::new(),
            1 => "; 1 line could not be read and is ignored".to_owned(),
            n => format!("; {n} lines could not be read and are ignored"),
        };
        Some(format!(
            "session file {} is version {version}, newer than version {current}, the newest this agent \
             knows; it is read as version {current}{skipped}",
            path.display()
        ))
    }
}

/// Reads and parses a session file. An older version is migrated and the file rewritten as the current
/// version (atomically). A file whose first valid line is not a session header gives
/// [`SessionError::NoHeader`].
pub fn load_session_file(path: &Path) -> Result<LoadedSession, SessionError> {
    let bytes = fs::read(path).map_err(|source| SessionError::io("read", path, source))?;
    let text = String::from_utf8_lossy(&bytes);
    let loaded = parse_session_text(&text).ok_or_else(|| SessionError::NoHeader { path: path.to_owned() })?;
    if loaded.migrated {
        let contents = session_text(&loaded.header, &loaded.entries)
            .map_err(|source| SessionError::Encode { path: path.to_owned(), source })?;
        write_file_atomically(path, contents.as_bytes())?;
    }
    Ok(loaded)
}

/// Parses the text of a session file (no IO, no rewrite). `None` when the first valid JSON line is not a
/// session header.
pub fn parse_session_text(text: &str) -> Option<LoadedSession> {
    let mut skipped_lines = 0;
    let mut lines = text.lines().filter(|line| !line.trim().is_empty());
    let mut header_value = None;
    let mut rest = "";
    for line in lines.by_ref() {
        match serde_json::from_str::<Value>(line) {
            Ok(value) => {
                header_value = Some(value);
                let line_end = line.as_ptr() as usize - text.as_ptr() as usize + line.len();
                rest = text.get(line_end..).unwrap_or_default();
                break;
            }
            Err(_) => skipped_lines += 1,
        }
    }
    let mut header_value = header_value?;
    if header_value.get("type").and_then(Value::as_str) != Some("session") {
        return None;
    }

    let needs_migration = header_version(&header_value) < u64::from(super::CURRENT_SESSION_VERSION);
    let mut entries = Vec::new();
    if needs_migration {
        let mut values = Vec::new();
        for line in lines {
            match serde_json::from_str::<Value>(line) {
                Ok(value) if value.is_object() && !is_header(&value) => values.push(value),
                _ => skipped_lines += 1,
            }
        }
        migrate_to_current(&mut header_value, &mut values);
        entries.reserve(values.len());
        for value in values {
            match SessionEntry::from_json(value) {
                Some(entry) => entries.push(entry),
                None => skipped_lines += 1,
            }
        }
    } else {
        let (parsed, skipped) = parse_current_entries(rest);
        entries = parsed;
        skipped_lines += skipped;
    }
    let header = serde_json::from_value::<SessionHeader>(header_value).ok()?;
    Some(LoadedSession { header, entries, skipped_lines, migrated: needs_migration })
}

/// Below this size a session is read on one thread (a thread costs more than it saves).
const PARALLEL_MIN_BYTES: usize = 4 << 20;
/// At most this many threads read one session.
const MAX_READERS: usize = 4;

/// The entries of the current-version lines in `text` and how many lines were skipped. A long text is cut at
/// line ends into one part per core, read in parallel and joined in order.
fn parse_current_entries(text: &str) -> (Vec<SessionEntry>, usize) {
    let readers = if text.len() < PARALLEL_MIN_BYTES {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |cores| cores.get().min(MAX_READERS))
    };
    if readers < 2 {
        return parse_part(text);
    }
    let mut parts = Vec::with_capacity(readers);
    let mut start = 0;
    for reader in 1..readers {
        let cut = (text.len() * reader / readers).max(start);
        let end = memchr::memchr(b'\n', &text.as_bytes()[cut..]).map_or(text.len(), |offset| cut + offset + 1);
        parts.push(&text[start..end]);
        start = end;
    }
    parts.push(&text[start..]);
    std::thread::scope(|scope| {
        let handles: Vec<_> = parts[1..].iter().map(|part| (part, scope.spawn(move || parse_part(part)))).collect();
        let mut results = vec![parse_part(parts[0])];
        for (part, handle) in handles {
            // A reader that failed (a bug) costs only time: its part is read again here.
            results.push(handle.join().unwrap_or_else(|_| parse_part(part)));
        }
        let mut entries = Vec::with_capacity(results.iter().map(|(entries, _)| entries.len()).sum());
        let mut skipped = 0;
        for (part_entries, part_skipped) in results {
            entries.extend(part_entries);
            skipped += part_skipped;
        }
        (entries, skipped)
    })
}

fn parse_part(text: &str) -> (Vec<SessionEntry>, usize) {
    // One entry per line at most: counting the lines first costs far less than growing the vector.
    let mut entries = Vec::with_capacity(memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1);
    let mut skipped = 0;
    for line in text.lines().filter(|line| !line.trim().is_empty()) {
        match parse_current_entry(line) {
            Some(entry) => entries.push(entry),
            None => skipped += 1,
        }
    }
    (entries, skipped)
}

/// The fields every entry line has, borrowed from the text where no escapes get in the way, and its
/// `message`: read as an [`AgentMessage`] this reads a message entry (nearly every line of a long session) in
/// one pass; read as anything (`IgnoredAny`) it is the frame of an entry of another kind.
#[derive(serde::Deserialize)]
struct EntryLine<'a, M> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    id: Cow<'a, str>,
    #[serde(rename = "parentId", default, borrow)]
    parent_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    timestamp: Cow<'a, str>,
    #[serde(default = "no_message")]
    message: Option<M>,
}

/// `Option::default` without the `M: Default` bound `#[serde(default)]` would ask for.
fn no_message<M>() -> Option<M> {
    None
}

/// One current-version entry line. A message, or another kind in its usual shape, is read straight into the
/// typed entry (no intermediate JSON tree); anything unusual (an unknown type, fields of an unexpected shape,
/// a header) goes through [`SessionEntry::from_json`], which decides what it is.
fn parse_current_entry(line: &str) -> Option<SessionEntry> {
    if let Ok(line) = serde_json::from_str::<EntryLine<AgentMessage>>(line)
        && line.kind == "message"
        && let Some(message) = line.message
    {
        return Some(SessionEntry {
            id: line.id.into_owned(),
            parent_id: line.parent_id.map(Cow::into_owned),
            timestamp: line.timestamp.into_owned(),
            kind: EntryKind::Message { message },
        });
    }
    if let (Ok(kind), Ok(frame)) =
        (serde_json::from_str::<EntryKind>(line), serde_json::from_str::<EntryLine<serde::de::IgnoredAny>>(line))
    {
        return Some(SessionEntry {
            id: frame.id.into_owned(),
            parent_id: frame.parent_id.map(Cow::into_owned),
            timestamp: frame.timestamp.into_owned(),
            kind,
        });
    }
    serde_json::from_str::<Value>(line).ok().filter(|value| !is_header(value)).and_then(SessionEntry::from_json)
}

fn is_header(value: &Value) -> bool {
    value.get("type").and_then(Value::as_str) == Some("session")
}

/// The full text of a session file: the header line, then one line per entry, each ending in a newline.
pub fn session_text(header: &SessionHeader, entries: &[SessionEntry]) -> Result<String, serde_json::Error> {
    let mut text = serde_json::to_string(header)?;
    text.push('\n');
    for entry in entries {
        text.push_str(&entry.to_line()?);
        text.push('\n');
    }
    Ok(text)
}
