//! Path handling for the file tools: `@` prefix, `~`, Unicode spaces, cwd-relative resolution, per-file locks.

use std::collections::HashMap;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, Weak};

/// Unicode space characters models sometimes put into paths; they are read as plain spaces.
fn is_unicode_space(c: char) -> bool {
    matches!(c, '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}')
}

/// The home directory from `$HOME`, if set and non-empty.
fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from)
}

/// Strips a leading `@`, turns Unicode spaces into spaces and expands `~` / `~/…` to the home directory.
/// The result may still be relative.
pub fn expand_path(input: &str) -> PathBuf {
    let stripped = input.strip_prefix('@').unwrap_or(input);
    let normalized: String = stripped.chars().map(|c| if is_unicode_space(c) { ' ' } else { c }).collect();
    if let Some(home) = home_dir() {
        if normalized == "~" {
            return home;
        }
        if let Some(rest) = normalized.strip_prefix("~/") {
            return home.join(rest);
        }
    }
    PathBuf::from(normalized)
}

/// Resolves a tool path against `cwd`: expands it (see [`expand_path`]), joins relative paths onto `cwd` and
/// removes `.` and `..` components lexically, like Node's `path.resolve`.
pub fn resolve_to_cwd(input: &str, cwd: &Path) -> PathBuf {
    let expanded = expand_path(input);
    let joined = if expanded.is_absolute() { expanded } else { cwd.join(expanded) };
    normalize_lexically(&joined)
}

/// Like [`resolve_to_cwd`], but if the file does not exist and the name looks like a macOS screenshot
/// (`… 10.01.02 AM.png`), tries the variant with a narrow no-break space before `AM`/`PM`.
pub fn resolve_read_path(input: &str, cwd: &Path) -> PathBuf {
    let resolved = resolve_to_cwd(input, cwd);
    if resolved.exists() {
        return resolved;
    }
    let text = resolved.to_string_lossy();
    let variant = text.replace(" AM.", "\u{202F}AM.").replace(" PM.", "\u{202F}PM.");
    if variant != text {
        let candidate = PathBuf::from(variant);
        if candidate.exists() {
            return candidate;
        }
    }
    resolved
}

fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() && !path.is_absolute() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() { PathBuf::from(".") } else { out }
}

/// Formats an I/O error the way Node reports it (`ENOENT: no such file or directory, access '/x'`), which is
/// the text pi's tools return to the model.
pub fn node_style_error(err: &io::Error, syscall: &str, path: Option<&Path>) -> String {
    let described = err.raw_os_error().and_then(|code| {
        let (name, text) = match code {
            libc::ENOENT => ("ENOENT", "no such file or directory"),
            libc::EACCES => ("EACCES", "permission denied"),
            libc::EPERM => ("EPERM", "operation not permitted"),
            libc::EISDIR => ("EISDIR", "illegal operation on a directory"),
            libc::ENOTDIR => ("ENOTDIR", "not a directory"),
            libc::ELOOP => ("ELOOP", "too many symbolic links encountered"),
            libc::ENAMETOOLONG => ("ENAMETOOLONG", "name too long"),
            libc::EROFS => ("EROFS", "read-only file system"),
            libc::ENOSPC => ("ENOSPC", "no space left on device"),
            libc::EEXIST => ("EEXIST", "file already exists"),
            _ => return None,
        };
        Some(format!("{name}: {text}, {syscall}"))
    });
    let base = described.unwrap_or_else(|| format!("{err}, {syscall}"));
    match path {
        Some(p) => format!("{base} '{}'", p.display()),
        None => base,
    }
}

type LockMap = HashMap<PathBuf, Weak<tokio::sync::Mutex<()>>>;

static FILE_LOCKS: LazyLock<Mutex<LockMap>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// Serializes mutations of one file: edit and write calls on the same path run one at a time, calls on
/// different paths run in parallel (pi's file mutation queue).
pub async fn lock_file(path: &Path) -> tokio::sync::OwnedMutexGuard<()> {
    let mutex = {
        let mut map = FILE_LOCKS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        map.retain(|_, weak| weak.strong_count() > 0);
        match map.get(path).and_then(Weak::upgrade) {
            Some(existing) => existing,
            None => {
                let created = Arc::new(tokio::sync::Mutex::new(()));
                map.insert(path.to_path_buf(), Arc::downgrade(&created));
                created
            }
        }
    };
    mutex.lock_owned().await
}
