//! A bounded load run of `serve` on loopback (`cargo bench -p pi-gen-tests --bench serve_load`): the pi agent
//! (built in release) serves SESSIONS sessions (default 500) against the scripted mock model, which answers
//! at once. It prints the turn latency p50/p99 with every session prompting at the same moment, the same for
//! turns one after another, what a bare model call to the mock takes (so the server's own share shows), and
//! the server's resident memory per idle session. `SERVE_LOAD_AGENT=path` uses an agent built already.
//!
//! `ENGINE=temporal` runs the same against `serve --engine temporal` (default 200 sessions): a Temporal dev
//! server, Postgres, two `pi-scale worker`s and the API tier, all on this machine; the agent is
//! `target/release/pi-scale` (`cargo build --release -p pi-gen-tests --bin pi-scale`) unless
//! `SERVE_LOAD_AGENT` names one.

use std::time::{Duration, Instant};

use pi_codegen::{BuildRequest, build_agent};
use pi_gen_tests::{Sandbox, workspace_root};
use pi_runtime::testing::{MockLlmServer, MockScript};
use serde_json::{Value, json};

const SEQUENTIAL_TURNS: usize = 200;
const TURNS_PER_SESSION: usize = 20;

fn main() {
    let temporal = std::env::var("ENGINE").is_ok_and(|engine| engine == "temporal");
    let default_sessions = if temporal { 200 } else { 500 };
    let sessions: usize = std::env::var("SESSIONS").ok().and_then(|n| n.parse().ok()).unwrap_or(default_sessions);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    runtime.block_on(run(sessions, temporal));
}

async fn run(sessions: usize, temporal: bool) {
    let agent: std::path::PathBuf = match std::env::var_os("SERVE_LOAD_AGENT") {
        Some(path) => path.into(),
        None if temporal => {
            let agent = workspace_root().join("target/release/pi-scale");
            assert!(agent.exists(), "build it first: cargo build --release -p pi-gen-tests --bin pi-scale");
            agent
        }
        None => {
            let output = workspace_root().join("target/e2e/release/");
            let mut request = BuildRequest::new(workspace_root().join("agents/pi.yaml")).with_output(output);
            request.release = true;
            build_agent(&request).expect("the pi agent builds")
        }
    };
    let answers = sessions + 2 * SEQUENTIAL_TURNS;
    let script = json!((0..answers).map(|_| json!({"text": "ok"})).collect::<Vec<_>>());
    let mock =
        MockLlmServer::start(MockScript::from_json_str(&script.to_string()).expect("script")).await.expect("mock");
    let sandbox = Sandbox::new(&mock.base_url());
    let http = reqwest::Client::builder().no_proxy().pool_max_idle_per_host(sessions).build().expect("client");

    // A bare model call: what the mock and loopback HTTP take, without any agent.
    let mut bare = Vec::new();
    for _ in 0..SEQUENTIAL_TURNS {
        let started = Instant::now();
        let body = json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "hi"}]});
        let response = http.post(format!("{}/chat/completions", mock.base_url())).body(body.to_string()).send().await;
        response.expect("mock answers").bytes().await.expect("body");
        bare.push(started.elapsed());
    }

    let max_turns = sessions.to_string();
    let mut args =
        vec!["serve", "--listen", "127.0.0.1:0", "--max-turns", &max_turns, "--provider", "mock", "--model", "m"];
    let cluster = if temporal { pi_gen_tests::temporal::cluster_flags() } else { Vec::new() };
    let mut workers = Vec::new();
    if temporal {
        let log = sandbox.root.path().join("workers.log");
        let mut worker_args = vec!["worker"];
        worker_args.extend(cluster.iter().map(String::as_str));
        workers = (0..2).map(|_| sandbox.spawn_logged(&agent, &worker_args, &log)).collect();
        args.extend(["--engine", "temporal"]);
        args.extend(cluster.iter().map(String::as_str));
    }
    let worker_pids: Vec<u32> = workers.iter().filter_map(tokio::process::Child::id).collect();
    let mut server = sandbox.spawn(&agent, &args);
    let base = read_address(&mut server).await;
    let pid = server.id().expect("running");
    let client = Client { http, base };
    let rss_start = rss_kib(pid);

    // Turns one after another, TURNS_PER_SESSION to a session (so the context stays the size of a short
    // conversation: each request carries it whole, and building it grows with it).
    let (mut sequential, mut accepted, mut later) = (Vec::new(), Vec::new(), Vec::new());
    let cpu_before = cpu_ticks(pid);
    let workers_cpu_before: u64 = worker_pids.iter().map(|pid| cpu_ticks(*pid)).sum();
    for _ in 0..SEQUENTIAL_TURNS / TURNS_PER_SESSION {
        let id = client.create(&sandbox).await;
        let mut events = client.events(&id).await;
        for n in 0..TURNS_PER_SESSION {
            let (accept, turn) = client.timed_turn(&id, &mut events).await;
            accepted.push(accept);
            sequential.push(turn);
            // A session's first answer creates its file (written and synced whole).
            if n > 0 {
                later.push(turn);
            }
        }
    }
    let cpu_per_turn = (cpu_ticks(pid) - cpu_before) as f64 * 1000.0 / ticks_per_second() / SEQUENTIAL_TURNS as f64;
    let workers_cpu: u64 = worker_pids.iter().map(|pid| cpu_ticks(*pid)).sum();
    let workers_cpu_per_turn =
        (workers_cpu - workers_cpu_before) as f64 * 1000.0 / ticks_per_second() / SEQUENTIAL_TURNS as f64;

    // Every session prompts at once.
    let mut ids = Vec::new();
    for _ in 0..sessions {
        let id = client.create(&sandbox).await;
        let events = client.events(&id).await;
        ids.push((id, events));
    }
    let started = Instant::now();
    let turns = ids.iter_mut().map(|(id, events)| client.turn(id, events));
    let concurrent: Vec<Duration> = futures_util::future::join_all(turns).await;
    let wall = started.elapsed();
    // Idle: no turn runs and no client listens.
    drop(ids);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss_end = rss_kib(pid);
    let workers_rss: Vec<u64> = worker_pids.iter().map(|pid| rss_kib(*pid)).collect();
    let _ = server.kill().await;
    for mut worker in workers {
        let _ = worker.kill().await;
    }

    let per_session =
        (rss_end.saturating_sub(rss_start)) as f64 / (sessions + SEQUENTIAL_TURNS / TURNS_PER_SESSION) as f64;
    let engine = if temporal { "temporal (2 workers, Postgres, Temporal dev server)" } else { "embedded" };
    println!("serve load: {sessions} sessions, engine {engine}, pi agent in release, mock model on loopback");
    println!("  bare model call (mock + HTTP):      {}", summary(&mut bare));
    println!("  prompt accepted (run started):      {}", summary(&mut accepted));
    println!("  turn, one after another:            {}", summary(&mut sequential));
    println!("    the same without sessions' first:  {}", summary(&mut later));
    println!("  server CPU per turn (user + system): {cpu_per_turn:.2} ms");
    if temporal {
        println!("  workers' CPU per turn (both):        {workers_cpu_per_turn:.2} ms");
        println!("  workers' RSS at the end:             {workers_rss:?} KiB");
    }
    println!("  turn, {sessions} sessions at once:    {} (all done in {wall:.2?})", summary(&mut concurrent.clone()));
    println!(
        "  server RSS: {rss_start} KiB at start, {rss_end} KiB with {} idle sessions: {per_session:.0} KiB per session",
        sessions + SEQUENTIAL_TURNS / TURNS_PER_SESSION
    );
}

struct Client {
    http: reqwest::Client,
    base: String,
}

impl Client {
    async fn create(&self, sandbox: &Sandbox) -> String {
        let body = json!({ "cwd": sandbox.work_dir() });
        let response = self.http.post(format!("{}/v1/sessions", self.base)).body(body.to_string()).send().await;
        let text = response.expect("created").text().await.expect("body");
        let value: Value = serde_json::from_str(&text).expect("json");
        value["id"].as_str().unwrap_or_else(|| panic!("no id: {text}")).to_owned()
    }

    /// The session's event stream, opened before its first prompt and read as turns go.
    async fn events(&self, id: &str) -> reqwest::Response {
        self.http.get(format!("{}/v1/sessions/{id}/events", self.base)).send().await.expect("events")
    }

    /// One prompt, timed from sending it until its `agent_end` arrives on the session's event stream.
    async fn turn(&self, id: &str, events: &mut reqwest::Response) -> Duration {
        self.timed_turn(id, events).await.1
    }

    /// [`Client::turn`], also giving how long the prompt took to be accepted (its run had started).
    async fn timed_turn(&self, id: &str, events: &mut reqwest::Response) -> (Duration, Duration) {
        let started = Instant::now();
        let body = json!({"message": "hi"}).to_string();
        let response = self.http.post(format!("{}/v1/sessions/{id}/prompt", self.base)).body(body).send().await;
        let status = response.expect("prompt").status();
        assert_eq!(status.as_u16(), 202);
        let accepted = started.elapsed();
        // An event never straddles the marker's search: keep the tail of the last chunk.
        let mut seen = String::new();
        loop {
            let chunk = events.chunk().await.expect("stream").expect("open");
            seen.push_str(&String::from_utf8_lossy(&chunk));
            if seen.contains("\"type\":\"agent_end\"") {
                return (accepted, started.elapsed());
            }
            let keep = seen.len().saturating_sub(32);
            let keep = (keep..seen.len()).find(|at| seen.is_char_boundary(*at)).unwrap_or(seen.len());
            seen.drain(..keep);
        }
    }
}

async fn read_address(server: &mut tokio::process::Child) -> String {
    use tokio::io::AsyncBufReadExt;
    let stderr = server.stderr.take().expect("stderr");
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    while let Some(line) = lines.next_line().await.expect("stderr") {
        if let Some((_, address)) = line.split_once(" serving on ") {
            let address = address.split_whitespace().next().expect("address").to_owned();
            tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
            return address;
        }
    }
    panic!("serve did not start");
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let line = status.lines().find(|line| line.starts_with("VmRSS:")).unwrap_or_default();
    line.split_whitespace().nth(1).and_then(|kib| kib.parse().ok()).unwrap_or(0)
}

/// The process's CPU time so far (user + system), in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command name (which may hold spaces) start at its closing parenthesis.
    let fields: Vec<&str> =
        stat.rsplit_once(')').map(|(_, rest)| rest.split_whitespace().collect()).unwrap_or_default();
    let field = |n: usize| fields.get(n).and_then(|value| value.parse::<u64>().ok()).unwrap_or(0);
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    field(11) + field(12)
}

fn ticks_per_second() -> f64 {
    // SAFETY: sysconf only reads a system constant.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 { ticks as f64 } else { 100.0 }
}

fn summary(samples: &mut [Duration]) -> String {
    samples.sort_unstable();
    let at = |fraction: f64| samples[((samples.len() - 1) as f64 * fraction).round() as usize];
    format!("p50 {:.2?}, p99 {:.2?} ({} turns)", at(0.5), at(0.99), samples.len())
}
