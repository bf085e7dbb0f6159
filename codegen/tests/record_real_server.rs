//! A real session recorded and replayed: a generated agent talks to llama.cpp's real `llama-server` (SmolLM2-135M,
//! installed by scripts/install-test-tools) with `--record`, and `pi-gen test` replays the recording against the
//! scripted mock: the same answer, from one model call, without the server.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const PI_GEN: &str = env!("CARGO_BIN_EXE_pi-gen");

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).expect("the workspace")
}

/// The server process, stopped when the test ends however it ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|listener| listener.local_addr()).expect("a free port").port()
}

/// Whether `GET /health` answers 200.
fn healthy(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else { return false };
    let request = format!("GET /health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    let mut reply = String::new();
    stream.write_all(request.as_bytes()).is_ok()
        && stream.read_to_string(&mut reply).is_ok()
        && reply.starts_with("HTTP/1.1 200")
}

fn start_llama_server() -> (Server, u16) {
    let install = Command::new("bash").arg(workspace_root().join("scripts/install-test-tools")).output().expect("runs");
    assert!(install.status.success(), "install-test-tools failed: {}", String::from_utf8_lossy(&install.stderr));
    let llm = workspace_root().join("target/test-tools/llm");
    let port = free_port();
    let child = Command::new(llm.join("server/llama-server"))
        .arg("-m")
        .arg(llm.join("smollm2.gguf"))
        .args(["--host", "127.0.0.1", "--port", &port.to_string(), "-c", "8192", "-np", "1", "-t", "2"])
        .args(["--alias", "smollm2"])
        .env("LD_LIBRARY_PATH", llm.join("server"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("llama-server starts");
    let mut server = Server(child);
    let started = Instant::now();
    while !healthy(port) {
        if let Ok(Some(status)) = server.0.try_wait() {
            panic!("llama-server exited at start: {status}");
        }
        assert!(started.elapsed() < Duration::from_secs(60), "llama-server was not ready within 60 s");
        std::thread::sleep(Duration::from_millis(200));
    }
    (server, port)
}

#[test]
fn a_session_with_a_real_server_is_recorded_and_replays_as_a_test() {
    let (_server, port) = start_llama_server();
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::write(root.join("recorder.yaml"), "version: 1\nname: recorder\n").expect("the agent");
    let built = Command::new(PI_GEN).args(["build", "recorder.yaml", "--out", "bin/"]).current_dir(root).output();
    let built = built.expect("pi-gen runs");
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    let binary = root.join("bin/recorder");
    std::fs::create_dir_all(root.join("agent")).expect("agent dir");
    std::fs::create_dir_all(root.join("work")).expect("work dir");
    let models = serde_json::json!({"providers": {"llamacpp": {
        "baseUrl": format!("http://127.0.0.1:{port}/v1"),
        "api": "openai-completions",
        "apiKey": "none",
        "compat": {"supportsStore": false, "supportsDeveloperRole": false, "supportsReasoningEffort": false},
        "models": [{"id": "smollm2", "contextWindow": 32768, "maxTokens": 64}]
    }}});
    std::fs::write(root.join("agent/models.json"), models.to_string()).expect("models.json");

    let prompt = "Say hello in one short sentence.";
    let real = Command::new(&binary)
        .args(["--provider", "llamacpp", "--model", "smollm2", "--no-tools", "--no-session", "--record"])
        .arg(root.join("recorded.json"))
        .args(["-p", prompt])
        .current_dir(root.join("work"))
        .env("RECORDER_AGENT_DIR", root.join("agent"))
        .stdin(Stdio::null())
        .output()
        .expect("the agent runs");
    let answer = String::from_utf8_lossy(&real.stdout).trim_end().to_owned();
    assert!(real.status.success(), "{}", String::from_utf8_lossy(&real.stderr));
    assert!(!answer.is_empty(), "the real model said nothing");

    let recorded: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("recorded.json")).expect("recorded")).expect("json");
    let responses = recorded["responses"].as_array().expect("responses");
    assert_eq!(responses.len(), 1, "{recorded}");
    assert_eq!(responses[0]["text"].as_str().map(str::trim_end), Some(answer.as_str()));
    assert!(responses[0]["usage"]["input"].as_u64().is_some_and(|tokens| tokens > 0), "{recorded}");

    // The server is not needed any more: the replay runs against the mock alone.
    drop(_server);
    let case = format!(
        "cases:\n  - name: the real session\n    prompt: {prompt:?}\n    args: [--no-tools]\n    model: recorded.json\n    \
         expect:\n      answer: {answer}\n      model_calls: 1\n",
        answer = serde_json::Value::String(answer.clone()),
    );
    std::fs::write(root.join("replay.yaml"), case).expect("the case");
    let replayed = Command::new(PI_GEN)
        .args(["test", "recorder.yaml", "replay.yaml", "--binary", "bin/recorder"])
        .current_dir(root)
        .output()
        .expect("pi-gen runs");
    let stdout = String::from_utf8_lossy(&replayed.stdout);
    assert_eq!(replayed.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&replayed.stderr));
    assert!(stdout.contains("ok      the real session ("), "{stdout}");
}
