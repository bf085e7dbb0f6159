//! The writer's lock on a session file: `flock(LOCK_EX | LOCK_NB)` on the session file itself, through the
//! same descriptor the entries are appended with.
//!
//! Locking the file itself (rather than a `<file>.lock` sidecar) leaves nothing behind in the sessions folder
//! and the kernel drops the lock when the descriptor closes, including when the process dies, so a crashed
//! writer never leaves a stale lock. The lock belongs to the open file, so replacing the file by rename (a
//! migration rewrite, [`super::store::write_forked_session`]) is only done for files no writer has open. A new
//! session file is locked under its temporary name, before it is linked into place.
//! Readers take no lock. On non-Unix systems no lock is taken.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use super::load::SessionError;

/// How long a held lock is tried again before it is another writer's.
const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_millis(200);

/// An open session file this process holds the exclusive writer lock on; dropping it releases the lock.
#[derive(Debug)]
pub struct LockedSessionFile {
    file: File,
    path: PathBuf,
}

impl LockedSessionFile {
    /// Opens `path` for appending (creating it when `create` is set) and takes the writer lock without waiting.
    /// Another writer holding it gives [`SessionError::Locked`].
    pub fn open_for_append(path: &Path, create: bool) -> Result<Self, SessionError> {
        let file = File::options()
            .append(true)
            .create(create)
            .open(path)
            .map_err(|source| SessionError::io("open", path, source))?;
        Self::lock(file, path)
    }

    /// Takes the writer lock on `file`, already open for appending, which is (or is about to become) the
    /// session file `path`.
    ///
    /// A lock still held is tried again for a moment before it counts as another writer's: a child process
    /// forked by another thread (a tool's command) shares this process's open files until it executes its
    /// program, so a file this process has just closed can look locked for that long.
    pub(super) fn lock(file: File, path: &Path) -> Result<Self, SessionError> {
        let started = std::time::Instant::now();
        loop {
            match try_lock_exclusive(&file) {
                Ok(()) => return Ok(Self { file, path: path.to_owned() }),
                Err(source) if source.kind() == io::ErrorKind::WouldBlock => {
                    if started.elapsed() >= LOCK_PATIENCE {
                        return Err(SessionError::Locked { path: path.to_owned() });
                    }
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                Err(source) => return Err(SessionError::io("lock", path, source)),
            }
        }
    }

    pub fn file(&self) -> &File {
        &self.file
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(unix)]
fn try_lock_exclusive(file: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd as _;
    loop {
        // SAFETY: flock only reads the descriptor number, which `file` keeps open for the duration of the call.
        let result = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if result == 0 {
            return Ok(());
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

#[cfg(not(unix))]
fn try_lock_exclusive(_file: &File) -> io::Result<()> {
    Ok(())
}
