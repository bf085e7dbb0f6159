//! A crash loop: the generated pi agent continues the same session again and again (`-c -p "prompt N"`, the
//! model answering with tool calls and then a long text, so every run appends several entries) and is killed
//! with SIGKILL at a random moment of each run, or right as the session file grows. After every kill:
//!
//! - the session file (one per chain of runs) is whole lines of JSON, except at most a torn last line;
//! - every line that was complete after the previous kill is still there, unchanged and in order (so no
//!   entry an earlier run finished is lost, and nothing rewrote the file);
//! - pi-runtime's loader reads it, skipping at most that torn line.
//!
//! At the end of each chain a run that is not killed continues the file with `--session FILE` and sends the
//! model every prompt whose entry was written whole.
//!
//! `CRASH_LOOP_RUNS` sets the number of runs (default 300, about 15 s with a debug build on two cores).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pi_gen_tests::{Sandbox, agent_binary, stderr};
use pi_runtime::testing::{MockLlmServer, MockScript};
use serde_json::{Value, json};

const MODEL_ARGS: [&str; 4] = ["--provider", "mock", "--model", "m"];
const DEFAULT_RUNS: usize = 300;
/// Runs that continue one session file before the next chain starts a new one (so new files, and their first
/// write, are killed too, and the context sent to the model stays small).
const RUNS_PER_CHAIN: usize = 8;

/// A model that reads a file and runs a command, then answers at length (300 KB: a line that takes a while to
/// write, so kills land inside writes too).
fn script(run: usize) -> MockScript {
    let answer = format!("answer {run}: {}", "lorem ipsum ".repeat(25_000));
    let script = json!({"responses": [
        {"toolCalls": [
            {"name": "read", "arguments": {"path": "notes.txt"}},
            {"name": "bash", "arguments": {"command": format!("echo run {run}")}}
        ]},
        {"text": answer}
    ]});
    MockScript::from_json_str(&script.to_string()).expect("script")
}

async fn server(script: MockScript) -> MockLlmServer {
    MockLlmServer::start(script).await.expect("mock server starts")
}

/// Points the sandbox's provider `mock` at `base_url` (each run gets a fresh server and script).
fn use_server(sandbox: &Sandbox, base_url: &str) {
    let models = json!({"providers": {"mock": {"baseUrl": base_url, "api": "openai-completions",
        "apiKey": "mock-key", "models": [{"id": "m", "name": "Mock model"}]}}});
    std::fs::write(sandbox.agent_dir().join("models.json"), models.to_string()).expect("models.json");
}

/// A number in `0..bound` from the system's randomness.
fn random_below(bound: u64) -> u64 {
    let mut bytes = [0_u8; 8];
    let read =
        std::fs::File::open("/dev/urandom").and_then(|mut file| std::io::Read::read_exact(&mut file, &mut bytes));
    let clock =
        || std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |t| t.as_nanos() as u64);
    let seed = if read.is_ok() { u64::from_le_bytes(bytes) } else { clock() };
    seed % bound.max(1)
}

/// The one session file of a chain's folder, if the chain has written it yet.
fn session_file(dir: &Path) -> Option<PathBuf> {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .collect();
    assert!(files.len() <= 1, "a chain continues one session, but {} holds {files:?}", dir.display());
    files.into_iter().next()
}

/// The complete lines of a session file (each ended by a newline) and what follows the last newline (a torn
/// line, or nothing).
fn complete_lines(path: &Path) -> (Vec<String>, String) {
    let bytes = std::fs::read(path).expect("session file");
    let text = String::from_utf8(bytes).expect("a session file is UTF-8");
    match text.rfind('\n') {
        Some(end) => (text[..end].split('\n').map(str::to_owned).collect(), text[end + 1..].to_owned()),
        None => (Vec::new(), text),
    }
}

/// What a check found: the complete lines, and what follows the last newline.
struct Snapshot {
    lines: Vec<String>,
    torn: String,
}

impl Snapshot {
    /// The last line when it is whole JSON that only lacks its newline (loading takes it as an entry).
    fn unterminated(&self) -> Option<&str> {
        (!self.torn.is_empty() && serde_json::from_str::<Value>(&self.torn).is_ok()).then_some(self.torn.as_str())
    }

    /// Every line loading takes.
    fn whole_lines(&self) -> Vec<String> {
        self.lines.iter().map(String::as_str).chain(self.unterminated()).map(str::to_owned).collect()
    }
}

/// Checks the invariants after a kill against the complete lines of the previous check.
fn check(path: &Path, before: &[String], run: usize) -> Snapshot {
    let (lines, torn) = complete_lines(path);
    let what = format!("run {run}, {}", path.display());
    assert!(!lines.is_empty(), "{what}: the session file exists without its header line");
    for (index, line) in lines.iter().enumerate() {
        assert!(
            serde_json::from_str::<Value>(line).is_ok(),
            "{what}: line {} is broken but not the last one: {:.200}",
            index + 1,
            line
        );
    }
    assert!(lines.len() >= before.len(), "{what}: {} complete lines became {}", before.len(), lines.len());
    for (index, (old, new)) in before.iter().zip(&lines).enumerate() {
        assert!(old == new, "{what}: line {} changed or vanished: was {:.200}, is {:.200}", index + 1, old, new);
    }
    let snapshot = Snapshot { lines, torn };
    let loaded = pi_runtime::session::load_session_file(path).unwrap_or_else(|error| panic!("{what}: {error}"));
    let torn_skipped = usize::from(!snapshot.torn.is_empty() && snapshot.unterminated().is_none());
    assert_eq!(loaded.skipped_lines, torn_skipped, "{what}: only a torn last line may be skipped");
    assert_eq!(loaded.entries.len() + 1, snapshot.whole_lines().len(), "{what}: every whole line is an entry");
    snapshot
}

/// The prompts of the user messages among the lines, in order.
fn prompts(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|entry| entry["type"] == "message" && entry["message"]["role"] == "user")
        .filter_map(|entry| entry["message"]["content"][0]["text"].as_str().map(str::to_owned))
        .collect()
}

/// When to kill a run.
#[derive(Clone, Copy)]
enum Kill {
    /// After this long.
    After(Duration),
    /// When the session file has changed size this many times (seen by watching it in a tight loop, which also
    /// sees a long line grow page by page while it is written), or after the duration.
    OnGrowth(usize, Duration),
}

/// Kills `child` as `kill` says; returns whether the agent was still running.
async fn kill_run(child: &mut tokio::process::Child, dir: &Path, kill: Kill) -> bool {
    match kill {
        Kill::After(delay) => {
            tokio::select! {
                _ = child.wait() => return false,
                () = tokio::time::sleep(delay) => {}
            }
        }
        Kill::OnGrowth(changes, limit) => {
            let deadline = Instant::now() + limit;
            let mut file = session_file(dir);
            let size =
                |file: &Option<PathBuf>| file.as_ref().and_then(|path| std::fs::metadata(path).ok()).map(|m| m.len());
            let (mut last, mut seen) = (size(&file), 0);
            while Instant::now() < deadline && seen < changes {
                if file.is_none() {
                    file = session_file(dir);
                }
                let now = size(&file);
                if now != last {
                    (last, seen) = (now, seen + 1);
                }
                if child.try_wait().expect("status").is_some() {
                    return false;
                }
            }
        }
    }
    let running = child.try_wait().expect("status").is_none();
    let _ = child.start_kill();
    let _ = child.wait().await;
    running
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_survive_sigkill_at_any_moment() {
    let runs: usize =
        std::env::var("CRASH_LOOP_RUNS").ok().and_then(|value| value.parse().ok()).unwrap_or(DEFAULT_RUNS);
    let binary = agent_binary("pi");
    let sandbox = Sandbox::new("http://127.0.0.1:9/v1");
    sandbox.write("notes.txt", "a note the model reads\n");
    // The long answers fill the mock model's context window within a chain: no compaction (it would ask the
    // model for a summary the script does not hold), no retries.
    let settings = json!({"compaction": {"enabled": false}, "retry": {"enabled": false}});
    std::fs::write(sandbox.agent_dir().join("settings.json"), settings.to_string()).expect("settings.json");

    // A chain run to the end, to learn how long its runs take: kills are spread over that time (and a bit more).
    let calibration_dir = sandbox.root.path().join("calibration");
    let dir_arg = calibration_dir.display().to_string();
    let mut full_run = Duration::ZERO;
    for run in 0..RUNS_PER_CHAIN {
        let mock = server(script(run)).await;
        use_server(&sandbox, &mock.base_url());
        let started = Instant::now();
        let args = ["--session-dir", &dir_arg, "-c", "-p", "calibrate"];
        let output = sandbox.run(&binary, &[&MODEL_ARGS[..], &args].concat()).await;
        assert!(output.status.success(), "{}", stderr(&output));
        full_run = full_run.max(started.elapsed());
    }
    let window = full_run + full_run / 4;

    let (mut killed, mut finished, mut torn_seen) = (0, 0, 0);
    let started = Instant::now();
    for chain in 0..runs.div_ceil(RUNS_PER_CHAIN) {
        let dir = sandbox.root.path().join(format!("chain-{chain}"));
        let dir_arg = dir.display().to_string();
        let mut last = Snapshot { lines: Vec::new(), torn: String::new() };
        for step in 0..RUNS_PER_CHAIN.min(runs - chain * RUNS_PER_CHAIN) {
            let run = chain * RUNS_PER_CHAIN + step;
            let mock = server(script(run)).await;
            use_server(&sandbox, &mock.base_url());
            let prompt = format!("prompt {run}");
            let mut child = sandbox
                .spawn_quiet(&binary, &[&MODEL_ARGS[..], &["--session-dir", &dir_arg, "-c", "-p", &prompt]].concat());
            let kill = match random_below(2) {
                0 => Kill::After(Duration::from_micros(random_below(window.as_micros() as u64))),
                _ => Kill::OnGrowth(1 + random_below(8) as usize, window),
            };
            if kill_run(&mut child, &dir, kill).await {
                killed += 1;
            } else {
                finished += 1;
            }
            if let Some(path) = session_file(&dir) {
                last = check(&path, &last.lines, run);
                torn_seen += usize::from(!last.torn.is_empty() && last.unterminated().is_none());
            }
        }
        // A run that is not killed continues the file by name and sends every prompt that was written whole.
        let Some(path) = session_file(&dir) else { continue };
        let mock =
            server(MockScript::from_json_str(r#"{"responses": [{"text": "all there"}]}"#).expect("script")).await;
        use_server(&sandbox, &mock.base_url());
        let file_arg = path.display().to_string();
        let output =
            sandbox.run(&binary, &[&MODEL_ARGS[..], &["--session", &file_arg, "-p", "final check"]].concat()).await;
        assert!(output.status.success(), "chain {chain}: --session {file_arg} failed: {}", stderr(&output));
        let requests = mock.requests();
        let sent: Vec<String> = requests[0].body["messages"]
            .as_array()
            .expect("messages")
            .iter()
            .filter(|message| message["role"] == "user")
            .filter_map(|message| {
                message["content"][0]["text"].as_str().or(message["content"].as_str()).map(str::to_owned)
            })
            .collect();
        let mut expected = prompts(&last.whole_lines());
        expected.push("final check".to_owned());
        assert_eq!(sent, expected, "chain {chain}: the continued session holds every prompt written whole");
    }
    eprintln!(
        "crash loop: {runs} runs ({killed} killed, {finished} finished first, {torn_seen} torn last lines) in {:?}; \
         a full run takes {full_run:?}",
        started.elapsed()
    );
    assert!(killed >= runs / 3, "runs must be killed mid-way, not after they finished ({killed} of {runs})");
}
