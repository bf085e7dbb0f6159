//! Values in models.json and auth.json that may be a literal, the name of an environment variable,
//! or `!command` (run by `sh -c` in its own process group with a 10 s limit, after which the group is killed;
//! trimmed output, cached for the process).

use std::collections::HashMap;
use std::io::Read;
use std::os::unix::process::CommandExt as _;
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Looks an environment variable up. Production passes [`process_env`]; tests pass a closure over
/// a map, so they never touch the real environment.
pub type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The process environment; empty values count as unset (as pi treats them).
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.is_empty())
}

/// How long a `!command` may run.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a `!command` gave no value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CommandFailure {
    /// It exited with a non-zero status, could not start, or printed nothing.
    #[error("failed or printed nothing")]
    Failed,
    /// It was still running (or its output was still open) when the limit passed; its process group was killed.
    #[error("did not finish within {} s; it was stopped", seconds(*.0))]
    TimedOut(Duration),
}

/// `10`, `0.2`: a limit in seconds as people write it.
pub(super) fn seconds(limit: Duration) -> String {
    let secs = limit.as_secs_f64();
    if secs.fract() == 0.0 { format!("{secs:.0}") } else { format!("{secs}") }
}

/// Resolves `raw`: `!command` runs the command and takes its trimmed output (`None` when it fails,
/// times out or prints nothing); otherwise the value of the environment variable named `raw` if it
/// is set, else `raw` itself.
pub fn resolve_config_value(raw: &str, env: EnvLookup<'_>) -> Option<String> {
    try_resolve_config_value(raw, env).ok().flatten()
}

/// [`resolve_config_value`] that says why a `!command` gave nothing.
pub fn try_resolve_config_value(raw: &str, env: EnvLookup<'_>) -> Result<Option<String>, CommandFailure> {
    if let Some(command) = raw.strip_prefix('!') {
        return run_command_cached(command).map(Some);
    }
    Ok(match env(raw) {
        Some(value) if !value.is_empty() => Some(value),
        _ if raw.is_empty() => None,
        _ => Some(raw.to_owned()),
    })
}

fn run_command_cached(command: &str) -> Result<String, CommandFailure> {
    static CACHE: OnceLock<Mutex<HashMap<String, Result<String, CommandFailure>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(cached) = cache.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).get(command) {
        return cached.clone();
    }
    let value = run_command(command, COMMAND_TIMEOUT);
    cache.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).insert(command.to_owned(), value.clone());
    value
}

/// Runs `command` with `sh -c` in a process group of its own, stdin closed and stderr discarded; its trimmed
/// stdout if it exits with status 0 within `timeout` and prints something. When the limit passes first (the
/// command still runs, or processes it started still hold its output open), the whole group is killed.
pub fn run_command(command: &str, timeout: Duration) -> Result<String, CommandFailure> {
    let mut child = Command::new("/bin/sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|_| CommandFailure::Failed)?;
    let group = ProcessGroup(child.id());
    // Read on a thread so a chatty command cannot block on a full pipe while we wait.
    let Some(mut stdout) = child.stdout.take() else {
        group.kill();
        let _ = child.wait();
        return Err(CommandFailure::Failed);
    };
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stdout.read_to_end(&mut bytes);
        let _ = sender.send(bytes);
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                group.kill();
                let _ = child.wait();
                return Err(CommandFailure::TimedOut(timeout));
            }
            Err(_) => {
                group.kill();
                let _ = child.wait();
                return Err(CommandFailure::Failed);
            }
        }
    };
    let Ok(bytes) = receiver.recv_timeout(deadline.saturating_duration_since(Instant::now())) else {
        // The shell is done but what it started in the background still holds the output.
        group.kill();
        return Err(CommandFailure::TimedOut(timeout));
    };
    let value = String::from_utf8_lossy(&bytes).trim().to_owned();
    if status.success() && !value.is_empty() { Ok(value) } else { Err(CommandFailure::Failed) }
}

/// The process group a command was started in (its id is the shell's pid).
struct ProcessGroup(u32);

impl ProcessGroup {
    fn kill(&self) {
        if let Ok(pgid) = i32::try_from(self.0) {
            crate::tools::process_groups::kill_group(pgid);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        (name == "PI_GEN_TEST_KEY_VAR").then(|| "from-env".to_owned())
    }

    #[test]
    fn literal_env_name_and_command() {
        assert_eq!(resolve_config_value("PI_GEN_TEST_KEY_VAR", &env).as_deref(), Some("from-env"));
        assert_eq!(resolve_config_value("sk-literal", &env).as_deref(), Some("sk-literal"));
        assert_eq!(resolve_config_value("", &env), None);
        assert_eq!(resolve_config_value("!printf '  out \\n'", &env).as_deref(), Some("out"));
    }

    #[test]
    fn failing_silent_or_slow_commands_give_nothing() {
        assert_eq!(resolve_config_value("!exit 3", &env), None);
        assert_eq!(resolve_config_value("!true", &env), None);
        assert_eq!(try_resolve_config_value("!exit 3", &env), Err(CommandFailure::Failed));
        let started = Instant::now();
        let limit = Duration::from_millis(200);
        assert_eq!(run_command("sleep 5; echo late", limit), Err(CommandFailure::TimedOut(limit)));
        assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
        assert_eq!(CommandFailure::TimedOut(limit).to_string(), "did not finish within 0.2 s; it was stopped");
        assert_eq!(CommandFailure::TimedOut(COMMAND_TIMEOUT).to_string(), "did not finish within 10 s; it was stopped");
    }

    /// Whether process `pid` still runs (a zombie waiting for its parent to reap it does not).
    fn running(pid: i32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| stat.rsplit_once(") ").map(|(_, rest)| !rest.starts_with('Z')))
            .unwrap_or(false)
    }

    #[test]
    fn a_timed_out_command_is_killed_with_everything_it_started() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pids = dir.path().join("pids");
        // The shell, a background grandchild and a foreground one, each writing its pid.
        let command = format!(
            "echo $$ > '{0}'; sh -c 'sleep 1000 & echo $! >> \"$1\"; sleep 1000' sh '{0}' & echo $! >> '{0}'; wait",
            pids.display()
        );
        let limit = Duration::from_millis(500);
        assert_eq!(run_command(&command, limit), Err(CommandFailure::TimedOut(limit)));
        let pids: Vec<i32> = std::fs::read_to_string(&pids)
            .expect("the command wrote its pids")
            .lines()
            .map(|line| line.trim().parse().expect("a pid"))
            .collect();
        assert_eq!(pids.len(), 3, "{pids:?}");
        let deadline = Instant::now() + Duration::from_secs(5);
        while pids.iter().any(|pid| running(*pid)) {
            let left: Vec<&i32> = pids.iter().filter(|pid| running(**pid)).collect();
            assert!(Instant::now() < deadline, "still running after the timeout: {left:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn background_processes_holding_the_output_past_the_limit_are_stopped_too() {
        let limit = Duration::from_millis(300);
        let started = Instant::now();
        assert_eq!(run_command("sleep 1000 & echo key", limit), Err(CommandFailure::TimedOut(limit)));
        assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    }

    #[test]
    fn commands_run_once_per_process() {
        let dir = tempfile::tempdir().expect("tempdir");
        let counter = dir.path().join("runs");
        let command = format!("!echo x >> '{}'; echo cached-value", counter.display());
        assert_eq!(resolve_config_value(&command, &env).as_deref(), Some("cached-value"));
        assert_eq!(resolve_config_value(&command, &env).as_deref(), Some("cached-value"));
        let runs = std::fs::read_to_string(&counter).expect("ran");
        assert_eq!(runs.lines().count(), 1);
    }

    #[test]
    fn large_output_does_not_block() {
        let value = run_command("head -c 200000 /dev/zero | tr '\\0' a", COMMAND_TIMEOUT).expect("output");
        assert_eq!(value.len(), 200_000);
    }
}
