//! No command outlives the agent: a bash tool's `sleep 1003` (and the shell running it) is gone once the agent
//! has exited, however it exits — print and json mode on SIGTERM, SIGINT or SIGHUP; RPC mode when stdin closes
//! or on a signal; interactive mode (in a real pseudo-terminal) on Ctrl+D, Ctrl+C twice, SIGTERM or SIGHUP, and
//! also with the person's own `!sleep 1003` running.

use std::path::Path;
use std::time::{Duration, Instant};

use pi_gen_tests::{PtyAgent, RpcClient, keys};

use super::*;

/// The model runs a bash tool whose shell writes its pid, starts `sleep 1003` in the background, writes that
/// pid and waits for it; then it would answer.
const SLEEPING_TOOL: &str = r#"{"responses": [
    {"toolCalls": [{"id": "call_1", "name": "bash",
        "arguments": {"command": "echo $$ > shell.pid; sleep 1003 & echo $! > sleeper.pid; wait"}}]},
    {"text": "The sleep ended."}
]}"#;

/// Whether process `pid` still runs (a zombie waiting to be reaped does not).
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| stat.rsplit_once(") ").map(|(_, rest)| !rest.starts_with('Z')))
        .unwrap_or(false)
}

/// The processes a test started through the agent; killed when the test ends, so a failing test leaves no
/// `sleep 1003` behind.
struct Started(Vec<i32>);

impl Started {
    /// Waits until the tool's shell and its sleeper have written their pids into `dir`.
    async fn wait_for(dir: &Path) -> Self {
        let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok()?.trim().parse::<i32>().ok();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let (Some(shell), Some(sleeper)) = (read("shell.pid"), read("sleeper.pid")) {
                return Self(vec![shell, sleeper]);
            }
            assert!(Instant::now() < deadline, "the tool never started its sleep");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Fails unless every process is gone within a few seconds of the agent's exit.
    async fn assert_gone(&self, how: &str) {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let alive: Vec<i32> = self.0.iter().copied().filter(|pid| running(*pid)).collect();
            if alive.is_empty() {
                return;
            }
            assert!(Instant::now() < deadline, "{how}: processes {alive:?} outlived the agent");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        for pid in &self.0 {
            if running(*pid) {
                // SAFETY: kill(2) on a process this test started through the agent; no memory is involved.
                unsafe {
                    libc::kill(*pid, libc::SIGKILL);
                }
            }
        }
    }
}

fn signal(pid: Option<u32>, signal: i32) {
    let pid = pid.expect("the agent runs") as i32;
    // SAFETY: kill(2) on the agent this test started; no memory is involved.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0, "the signal is delivered");
}

#[tokio::test(flavor = "multi_thread")]
async fn print_and_json_mode_leave_no_child_after_a_signal() {
    let binary = agent_binary("pi");
    for (mode, sent, code) in [
        ("-p", libc::SIGTERM, 143),
        ("-p", libc::SIGHUP, 129),
        ("--mode json", libc::SIGINT, 130),
        ("--mode json", libc::SIGHUP, 129),
    ] {
        let mock = server(SLEEPING_TOOL).await;
        let sandbox = Sandbox::new(&mock.base_url());
        let args: Vec<&str> = mode.split(' ').chain(["sleep please"]).collect();
        let child = sandbox.spawn(&binary, &[&MODEL_ARGS[..], &args].concat());
        let started = Started::wait_for(&sandbox.work_dir()).await;
        signal(child.id(), sent);
        let output = tokio::time::timeout(Duration::from_secs(15), child.wait_with_output())
            .await
            .expect("the agent exits soon after the signal")
            .expect("wait");
        started.assert_gone(&format!("{mode}, signal {sent}")).await;
        assert_eq!(output.status.code(), Some(code), "{mode} {sent}: {}", stderr(&output));
    }
}

/// An RPC agent with a prompt whose bash tool is sleeping.
async fn rpc_with_sleeping_tool(sandbox: &Sandbox) -> (RpcClient, Started) {
    let mut rpc = sandbox.spawn_rpc(&agent_binary("pi"), &MODEL_ARGS);
    let reply = rpc.call("1", serde_json::json!({"type": "prompt", "message": "sleep please"})).await;
    assert_eq!(reply["success"], true, "{reply}");
    let started = Started::wait_for(&sandbox.work_dir()).await;
    (rpc, started)
}

#[tokio::test(flavor = "multi_thread")]
async fn rpc_mode_leaves_no_child_when_stdin_closes_or_on_a_signal() {
    let mock = server(SLEEPING_TOOL).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let (rpc, started) = rpc_with_sleeping_tool(&sandbox).await;
    let (code, rest) = rpc.close().await;
    assert_eq!(code, Some(0));
    assert!(rest.iter().any(|line| line["type"] == "agent_end"), "the aborted run ended: {rest:#?}");
    started.assert_gone("rpc, stdin closed").await;

    for (sent, code) in [(libc::SIGTERM, 143), (libc::SIGINT, 130), (libc::SIGHUP, 129)] {
        let mock = server(SLEEPING_TOOL).await;
        let sandbox = Sandbox::new(&mock.base_url());
        let (rpc, started) = rpc_with_sleeping_tool(&sandbox).await;
        signal(rpc.pid(), sent);
        let (exit, rest) = rpc.wait_exit().await;
        started.assert_gone(&format!("rpc, signal {sent}")).await;
        assert_eq!(exit, Some(code), "rpc, signal {sent}");
        assert!(rest.iter().any(|line| line["type"] == "agent_end"), "signal {sent}: the run ended: {rest:#?}");
    }
}

/// An interactive agent whose prompt's bash tool is sleeping.
async fn interactive_with_sleeping_tool(sandbox: &Sandbox) -> (PtyAgent, Started) {
    let mut agent = sandbox.spawn_pty(&agent_binary("pi"), &MODEL_ARGS, 30, 100);
    agent.wait_for_text("%/");
    agent.type_text("sleep please");
    agent.wait_for_text("sleep please");
    agent.send(keys::ENTER);
    let started = Started::wait_for(&sandbox.work_dir()).await;
    (agent, started)
}

#[tokio::test(flavor = "multi_thread")]
async fn interactive_mode_leaves_no_child_when_it_quits() {
    for (how, code) in [("ctrl+d", 0), ("ctrl+c twice", 0), ("SIGTERM", 143), ("SIGHUP", 129)] {
        let mock = server(SLEEPING_TOOL).await;
        let sandbox = Sandbox::new(&mock.base_url());
        let (mut agent, started) = interactive_with_sleeping_tool(&sandbox).await;
        match how {
            "ctrl+d" => agent.send(keys::CTRL_D),
            "ctrl+c twice" => agent.send(&keys::CTRL_C.repeat(2)),
            "SIGTERM" => signal(agent.pid(), libc::SIGTERM),
            _ => signal(agent.pid(), libc::SIGHUP),
        }
        let exit = agent.wait_exit();
        started.assert_gone(&format!("interactive, {how}")).await;
        assert_eq!(exit, code, "{how}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn interactive_mode_quits_while_the_persons_own_command_runs_and_stops_it() {
    let mock = server(r#"{"responses": []}"#).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let mut agent = sandbox.spawn_pty(&agent_binary("pi"), &MODEL_ARGS, 30, 100);
    agent.wait_for_text("%/");
    agent.type_text("!echo $$ > shell.pid; sleep 1003 & echo $! > sleeper.pid; wait");
    agent.send(keys::ENTER);
    let started = Started::wait_for(&sandbox.work_dir()).await;
    agent.send(keys::CTRL_D);
    assert_eq!(agent.wait_exit(), 0, "Ctrl+D quits even while the command runs");
    started.assert_gone("interactive, the person's command").await;
}
