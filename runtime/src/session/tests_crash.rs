//! Crash safety: a child process (this test binary, re-executed) appends entries as fast as it can and is
//! killed with SIGKILL at a random moment; the file must still load with at most a torn final line, every
//! entry whole and the parent chain unbroken, and the dead writer's lock must be gone. While the child runs,
//! a second writer in this process is refused with [`SessionError::Locked`]. And a first flush that cannot be
//! written whole (a file size limit cuts it, as a full disk or a kill in the middle of the write would) leaves
//! no session file at all rather than an empty or headless one.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::tests_store::{assistant, model_change, tool_result, user};
use super::*;
use crate::protocol::AgentMessage;

/// Set to a folder, [`crash_writer_child`] becomes the writer instead of returning at once.
const WRITER_DIR_VARIABLE: &str = "PI_RUNTIME_TEST_SESSION_CRASH_WRITER_DIR";
const CHILD_TEST_NAME: &str = "session::tests_crash::crash_writer_child";
const RUNS: usize = 30;

/// The writer half of the crash test; does nothing in a normal test run.
#[test]
fn crash_writer_child() {
    let Some(dir) = std::env::var_os(WRITER_DIR_VARIABLE) else { return };
    let mut store = SessionStore::create(Path::new(&dir), Path::new("/crash/test"), NewSessionOptions::default());
    let mut entries: Vec<SessionEntry> = Vec::new();
    let mut taken = HashSet::new();
    let started = Instant::now();
    for index in 0_usize.. {
        // Stop on our own if the parent never kills us.
        if started.elapsed() > Duration::from_secs(20) {
            break;
        }
        let payload_length = if index % 50 == 49 { 200_000 } else { 100 + (index * 7919) % 4000 };
        let text = format!("{index}:{}:end", "x".repeat(payload_length));
        let kind = match index {
            0 => model_change(),
            _ if index % 3 == 1 => user(&text),
            _ if index % 3 == 2 => assistant(&text),
            _ => tool_result(&text),
        };
        let id = new_entry_id(|candidate| taken.contains(candidate));
        taken.insert(id.clone());
        let mut value = serde_json::json!({"id": id, "parentId": entries.last().map(|e| e.id.clone()), "timestamp": iso_timestamp_now()});
        if let (Some(fields), serde_json::Value::Object(own)) = (value.as_object_mut(), kind) {
            fields.extend(own);
        }
        entries.push(SessionEntry::from_json(value).unwrap());
        store.record(entries.last().unwrap(), &entries).unwrap();
    }
}

/// A small random number from the system's randomness (through a v4 uuid).
fn random_below(bound: u64) -> u64 {
    let bytes = uuid::Uuid::new_v4().into_bytes();
    u64::from_le_bytes(bytes[..8].try_into().unwrap()) % bound
}

fn wait_for_loadable_session(dir: &Path, deadline: Instant) -> PathBuf {
    loop {
        if let Some((path, _)) = list_session_files(dir).into_iter().next()
            && load_session_file(&path).is_ok()
        {
            return path;
        }
        assert!(Instant::now() < deadline, "the writer child never wrote a session file in {}", dir.display());
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn message_text(entry: &SessionEntry) -> Option<String> {
    match entry.message()? {
        AgentMessage::User(message) => Some(message.content.text()),
        AgentMessage::Assistant(message) => Some(message.text()),
        AgentMessage::ToolResult(message) => {
            message.content.first().and_then(|block| block.as_text()).map(str::to_owned)
        }
        _ => None,
    }
}

fn assert_whole_and_chained(path: &Path) {
    let loaded = load_session_file(path).unwrap();
    let text = std::fs::read(path).unwrap();
    assert!(loaded.skipped_lines <= 1, "{} skipped lines in {}", loaded.skipped_lines, path.display());
    if loaded.skipped_lines == 1 {
        assert_ne!(text.last(), Some(&b'\n'), "only a torn final line may be skipped");
    }
    assert!(loaded.entries.len() >= 3, "the first flush writes at least three entries");
    assert_eq!(loaded.entries[0].parent_id, None);
    for pair in loaded.entries.windows(2) {
        assert_eq!(pair[1].parent_id.as_deref(), Some(pair[0].id.as_str()), "broken chain in {}", path.display());
    }
    for (index, entry) in loaded.entries.iter().enumerate().skip(1) {
        let text = message_text(entry).unwrap_or_else(|| panic!("entry {index} is not a message: {entry:?}"));
        assert!(text.starts_with(&format!("{index}:")) && text.ends_with(":end"), "entry {index} is incomplete");
    }
}

#[test]
fn a_killed_writer_leaves_a_loadable_file_and_no_lock() {
    let test_binary = std::env::current_exe().unwrap();
    let started = Instant::now();
    for run in 0..RUNS {
        let dir = tempfile::tempdir().unwrap();
        let mut child = Command::new(&test_binary)
            .args([CHILD_TEST_NAME, "--exact", "--test-threads=1"])
            .env(WRITER_DIR_VARIABLE, dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let path = wait_for_loadable_session(dir.path(), Instant::now() + Duration::from_secs(10));

        let loaded_while_writing = load_session_file(&path).unwrap();
        let refused = SessionStore::open(&path, &loaded_while_writing).unwrap_err();
        assert!(matches!(&refused, SessionError::Locked { path: locked } if *locked == path), "{refused:?}");

        std::thread::sleep(Duration::from_millis(random_below(60)));
        child.kill().unwrap();
        let status = child.wait().unwrap();
        assert!(!status.success(), "run {run}: the writer finished before it was killed");

        assert_whole_and_chained(&path);
        let reopened = SessionStore::open(&path, &load_session_file(&path).unwrap());
        assert!(reopened.is_ok(), "run {run}: the dead writer's lock is still held: {reopened:?}");
    }
    assert!(started.elapsed() < Duration::from_secs(30), "the crash runs took {:?}", started.elapsed());
}

/// Set to a folder, [`short_write_child`] flushes a new session there under a file size limit.
const SHORT_WRITE_DIR_VARIABLE: &str = "PI_RUNTIME_TEST_SESSION_SHORT_WRITE_DIR";

/// The child half of the short-write test; does nothing in a normal test run.
#[test]
fn short_write_child() {
    let Some(dir) = std::env::var_os(SHORT_WRITE_DIR_VARIABLE) else { return };
    // Files may grow to 40 bytes, less than the header: writing past that fails with EFBIG (SIGXFSZ ignored).
    let limit = libc::rlimit { rlim_cur: 40, rlim_max: 40 };
    // SAFETY: plain system calls on this (child) process, with a valid struct.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &limit), 0);
    }
    let mut store = SessionStore::create(Path::new(&dir), Path::new("/short/write"), NewSessionOptions::default());
    let mut entries = Vec::new();
    for kind in [user("hello"), assistant("an answer longer than the limit")] {
        let id = new_entry_id(|_| false);
        let mut value = serde_json::json!({"id": id, "parentId": entries.last().map(|e: &SessionEntry| e.id.clone()), "timestamp": iso_timestamp_now()});
        if let (Some(fields), serde_json::Value::Object(own)) = (value.as_object_mut(), kind) {
            fields.extend(own);
        }
        entries.push(SessionEntry::from_json(value).unwrap());
    }
    store.record(&entries[0], &entries[..1]).unwrap();
    let failed = store.record(&entries[1], &entries);
    assert!(failed.is_err(), "the first flush cannot fit in 40 bytes");
    assert!(!store.is_persisted());
}

#[test]
fn a_first_flush_cut_short_leaves_no_session_file() {
    let dir = tempfile::tempdir().unwrap();
    let status = Command::new(std::env::current_exe().unwrap())
        .args(["session::tests_crash::short_write_child", "--exact", "--test-threads=1"])
        .env(SHORT_WRITE_DIR_VARIABLE, dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "the child's own checks failed");
    let left: Vec<(PathBuf, u64)> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap())
        .map(|entry| (entry.path(), entry.metadata().unwrap().len()))
        .collect();
    assert!(left.is_empty(), "a failed first flush left {left:?}");
}
