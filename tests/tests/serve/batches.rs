//! Batch runs (`POST /v1/batches`): one prompt in a session per repository, at most `concurrency` at once,
//! progress and answers at `GET /v1/batches/{id}`. On Temporal a batch is a parent workflow whose children
//! are the sessions' workflows; embedded `serve` runs it in the server.

use std::time::Duration;

use pi_gen_tests::Sandbox;
use serde_json::{Value, json};

use super::client::WAIT;
use super::{Engine, mock, serve_on};

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_runs_the_prompt_in_every_repo_at_most_concurrency_at_once() {
    batch_runs(Engine::Embedded).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn on_temporal_a_batch_runs_the_prompt_in_every_repo_at_most_concurrency_at_once() {
    batch_runs(Engine::Temporal).await;
}

async fn batch_runs(engine: Engine) {
    // The first answer waits until a second request has come: two sessions run together.
    let answer = |extra: Value| {
        let mut answer = json!({"text": "Checked.", "delayMs": 30});
        answer.as_object_mut().expect("object").extend(extra.as_object().expect("object").clone());
        answer
    };
    let mock = mock(json!([answer(json!({"waitForRequests": 2})), answer(json!({})), answer(json!({}))])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let repos: Vec<String> = ["alpha", "beta", "gamma"]
        .iter()
        .map(|name| {
            let repo = sandbox.work_dir().join(name);
            std::fs::create_dir_all(&repo).expect("repo");
            repo.to_string_lossy().into_owned()
        })
        .collect();
    let server = serve_on(engine, &sandbox, &[]).await;

    let (status, started) =
        server.post("/v1/batches", json!({"prompt": "check the build", "repos": repos, "concurrency": 2})).await;
    assert_eq!(status, 202, "{started}");
    let batch = started["id"].as_str().expect("an id").to_owned();
    let sessions = started["sessions"].as_array().expect("sessions").clone();
    let started_repos: Vec<&str> = sessions.iter().map(|session| session["repo"].as_str().expect("a repo")).collect();
    assert_eq!(started_repos, repos, "a session per repository, in order");

    let mut most_running = 0;
    let finished = tokio::time::timeout(WAIT, async {
        loop {
            let (status, progress) = server.get(&format!("/v1/batches/{batch}")).await;
            assert_eq!(status, 200, "{progress}");
            most_running = most_running.max(progress["running"].as_u64().expect("running"));
            if progress["done"].as_u64().expect("done") + progress["failed"].as_u64().expect("failed") == 3 {
                return progress;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the batch ends");
    assert_eq!((finished["total"].as_u64(), finished["done"].as_u64()), (Some(3), Some(3)), "{finished}");
    assert!(most_running <= 2, "at most two at once, saw {most_running}");
    assert_eq!(mock.requests().len(), 3, "one model call per session");
    for (session, repo) in finished["sessions"].as_array().expect("sessions").iter().zip(&repos) {
        assert_eq!(session["answer"], json!({"text": "Checked.", "stopReason": "stop"}), "{session}");
        let id = session["id"].as_str().expect("an id");
        let response = server.send(reqwest::Method::GET, &format!("/v1/sessions/{id}/export.jsonl"), None).await;
        let text = response.text().await.expect("the session");
        let header: Value = serde_json::from_str(text.lines().next().expect("a header")).expect("JSON");
        assert_eq!(header["cwd"], repo.as_str(), "the session works in its repository");
        assert!(text.contains("check the build"), "the batch's prompt: {text}");
        let (_, state) = server.get(&format!("/v1/sessions/{id}")).await;
        assert_eq!(state["isStreaming"], false, "{state}");
    }

    if engine == Engine::Temporal {
        // The batch workflow's history (children started, signalled and awaited) replays on this build.
        pi_gen_tests::temporal::history_replays(&sandbox, &server.cluster, &batch, "batch-of-three").await;
    }
    let (status, body) = server.get("/v1/batches/batch-no-such-batch").await;
    assert_eq!((status, &body["error"]["code"]), (404, &json!("batch_not_found")), "{body}");
    let outside = sandbox.root.path().join("agent").to_string_lossy().into_owned();
    let (status, body) = server.post("/v1/batches", json!({"prompt": "p", "repos": [outside]})).await;
    assert_eq!((status, &body["error"]["code"]), (403, &json!("cwd_outside_roots")), "{body}");
    for (request, expected) in [
        (json!({"prompt": "p", "repos": [repos[0]], "concurrency": 0}), "concurrency"),
        (json!({"prompt": " ", "repos": [repos[0]]}), "prompt"),
        (json!({"prompt": "p", "repos": []}), "repos"),
    ] {
        let (status, body) = server.post("/v1/batches", request).await;
        assert_eq!(status, 400, "{body}");
        assert!(body["error"]["message"].as_str().is_some_and(|m| m.starts_with(expected)), "{body}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_session_s_answer_is_its_last_after_a_retry() {
    answer_after_a_retry(Engine::Embedded).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn on_temporal_a_batch_session_s_answer_is_its_last_after_a_retry() {
    answer_after_a_retry(Engine::Temporal).await;
}

/// A session of a batch whose first answer fails: its answer is the retry's, not the failure's.
async fn answer_after_a_retry(engine: Engine) {
    let unavailable = json!({"error": {"status": 503, "body": {"error": {"message": "upstream overloaded"}}}});
    let mock = mock(json!([unavailable, {"text": "Recovered."}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let settings = json!({"retry": {"baseDelayMs": 10, "provider": {"maxRetries": 0}}});
    std::fs::write(sandbox.agent_dir().join("settings.json"), settings.to_string()).expect("settings.json");
    let server = serve_on(engine, &sandbox, &[]).await;
    let repo = sandbox.work_dir().to_string_lossy().into_owned();
    let (status, started) = server.post("/v1/batches", json!({"prompt": "check", "repos": [repo]})).await;
    assert_eq!(status, 202, "{started}");
    let batch = started["id"].as_str().expect("an id").to_owned();
    let finished = tokio::time::timeout(WAIT, async {
        loop {
            let (_, progress) = server.get(&format!("/v1/batches/{batch}")).await;
            if progress["done"].as_u64().expect("done") + progress["failed"].as_u64().expect("failed") == 1 {
                return progress;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the batch ends");
    let session = &finished["sessions"][0];
    assert_eq!(session["status"], "done", "{finished}");
    assert_eq!(session["answer"], json!({"text": "Recovered.", "stopReason": "stop"}), "{finished}");
    assert_eq!(mock.requests().len(), 2);
}
