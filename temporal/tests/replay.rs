//! Determinism: session workflow histories recorded by earlier builds (`tests/histories/`, recorded by the
//! scale-out tests with `PI_GEN_RECORD_HISTORIES`) replay on this build's workflow code without a server,
//! and a history whose activities differ from what the code schedules is refused.

use std::path::PathBuf;

use pi_temporal::worker::replay::{ReplayError, replay_history};

fn histories() -> Vec<(String, Vec<u8>)> {
    let folder = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/histories");
    let mut found: Vec<(String, Vec<u8>)> = std::fs::read_dir(&folder)
        .expect("the histories folder")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .map(|path| (path.display().to_string(), std::fs::read(&path).expect("a history")))
        .collect();
    found.sort();
    found
}

#[tokio::test]
async fn recorded_histories_replay_on_this_build() {
    let histories = histories();
    assert!(histories.len() >= 2, "the recorded histories are there");
    for (name, json) in histories {
        if let Err(error) = replay_history(&json).await {
            panic!("{name} does not replay: {error}");
        }
    }
}

#[tokio::test]
async fn a_history_whose_activities_differ_from_the_code_is_refused() {
    for (name, json) in histories() {
        // The first tool batch (or settings command, or end of a run) recorded as a model call, or a batch's
        // first child as another workflow: not what the workflow schedules at that point.
        let text = String::from_utf8(json).expect("UTF-8");
        let tampered = [
            (r#""activity_type":{"name":"run_tools"}"#, r#""activity_type":{"name":"call_model"}"#),
            (r#""activity_type":{"name":"run_command"}"#, r#""activity_type":{"name":"call_model"}"#),
            // A run without tools (a retry, a correction): its first end recorded as a model call.
            (r#""activity_type":{"name":"finish_run"}"#, r#""activity_type":{"name":"call_model"}"#),
            // A batch: its first child recorded as a batch, not a session.
            (r#""workflow_type":{"name":"SessionWorkflow"}"#, r#""workflow_type":{"name":"BatchWorkflow"}"#),
        ]
        .iter()
        .map(|(recorded, other)| text.replacen(recorded, other, 1))
        .find(|tampered| *tampered != text)
        .unwrap_or_else(|| panic!("{name} has no tool batch, settings command, end of a run or child workflow"));
        match replay_history(tampered.as_bytes()).await {
            Err(ReplayError::Mismatch(message)) => assert!(message.contains("ondeterminism"), "{name}: {message}"),
            other => panic!("{name}: a tampered history replayed: {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_file_that_is_not_a_history_is_named_as_such() {
    assert!(matches!(replay_history(b"{\"not\": \"a history\"}").await, Err(ReplayError::History(_))));
}

#[tokio::test]
async fn a_history_with_only_its_start_has_nothing_to_replay() {
    // A run that continued as new a moment ago: its history holds only its start, and no task to replay.
    let (name, json) = histories().into_iter().next().expect("a history");
    let mut history: serde_json::Value = serde_json::from_slice(&json).expect("JSON");
    let events = history["events"].as_array_mut().expect("events");
    events.truncate(1);
    let started = serde_json::to_vec(&history).expect("JSON");
    let replayed = tokio::time::timeout(std::time::Duration::from_secs(5), replay_history(&started)).await;
    assert!(matches!(replayed, Ok(Ok(()))), "{name}'s start alone: {replayed:?}");
}
