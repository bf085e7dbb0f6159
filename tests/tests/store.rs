//! The session stores of pi-temporal against the real thing: pi's files on disk, and a real PostgreSQL
//! server (started per test process, a database per test). The same checks run on both stores: appends
//! create the session and are idempotent by entry id, an export is the pi file byte for byte, imports
//! refuse a stored id, and a session moves between the stores unchanged.

use pi_gen_tests::postgres::postgres;
use pi_gen_tests::workspace_root;
use pi_runtime::protocol::{AgentMessage, AssistantContent, AssistantMessage, UserMessage};
use pi_runtime::session::{SessionManager, load_session_file};
use pi_temporal::store::{AnyStore, EntryLine, HeaderLine, PostgresStore, SessionLines, SessionStore, StoreError};

/// A real session file (branched, with every kind of entry), as pi writes them.
fn fixture() -> String {
    std::fs::read_to_string(workspace_root().join("runtime/fixtures/export/branched.jsonl")).expect("the fixture")
}

async fn postgres_store() -> AnyStore {
    let url = postgres().new_database();
    AnyStore::open(&url).await.expect("the Postgres store opens")
}

async fn files_store(dir: &tempfile::TempDir) -> AnyStore {
    let address = format!("file:{}", dir.path().display());
    AnyStore::open(&address).await.expect("the file store opens")
}

/// Appends the fixture in three overlapping batches and again whole: every line lands once, in order.
async fn appends_are_idempotent_by_entry_id(store: &AnyStore) {
    let session = SessionLines::parse(&fixture()).expect("the fixture parses");
    let entries = &session.entries;
    assert_eq!(store.append(&session.header, &entries[..5]).await.expect("first batch"), 5);
    // A retried batch (the same activity run twice) adds nothing; one that overlaps adds the new part.
    assert_eq!(store.append(&session.header, &entries[..5]).await.expect("repeated"), 0);
    assert_eq!(store.append(&session.header, &entries[3..9]).await.expect("overlapping"), 4);
    assert_eq!(store.append(&session.header, entries).await.expect("the rest"), entries.len() - 9);
    assert_eq!(store.append(&session.header, entries).await.expect("all again"), 0);
    let exported = store.export(&session.header.id).await.expect("export").expect("the session is stored");
    assert_eq!(exported, fixture(), "the export is the pi file byte for byte");
    let listed = store.list().await.expect("list");
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, session.header.id);
    assert_eq!(listed[0].cwd, "/home/dev/project");
    assert_eq!(listed[0].entries, entries.len() as u64);
}

/// Import, a refused second import, delete, and an unknown id.
async fn import_export_delete(store: &AnyStore) {
    let session = SessionLines::parse(&fixture()).expect("the fixture parses");
    store.import(&session).await.expect("imported");
    assert!(matches!(store.import(&session).await, Err(StoreError::Exists(id)) if id == session.header.id));
    assert_eq!(store.export(&session.header.id).await.expect("export").as_deref(), Some(fixture().as_str()));
    assert!(store.delete(&session.header.id).await.expect("delete"));
    assert!(!store.delete(&session.header.id).await.expect("delete again"));
    assert_eq!(store.export(&session.header.id).await.expect("export"), None);
    assert!(store.list().await.expect("list").is_empty());
    // After a delete the id can be imported again.
    store.import(&session).await.expect("imported again");
}

#[tokio::test(flavor = "multi_thread")]
async fn postgres_appends_are_idempotent_and_export_the_pi_file() {
    appends_are_idempotent_by_entry_id(&postgres_store().await).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn files_appends_are_idempotent_and_export_the_pi_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = files_store(&dir).await;
    appends_are_idempotent_by_entry_id(&store).await;
    // The file lies where the agent itself looks for the sessions of that cwd, and loads as a session.
    let folder = pi_runtime::session::session_dir_for_cwd(dir.path(), std::path::Path::new("/home/dev/project"));
    let path = pi_runtime::session::find_most_recent_session(&folder).expect("found in the cwd's folder");
    assert!(path.to_string_lossy().ends_with("2026-11-24T20-00-00-000Z_01a2f3c0-5e1d-7a3b-9c4d-2b8e6f1a0c77.jsonl"));
    assert_eq!(load_session_file(&path).expect("loads").entries.len(), 16);
}

#[tokio::test(flavor = "multi_thread")]
async fn postgres_import_export_and_delete() {
    import_export_delete(&postgres_store().await).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn files_import_export_and_delete() {
    let dir = tempfile::tempdir().expect("tempdir");
    import_export_delete(&files_store(&dir).await).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_moves_between_the_stores_unchanged() {
    // A session the runtime itself wrote, not only the fixture.
    let work = tempfile::tempdir().expect("tempdir");
    let written = {
        let mut manager = SessionManager::create(work.path(), work.path()).expect("a session");
        manager.append_message(user("hello")).expect("user");
        manager.append_message(assistant("hi there")).expect("assistant");
        manager.append_message(user("and again")).expect("user");
        std::fs::read_to_string(manager.path().expect("written")).expect("the file")
    };
    let files_dir = tempfile::tempdir().expect("tempdir");
    let (files, postgres) = (files_store(&files_dir).await, postgres_store().await);
    let session = SessionLines::parse(&written).expect("parses");
    files.import(&session).await.expect("into the files");
    let from_files = files.export(&session.header.id).await.expect("export").expect("stored");
    postgres.import(&SessionLines::parse(&from_files).expect("parses")).await.expect("into Postgres");
    let from_postgres = postgres.export(&session.header.id).await.expect("export").expect("stored");
    assert_eq!(from_postgres, written);
}

#[tokio::test(flavor = "multi_thread")]
async fn concurrent_appends_to_one_session_store_each_entry_once() {
    let store = postgres_store().await;
    let header = HeaderLine::parse(
        r#"{"type":"session","version":3,"id":"busy","timestamp":"2026-11-28T10:00:00.000Z","cwd":"/w"}"#,
    )
    .expect("a header");
    let entry = |n: usize| EntryLine::parse(&format!("{{\"type\":\"custom\",\"id\":\"e{n:03}\"}}"), n).expect("entry");
    // Twenty writers, each with an overlapping window of ten entries out of forty.
    let writers = (0..20).map(|writer| {
        let (store, header) = (store.clone(), header.clone());
        let entries: Vec<EntryLine> = (writer * 3 / 2..writer * 3 / 2 + 10).map(entry).collect();
        tokio::spawn(async move { store.append(&header, &entries).await.expect("append") })
    });
    let mut added = 0;
    for writer in writers {
        added += writer.await.expect("the writer");
    }
    let exported = store.export("busy").await.expect("export").expect("stored");
    let ids: Vec<String> = SessionLines::parse(&exported).expect("parses").entries.into_iter().map(|e| e.id).collect();
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), ids.len(), "no entry stored twice: {ids:?}");
    assert_eq!(ids.len(), added);
    assert_eq!(ids.len(), 38, "entries e000..e037");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_store_addresses_and_files_are_refused_clearly() {
    let message = AnyStore::open("ftp://example").await.expect_err("refused").to_string();
    assert!(message.contains("--store \"ftp://example\""), "{message}");
    assert!(message.contains("expected postgres://"), "{message}");
    // Nothing listens there: the error says so, without the password.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("port");
        listener.local_addr().expect("address").port()
    };
    let url = format!("postgres://pi:hunter2@127.0.0.1:{port}/pi");
    let message = AnyStore::open(&url).await.expect_err("refused").to_string();
    assert!(!message.contains("hunter2"), "{message}");
    assert!(message.contains("pi:***@127.0.0.1"), "{message}");
    let store = postgres_store().await;
    let junk = SessionLines::parse("{\"type\":\"session\",\"id\":\"x\",\"timestamp\":\"t\",\"cwd\":\"/\"}\nnope\n");
    assert!(junk.expect_err("refused").to_string().contains("line 2"));
    assert_eq!(store.export("no-such-session").await.expect("export"), None);
}

fn user(text: &str) -> AgentMessage {
    AgentMessage::User(UserMessage::text(text))
}

fn assistant(text: &str) -> AgentMessage {
    let content = vec![AssistantContent::text(text)];
    AgentMessage::Assistant(AssistantMessage {
        content,
        provider: "mock".into(),
        model: "m".into(),
        ..Default::default()
    })
}

/// Runs `pi-scale store ARGS` with the agent folder `agent_dir`; (exit code, stdout, stderr).
fn store_cli(agent_dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let output = std::process::Command::new(pi_gen_tests::scale_agent_bin())
        .arg("store")
        .args(args)
        .env("PI_CODING_AGENT_DIR", agent_dir)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("pi-scale runs");
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).expect("utf-8");
    (output.status.code().unwrap_or(-1), text(output.stdout), text(output.stderr))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_store_command_imports_exports_copies_lists_and_deletes() {
    let url = postgres().new_database();
    let scratch = tempfile::tempdir().expect("tempdir");
    let agent_dir = scratch.path().join("agent");
    let file = scratch.path().join("session.jsonl");
    std::fs::write(&file, fixture()).expect("the file");
    let file = file.to_str().expect("utf-8");
    let id = "01a2f3c0-5e1d-7a3b-9c4d-2b8e6f1a0c77";

    let (code, _, stderr) = store_cli(&agent_dir, &["import", file, "--store", &url]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains(&format!("Imported session {id} (16 entries)")), "{stderr}");
    let (code, _, stderr) = store_cli(&agent_dir, &["import", file, "--store", &url]);
    assert_eq!(code, 1);
    assert!(stderr.contains("is stored already"), "{stderr}");

    let (code, stdout, _) = store_cli(&agent_dir, &["export", id, "--store", &url]);
    assert_eq!(code, 0);
    assert_eq!(stdout, fixture(), "exported byte for byte");
    let (_, listed, _) = store_cli(&agent_dir, &["list", "--store", &url]);
    assert_eq!(listed, format!("{id}\t16\t2026-11-24T20:00:00.000Z\t/home/dev/project\n"));

    // Postgres to the agent's own sessions folder (the default store), where the agent finds it.
    let (code, _, stderr) =
        store_cli(&agent_dir, &["copy", "--from", &url, "--to", &agent_dir.join("sessions").display().to_string()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("Copied 1 session(s); 0 were there already"), "{stderr}");
    let (_, listed_locally, _) = store_cli(&agent_dir, &["list"]);
    assert_eq!(listed_locally, listed);
    let folder = pi_runtime::session::session_dir_for_cwd(
        &agent_dir.join("sessions"),
        std::path::Path::new("/home/dev/project"),
    );
    let path = pi_runtime::session::find_most_recent_session(&folder).expect("in the agent's sessions folder");
    assert_eq!(std::fs::read_to_string(path).expect("the file"), fixture());
    let (_, _, stderr) = store_cli(&agent_dir, &["copy", "--to", &url]);
    assert!(stderr.contains("Copied 0 session(s); 1 were there already"), "{stderr}");

    let (code, _, _) = store_cli(&agent_dir, &["delete", id, "--store", &url]);
    assert_eq!(code, 0);
    let (code, _, stderr) = store_cli(&agent_dir, &["export", id, "--store", &url]);
    assert_eq!(code, 1);
    assert!(stderr.contains(&format!("no session with id {id} is stored")), "{stderr}");
    let (code, _, stderr) = store_cli(&agent_dir, &["export"]);
    assert_eq!(code, 2, "a usage error");
    assert!(stderr.contains("Usage: pi store export"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn events_reach_watchers_on_another_connection_numbered_in_order_and_replay() {
    let url = postgres().new_database();
    // Two replicas: one runs the steps and publishes, the other has the clients.
    let publisher = PostgresStore::connect(&url).await.expect("connects").event_bus();
    let watcher = PostgresStore::connect(&url).await.expect("connects").event_bus();
    let mut watch = watcher.watch("s1", 0).await.expect("watches");
    let big = format!("{{\"type\":\"message_end\",\"text\":\"{}\"}}", "x".repeat(20_000));
    // Publishers name events by numbers of their own (a step's base plus its count); watchers see 1, 2, ...
    let events: Vec<(u64, String)> = vec![
        (1001, r#"{"type":"agent_start"}"#.to_owned()),
        (1002, r#"{"type":"message_update","delta":"Hel"}"#.to_owned()),
        (1003, r#"{"type":"message_update","delta":"lo"}"#.to_owned()),
        // Too big to travel in a notification: read back by the watcher.
        (1004, big.clone()),
    ];
    publisher.publish_all("s1", &events[..2]).await.expect("published");
    for (source, body) in &events[2..] {
        publisher.publish("s1", *source, body).await.expect("published");
    }
    // Another session's event is not this watch's, and has numbers of its own.
    publisher.publish("s2", 1005, r#"{"type":"agent_start"}"#).await.expect("published");
    assert_eq!(publisher.last_number("s2").await.expect("asked"), 1);
    for (number, (_, body)) in (1..).zip(&events) {
        let (got_number, got) = next_event(&mut watch).await;
        assert_eq!((got_number, got.len()), (number, body.len()));
        assert_eq!(&got, body);
    }
    // A step run again publishes the same sources: nothing twice, and the numbers go on without a gap.
    publisher.publish_all("s1", &events[2..]).await.expect("published again");
    publisher
        .publish_all("s1", &[(1004, big.clone()), (2001, r#"{"type":"agent_end"}"#.to_owned())])
        .await
        .expect("published");
    assert_eq!(next_event(&mut watch).await, (5, r#"{"type":"agent_end"}"#.to_owned()));
    assert_eq!(publisher.last_number("s1").await.expect("asked"), 5);
    // A client that reconnects after event 1 gets every event it missed, then live ones.
    let mut late = watcher.watch("s1", 1).await.expect("watches");
    let mut replayed = Vec::new();
    for _ in 0..4 {
        replayed.push(next_event(&mut late).await.0);
    }
    assert_eq!(replayed, [2, 3, 4, 5]);
    publisher.publish("s1", 2002, r#"{"type":"message_update","delta":"!"}"#).await.expect("published");
    assert_eq!(next_event(&mut late).await, (6, r#"{"type":"message_update","delta":"!"}"#.to_owned()));
    assert_eq!(next_event(&mut watch).await.0, 6, "both watchers of the session get it");
    // Deleting the session deletes its events: a new watcher from the start replays none, and numbers
    // start again.
    let store = PostgresStore::connect(&url).await.expect("connects");
    store.delete("s1").await.expect("deleted");
    let mut fresh = watcher.watch("s1", 0).await.expect("watches");
    publisher.publish("s1", 1001, r#"{"type":"agent_start"}"#).await.expect("published");
    assert_eq!(next_event(&mut fresh).await, (1, r#"{"type":"agent_start"}"#.to_owned()));
    // An id longer than a Postgres name gets a channel all the same.
    let long = "imported-".repeat(10);
    let mut long_watch = watcher.watch(&long, 0).await.expect("watches");
    publisher.publish(&long, 7, r#"{"type":"agent_start"}"#).await.expect("published");
    assert_eq!(next_event(&mut long_watch).await.0, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn publishers_racing_over_the_same_events_number_each_once_without_gaps() {
    let url = postgres().new_database();
    let bus = PostgresStore::connect(&url).await.expect("connects").event_bus();
    let events: Vec<(u64, String)> = (1..=50).map(|source| (source, format!("{{\"n\":{source}}}"))).collect();
    // Four publishers (a step and its retries) send overlapping runs of the same events at once.
    let tasks: Vec<_> = (0..4)
        .map(|offset| {
            let (bus, events) = (bus.clone(), events.clone());
            tokio::spawn(async move {
                for chunk in events[offset * 5..].chunks(7) {
                    bus.publish_all("race", chunk).await.expect("published");
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("publisher");
    }
    assert_eq!(bus.last_number("race").await.expect("asked"), 50);
    let mut watch = bus.watch("race", 0).await.expect("watches");
    let mut seen = std::collections::HashSet::new();
    for number in 1..=50 {
        let (got, body) = next_event(&mut watch).await;
        assert_eq!(got, number);
        assert!(seen.insert(body.clone()), "{body} twice");
    }
}

/// A step still running when its session is deleted: its last append and its events do not bring the session
/// back; importing the id again does.
#[tokio::test(flavor = "multi_thread")]
async fn a_deleted_session_stays_deleted_when_a_late_step_appends_or_publishes() {
    let url = postgres().new_database();
    let store = PostgresStore::connect(&url).await.expect("connects");
    let bus = store.event_bus();
    let session = SessionLines::parse(&fixture()).expect("the fixture parses");
    let (header, entries) = (&session.header, &session.entries);
    store.append(header, &entries[..3]).await.expect("a first step");
    bus.publish_all(&header.id, &[(1, "{\"n\":1}".to_owned())]).await.expect("published");
    assert!(store.delete(&header.id).await.expect("deleted"));

    let late = store.append(header, &entries[3..5]).await;
    assert!(matches!(&late, Err(StoreError::Deleted(id)) if *id == header.id), "{late:?}");
    bus.publish_all(&header.id, &[(2, "{\"n\":2}".to_owned())]).await.expect("dropped without an error");
    assert_eq!(store.export(&header.id).await.expect("export"), None);
    assert!(store.list().await.expect("list").is_empty());
    assert_eq!(bus.last_number(&header.id).await.expect("asked"), 0);

    store.import(&session).await.expect("imported again");
    assert_eq!(store.append(header, entries).await.expect("appends again"), 0);
    assert_eq!(store.export(&header.id).await.expect("export").as_deref(), Some(fixture().as_str()));
}

async fn next_event(watch: &mut pi_temporal::store::EventWatch) -> (u64, String) {
    tokio::time::timeout(std::time::Duration::from_secs(10), watch.next())
        .await
        .expect("an event in time")
        .expect("the watch goes on")
        .expect("no error")
}

#[tokio::test(flavor = "multi_thread")]
async fn an_abort_notice_reaches_the_step_listening_and_no_event_watcher() {
    let url = postgres().new_database();
    let (worker, api) =
        (PostgresStore::connect(&url).await.expect("connects"), PostgresStore::connect(&url).await.expect("connects"));
    let session = "0195-abort";
    let mut notices = worker.event_bus().abort_notices(session, 7).await.expect("listens");
    let mut events = worker.event_bus().watch(session, 0).await.expect("watches");
    // A notice for another step (one that ended, and whose sender repeated it) is not this step's.
    api.event_bus().request_abort(session, Some(6)).await.expect("asks");
    let early = tokio::time::timeout(std::time::Duration::from_millis(500), notices.requested()).await;
    assert!(early.is_err(), "step 7 took the notice for step 6");
    api.event_bus().request_abort(session, Some(7)).await.expect("asks");
    tokio::time::timeout(std::time::Duration::from_secs(10), notices.requested()).await.expect("the notice arrives");
    let mut notices = worker.event_bus().abort_notices(session, 8).await.expect("listens");
    api.event_bus().request_abort(session, None).await.expect("asks any step");
    tokio::time::timeout(std::time::Duration::from_secs(10), notices.requested()).await.expect("the notice arrives");
    api.event_bus().publish(session, 1, r#"{"type":"agent_end"}"#).await.expect("published");
    let (number, _) = events.next().await.expect("an event").expect("no error");
    assert_eq!(number, 1, "the abort notice is not an event");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dialog_answer_reaches_the_step_asking_it_and_no_event_watcher() {
    let url = postgres().new_database();
    let (worker, api) =
        (PostgresStore::connect(&url).await.expect("connects"), PostgresStore::connect(&url).await.expect("connects"));
    let session = "0195-dialog";
    let mut answers = worker.event_bus().dialog_answers(session).await.expect("listens");
    let mut abort = worker.event_bus().abort_notices(session, 1).await.expect("listens");
    let mut events = worker.event_bus().watch(session, 0).await.expect("watches");
    let answer = |id: &str, value: &str| {
        serde_json::json!({"type": "extension_ui_response", "id": id, "value": value}).to_string()
    };
    // An answer to another dialog, then an abort notice, then ours: only ours is taken, the abort is the abort's.
    api.event_bus().answer_dialog(session, &answer("d0", "other")).await.expect("answers");
    api.event_bus().request_abort(session, Some(1)).await.expect("asks");
    api.event_bus().answer_dialog(session, &answer("d1", "Allow once")).await.expect("answers");
    let taken = tokio::time::timeout(std::time::Duration::from_secs(10), answers.answer("d1")).await.expect("in time");
    assert_eq!(taken.expect("an answer")["value"], "Allow once");
    tokio::time::timeout(std::time::Duration::from_secs(10), abort.requested()).await.expect("the abort arrives");
    let huge = answer("d2", &"x".repeat(8000));
    let refused = api.event_bus().answer_dialog(session, &huge).await;
    assert!(matches!(refused, Err(StoreError::Invalid(ref message)) if message.contains("at most")), "{refused:?}");
    api.event_bus().publish(session, 1, r#"{"type":"agent_end"}"#).await.expect("published");
    let (number, _) = events.next().await.expect("an event").expect("no error");
    assert_eq!(number, 1, "a dialog's answer is not an event");
}
