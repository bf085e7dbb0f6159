//! End to end: the generated pi agent's `serve` over real HTTP against the scripted mock model: sessions
//! running at once, the event stream equal to `--mode json`, resuming with `Last-Event-ID`, abort,
//! idempotent prompts, export, the refusals, and SIGTERM. The `on_temporal_*` tests run the same checks
//! against `serve --engine temporal` (two workers, a Temporal dev server and Postgres, all real).

mod api;
mod batches;
mod client;
mod crash;
mod retries;

use client::{Server, WAIT, json_body};
use pi_gen_tests::{Sandbox, agent_binary};
use pi_runtime::testing::{MockLlmServer, MockScript};
use serde_json::{Value, json};

async fn mock(script: Value) -> MockLlmServer {
    let script = MockScript::from_json_str(&script.to_string()).expect("valid script");
    MockLlmServer::start(script).await.expect("mock server starts")
}

async fn serve(sandbox: &Sandbox, args: &[&str]) -> Server {
    let all = [&["--provider", "mock", "--model", "m"], args].concat();
    Server::start(sandbox, &agent_binary("pi"), &all, Some("s3cret-token")).await
}

/// What runs the sessions behind the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Engine {
    /// This process's sessions, files on disk (`pi serve`).
    Embedded,
    /// Workflows on a real Temporal dev server with two workers, sessions in a real Postgres
    /// (`pi-scale serve --engine temporal`).
    Temporal,
}

/// A server and what it needs running (the workers, for the Temporal engine).
struct Deployment {
    server: Server,
    engine: Engine,
    /// The cluster's flags (Temporal): a replica started with them serves the same sessions.
    cluster: Vec<String>,
    _workers: Vec<tokio::process::Child>,
}

impl std::ops::Deref for Deployment {
    type Target = Server;

    fn deref(&self) -> &Server {
        &self.server
    }
}

/// `serve` with the mock model on `engine`.
async fn serve_on(engine: Engine, sandbox: &Sandbox, args: &[&str]) -> Deployment {
    serve_on_env(engine, sandbox, args, &[]).await
}

/// [`serve_on`] with extra environment variables for the agent (embedded, it is then `pi-scale`, whose
/// `PI_SCALE_AGENT` picks the agent).
async fn serve_on_env(engine: Engine, sandbox: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> Deployment {
    match engine {
        Engine::Embedded if env.is_empty() => {
            Deployment { server: serve(sandbox, args).await, engine, cluster: Vec::new(), _workers: Vec::new() }
        }
        Engine::Embedded => {
            let all = [&["--provider", "mock", "--model", "m"], args].concat();
            let binary = pi_gen_tests::scale_agent_bin();
            let server = Server::start_env(sandbox, &binary, &all, Some("s3cret-token"), env).await;
            Deployment { server, engine, cluster: Vec::new(), _workers: Vec::new() }
        }
        Engine::Temporal => {
            let cluster = pi_gen_tests::temporal::cluster_flags();
            let log = sandbox.root.path().join("workers.log");
            let workers = pi_gen_tests::temporal::start_workers_env(sandbox, &cluster, 2, &log, env);
            let server = temporal_tier_env(sandbox, &cluster, args, env).await;
            Deployment { server, engine, cluster, _workers: workers }
        }
    }
}

/// `pi-scale serve --engine temporal` on `cluster` with the mock model.
async fn temporal_tier(sandbox: &Sandbox, cluster: &[String], args: &[&str]) -> Server {
    temporal_tier_env(sandbox, cluster, args, &[]).await
}

async fn temporal_tier_env(sandbox: &Sandbox, cluster: &[String], args: &[&str], env: &[(&str, &str)]) -> Server {
    let mut all = vec!["--engine", "temporal", "--provider", "mock", "--model", "m"];
    all.extend(cluster.iter().map(String::as_str));
    all.extend(args);
    Server::start_env(sandbox, &pi_gen_tests::scale_agent_bin(), &all, Some("s3cret-token"), env).await
}

/// The session as the engine keeps it: the file on disk (embedded), or the store's export (Temporal, where
/// nothing is written to this machine).
async fn stored_session(deployment: &Deployment, sandbox: &Sandbox, id: &str) -> Vec<u8> {
    match deployment.engine {
        Engine::Embedded => {
            let file = sandbox.session_files().into_iter().find(|file| file.to_string_lossy().contains(id));
            std::fs::read(file.expect("the session's file")).expect("the session file")
        }
        Engine::Temporal => {
            let path = format!("/v1/sessions/{id}/export.jsonl");
            let response = deployment.send(reqwest::Method::GET, &path, None).await;
            assert_eq!(response.status().as_u16(), 200);
            assert!(sandbox.session_files().is_empty(), "nothing is written on the API's machine");
            response.bytes().await.expect("bytes").to_vec()
        }
    }
}

/// Waits until the session's turn has ended (`isStreaming` false).
async fn wait_idle(server: &Server, id: &str) {
    tokio::time::timeout(WAIT, async {
        loop {
            let (_, state) = server.get(&format!("/v1/sessions/{id}")).await;
            if state["isStreaming"] == false {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the turn ends");
}

#[tokio::test(flavor = "multi_thread")]
async fn two_sessions_run_at_once_each_with_its_own_answer_and_file() {
    two_sessions_run_at_once(Engine::Embedded).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn on_temporal_two_sessions_run_at_once_each_with_its_own_answer_and_session() {
    two_sessions_run_at_once(Engine::Temporal).await;
}

async fn two_sessions_run_at_once(engine: Engine) {
    // Neither answer comes before both requests arrived: the two turns run at the same time.
    let mock = mock(json!([
        {"text": "Answer for whoever asks.", "waitForRequests": 2},
        {"text": "Answer for whoever asks.", "waitForRequests": 2}
    ]))
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    let server = serve_on(engine, &sandbox, &[]).await;
    let first = server.create_session(&sandbox).await;
    let second = server.create_session(&sandbox).await;
    assert_ne!(first, second);
    let mut first_events = server.events(&first, None).await;
    let mut second_events = server.events(&second, None).await;
    let (status, accepted) = server.post(&format!("/v1/sessions/{first}/prompt"), json!({"message": "one"})).await;
    assert_eq!(status, 202, "{accepted}");
    assert_eq!(accepted["disposition"], "started");
    let (status, _) = server.post(&format!("/v1/sessions/{second}/prompt"), json!({"message": "two"})).await;
    assert_eq!(status, 202);
    for events in [&mut first_events, &mut second_events] {
        let end = events.until("agent_end").await;
        let last = end["messages"].as_array().and_then(|messages| messages.last()).expect("messages");
        assert_eq!(last["content"][0]["text"], "Answer for whoever asks.", "{end}");
    }
    // Each stream holds its own session's prompt only.
    let prompts = |events: &client::Events| -> Vec<String> {
        let starts = events.seen.iter().filter(|(_, event)| event["type"] == "message_start");
        starts
            .filter(|(_, event)| event["message"]["role"] == "user")
            .map(|(_, event)| event["message"]["content"][0]["text"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    assert_eq!(prompts(&first_events), ["one"]);
    assert_eq!(prompts(&second_events), ["two"]);
    assert_eq!(mock.requests().len(), 2);
    for (id, prompt) in [(&first, "one"), (&second, "two")] {
        wait_idle(&server, id).await;
        let stored = String::from_utf8(stored_session(&server, &sandbox, id).await).expect("UTF-8");
        assert!(stored.contains(&format!(r#""text":"{prompt}""#)), "{stored}");
    }
    if engine == Engine::Embedded {
        let files = sandbox.session_files();
        assert_eq!(files.len(), 2, "{files:?}");
    }
    let (status, listing) = server.get("/v1/sessions").await;
    assert_eq!(status, 200);
    let mut ids: Vec<&str> =
        listing["sessions"].as_array().expect("list").iter().filter_map(|s| s["id"].as_str()).collect();
    ids.sort_unstable();
    let mut expected = [first.as_str(), second.as_str()];
    expected.sort_unstable();
    assert_eq!(ids, expected);
    assert_eq!(listing["total"], 2);
    let (_, page) = server.get("/v1/sessions?limit=1").await;
    assert_eq!(page["sessions"].as_array().map(Vec::len), Some(1));
    assert_eq!(page["nextOffset"], 1);
}

/// Replaces what differs between two runs of the same script: times, ids, the session file's name.
fn normalized(mut value: Value) -> Value {
    fn walk(value: &mut Value) {
        match value {
            Value::Object(fields) => {
                for (key, field) in fields.iter_mut() {
                    match key.as_str() {
                        "timestamp" => *field = json!("<time>"),
                        "id" | "responseId" if field.is_string() => *field = json!("<id>"),
                        _ => walk(field),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut value);
    value
}

#[tokio::test(flavor = "multi_thread")]
async fn the_event_stream_is_the_json_mode_stream_and_resumes_after_last_event_id() {
    event_stream_is_the_json_mode_stream(Engine::Embedded).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn on_temporal_the_event_stream_is_the_json_mode_stream_and_resumes_after_last_event_id() {
    event_stream_is_the_json_mode_stream(Engine::Temporal).await;
}

async fn event_stream_is_the_json_mode_stream(engine: Engine) {
    let answer = json!({
        "toolCalls": [{"id": "call_1", "name": "read", "arguments": {"path": "notes.txt"}}]
    });
    let mock = mock(json!([answer, {"text": "The notes say hi."}, answer, {"text": "The notes say hi."}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    sandbox.write("notes.txt", "hi\n");
    let output = sandbox
        .run(&agent_binary("pi"), &["--mode", "json", "--provider", "mock", "--model", "m", "Read the notes"])
        .await;
    assert!(output.status.success(), "{}", pi_gen_tests::stderr(&output));
    let json_mode: Vec<Value> = pi_gen_tests::stdout(&output)
        .lines()
        .map(|line| normalized(serde_json::from_str(line).expect("a JSON line")))
        .collect();

    let server = serve_on(engine, &sandbox, &[]).await;
    let id = server.create_session(&sandbox).await;
    let mut events = server.events(&id, None).await;
    let (status, _) = server.post(&format!("/v1/sessions/{id}/prompt"), json!({"message": "Read the notes"})).await;
    assert_eq!(status, 202);
    events.until("agent_end").await;
    let numbers: Vec<u64> = events.seen.iter().map(|(number, _)| *number).collect();
    assert_eq!(numbers, (1..=numbers.len() as u64).collect::<Vec<_>>(), "numbered from 1 without gaps");
    let served: Vec<Value> = events.seen.iter().map(|(_, event)| normalized(event.clone())).collect();
    assert_eq!(served.len(), json_mode.len());
    for (index, (served, printed)) in served.iter().zip(&json_mode).enumerate() {
        assert_eq!(served, printed, "event {} differs", index + 1);
    }

    // A client that saw up to event 3 reconnects and gets exactly the rest.
    let mut resumed = server.events(&id, Some(3)).await;
    let mut rest = Vec::new();
    while rest.len() < events.seen.len() - 3 {
        rest.push(resumed.next().await.expect("an event"));
    }
    assert_eq!(rest, events.seen[3..]);
}

#[tokio::test(flavor = "multi_thread")]
async fn abort_stops_a_running_turn_and_a_repeated_idempotency_key_runs_one_turn() {
    abort_and_idempotency(Engine::Embedded).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn on_temporal_abort_stops_a_running_turn_and_a_repeated_idempotency_key_runs_one_turn() {
    abort_and_idempotency(Engine::Temporal).await;
}

async fn abort_and_idempotency(engine: Engine) {
    let mock = mock(json!([
        {"text": "This answer never ends because the stream stalls", "stallAfter": 2},
        {"text": "Second."}
    ]))
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    let server = serve_on(engine, &sandbox, &[]).await;
    let id = server.create_session(&sandbox).await;
    let mut events = server.events(&id, None).await;
    let prompt = json!({"message": "go", "idempotency_key": "key-1"});
    let (status, first) = server.post(&format!("/v1/sessions/{id}/prompt"), prompt.clone()).await;
    assert_eq!(status, 202, "{first}");
    let (status, again) = server.post(&format!("/v1/sessions/{id}/prompt"), prompt).await;
    assert_eq!(status, 202, "{again}");
    assert_eq!(again["turn_id"], first["turn_id"], "the same turn");
    // A prompt without a key while the turn runs is refused, not queued.
    let (status, busy) = server.post(&format!("/v1/sessions/{id}/prompt"), json!({"message": "other"})).await;
    assert_eq!(status, 409, "{busy}");
    assert_eq!(busy["error"]["code"], "session_busy");
    events.until("message_update").await;
    let (status, _) = server.post(&format!("/v1/sessions/{id}/abort"), json!({})).await;
    assert_eq!(status, 200);
    let end = events.until("agent_end").await;
    let last = end["messages"].as_array().and_then(|messages| messages.last()).expect("messages");
    assert_eq!(last["stopReason"], "aborted", "{end}");
    let (_, state) = server.get(&format!("/v1/sessions/{id}")).await;
    assert_eq!(state["isStreaming"], false);
    assert_eq!(mock.requests().len(), 1, "the repeated key started no second turn");

    // The next prompt runs normally; the export is the session file, byte for byte.
    let (status, _) = server.post(&format!("/v1/sessions/{id}/prompt"), json!({"message": "again"})).await;
    assert_eq!(status, 202);
    events.until("agent_end").await;
    wait_idle(&server, &id).await;
    let response = server.send(reqwest::Method::GET, &format!("/v1/sessions/{id}/export.jsonl"), None).await;
    assert_eq!(response.status().as_u16(), 200);
    let exported = response.bytes().await.expect("bytes");
    assert_eq!(exported.as_ref(), stored_session(&server, &sandbox, &id).await.as_slice());
    assert!(String::from_utf8_lossy(&exported).contains("\"stopReason\":\"aborted\""));
}

#[tokio::test(flavor = "multi_thread")]
async fn refusals_say_why() {
    refusals(Engine::Embedded).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn on_temporal_refusals_say_why() {
    refusals(Engine::Temporal).await;
}

async fn refusals(engine: Engine) {
    let mock = mock(json!([{"text": "slow", "stallAfter": 1}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let server = serve_on(engine, &sandbox, &["--max-turns", "1", "--max-body", "2048"]).await;
    let url = format!("{}/v1/sessions", server.base);

    let (status, health) = {
        let response = server.http.get(format!("{}/healthz", server.base)).send().await.expect("healthz");
        (response.status().as_u16(), json_body(response).await)
    };
    assert_eq!((status, health), (200, json!({"ok": true})), "no token needed");
    let response = server.http.get(&url).send().await.expect("sent");
    assert_eq!(response.status().as_u16(), 401);
    assert_eq!(response.headers()["www-authenticate"], "Bearer");
    let body = json_body(response).await;
    assert_eq!(body["error"]["code"], "missing_token");
    let response = server.http.get(&url).bearer_auth("s3cret-tokeN").send().await.expect("sent");
    assert_eq!(response.status().as_u16(), 401);
    assert_eq!(json_body(response).await["error"]["code"], "wrong_token");

    let outside = tempfile::tempdir().expect("a directory outside the root");
    let (status, body) = server.post("/v1/sessions", json!({"cwd": outside.path()})).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["error"]["code"], "cwd_outside_roots");
    // A symbolic link inside the root that leads outside is resolved first.
    std::os::unix::fs::symlink(outside.path(), sandbox.work_dir().join("escape")).expect("symlink");
    let (status, _) = server.post("/v1/sessions", json!({"cwd": sandbox.work_dir().join("escape")})).await;
    assert_eq!(status, 403);
    let (status, body) = server.post("/v1/sessions", json!({"cwd": "relative/path"})).await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = server.post("/v1/sessions", json!({"cwd": sandbox.work_dir(), "colour": "red"})).await;
    assert_eq!(status, 400, "{body}");
    assert!(body["error"]["message"].as_str().is_some_and(|m| m.contains("unknown field `colour`")), "{body}");
    let (status, body) = server.get("/v1/sessions/no-such-session").await;
    assert_eq!(status, 404, "{body}");

    let id = server.create_session(&sandbox).await;
    let (status, body) = server.post(&format!("/v1/sessions/{id}/prompt"), json!({"message": "x".repeat(4096)})).await;
    assert_eq!(status, 413, "{body}");
    assert_eq!(body["error"]["code"], "body_too_large");

    let (status, _) = server.post(&format!("/v1/sessions/{id}/prompt"), json!({"message": "slow one"})).await;
    assert_eq!(status, 202);
    let other = server.create_session(&sandbox).await;
    let path = format!("/v1/sessions/{other}/prompt");
    let response = server.send(reqwest::Method::POST, &path, Some(json!({"message": "one too many"}))).await;
    assert_eq!(response.status().as_u16(), 429);
    assert_eq!(response.headers()["retry-after"], "2");
    assert_eq!(json_body(response).await["error"]["code"], "too_many_turns");
    // Once the running turn ends, its permit is free again.
    let (status, _) = server.post(&format!("/v1/sessions/{id}/abort"), json!({})).await;
    assert_eq!(status, 200);
    let (status, body) = server.post(&format!("/v1/sessions/{other}/prompt"), json!({"message": "now"})).await;
    assert_ne!(status, 429, "{body}");
    let log = server.stderr.lock().expect("stderr").clone();
    assert!(!log.contains("s3cret-token") && !log.contains("mock-key"), "{log}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_open_address_without_a_token_is_refused_at_start() {
    let sandbox = Sandbox::new("http://127.0.0.1:9");
    // The Temporal engine refuses the same before it reaches for a cluster (none listens at these addresses).
    let temporal =
        ["--engine", "temporal", "--store", "postgres://pi@127.0.0.1:9/none", "--temporal-address", "127.0.0.1:9"];
    for (binary, engine) in [(agent_binary("pi"), &[][..]), (pi_gen_tests::scale_agent_bin(), &temporal[..])] {
        let args = |extra: &[&'static str]| [&["serve"][..], engine, extra].concat();
        let output = sandbox.run(&binary, &args(&["--listen", "0.0.0.0:0"])).await;
        assert_eq!(output.status.code(), Some(1));
        let stderr = pi_gen_tests::stderr(&output);
        assert!(stderr.contains("--listen 0.0.0.0:0 is reachable from other machines"), "{stderr}");
        let output = sandbox.run(&binary, &args(&["--continue"])).await;
        assert_eq!(output.status.code(), Some(1));
        let stderr = pi_gen_tests::stderr(&output);
        assert!(stderr.contains("`--continue` chooses a session or a mode"), "{stderr}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_aborts_the_running_turn_saves_it_and_exits() {
    let mock = mock(json!([
        {"text": "first answer"},
        {"text": "a turn that is still running when the server stops", "stallAfter": 2}
    ]))
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    let mut server = serve(&sandbox, &[]).await;
    let id = server.create_session(&sandbox).await;
    let mut events = server.events(&id, None).await;
    server.post(&format!("/v1/sessions/{id}/prompt"), json!({"message": "first"})).await;
    events.until("agent_end").await;
    wait_idle(&server, &id).await;
    server.post(&format!("/v1/sessions/{id}/prompt"), json!({"message": "second"})).await;
    events.until("message_update").await;
    let pid = server.child.id().expect("running");
    // SAFETY: kill(2) on the server's own child process id.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGTERM) }, 0);
    let status = tokio::time::timeout(WAIT, server.child.wait()).await.expect("exits in time").expect("status");
    assert!(status.success(), "{status:?}");
    // The open event stream ended with the server.
    while events.next().await.is_some() {}
    let files = sandbox.session_files();
    let text = std::fs::read_to_string(&files[0]).expect("session file");
    let last: Value = serde_json::from_str(text.lines().last().expect("lines")).expect("json");
    assert_eq!(last["message"]["stopReason"], "aborted", "{text}");
}

/// The Temporal tier holds no session: SIGTERM ends it (and its open streams) at once, the turn goes on on
/// the workers, and another replica follows the session from where the client left off.
#[tokio::test(flavor = "multi_thread")]
async fn on_temporal_sigterm_stops_the_tier_not_the_turn_which_another_replica_follows() {
    let slow = "a turn that is still running when the tier stops, and ends on the workers";
    let mock = mock(json!([{"text": slow, "deltaChars": 6, "delayMs": 100}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let mut deployment = serve_on(Engine::Temporal, &sandbox, &[]).await;
    let id = deployment.create_session(&sandbox).await;
    let mut events = deployment.events(&id, None).await;
    deployment.post(&format!("/v1/sessions/{id}/prompt"), json!({"message": "go slowly"})).await;
    events.until("message_update").await;
    let pid = deployment.server.child.id().expect("running");
    // SAFETY: kill(2) on the server's own child process id.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGTERM) }, 0);
    let status =
        tokio::time::timeout(WAIT, deployment.server.child.wait()).await.expect("exits in time").expect("status");
    assert!(status.success(), "{status:?}");
    while events.next().await.is_some() {}
    let last_seen = events.seen.last().map(|(number, _)| *number).expect("events were seen");
    assert!(!events.seen.iter().any(|(_, event)| event["type"] == "agent_end"), "the tier stopped mid-turn");

    let replica = temporal_tier(&sandbox, &deployment.cluster, &[]).await;
    let mut resumed = replica.events(&id, Some(last_seen)).await;
    let end = resumed.until("agent_end").await;
    let first = resumed.seen.first().map(|(number, _)| *number).expect("resumed events");
    assert_eq!(first, last_seen + 1, "the replica goes on after the last event the client saw");
    let answer = &end["messages"].as_array().expect("messages").last().expect("the answer")["content"][0]["text"];
    assert_eq!(answer, slow, "the whole answer, not an aborted one");
    wait_idle(&replica, &id).await;
}

/// The busy check is the workflow's: of two unkeyed prompts that race through two replicas to an idle
/// session, one starts and the other is refused, as one embedded server would answer them.
#[tokio::test(flavor = "multi_thread")]
async fn on_temporal_prompts_racing_through_two_replicas_start_one_run_and_refuse_the_other() {
    let answer = json!({"text": "one run at a time", "deltaChars": 4, "delayMs": 20});
    let mock = mock(json!([answer.clone(), answer.clone(), answer])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let deployment = serve_on(Engine::Temporal, &sandbox, &[]).await;
    let replica = temporal_tier(&sandbox, &deployment.cluster, &[]).await;
    let id = deployment.create_session(&sandbox).await;
    let path = format!("/v1/sessions/{id}/prompt");
    for round in 0..3 {
        let (first, second) = tokio::join!(
            deployment.post(&path, json!({"message": format!("first of round {round}")})),
            replica.post(&path, json!({"message": format!("second of round {round}")})),
        );
        let mut statuses = [first.0, second.0];
        statuses.sort_unstable();
        assert_eq!(statuses, [202, 409], "round {round}: {first:?} {second:?}");
        let refused = if first.0 == 409 { &first.1 } else { &second.1 };
        assert_eq!(refused["error"]["code"], "session_busy", "{refused}");
        wait_idle(&deployment, &id).await;
    }
    assert_eq!(mock.requests().len(), 3, "one run per round");
}
