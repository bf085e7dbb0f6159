//! Where session files live: one folder per working directory under the sessions root, one
//! `<timestamp>_<session id>.jsonl` file per session, and picking the newest one for `--continue`.

use std::fs;
use std::io::{BufRead as _, BufReader, Read as _};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::entries::SessionHeader;

/// The folder holding the sessions of `cwd`: `<root>/--<cwd without its leading slash, with / \ : turned into
/// ->--`, e.g. `/home/u/p` → `<root>/--home-u-p--`.
pub fn session_dir_for_cwd(sessions_root: &Path, cwd: &Path) -> PathBuf {
    let cwd = cwd.to_string_lossy();
    let trimmed = cwd.strip_prefix(['/', '\\']).unwrap_or(&cwd);
    let safe: String = trimmed.chars().map(|c| if matches!(c, '/' | '\\' | ':') { '-' } else { c }).collect();
    sessions_root.join(format!("--{safe}--"))
}

/// The file name of a session: its ISO timestamp with `:` and `.` turned into `-`, then `_<id>.jsonl`,
/// e.g. `2026-03-15T22-40-18-123Z_<id>.jsonl`.
pub fn session_file_name(timestamp_iso: &str, session_id: &str) -> String {
    let stamp: String = timestamp_iso.chars().map(|c| if matches!(c, ':' | '.') { '-' } else { c }).collect();
    format!("{stamp}_{session_id}.jsonl")
}

/// The `*.jsonl` files directly in `dir` with their modification times, newest first. A missing or unreadable
/// folder gives no files.
pub fn list_session_files(dir: &Path) -> Vec<(PathBuf, SystemTime)> {
    let Ok(read_dir) = fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<(PathBuf, SystemTime)> = read_dir
        .filter_map(Result::ok)
        .filter(|entry| entry.path().extension().is_some_and(|ext| ext == "jsonl"))
        .filter_map(|entry| {
            let metadata = entry.metadata().ok()?;
            metadata.is_file().then(|| (entry.path(), metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH)))
        })
        .collect();
    files.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| b.0.cmp(&a.0)));
    files
}

/// The newest session file in `dir` whose first line is a valid session header (`--continue`).
pub fn find_most_recent_session(dir: &Path) -> Option<PathBuf> {
    list_session_files(dir).into_iter().map(|(path, _)| path).find(|path| has_session_header(path))
}

/// Whether the first line of the file is a session header.
pub fn has_session_header(path: &Path) -> bool {
    read_session_header(path).is_some()
}

/// The session header on the file's first line, if it has one.
pub fn read_session_header(path: &Path) -> Option<SessionHeader> {
    let file = fs::File::open(path).ok()?;
    let mut first_line = String::new();
    // A header is a few hundred bytes; do not read a huge first line of a file that is not a session.
    let mut reader = BufReader::new(file).take(64 * 1024);
    reader.read_line(&mut first_line).ok()?;
    serde_json::from_str::<SessionHeader>(first_line.trim()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cwd_folders_use_pis_naming() {
        let root = Path::new("/s");
        assert_eq!(session_dir_for_cwd(root, Path::new("/home/u/p")), Path::new("/s/--home-u-p--"));
        assert_eq!(
            session_dir_for_cwd(root, Path::new("/run-root/pi-run/work")),
            Path::new("/s/--run-root-pi-run-work--")
        );
        assert_eq!(session_dir_for_cwd(root, Path::new("C:\\Users\\u")), Path::new("/s/--C--Users-u--"));
        assert_eq!(session_dir_for_cwd(root, Path::new("/")), Path::new("/s/----"));
    }

    #[test]
    fn file_names_use_pis_naming() {
        assert_eq!(
            session_file_name("2026-03-15T22:40:18.123Z", "019a-abc"),
            "2026-03-15T22-40-18-123Z_019a-abc.jsonl"
        );
    }

    #[test]
    fn the_newest_valid_session_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let header = r#"{"type":"session","version":3,"id":"x","timestamp":"t","cwd":"/w"}"#;
        let old = dir.path().join("a.jsonl");
        let newer = dir.path().join("b.jsonl");
        let newest_invalid = dir.path().join("c.jsonl");
        fs::write(&old, format!("{header}\n")).unwrap();
        fs::write(&newer, format!("{header}\n")).unwrap();
        fs::write(&newest_invalid, "not json\n").unwrap();
        fs::write(dir.path().join("notes.txt"), "x").unwrap();
        let base = SystemTime::now();
        for (path, age) in [(&old, 30), (&newer, 20), (&newest_invalid, 10)] {
            let file = fs::File::options().write(true).open(path).unwrap();
            file.set_modified(base - std::time::Duration::from_secs(age)).unwrap();
        }
        let listed: Vec<_> = list_session_files(dir.path()).into_iter().map(|(p, _)| p).collect();
        assert_eq!(listed, vec![newest_invalid.clone(), newer.clone(), old.clone()]);
        assert_eq!(find_most_recent_session(dir.path()), Some(newer));
        assert_eq!(find_most_recent_session(&dir.path().join("missing")), None);
    }
}
