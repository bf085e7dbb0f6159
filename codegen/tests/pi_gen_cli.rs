//! The `pi-gen` command as a process: `check` errors and the `mock-llm` server.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

const PI_GEN: &str = env!("CARGO_BIN_EXE_pi-gen");

#[test]
fn check_accepts_the_example_agents() {
    let agents = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../agents/pi.yaml");
    let output = Command::new(PI_GEN).arg("check").arg(&agents).output().expect("runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
}

#[test]
fn check_reports_located_errors_and_fails() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, "version: 1\nname: pi\ntools:\n  builtin: [read, nope]\n").expect("write");
    let output = Command::new(PI_GEN).arg("check").arg(&bad).output().expect("runs");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(&format!("{}:4:19: tools.builtin[1]: unknown tool \"nope\"", bad.display())), "{stderr}");
}

#[test]
fn mock_llm_serves_the_script_and_logs_requests() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("script.json");
    let log = dir.path().join("requests.jsonl");
    std::fs::write(&script, r#"{"responses": [{"text": "scripted hello"}]}"#).expect("write");
    let mut child = Command::new(PI_GEN)
        .args(["mock-llm", "--script"])
        .arg(&script)
        .arg("--log")
        .arg(&log)
        .stdout(Stdio::piped())
        .spawn()
        .expect("starts");
    let mut url = String::new();
    BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut url).expect("prints its url");
    let address = url.trim().strip_prefix("http://").and_then(|rest| rest.strip_suffix("/v1")).expect("url form");

    let body = r#"{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}"#;
    let mut stream = TcpStream::connect(address).expect("connects");
    write!(
        stream,
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nAuthorization: Bearer secret-key\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .expect("sends");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("reads");
    let _ = child.kill();
    let _ = child.wait();

    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.contains("text/event-stream"), "{response}");
    let streamed: String = response
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter_map(|data| serde_json::from_str::<serde_json::Value>(data).ok())
        .filter_map(|chunk| chunk["choices"][0]["delta"]["content"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(streamed, "scripted hello");
    assert!(response.contains("data: [DONE]"), "{response}");
    let logged = std::fs::read_to_string(&log).expect("log written");
    let first: serde_json::Value = serde_json::from_str(logged.lines().next().expect("one line")).expect("json line");
    assert_eq!(first["path"], "/v1/chat/completions");
    assert_eq!(first["body"]["model"], "m");
    assert!(!logged.contains("secret-key"), "the log must not contain the key: {logged}");
}
