//! The `pi-gen` command as a process: `check` errors and the `mock-llm` server.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

mod agent_files;

use agent_files::agent_files;

const PI_GEN: &str = env!("CARGO_BIN_EXE_pi-gen");

#[test]
fn check_accepts_the_example_agents() {
    let files = agent_files();
    assert!(files.len() >= 3, "{files:?}");
    let output = Command::new(PI_GEN).arg("check").args(&files).output().expect("runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(stdout.lines().filter(|line| line.ends_with(": ok")).count(), files.len(), "{stdout}");
}

#[test]
fn the_printed_schema_is_the_committed_one_and_validates_every_agent() {
    let output = Command::new(PI_GEN).arg("schema").output().expect("runs");
    assert!(output.status.success());
    let committed = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema/agent.schema.json");
    assert_eq!(String::from_utf8_lossy(&output.stdout), std::fs::read_to_string(committed).expect("schema file"));
    let schema: serde_json::Value = serde_json::from_slice(&output.stdout).expect("schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    for file in agent_files() {
        let text = std::fs::read_to_string(&file).expect("read agent");
        assert!(
            text.starts_with("# yaml-language-server: $schema="),
            "{} lacks the yaml-language-server comment",
            file.display()
        );
        let document: serde_json::Value = serde_yaml::from_str(&text).expect("YAML");
        let errors: Vec<String> = validator.iter_errors(&document).map(|error| error.to_string()).collect();
        assert!(errors.is_empty(), "{}: {errors:?}", file.display());
    }
    let broken: serde_json::Value =
        serde_yaml::from_str("version: 1\nname: x\ntools: { builtin: [rm] }\n").expect("YAML");
    assert!(!validator.is_valid(&broken), "the schema must reject unknown tools");
}

#[test]
fn new_creates_an_agent_that_passes_check() {
    let dir = tempfile::tempdir().expect("tempdir");
    let output = Command::new(PI_GEN).arg("new").arg("helper").current_dir(dir.path()).output().expect("runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let yaml = dir.path().join("helper/helper.yaml");
    let check = Command::new(PI_GEN).arg("check").arg(&yaml).output().expect("runs");
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
    let again = Command::new(PI_GEN).arg("new").arg("helper").current_dir(dir.path()).output().expect("runs");
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));
}

#[test]
fn check_reports_located_errors_and_fails() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, "version: 1\nname: pi\ntools:\n  builtin: [read, nope]\n").expect("write");
    let output = Command::new(PI_GEN).arg("check").arg(&bad).output().expect("runs");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!("{}:4:19: tools.builtin[1]: `nope` is not allowed here", bad.display())),
        "{stderr}"
    );
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
    // The server appends to the log once the request is done, which may be just after the response's
    // last byte: wait for the line (bounded) before stopping it.
    for _ in 0..100 {
        if std::fs::read_to_string(&log).is_ok_and(|text| text.ends_with('\n')) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
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

#[test]
fn run_builds_into_the_cache_once_and_then_just_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let yaml = dir.path().join("runner.yaml");
    // A description unique to this test run, so the first `run` really builds.
    let stamp = format!("{}-{:?}", std::process::id(), std::time::SystemTime::now());
    std::fs::write(&yaml, format!("version: 1\nname: runner\ndescription: \"cache test {stamp}\"\n")).expect("write");
    let cached = pi_codegen::run_cache::cached_binary(&yaml, false).expect("cache key");
    let run = || Command::new(PI_GEN).arg("run").arg(&yaml).arg("--").arg("--version").output().expect("runs");
    let first = run();
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    assert_eq!(String::from_utf8_lossy(&first.stdout), format!("{}\n", env!("CARGO_PKG_VERSION")));
    let built = std::fs::metadata(&cached).and_then(|meta| meta.modified()).expect("the binary is in the cache");
    let second = run();
    assert!(second.status.success());
    assert_eq!(second.stdout, first.stdout);
    assert!(!String::from_utf8_lossy(&second.stderr).contains("Compiling"), "the second run rebuilt");
    assert_eq!(std::fs::metadata(&cached).and_then(|meta| meta.modified()).expect("still there"), built);
    if let Some(entry) = cached.parent() {
        let _ = std::fs::remove_dir_all(entry);
    }
}
