//! A lock on a file in the agent directory that pi's own processes respect: the `<file>.lock` directory that
//! pi's lock library makes with mkdir(2). A lock left behind by a crashed process counts as stale after ten
//! seconds (thirty for the slow refresh lock) and is taken over.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How many times a held lock is tried before giving up.
const ATTEMPTS: u32 = 10;
/// The pause between two tries.
const RETRY_DELAY: Duration = Duration::from_millis(20);
/// A lock older than this was left by a process that died (pi's lock library uses the same age).
const STALE_AFTER: Duration = Duration::from_secs(10);

/// A held lock, released on drop.
#[derive(Debug)]
pub struct FileLock {
    dir: PathBuf,
}

impl FileLock {
    /// Takes the lock on `file` (creating the file's directory first), waiting a little while another
    /// process holds it.
    pub fn acquire(file: &Path) -> std::io::Result<Self> {
        let dir = lock_dir(file)?;
        let mut attempt = 0;
        loop {
            attempt += 1;
            if let Some(lock) = try_take(&dir, STALE_AFTER)? {
                return Ok(lock);
            }
            if attempt >= ATTEMPTS {
                return Err(held_elsewhere(file, &dir));
            }
            std::thread::sleep(RETRY_DELAY);
        }
    }

    /// Takes the lock on `file` for a slow step (a token refresh over the network), as pi's own refresh
    /// does: up to ten more tries with waits doubling from 100 ms to 10 s, and a lock counts as left behind
    /// only after 30 seconds.
    pub async fn acquire_patiently(file: &Path) -> std::io::Result<Self> {
        const SLOW_STALE_AFTER: Duration = Duration::from_secs(30);
        let dir = lock_dir(file)?;
        let mut delay = Duration::from_millis(100);
        for _ in 0..=ATTEMPTS {
            if let Some(lock) = try_take(&dir, SLOW_STALE_AFTER)? {
                return Ok(lock);
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(Duration::from_secs(10));
        }
        Err(held_elsewhere(file, &dir))
    }
}

/// `<file>.lock`, after making sure the file's directory exists.
fn lock_dir(file: &Path) -> std::io::Result<PathBuf> {
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut name = file.as_os_str().to_owned();
    name.push(".lock");
    Ok(PathBuf::from(name))
}

/// One try: the lock, `None` while another process holds it, an error when the directory cannot be made.
fn try_take(dir: &Path, stale_after: Duration) -> std::io::Result<Option<FileLock>> {
    match std::fs::create_dir(dir) {
        Ok(()) => Ok(Some(FileLock { dir: dir.to_owned() })),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
            if is_stale(dir, stale_after) {
                // Another process may take it over at the same moment; mkdir decides who wins.
                let _ = std::fs::remove_dir(dir);
                return match std::fs::create_dir(dir) {
                    Ok(()) => Ok(Some(FileLock { dir: dir.to_owned() })),
                    Err(_) => Ok(None),
                };
            }
            Ok(None)
        }
        Err(error) => Err(error),
    }
}

fn held_elsewhere(file: &Path, dir: &Path) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::WouldBlock,
        format!("{} is locked by another process (remove {} if none runs)", file.display(), dir.display()),
    )
}

fn is_stale(dir: &Path, stale_after: Duration) -> bool {
    let modified = std::fs::metadata(dir).and_then(|metadata| metadata.modified());
    modified.is_ok_and(|time| SystemTime::now().duration_since(time).is_ok_and(|age| age > stale_after))
}

impl Drop for FileLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_is_refused_then_free_again_after_release() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("sub").join("trust.json");
        let held = FileLock::acquire(&file).unwrap();
        assert!(dir.path().join("sub").join("trust.json.lock").is_dir());
        let refused = FileLock::acquire(&file).unwrap_err();
        assert_eq!(refused.kind(), std::io::ErrorKind::WouldBlock);
        assert!(refused.to_string().contains("trust.json.lock"), "{refused}");
        drop(held);
        assert!(!dir.path().join("sub").join("trust.json.lock").exists());
        FileLock::acquire(&file).unwrap();
    }

    #[test]
    fn a_stale_lock_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("trust.json");
        let lock_dir = dir.path().join("trust.json.lock");
        std::fs::create_dir(&lock_dir).unwrap();
        let old = SystemTime::now() - Duration::from_secs(60);
        std::fs::File::open(&lock_dir).unwrap().set_modified(old).unwrap();
        let lock = FileLock::acquire(&file).unwrap();
        drop(lock);
        assert!(!lock_dir.exists());
    }
}
