//! Values in models.json and auth.json that may be a literal, the name of an environment variable,
//! or `!command` (run by `sh -c` with a 10 s limit, trimmed output, cached for the process).

use std::collections::HashMap;
use std::io::Read;
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

/// Resolves `raw`: `!command` runs the command and takes its trimmed output (`None` when it fails,
/// times out or prints nothing); otherwise the value of the environment variable named `raw` if it
/// is set, else `raw` itself.
pub fn resolve_config_value(raw: &str, env: EnvLookup<'_>) -> Option<String> {
    if let Some(command) = raw.strip_prefix('!') {
        return run_command_cached(command);
    }
    match env(raw) {
        Some(value) if !value.is_empty() => Some(value),
        _ if raw.is_empty() => None,
        _ => Some(raw.to_owned()),
    }
}

/// Whether `raw` is a `!command` (its failure is reported differently from a missing value).
pub fn is_command(raw: &str) -> bool {
    raw.starts_with('!')
}

fn run_command_cached(command: &str) -> Option<String> {
    static CACHE: OnceLock<Mutex<HashMap<String, Option<String>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(cached) = cache.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).get(command) {
        return cached.clone();
    }
    let value = run_command(command, COMMAND_TIMEOUT);
    cache.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).insert(command.to_owned(), value.clone());
    value
}

/// Runs `command` with `sh -c`, stdin closed and stderr discarded; its trimmed stdout if it exits
/// with status 0 within `timeout` and prints something.
pub fn run_command(command: &str, timeout: Duration) -> Option<String> {
    let mut child = Command::new("/bin/sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    // Read on a thread so a chatty command cannot block on a full pipe while we wait.
    let mut stdout = child.stdout.take()?;
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
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    };
    let bytes = receiver.recv_timeout(deadline.saturating_duration_since(Instant::now())).ok()?;
    let value = String::from_utf8_lossy(&bytes).trim().to_owned();
    (status.success() && !value.is_empty()).then_some(value)
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
        let started = Instant::now();
        assert_eq!(run_command("sleep 5; echo late", Duration::from_millis(200)), None);
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
