//! SIGINT and SIGTERM in print and json mode: the run stops at once with pi's exit codes (130, 143), the
//! session keeps the prompt and the partial answer marked aborted, and a running tool's processes die.

use std::time::{Duration, Instant};

use super::*;

/// A slow answer: 4 characters every 100 ms, about 15 s in all.
const SLOW: &str = r#"{"responses": [{"text": "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty twenty-one twenty-two twenty-three twenty-four twenty-five twenty-six twenty-seven twenty-eight twenty-nine thirty thirty-one thirty-two thirty-three thirty-four thirty-five thirty-six thirty-seven thirty-eight thirty-nine forty forty-one forty-two forty-three forty-four forty-five forty-six forty-seven forty-eight forty-nine fifty", "deltaChars": 4, "delayMs": 100}]}"#;

fn send(child: &tokio::process::Child, signal: i32) {
    let pid = child.id().expect("the agent runs") as i32;
    // SAFETY: kill(2) on the child we started; no memory is involved.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0, "the signal is delivered");
}

/// The messages of the one session file the sandbox's agent wrote: (role, stopReason).
fn saved_messages(sandbox: &Sandbox) -> Vec<(String, String)> {
    let dir = sandbox.agent_dir().join("sessions");
    let project = std::fs::read_dir(&dir).expect("sessions dir").flatten().next().expect("a project dir").path();
    let file = std::fs::read_dir(project).expect("project dir").flatten().next().expect("a session file").path();
    std::fs::read_to_string(file)
        .expect("session file")
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("a JSON line"))
        .filter(|entry| entry["type"] == "message")
        .map(|entry| {
            let message = &entry["message"];
            (message["role"].as_str().unwrap_or("").to_owned(), message["stopReason"].as_str().unwrap_or("").to_owned())
        })
        .collect()
}

/// Waits until the mock has streamed part of the answer.
async fn wait_for_request(mock: &MockLlmServer) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while mock.requests().is_empty() {
        assert!(Instant::now() < deadline, "the agent never sent its request");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(400)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sigint_and_sigterm_stop_a_streamed_answer_with_pis_exit_codes_and_save_it_aborted() {
    let binary = agent_binary("pi");
    for (signal, code, mode) in [(libc::SIGINT, 130, "-p"), (libc::SIGTERM, 143, "--mode")] {
        let mock = server(SLOW).await;
        let sandbox = Sandbox::new(&mock.base_url());
        let args: Vec<&str> = if mode == "-p" { vec!["-p", "hi"] } else { vec!["--mode", "json", "hi"] };
        let child = sandbox.spawn(&binary, &[&MODEL_ARGS[..], &args].concat());
        wait_for_request(&mock).await;
        let started = Instant::now();
        send(&child, signal);
        let output = tokio::time::timeout(Duration::from_secs(10), child.wait_with_output())
            .await
            .expect("the agent exits soon after the signal")
            .expect("wait");
        assert!(started.elapsed() < Duration::from_secs(5), "{mode}: it stopped at once, not at the answer's end");
        assert_eq!(output.status.code(), Some(code), "{mode}: {}", stderr(&output));
        let saved = saved_messages(&sandbox);
        assert_eq!(
            saved,
            [("user".to_owned(), String::new()), ("assistant".to_owned(), "aborted".to_owned())],
            "{mode}: the prompt and the partial answer are saved"
        );
        if mode == "--mode" {
            let last = stdout(&output).lines().last().map(|line| serde_json::from_str::<Value>(line).expect("json"));
            assert_eq!(last.map(|event| event["type"].clone()), Some(Value::from("agent_end")));
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_kills_the_process_group_of_a_running_tool() {
    let binary = agent_binary("pi");
    let mock = server(
        r#"{"responses": [{"toolCalls": [{"id": "call_1", "name": "bash",
            "arguments": {"command": "sleep 30 & echo $! > sleeper.pid; wait"}}]}]}"#,
    )
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    let child = sandbox.spawn(&binary, &[&MODEL_ARGS[..], &["-p", "run it"]].concat());
    let pid_file = sandbox.work_dir().join("sleeper.pid");
    let deadline = Instant::now() + Duration::from_secs(20);
    let sleeper: i32 = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file).ok().and_then(|text| text.trim().parse().ok()) {
            break pid;
        }
        assert!(Instant::now() < deadline, "the tool never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    send(&child, libc::SIGTERM);
    let output = tokio::time::timeout(Duration::from_secs(10), child.wait_with_output())
        .await
        .expect("the agent exits soon after the signal")
        .expect("wait");
    assert_eq!(output.status.code(), Some(143), "{}", stderr(&output));
    // SAFETY: kill(2) with signal 0 only asks whether the process exists.
    let alive = |pid: i32| unsafe { libc::kill(pid, 0) } == 0;
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(sleeper) {
        assert!(Instant::now() < deadline, "the tool's `sleep` outlived the agent");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
