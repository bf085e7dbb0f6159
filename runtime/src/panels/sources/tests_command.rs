//! Tests for command panels with real processes: merged output, exit codes, timeouts, truncation, staleness.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::{CommandPanel, run_panel_command};
use crate::panels::CommandPanelDefinition;
use crate::panels::sources::test_support::assert_group_gone;
use crate::tools::ToolEnvironment;

const GENEROUS: Duration = Duration::from_secs(30);

async fn run(dir: &tempfile::TempDir, command: &str) -> super::CommandPanelOutput {
    run_panel_command(command, &ToolEnvironment::new(dir.path()), GENEROUS, CancellationToken::new()).await
}

#[tokio::test]
async fn stdout_and_stderr_are_merged_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(&dir, "echo out; echo err >&2; echo out2").await;
    assert_eq!(out.text, "out\nerr\nout2");
    assert_eq!(out.exit_code, Some(0));
    assert!(!out.timed_out && !out.cancelled);
}

#[tokio::test]
async fn runs_in_the_working_directory_with_the_command_prefix() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("marker.txt"), "").unwrap();
    let mut env = ToolEnvironment::new(dir.path());
    env.command_prefix = Some("GREETING=hello".to_owned());
    let out = run_panel_command("echo $GREETING; ls", &env, GENEROUS, CancellationToken::new()).await;
    assert_eq!(out.text, "hello\nmarker.txt");
}

#[tokio::test]
async fn a_failure_notes_the_exit_code_and_no_output_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(&dir, "echo partial; exit 3").await;
    assert_eq!(out.text, "partial\n[exit code 3]");
    assert_eq!(out.exit_code, Some(3));

    assert_eq!(run(&dir, "true").await.text, "(no output)");
    assert_eq!(run(&dir, "exit 2").await.text, "[exit code 2]");
}

#[tokio::test]
async fn a_timeout_stops_the_whole_group_and_keeps_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let env = ToolEnvironment::new(dir.path());
    let command = "echo $$; sleep 100 & sleep 100";
    let out = run_panel_command(command, &env, Duration::from_secs(1), CancellationToken::new()).await;
    assert!(out.timed_out);
    assert_eq!(out.exit_code, None);
    let (pgid, note) = out.text.split_once('\n').unwrap();
    assert_eq!(note, "[stopped after 1 s]");
    assert_group_gone(pgid.parse().unwrap()).await;
}

#[tokio::test]
async fn a_cancelled_run_is_marked_and_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let out = run_panel_command("sleep 100", &ToolEnvironment::new(dir.path()), GENEROUS, cancel).await;
    assert!(out.cancelled);
    assert!(out.text.ends_with("[cancelled]"), "{}", out.text);
}

#[tokio::test]
async fn long_output_keeps_its_tail_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(&dir, "seq 1 5000").await;
    let lines: Vec<&str> = out.text.lines().collect();
    assert_eq!(lines[0], "[showing the last 1999 of 5000 lines]");
    assert_eq!(lines[1], "3002");
    assert_eq!(lines.last(), Some(&"5000"));
    assert_eq!(lines.len(), 2000);
}

#[tokio::test]
async fn a_missing_working_directory_is_reported_in_the_text() {
    let dir = tempfile::tempdir().unwrap();
    let env = ToolEnvironment::new(dir.path().join("missing"));
    let out = run_panel_command("echo hi", &env, GENEROUS, CancellationToken::new()).await;
    assert!(out.text.starts_with("[could not run the command: "), "{}", out.text);
    assert_eq!(out.exit_code, None);
}

#[tokio::test]
async fn a_command_panel_is_stale_until_run_and_again_after_its_interval() {
    let dir = tempfile::tempdir().unwrap();
    let env = ToolEnvironment::new(dir.path());
    std::fs::write(dir.path().join("status.txt"), "green\n").unwrap();
    let definition = CommandPanelDefinition {
        name: "Status".to_owned(),
        command: "cat status.txt".to_owned(),
        refresh_secs: 60,
        timeout_secs: 30,
    };
    let mut panel = CommandPanel::from_definition(&definition);
    assert_eq!(panel.name, "Status");
    assert!(panel.is_stale(0));
    assert_eq!(panel.last_run_ms(), None);

    assert!(panel.refresh(&env, CancellationToken::new(), 10_000).await);
    assert_eq!(panel.content(), "green");
    assert_eq!(panel.last_run_ms(), Some(10_000));
    assert!(!panel.is_stale(10_000 + 59_999));
    assert!(panel.is_stale(10_000 + 60_000));
    assert!(panel.is_stale(9_000), "a clock that went back");

    assert!(!panel.refresh(&env, CancellationToken::new(), 70_000).await, "same output");
    assert_eq!(panel.last_run_ms(), Some(70_000));

    std::fs::write(dir.path().join("status.txt"), "red\n").unwrap();
    assert!(panel.refresh(&env, CancellationToken::new(), 130_000).await);
    assert_eq!(panel.content(), "red");

    let cancelled = CancellationToken::new();
    cancelled.cancel();
    std::fs::write(dir.path().join("status.txt"), "blue\n").unwrap();
    assert!(!panel.refresh(&env, cancelled, 190_000).await, "a cancelled run changes nothing");
    assert_eq!(panel.content(), "red");
    assert_eq!(panel.last_run_ms(), Some(130_000));
}
