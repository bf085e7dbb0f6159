//! A lock on a file in the agent directory that pi's own processes respect: the `<file>.lock` directory that
//! pi's lock library makes with mkdir(2). A lock left behind by a crashed process counts as stale after ten
//! seconds and is taken over.

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
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let mut name = file.as_os_str().to_owned();
        name.push(".lock");
        let dir = PathBuf::from(name);
        let mut attempt = 0;
        loop {
            attempt += 1;
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(Self { dir }),
                Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                    if is_stale(&dir) {
                        // Another process may take it over at the same moment; mkdir decides who wins.
                        let _ = std::fs::remove_dir(&dir);
                        continue;
                    }
                    if attempt >= ATTEMPTS {
                        return Err(std::io::Error::new(
                            std::io::ErrorKind::WouldBlock,
                            format!(
                                "{} is locked by another process (remove {} if none runs)",
                                file.display(),
                                dir.display()
                            ),
                        ));
                    }
                    std::thread::sleep(RETRY_DELAY);
                }
                Err(error) => return Err(error),
            }
        }
    }
}

fn is_stale(dir: &Path) -> bool {
    let modified = std::fs::metadata(dir).and_then(|metadata| metadata.modified());
    modified.is_ok_and(|time| SystemTime::now().duration_since(time).is_ok_and(|age| age > STALE_AFTER))
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
