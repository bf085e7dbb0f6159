//! Tests for consoles with real processes (output, exit, stop, drop, bounds) and for their output buffer.

use std::time::Duration;

use super::{CONSOLE_MAX_LINES, ConsoleError, ConsoleProcess, ConsoleStatus};
use crate::panels::sources::console_output::ConsoleOutput;
use crate::panels::sources::test_support::{assert_group_gone, live_group_members};
use crate::tools::ToolEnvironment;
use crate::tools::process_groups::is_registered;

const GENEROUS: Duration = Duration::from_secs(30);

fn start(dir: &tempfile::TempDir, command: &str) -> ConsoleProcess {
    ConsoleProcess::start("test console", command, &ToolEnvironment::new(dir.path())).unwrap()
}

async fn wait(console: &ConsoleProcess) -> ConsoleStatus {
    tokio::time::timeout(GENEROUS, console.wait()).await.expect("the console did not exit in time")
}

/// Waits until the console's output satisfies `done`.
async fn wait_for_output(console: &ConsoleProcess, done: impl Fn(&str) -> bool) {
    let deadline = tokio::time::Instant::now() + GENEROUS;
    while !done(&console.output()) {
        assert!(tokio::time::Instant::now() < deadline, "output so far: {:?}", console.output());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn collects_output_in_order_and_reports_the_exit() {
    let dir = tempfile::tempdir().unwrap();
    let console = start(&dir, "echo hi; echo err >&2; sleep 0.2; echo done");
    assert_eq!(console.name(), "test console");
    assert_eq!(console.status(), ConsoleStatus::Running { pid: console.pid() });
    let exit = console.on_exit();
    assert_eq!(*exit.borrow(), None);

    let status = wait(&console).await;
    assert_eq!(status, ConsoleStatus::Exited { code: Some(0), signal: None });
    assert_eq!(console.status(), status);
    assert_eq!(*exit.borrow(), Some(status));
    assert_eq!(console.output(), "hi\nerr\ndone\n");
    // At least one change of the output and one of the status.
    assert!(console.version() >= 2, "version {}", console.version());
    assert!(!is_registered(console.pid() as i32));
}

#[tokio::test]
async fn the_version_grows_with_new_output() {
    let dir = tempfile::tempdir().unwrap();
    let console = start(&dir, "echo first; sleep 100");
    wait_for_output(&console, |out| out == "first\n").await;
    let seen = console.version();
    assert!(seen >= 1);
    console.stop();
    wait(&console).await;
    assert!(console.version() > seen, "the exit is a change");
}

#[tokio::test]
async fn a_failing_command_reports_its_code() {
    let dir = tempfile::tempdir().unwrap();
    let console = start(&dir, "echo oops; exit 7");
    assert_eq!(wait(&console).await, ConsoleStatus::Exited { code: Some(7), signal: None });
    assert_eq!(console.output(), "oops\n");
}

#[tokio::test]
async fn stop_ends_the_whole_group_with_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let console = start(&dir, "sleep 100 & sleep 100");
    let pgid = console.pid() as i32;
    assert!(is_registered(pgid));
    assert!(!live_group_members(pgid).is_empty());

    console.stop();
    assert_eq!(wait(&console).await, ConsoleStatus::Exited { code: None, signal: Some(libc::SIGTERM) });
    assert!(!is_registered(pgid));
    assert_group_gone(pgid).await;
}

#[tokio::test]
async fn stop_falls_back_to_sigkill_when_sigterm_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let console = start(&dir, "trap '' TERM; echo ready; sleep 100");
    wait_for_output(&console, |out| out == "ready\n").await;
    let pgid = console.pid() as i32;

    console.stop();
    assert_eq!(wait(&console).await, ConsoleStatus::Exited { code: None, signal: Some(libc::SIGKILL) });
    assert_group_gone(pgid).await;
}

#[tokio::test]
async fn dropping_the_console_kills_its_group() {
    let dir = tempfile::tempdir().unwrap();
    let console = start(&dir, "sleep 100 & sleep 100");
    let pgid = console.pid() as i32;
    assert!(!live_group_members(pgid).is_empty());

    drop(console);
    assert!(!is_registered(pgid));
    assert_group_gone(pgid).await;
}

#[tokio::test]
async fn background_leftovers_are_killed_when_the_command_exits() {
    let dir = tempfile::tempdir().unwrap();
    let console = start(&dir, "sleep 100 & echo started");
    let pgid = console.pid() as i32;
    assert_eq!(wait(&console).await, ConsoleStatus::Exited { code: Some(0), signal: None });
    assert_eq!(console.output(), "started\n");
    assert_group_gone(pgid).await;
}

#[tokio::test]
async fn the_output_keeps_only_the_last_lines() {
    let dir = tempfile::tempdir().unwrap();
    let console = start(&dir, "seq 1 3000");
    wait(&console).await;
    let output = console.output();
    let lines: Vec<&str> = output.lines().collect();
    assert_eq!(lines[0], "[… 2500 earlier lines dropped]");
    assert_eq!(lines[1], "2501");
    assert_eq!(lines.last(), Some(&"3000"));
    assert_eq!(lines.len(), CONSOLE_MAX_LINES + 1);
}

#[tokio::test]
async fn a_missing_working_directory_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let env = ToolEnvironment::new(dir.path().join("missing"));
    let err = ConsoleProcess::start("x", "echo hi", &env).unwrap_err();
    assert!(matches!(err, ConsoleError::MissingWorkingDirectory(_)), "{err:?}");
}

#[test]
fn starting_outside_a_runtime_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = ConsoleProcess::start("x", "echo hi", &ToolEnvironment::new(dir.path())).unwrap_err();
    assert!(matches!(err, ConsoleError::NoRuntime), "{err:?}");
}

#[test]
fn the_buffer_joins_chunks_split_mid_line() {
    let mut output = ConsoleOutput::new(10, 1000);
    output.push(b"hel");
    assert_eq!(output.text(), "hel");
    output.push(b"lo\nwor");
    output.push(b"ld\n");
    assert_eq!(output.text(), "hello\nworld\n");
    assert!(!output.text().contains("dropped"));
}

#[test]
fn the_buffer_drops_whole_old_lines_by_count_and_by_bytes() {
    let mut by_count = ConsoleOutput::new(3, 1000);
    by_count.push(b"1\n2\n3\n4\n5\n");
    assert_eq!(by_count.text(), "[… 2 earlier lines dropped]\n3\n4\n5\n");
    // The unfinished line counts as a line.
    by_count.push(b"6");
    assert_eq!(by_count.text(), "[… 3 earlier lines dropped]\n4\n5\n6");

    // Lines of 10 bytes with their newline; 25 bytes keep two.
    let mut by_bytes = ConsoleOutput::new(100, 25);
    by_bytes.push(b"aaaaaaaaa\nbbbbbbbbb\nccccccccc\n");
    assert_eq!(by_bytes.text(), "[… 1 earlier lines dropped]\nbbbbbbbbb\nccccccccc\n");
}

#[test]
fn the_buffer_keeps_the_tail_of_a_line_that_never_ends() {
    let mut output = ConsoleOutput::new(100, 8);
    output.push(b"old\n");
    output.push(b"0123456789abcdef");
    assert_eq!(output.text(), "[… 1 earlier lines dropped]\n89abcdef");
}

#[test]
fn carriage_returns_keep_what_a_terminal_would_show() {
    let mut output = ConsoleOutput::new(100, 1000);
    output.push(b"progress 10%\rprogress 50%\rprogress 100%\nwindows line\r\n");
    output.push(b"spinner -\rspinner \\");
    assert_eq!(output.text(), "progress 100%\nwindows line\nspinner \\");
    // Invalid UTF-8 is shown replaced, not dropped.
    output.push(b"\n\xffok\n");
    assert!(output.text().ends_with("\u{fffd}ok\n"), "{:?}", output.text());
}
