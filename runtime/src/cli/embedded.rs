//! The agent's compiled-in skills, prompt templates and hook scripts on disk: unpacked once into
//! `<agent dir>/embedded/<name>-<hash>/` (written into a temporary directory beside it, completed with a
//! marker file, then renamed into place, so a concurrent run either finds the finished directory or
//! loses the rename race harmlessly). Files compiled in as executable get mode 0755; a complete directory
//! found on a later run gets that bit back if it lost it. A failure is a warning: the run goes on without
//! them.

use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::definition::{EmbeddedFile, EmbeddedResources};

/// The file whose presence says an unpack directory is complete.
pub const COMPLETE_MARKER: &str = ".pi-gen-complete";

/// The mode of files compiled in as executable (scripts of hooks and skills).
pub const EXECUTABLE_MODE: u32 = 0o755;

/// Where the agent's resources are unpacked: `<agent dir>/embedded/<name>-<hash>` (characters that do not
/// belong in a file name are replaced by `_`).
pub fn embedded_root(agent_dir: &Path, agent_name: &str, resources: &EmbeddedResources) -> PathBuf {
    agent_dir.join("embedded").join(format!("{}-{}", file_name_safe(agent_name), file_name_safe(&resources.hash)))
}

/// The unpacked root, unpacking first when no complete copy exists; `None` (and nothing touched on disk)
/// when there are no files, or after a warning on stderr when they cannot be written.
pub fn unpack_embedded(agent_dir: &Path, agent_name: &str, resources: &EmbeddedResources) -> Option<PathBuf> {
    if resources.is_empty() {
        return None;
    }
    let root = embedded_root(agent_dir, agent_name, resources);
    match ensure_unpacked(&root, resources) {
        Ok(()) => Some(root),
        Err(error) => {
            eprintln!(
                "Warning: cannot unpack the agent's built-in skills, prompt templates and hook scripts into {}: {error}; continuing without them",
                root.display()
            );
            None
        }
    }
}

/// Makes `root` a complete copy of `resources` unless it already is one.
fn ensure_unpacked(root: &Path, resources: &EmbeddedResources) -> std::io::Result<()> {
    if root.join(COMPLETE_MARKER).is_file() {
        restore_executable_bits(root, resources);
        return Ok(());
    }
    let parent = root.parent().ok_or_else(|| invalid("the unpack directory has no parent"))?;
    std::fs::create_dir_all(parent)?;
    let staging = staging_dir(root);
    let written = write_all(&staging, resources).and_then(|()| install(&staging, root));
    if staging.exists() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    written
}

/// A fresh directory name beside `root`, unique to this process and call.
fn staging_dir(root: &Path) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.subsec_nanos())
        .unwrap_or_default();
    let name = root.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let unique = format!(".{name}.tmp-{}-{nanos}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
    root.with_file_name(unique)
}

/// Writes every file and then the marker into `staging` (which must not exist yet).
fn write_all(staging: &Path, resources: &EmbeddedResources) -> std::io::Result<()> {
    std::fs::create_dir(staging)?;
    for file in &resources.files {
        let relative = safe_relative(&file.path)
            .ok_or_else(|| invalid(&format!("\"{}\" is not a relative path inside the directory", file.path)))?;
        let path = staging.join(relative);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&path, &file.contents)?;
        if file.executable {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(EXECUTABLE_MODE))?;
        }
    }
    let mut marker = std::fs::File::create(staging.join(COMPLETE_MARKER))?;
    marker.write_all(b"complete\n")?;
    marker.sync_all()
}

/// Gives the executable files of a complete directory their bit back when they lost it (a copy unpacked by
/// a build that did not keep it, or changed by hand): one `stat` per executable file, nothing for the
/// others. Files that are gone or cannot be changed are left alone.
fn restore_executable_bits(root: &Path, resources: &EmbeddedResources) {
    for file in resources.files.iter().filter(|file| file.executable) {
        let Some(path) = unpacked_path(root, file) else { continue };
        let Ok(metadata) = std::fs::metadata(&path) else { continue };
        if metadata.is_file() && metadata.permissions().mode() & 0o111 == 0 {
            let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(EXECUTABLE_MODE));
        }
    }
}

/// Where `file` lives under `root`, when its path stays inside.
fn unpacked_path(root: &Path, file: &EmbeddedFile) -> Option<PathBuf> {
    safe_relative(&file.path).map(|relative| root.join(relative))
}

/// Renames the finished `staging` directory to `root`. When another process got there first its complete
/// copy is used; a leftover `root` without the marker (not made by us) is replaced.
fn install(staging: &Path, root: &Path) -> std::io::Result<()> {
    match std::fs::rename(staging, root) {
        Ok(()) => Ok(()),
        Err(_) if root.join(COMPLETE_MARKER).is_file() => Ok(()),
        Err(first) if root.exists() => {
            std::fs::remove_dir_all(root).or_else(|error| if root.exists() { Err(error) } else { Ok(()) })?;
            match std::fs::rename(staging, root) {
                Ok(()) => Ok(()),
                Err(_) if root.join(COMPLETE_MARKER).is_file() => Ok(()),
                Err(_) => Err(first),
            }
        }
        Err(error) => Err(error),
    }
}

/// `path` (with `/` separators) as a relative path that stays inside its base: no root, no `..`, not empty.
pub fn safe_relative(path: &str) -> Option<PathBuf> {
    let candidate = Path::new(path);
    let mut relative = PathBuf::new();
    for component in candidate.components() {
        match component {
            Component::Normal(part) => relative.push(part),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    (!relative.as_os_str().is_empty()).then_some(relative)
}

/// `dir` (a relative directory of the resources, `.` or empty for the root) under `root`; `None` when it
/// would leave the root.
pub fn resource_dir(root: &Path, dir: &str) -> Option<PathBuf> {
    if dir.trim_matches('/').is_empty() || dir == "." {
        return Some(root.to_path_buf());
    }
    safe_relative(dir).map(|relative| root.join(relative))
}

fn file_name_safe(text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '_' }).collect()
}

fn invalid(message: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, message.to_owned())
}

#[cfg(test)]
#[path = "embedded_tests.rs"]
mod tests;
