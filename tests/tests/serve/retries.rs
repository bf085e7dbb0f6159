//! What pi does after a run, through `serve` on both engines: a failed answer is retried after its delay
//! (the stream equal to `--mode json`'s), an abort during that delay cancels the retry, and an answer that
//! fails the agent's output schema is sent back once. On Temporal the delay is the workflow's durable
//! timer, and the retried run is a run of the session's workflow like any other.

use pi_gen_tests::{Sandbox, agent_binary, scale_agent_bin};
use serde_json::{Value, json};

use super::{Deployment, Engine, mock, normalized, serve_on, serve_on_env, stored_session, wait_idle};
use crate::client::Server;

/// A 503 from the model, as an OpenAI-compatible server sends it.
fn unavailable() -> Value {
    json!({"error": {
        "status": 503,
        "body": {"error": {"message": "upstream overloaded"}},
        "headers": {"retry-after-ms": "10"}
    }})
}

/// Agent-level retries after `base_delay_ms`; none inside the provider's call, so each failure is an answer.
fn write_retry_settings(sandbox: &Sandbox, base_delay_ms: u64) {
    let settings = json!({"retry": {"baseDelayMs": base_delay_ms, "provider": {"maxRetries": 0}}});
    std::fs::write(sandbox.agent_dir().join("settings.json"), settings.to_string()).expect("settings.json");
}

/// `binary --mode json` with the mock model, `flags` and `prompt`: the events it printed, normalized.
async fn json_mode(
    sandbox: &Sandbox,
    binary: &std::path::Path,
    flags: &[&str],
    prompt: &str,
    env: &[(&str, &str)],
) -> Vec<Value> {
    let args = [&["--mode", "json", "--provider", "mock", "--model", "m"], flags, &[prompt]].concat();
    let output = sandbox.run_env(binary, &args, env).await;
    assert!(output.status.success(), "{}", pi_gen_tests::stderr(&output));
    // Its session file is not the server's: the embedded server's is looked for among the agent's files.
    std::fs::remove_dir_all(sandbox.agent_dir().join("sessions")).expect("json mode's session removed");
    pi_gen_tests::stdout(&output)
        .lines()
        .map(|line| normalized(serde_json::from_str(line).expect("a JSON line")))
        .collect()
}

/// Prompts a new session of `server` with `prompt` and compares its stream, through the `runs`-th
/// `agent_end`, with `printed`, event by event. Returns the session's id.
async fn served_as_printed(server: &Server, sandbox: &Sandbox, prompt: &str, runs: usize, printed: &[Value]) -> String {
    let id = server.create_session(sandbox).await;
    let mut events = server.events(&id, None).await;
    let (status, body) = server.post(&format!("/v1/sessions/{id}/prompt"), json!({"message": prompt})).await;
    assert_eq!(status, 202, "{body}");
    for _ in 0..runs {
        events.until("agent_end").await;
    }
    let served: Vec<Value> = events.seen.iter().map(|(_, event)| normalized(event.clone())).collect();
    let kinds = |events: &[Value]| events.iter().map(|event| event["type"].to_string()).collect::<Vec<_>>();
    assert_eq!(kinds(&served), kinds(printed), "the same events in the same order");
    for (index, (served, printed)) in served.iter().zip(printed).enumerate() {
        assert_eq!(served, printed, "event {} differs", index + 1);
    }
    wait_idle(server, &id).await;
    id
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_answer_is_retried_after_its_delay_as_in_json_mode() {
    retried_as_in_json_mode(Engine::Embedded).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn on_temporal_a_failed_answer_is_retried_after_its_delay_as_in_json_mode() {
    retried_as_in_json_mode(Engine::Temporal).await;
}

async fn retried_as_in_json_mode(engine: Engine) {
    let mock = mock(json!([unavailable(), {"text": "Recovered."}, unavailable(), {"text": "Recovered."}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    write_retry_settings(&sandbox, 10);
    let printed = json_mode(&sandbox, &agent_binary("pi"), &[], "hi", &[]).await;
    let retries: Vec<&Value> = printed.iter().filter(|event| event["type"] == "auto_retry_start").collect();
    assert_eq!(retries.len(), 1, "json mode retried once");
    assert_eq!((retries[0]["attempt"].as_u64(), retries[0]["delayMs"].as_u64()), (Some(1), Some(10)));

    let server = serve_on(engine, &sandbox, &[]).await;
    let id = served_as_printed(&server, &sandbox, "hi", 2, &printed).await;
    assert_eq!(mock.requests().len(), 4, "one request per attempt, in each mode");
    let stored = String::from_utf8(stored_session(&server, &sandbox, &id).await).expect("utf-8");
    let answers: Vec<Value> = stored
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("a JSON line"))
        .filter(|entry| entry["message"]["role"] == "assistant")
        .collect();
    assert_eq!(answers.len(), 2, "the failed answer stays in the session, the retry's follows it");
    assert_eq!(answers[0]["message"]["stopReason"], "error");
    assert_eq!(answers[1]["message"]["content"][0]["text"], "Recovered.");
    assert_eq!(answers[1]["parentId"], answers[0]["id"]);
    replays(&server, &sandbox, &id, "auto-retry").await;
}

/// On Temporal: the session's workflow history replays on this build (and is recorded when asked to be).
async fn replays(deployment: &Deployment, sandbox: &Sandbox, id: &str, name: &str) {
    if deployment.engine == Engine::Temporal {
        pi_gen_tests::temporal::history_replays(sandbox, &deployment.cluster, id, name).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_abort_during_the_delay_cancels_the_retry() {
    abort_cancels_the_retry(Engine::Embedded).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn on_temporal_an_abort_during_the_delay_cancels_the_retry() {
    abort_cancels_the_retry(Engine::Temporal).await;
}

async fn abort_cancels_the_retry(engine: Engine) {
    let mock = mock(json!([unavailable(), {"text": "Back again."}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    write_retry_settings(&sandbox, 60_000);
    let server = serve_on(engine, &sandbox, &[]).await;
    let id = server.create_session(&sandbox).await;
    let mut events = server.events(&id, None).await;
    let (status, _) = server.post(&format!("/v1/sessions/{id}/prompt"), json!({"message": "hi"})).await;
    assert_eq!(status, 202);
    let start = events.until("auto_retry_start").await;
    assert_eq!((start["attempt"].as_u64(), start["delayMs"].as_u64()), (Some(1), Some(60_000)), "{start}");
    let (status, body) = server.post(&format!("/v1/sessions/{id}/abort"), json!({})).await;
    assert!((200..300).contains(&status), "{status} {body}");
    let end = events.until("auto_retry_end").await;
    assert_eq!(end["success"], false, "{end}");
    assert_eq!(end["finalError"], "Retry cancelled", "{end}");
    assert_eq!(end["attempt"], 1, "{end}");
    wait_idle(&server, &id).await;
    assert_eq!(mock.requests().len(), 1, "the retry never asked the model");

    // The session goes on with the next prompt.
    let (status, _) = server.post(&format!("/v1/sessions/{id}/prompt"), json!({"message": "again"})).await;
    assert_eq!(status, 202);
    let next = events.until("agent_end").await;
    let answer = next["messages"].as_array().and_then(|messages| messages.last()).expect("the run's messages");
    assert_eq!(answer["content"][0]["text"], "Back again.", "{next}");
    wait_idle(&server, &id).await;
    replays(&server, &sandbox, &id, "retry-cancelled").await;
}

/// A triage record valid against agents/triage.yaml's output schema.
const VALID: &str = r#"{"severity": "minor", "area": "cli", "summary": "Typo in --help.", "files": ["src/cli.rs"]}"#;

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_failing_the_output_schema_is_sent_back_once_as_in_json_mode() {
    corrected_as_in_json_mode(Engine::Embedded).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn on_temporal_an_answer_failing_the_output_schema_is_sent_back_once_as_in_json_mode() {
    corrected_as_in_json_mode(Engine::Temporal).await;
}

async fn corrected_as_in_json_mode(engine: Engine) {
    let invalid = json!({"text": r#"{"severity": "urgent", "area": "cli", "summary": "Typo."}"#});
    let mock = mock(json!([invalid, {"text": VALID}, invalid, {"text": VALID}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let env = [("PI_SCALE_AGENT", "triage")];
    let prompt = "Triage: the help has a typo";
    let printed = json_mode(&sandbox, &scale_agent_bin(), &[], prompt, &env).await;
    let correction = printed
        .iter()
        .find(|event| event["type"] == "message_end" && event["message"]["customType"] == "output_correction")
        .expect("json mode sent the answer back");
    let text = correction["message"]["content"].as_str().expect("the correction's text");
    assert!(text.contains("at /severity: "), "{text}");

    let server = serve_on_env(engine, &sandbox, &[], &env).await;
    let id = served_as_printed(&server, &sandbox, prompt, 2, &printed).await;
    let requests = mock.requests();
    assert_eq!(requests.len(), 4, "one correction in each mode, no more");
    let messages = requests[3].body["messages"].as_array().expect("messages");
    let sent = messages.last().expect("the correction")["content"].to_string();
    assert!(sent.contains("does not match the required output schema"), "{sent}");
    replays(&server, &sandbox, &id, "output-correction").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fallback_model_takes_over_a_failed_run_as_in_json_mode() {
    falls_back_as_in_json_mode(Engine::Embedded).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn on_temporal_a_fallback_model_takes_over_a_failed_run_as_in_json_mode() {
    falls_back_as_in_json_mode(Engine::Temporal).await;
}

async fn falls_back_as_in_json_mode(engine: Engine) {
    let answered = json!({"text": "From the fallback."});
    let mock = mock(json!([unavailable(), answered, unavailable(), answered])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let models_json = sandbox.agent_dir().join("models.json");
    let mut models: Value = serde_json::from_slice(&std::fs::read(&models_json).expect("models.json")).expect("JSON");
    models["providers"]["mock"]["models"].as_array_mut().expect("models").push(json!({"id": "m2", "name": "Mock 2"}));
    std::fs::write(&models_json, models.to_string()).expect("models.json");
    let settings = json!({"retry": {"enabled": false, "provider": {"maxRetries": 0}}});
    std::fs::write(sandbox.agent_dir().join("settings.json"), settings.to_string()).expect("settings.json");
    let flags = ["--fallback-model", "mock/m2"];
    let printed = json_mode(&sandbox, &agent_binary("pi"), &flags, "hi", &[]).await;
    let fallback = printed.iter().find(|event| event["type"] == "model_fallback").expect("json mode fell back");
    assert_eq!((fallback["from"].as_str(), fallback["to"].as_str()), (Some("mock/m"), Some("mock/m2")));

    let server = serve_on(engine, &sandbox, &flags).await;
    let id = served_as_printed(&server, &sandbox, "hi", 2, &printed).await;
    let models: Vec<Value> = mock.requests().iter().map(|request| request.body["model"].clone()).collect();
    assert_eq!(models, ["m", "m2", "m", "m2"], "each mode asked the chosen model, then the fallback");
    let (_, state) = server.get(&format!("/v1/sessions/{id}")).await;
    assert_eq!(state["model"]["id"], "m", "the session stays on the model the user chose: {state}");
    replays(&server, &sandbox, &id, "model-fallback").await;
}
