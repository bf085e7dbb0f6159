//! A file open as a panel (Context Pilot's File panels): its text as on disk, read again only when its size
//! or modification time changes.
//!
//! The content is the file's plain text. A file over the byte limit shows its first lines up to the limit
//! and a note; a file deleted after opening shows [`DELETED_FILE_TEXT`]; one that can no longer be read
//! (it became a directory, binary, unreadable) shows a note saying why.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::tree_cache::RACY_WINDOW;
use crate::tools::path::resolve_to_cwd;

/// What a file panel shows once its file is gone.
pub const DELETED_FILE_TEXT: &str = "[file deleted]";

/// Why a file cannot be opened as a panel.
#[derive(Debug, thiserror::Error)]
pub enum FilePanelError {
    #[error("File not found: {}", .path.display())]
    NotFound { path: PathBuf },
    #[error("{} is a directory, not a file", .path.display())]
    IsDirectory { path: PathBuf },
    #[error("{} is not UTF-8 text (binary file?)", .path.display())]
    NotUtf8 { path: PathBuf },
    #[error("Cannot read {}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// What identifies one version of a file without reading it: its length and modification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    pub len: u64,
    pub modified: SystemTime,
}

/// A file shown as a panel.
#[derive(Debug, Clone)]
pub struct FilePanel {
    /// The path as it was given (relative to the working directory or absolute): the panel's name.
    path: String,
    resolved: PathBuf,
    max_bytes: usize,
    /// The version the content was read from; `None` when unknown or not to be trusted (re-read next time).
    stamp: Option<FileStamp>,
    content: String,
}

impl FilePanel {
    /// Opens `path` (relative paths resolve against `cwd`, `~` is expanded as the file tools do). A file over
    /// `max_bytes` keeps its first whole lines within the limit, followed by
    /// `[... truncated: showing first N of M bytes]`.
    pub fn open(cwd: &Path, path: &str, max_bytes: usize) -> Result<FilePanel, FilePanelError> {
        let resolved = resolve_to_cwd(path, cwd);
        let (content, stamp) = read_text(&resolved, max_bytes)?;
        Ok(FilePanel { path: path.to_owned(), resolved, max_bytes, stamp, content })
    }

    /// The path as given to [`FilePanel::open`].
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The absolute path read.
    pub fn resolved_path(&self) -> &Path {
        &self.resolved
    }

    /// The text the panel shows.
    pub fn content(&self) -> &str {
        &self.content
    }

    /// The length and modification time the content was read at, when known and trusted.
    pub fn stamp(&self) -> Option<FileStamp> {
        self.stamp
    }

    /// Reads the file again if its length or modification time changed (or the last read could not be
    /// trusted); returns whether the content changed. A deleted file shows [`DELETED_FILE_TEXT`]; a file that
    /// can no longer be read shows the reason.
    pub fn refresh(&mut self) -> bool {
        let content = match std::fs::metadata(&self.resolved) {
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                self.stamp = None;
                DELETED_FILE_TEXT.to_owned()
            }
            Ok(meta) if self.stamp.is_some() && stamp_of(&meta) == self.stamp => return false,
            _ => match read_text(&self.resolved, self.max_bytes) {
                Ok((content, stamp)) => {
                    self.stamp = stamp;
                    content
                }
                Err(err) => {
                    self.stamp = None;
                    format!("[{err}]")
                }
            },
        };
        if content == self.content {
            return false;
        }
        self.content = content;
        true
    }
}

/// The stamp of a file whose metadata is `meta`, if the platform reports modification times.
fn stamp_of(meta: &std::fs::Metadata) -> Option<FileStamp> {
    meta.modified().ok().map(|modified| FileStamp { len: meta.len(), modified })
}

/// The text of `path` (cut to `max_bytes` as [`FilePanel::open`] describes) and the stamp it was read at,
/// `None` when the file changed too recently for the stamp to be trusted.
fn read_text(path: &Path, max_bytes: usize) -> Result<(String, Option<FileStamp>), FilePanelError> {
    let io_error = |source: std::io::Error| match source.kind() {
        std::io::ErrorKind::NotFound => FilePanelError::NotFound { path: path.to_path_buf() },
        _ => FilePanelError::Io { path: path.to_path_buf(), source },
    };
    let read_started = SystemTime::now();
    let mut file = std::fs::File::open(path).map_err(io_error)?;
    let meta = file.metadata().map_err(io_error)?;
    if meta.is_dir() {
        return Err(FilePanelError::IsDirectory { path: path.to_path_buf() });
    }
    let mut bytes = Vec::new();
    let limit = u64::try_from(max_bytes).unwrap_or(u64::MAX).saturating_add(1);
    (&mut file).take(limit).read_to_end(&mut bytes).map_err(io_error)?;
    let text = if bytes.len() > max_bytes {
        let total = meta.len().max(bytes.len() as u64);
        truncated_text(&bytes[..max_bytes], total)
            .ok_or_else(|| FilePanelError::NotUtf8 { path: path.to_path_buf() })?
    } else {
        String::from_utf8(bytes).map_err(|_| FilePanelError::NotUtf8 { path: path.to_path_buf() })?
    };
    let trusted_before = read_started.checked_sub(RACY_WINDOW);
    let stamp =
        stamp_of(&meta).filter(|stamp| trusted_before.is_some_and(|trusted_before| stamp.modified < trusted_before));
    Ok((text, stamp))
}

/// The first whole lines of `head` (the first bytes of a `total`-byte file) and the truncation note; a single
/// line longer than `head` is cut at a character boundary. `None` when the kept part is not UTF-8.
fn truncated_text(head: &[u8], total: u64) -> Option<String> {
    let kept = match memchr::memrchr(b'\n', head) {
        Some(newline) => &head[..=newline],
        None => match std::str::from_utf8(head) {
            Ok(_) => head,
            // Only a character cut in two at the end is forgiven.
            Err(err) if err.error_len().is_none() => &head[..err.valid_up_to()],
            Err(_) => return None,
        },
    };
    let mut text = std::str::from_utf8(kept).ok()?.to_owned();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!("[... truncated: showing first {} of {total} bytes]", kept.len()));
    Some(text)
}

#[cfg(test)]
#[path = "tests_files.rs"]
mod tests;
