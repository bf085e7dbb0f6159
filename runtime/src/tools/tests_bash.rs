//! Tests for the bash tool with real processes: output order, exit codes, timeouts, aborts, truncation.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;

use super::{AgentTool, ToolContext, ToolEnvironment, ToolError, builtin_tool};
use crate::protocol::AgentToolResult;

fn tool(dir: &TempDir) -> Arc<dyn AgentTool> {
    builtin_tool("bash", &ToolEnvironment::new(dir.path())).unwrap()
}

async fn run(dir: &TempDir, args: Value) -> Result<AgentToolResult, ToolError> {
    tool(dir).execute(args, ToolContext::new("call-1")).await
}

fn text(result: &AgentToolResult) -> &str {
    result.content[0].as_text().unwrap()
}

/// Whether `pid` is gone (or only a zombie waiting to be reaped).
fn process_is_dead(pid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    let exists = unsafe { libc::kill(pid, 0) } == 0;
    if !exists {
        return true;
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z'))
}

async fn wait_dead(pid: i32) -> bool {
    for _ in 0..50 {
        if process_is_dead(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

#[tokio::test]
async fn echo_returns_output_and_streams_updates() {
    let dir = TempDir::new().unwrap();
    let updates: Arc<Mutex<Vec<AgentToolResult>>> = Arc::default();
    let sink = updates.clone();
    let mut ctx = ToolContext::new("call-1");
    ctx.on_update = Some(Arc::new(move |partial| sink.lock().unwrap().push(partial)));
    let result = tool(&dir).execute(json!({"command": "echo hi"}), ctx).await.unwrap();
    assert_eq!(text(&result), "hi\n");
    assert_eq!(result.details, None);
    let updates = updates.lock().unwrap();
    assert!(updates.len() >= 2, "{updates:?}");
    assert!(updates[0].content.is_empty());
    assert_eq!(updates.last().unwrap().content[0].as_text(), Some("hi\n"));
}

#[tokio::test]
async fn stdout_and_stderr_are_merged_in_order() {
    let dir = TempDir::new().unwrap();
    let cmd = "echo one; echo two >&2; echo three; echo four >&2";
    let result = run(&dir, json!({"command": cmd})).await.unwrap();
    assert_eq!(text(&result), "one\ntwo\nthree\nfour\n");
}

#[tokio::test]
async fn runs_in_the_tool_cwd() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("marker.txt"), "").unwrap();
    let result = run(&dir, json!({"command": "ls"})).await.unwrap();
    assert_eq!(text(&result), "marker.txt\n");
}

#[tokio::test]
async fn empty_output_says_so() {
    let dir = TempDir::new().unwrap();
    assert_eq!(text(&run(&dir, json!({"command": "true"})).await.unwrap()), "(no output)");
}

#[tokio::test]
async fn non_zero_exit_is_an_error_with_the_output() {
    let dir = TempDir::new().unwrap();
    let err = run(&dir, json!({"command": "echo oops; exit 3"})).await.unwrap_err();
    assert_eq!(err.message, "oops\n\n\nCommand exited with code 3");
    let err = run(&dir, json!({"command": "exit 1"})).await.unwrap_err();
    assert_eq!(err.message, "(no output)\n\nCommand exited with code 1");
    let fine = run(&dir, json!({"command": "echo fine"})).await.unwrap();
    assert_eq!(fine.structured_content, None, "pi 0.73 has no record");
}

#[tokio::test]
async fn at_pi_1_5_a_non_zero_exit_is_a_flagged_result_with_the_output_and_the_record() {
    let dir = TempDir::new().unwrap();
    let mut env = ToolEnvironment::new(dir.path());
    env.pi_compat = crate::protocol::PiCompat::V1_5;
    let failed = run_in(env.clone(), "echo oops; exit 3").await.unwrap();
    assert_eq!(failed.is_error, Some(true));
    assert_eq!(text(&failed), "oops\n\n\nCommand exited with code 3");
    let record = failed.structured_content.unwrap();
    assert_eq!(
        (&record["output"], &record["exit_code"], &record["truncated"]),
        (&json!("oops\n"), &json!(3), &json!(false))
    );
    let silent = run_in(env.clone(), "exit 1").await.unwrap();
    assert_eq!(text(&silent), "(no output)\n\nCommand exited with code 1");
    let fine = run_in(env, "echo fine").await.unwrap();
    assert_eq!((fine.is_error, &fine.structured_content.unwrap()["exit_code"]), (None, &json!(0)));
}

#[tokio::test]
async fn timeout_kills_the_whole_process_group() {
    let dir = TempDir::new().unwrap();
    let started = Instant::now();
    let cmd = "sleep 30 & echo $! > bg.pid; sleep 30";
    let err = run(&dir, json!({"command": cmd, "timeout": 1})).await.unwrap_err();
    assert_eq!(err.message, "Command timed out after 1 seconds");
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
    let pid: i32 = std::fs::read_to_string(dir.path().join("bg.pid")).unwrap().trim().parse().unwrap();
    assert!(wait_dead(pid).await, "background sleep {pid} survived the timeout");
}

#[tokio::test]
async fn timeout_keeps_output_before_the_notice() {
    let dir = TempDir::new().unwrap();
    let err = run(&dir, json!({"command": "echo before; sleep 30", "timeout": 0.5})).await.unwrap_err();
    assert_eq!(err.message, "before\n\n\nCommand timed out after 0.5 seconds");
}

#[tokio::test]
async fn abort_kills_the_command() {
    let dir = TempDir::new().unwrap();
    let ctx = ToolContext::new("call-1");
    let cancel = ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    });
    let started = Instant::now();
    let cmd = "sleep 30 & echo $! > bg.pid; sleep 30";
    let err = tool(&dir).execute(json!({"command": cmd}), ctx).await.unwrap_err();
    assert_eq!(err.message, "Command aborted");
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
    let pid: i32 = std::fs::read_to_string(dir.path().join("bg.pid")).unwrap().trim().parse().unwrap();
    assert!(wait_dead(pid).await, "background sleep {pid} survived the abort");
}

#[tokio::test]
async fn already_cancelled_context_aborts() {
    let dir = TempDir::new().unwrap();
    let ctx = ToolContext::new("call-1");
    ctx.cancel.cancel();
    let err = tool(&dir).execute(json!({"command": "touch ran.txt; sleep 5"}), ctx).await.unwrap_err();
    assert_eq!(err.message, "Command aborted");
    assert!(!dir.path().join("ran.txt").exists(), "the command ran although the call was already aborted");
}

#[tokio::test]
async fn background_child_holding_the_pipe_does_not_hang() {
    let dir = TempDir::new().unwrap();
    let started = Instant::now();
    let result = run(&dir, json!({"command": "sleep 20 & echo $! > bg.pid; echo done"})).await.unwrap();
    assert_eq!(text(&result), "done\n");
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
    let pid: i32 = std::fs::read_to_string(dir.path().join("bg.pid")).unwrap().trim().parse().unwrap();
    // SAFETY: kill(2) on the background sleep we started; it is not needed any more.
    unsafe { libc::kill(pid, libc::SIGKILL) };
}

#[tokio::test]
async fn long_output_is_tail_truncated_by_lines_with_full_output_file() {
    let dir = TempDir::new().unwrap();
    let result = run(&dir, json!({"command": "seq 1 2500"})).await.unwrap();
    let out = text(&result);
    assert!(out.starts_with("502\n503\n"), "{}", &out[..20]);
    let (body, notice) = out.rsplit_once("\n\n").unwrap();
    assert!(body.ends_with("2499\n2500\n"));
    let prefix = "[Showing lines 502-2501 of 2501. Full output: ";
    assert!(notice.starts_with(prefix), "{notice}");
    let path = notice.strip_prefix(prefix).unwrap().strip_suffix(']').unwrap();
    assert!(path.contains("pi-bash-") && path.ends_with(".log"), "{path}");
    let full = std::fs::read_to_string(path).unwrap();
    assert_eq!(full.lines().count(), 2500);
    let details = result.details.clone().unwrap();
    assert_eq!(details["fullOutputPath"], path);
    assert_eq!(details["truncation"]["truncatedBy"], "lines");
    let _ = std::fs::remove_file(path);
}

#[tokio::test]
async fn huge_output_is_cut_by_bytes_and_counted_whole() {
    let dir = TempDir::new().unwrap();
    // 30000 lines of 41 bytes: far over the byte limit, so only the recent part stays in memory.
    let result = run(&dir, json!({"command": "seq -f '%040g' 1 30000"})).await.unwrap();
    let out = text(&result);
    let (body, notice) = out.rsplit_once("\n\n").unwrap();
    assert!(body.ends_with(&format!("{:040}\n{:040}\n", 29999, 30000)));
    assert!(body.len() <= 51_200 && body.len() > 51_200 - 41, "{}", body.len());
    assert!(notice.contains("-30001 of 30001 (50.0KB limit). Full output: "), "{notice}");
    let path = notice.rsplit_once("Full output: ").unwrap().1.strip_suffix(']').unwrap();
    let expected: String = (1..=30000).map(|i| format!("{i:040}\n")).collect();
    assert_eq!(std::fs::read_to_string(path).unwrap(), expected);
    let _ = std::fs::remove_file(path);
}

#[tokio::test]
async fn single_huge_line_shows_its_tail() {
    let dir = TempDir::new().unwrap();
    let cmd = "head -c 100000 /dev/zero | tr '\\0' a";
    let result = run(&dir, json!({"command": cmd})).await.unwrap();
    let out = text(&result);
    let (body, notice) = out.rsplit_once("\n\n").unwrap();
    assert_eq!(body.len(), 51_200);
    assert!(notice.starts_with("[Showing last 50.0KB of line 1 (line is 97.7KB). Full output: "), "{notice}");
    let path = notice.rsplit_once("Full output: ").unwrap().1.strip_suffix(']').unwrap();
    let _ = std::fs::remove_file(path);
}

#[tokio::test]
async fn missing_working_directory_is_reported() {
    let dir = TempDir::new().unwrap();
    let gone = dir.path().join("gone");
    let bash = builtin_tool("bash", &ToolEnvironment::new(&gone)).unwrap();
    let err = bash.execute(json!({"command": "echo hi"}), ToolContext::new("c")).await.unwrap_err();
    assert_eq!(
        err.message,
        format!("Working directory does not exist: {}\nCannot execute bash commands.", gone.display())
    );
}

async fn run_in(env: ToolEnvironment, command: &str) -> Result<AgentToolResult, ToolError> {
    builtin_tool("bash", &env).unwrap().execute(json!({"command": command}), ToolContext::new("call-1")).await
}

#[tokio::test]
async fn the_configured_shell_runs_the_command() {
    let dir = TempDir::new().unwrap();
    let mut env = ToolEnvironment::new(dir.path());
    assert_eq!(text(&run_in(env.clone(), "echo $0").await.unwrap()), "/bin/bash\n");
    env.shell_path = Some("/bin/sh".into());
    assert_eq!(text(&run_in(env, "echo $0").await.unwrap()), "/bin/sh\n");
}

#[tokio::test]
async fn a_configured_shell_that_does_not_exist_is_reported() {
    let dir = TempDir::new().unwrap();
    let mut env = ToolEnvironment::new(dir.path());
    env.shell_path = Some(dir.path().join("no-such-shell"));
    let err = run_in(env, "echo hi").await.unwrap_err();
    assert!(err.message.contains("shellPath") && err.message.contains("no-such-shell"), "{}", err.message);
}

#[tokio::test]
async fn the_command_prefix_runs_first_in_the_same_shell() {
    let dir = TempDir::new().unwrap();
    let mut env = ToolEnvironment::new(dir.path());
    env.command_prefix = Some("GREETING=from-prefix\nset -e".into());
    let result = run_in(env, "echo $GREETING; false; echo unreachable").await.unwrap_err();
    assert_eq!(result.message, "from-prefix\n\n\nCommand exited with code 1");
}

#[tokio::test]
async fn the_bin_dir_comes_first_on_path() {
    let dir = TempDir::new().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let script = bin.join("ls");
    std::fs::write(&script, "#!/bin/sh\necho shadowed ls\n").unwrap();
    let mut permissions = std::fs::metadata(&script).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&script, permissions).unwrap();
    let mut env = ToolEnvironment::new(dir.path());
    env.bin_dir = Some(bin);
    assert_eq!(text(&run_in(env, "ls").await.unwrap()), "shadowed ls\n");
}
