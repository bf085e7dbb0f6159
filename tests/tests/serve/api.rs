//! The rest of `serve`'s API: extension dialogs answered over HTTP, import and export (JSONL and HTML), the
//! model and thinking verbs, metrics, and the OpenAPI description matching the routes.

use pi_gen_tests::{Sandbox, agent_binary};
use serde_json::{Value, json};

use super::client::{Server, json_body};
use super::{Engine, mock, serve_on, stored_session, wait_idle};

#[tokio::test(flavor = "multi_thread")]
async fn a_permission_prompt_is_an_event_answered_with_post_ui() {
    let mock = mock(permission_script()).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let agent_dir = sandbox.agent_dir().to_string_lossy().into_owned();
    let args = ["--provider", "mock", "--model", "m"];
    let env = [("CAREFUL_AGENT_DIR", agent_dir.as_str())];
    let server = Server::start_env(&sandbox, &agent_binary("careful"), &args, Some("t0ken"), &env).await;
    permission_prompt_answered(&server, &sandbox).await;
}

/// On Temporal the dialog is asked by the tool step on a worker and answered through any API replica; the
/// rule comes from settings.json (pi-scale is pi, which asks for nothing by default).
#[tokio::test(flavor = "multi_thread")]
async fn on_temporal_a_permission_prompt_is_an_event_answered_with_post_ui() {
    let mock = mock(permission_script()).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let rules = json!({"permissions": {"rules": [{"tool": "{write,edit}", "action": "ask"}]}});
    std::fs::write(sandbox.agent_dir().join("settings.json"), rules.to_string()).expect("settings.json");
    let server = serve_on(Engine::Temporal, &sandbox, &[]).await;
    permission_prompt_answered(&server, &sandbox).await;
}

/// Two write calls, each answered: the first refused, the second approved.
fn permission_script() -> Value {
    let write = |content: &str| json!({"toolCalls": [{"name": "write", "arguments": {"path": "notes.md", "content": content}}]});
    json!([write("refused\n"), {"text": "refused"}, write("approved\n"), {"text": "written"}])
}

async fn permission_prompt_answered(server: &Server, sandbox: &Sandbox) {
    let id = server.create_session(sandbox).await;
    let mut events = server.events(&id, None).await;
    for confirmed in [false, true] {
        let (status, _) =
            server.post(&format!("/v1/sessions/{id}/prompt"), json!({"message": "write the notes"})).await;
        assert_eq!(status, 202);
        // The careful agent confirms; a settings.json rule offers a choice (once, always, deny).
        let request = loop {
            let event = events.until("extension_ui_request").await;
            if event["method"] == "confirm" || event["method"] == "select" {
                break event;
            }
        };
        let answer = if request["method"] == "confirm" {
            assert_eq!(request["title"], "Allow this tool call?");
            json!({"confirmed": confirmed})
        } else {
            assert!(request["title"].as_str().is_some_and(|title| title.starts_with("Allow write")), "{request}");
            assert_eq!(request["options"][0], "Allow once", "{request}");
            json!({"value": if confirmed { "Allow once" } else { "Deny" }})
        };
        assert!(!sandbox.work_dir().join("notes.md").exists(), "nothing runs before the answer");
        let dialog = request["id"].as_str().expect("an id");
        let (status, body) = server.post(&format!("/v1/sessions/{id}/ui/{dialog}"), answer).await;
        assert_eq!(status, 204, "{body}");
        events.until("agent_end").await;
        wait_idle(server, &id).await;
    }
    assert_eq!(std::fs::read_to_string(sandbox.work_dir().join("notes.md")).expect("written"), "approved\n");
    let (status, _) = server.post(&format!("/v1/sessions/{id}/ui/no-such-dialog"), json!({"confirmed": true})).await;
    assert_eq!(status, 204, "an answer nobody waits for is taken and dropped, as over RPC");
}

#[tokio::test(flavor = "multi_thread")]
async fn export_import_model_thinking_metrics_and_the_openapi_description() {
    export_import_model_thinking_metrics(Engine::Embedded).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn on_temporal_export_import_model_thinking_metrics_and_the_openapi_description() {
    export_import_model_thinking_metrics(Engine::Temporal).await;
}

async fn export_import_model_thinking_metrics(engine: Engine) {
    let mock = mock(json!([{"text": "First answer.", "usage": {"input": 12, "output": 5}}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let server = serve_on(engine, &sandbox, &[]).await;
    let id = server.create_session(&sandbox).await;
    let (status, body) = server.get(&format!("/v1/sessions/{id}/export.jsonl")).await;
    assert_eq!(status, 404, "no file before the first answer: {body}");
    assert_eq!(body["error"]["code"], "no_session_file");
    let (status, _) = server.post(&format!("/v1/sessions/{id}/prompt"), json!({"message": "hi"})).await;
    assert_eq!(status, 202);
    wait_idle(&server, &id).await;

    let (status, thinking) = server.post(&format!("/v1/sessions/{id}/thinking"), json!({"level": "high"})).await;
    assert_eq!(status, 200, "{thinking}");
    let (status, refused) = server.post(&format!("/v1/sessions/{id}/thinking"), json!({"level": "enormous"})).await;
    assert_eq!(status, 422, "{refused}");
    let (status, model) =
        server.post(&format!("/v1/sessions/{id}/model"), json!({"provider": "mock", "model": "m"})).await;
    assert_eq!(status, 200, "{model}");
    assert_eq!(model["id"], "m");
    let (_, state) = server.get(&format!("/v1/sessions/{id}")).await;
    assert_eq!(state["thinkingLevel"], "off", "the mock model does not reason, so the level stays off: {state}");

    let response = server.send(reqwest::Method::GET, &format!("/v1/sessions/{id}/export.jsonl"), None).await;
    assert_eq!(response.headers()["content-type"], "application/x-ndjson");
    let exported = response.bytes().await.expect("bytes").to_vec();
    let text = String::from_utf8_lossy(&exported);
    let changes = text.lines().filter(|line| line.contains(r#""type":"model_change""#)).count();
    assert_eq!(changes, 2, "the session's model, then the one set: {text}");
    let response = server.send(reqwest::Method::GET, &format!("/v1/sessions/{id}/export.html"), None).await;
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(response.headers()["content-type"], "text/html; charset=utf-8");
    let page = response.text().await.expect("page");
    assert!(page.contains("<html") && page.contains("First answer."), "{}", &page[..page.len().min(300)]);

    // Deleted, then imported from the export: the same file again, byte for byte.
    let response = server.send(reqwest::Method::DELETE, &format!("/v1/sessions/{id}"), None).await;
    assert_eq!(response.status().as_u16(), 204);
    assert!(sandbox.session_files().is_empty(), "the file is gone");
    let (status, _) = server.get(&format!("/v1/sessions/{id}")).await;
    assert_eq!(status, 404);
    let import = |bytes: Vec<u8>| {
        let request = server.http.post(format!("{}/v1/sessions/import", server.base)).bearer_auth("s3cret-token");
        async move { request.body(bytes).send().await.expect("import") }
    };
    let response = import(exported.clone()).await;
    assert_eq!(response.status().as_u16(), 201);
    assert_eq!(json_body(response).await["id"], id.as_str());
    assert_eq!(stored_session(&server, &sandbox, &id).await, exported, "the imported session");
    let response = import(exported.clone()).await;
    assert_eq!(response.status().as_u16(), 409, "the id exists");
    let response = import(b"not a session\n".to_vec()).await;
    assert_eq!(response.status().as_u16(), 400);
    let (_, state) = server.get(&format!("/v1/sessions/{id}")).await;
    assert_eq!(state["messageCount"], 2, "the imported session opens: {state}");

    let response = server.send(reqwest::Method::GET, "/metrics", None).await;
    assert_eq!(response.headers()["content-type"], "text/plain; version=0.0.4");
    let metrics = response.text().await.expect("metrics");
    // Embedded serve holds the imported session open (its state was asked); the Temporal tier holds none.
    let open = match engine {
        Engine::Embedded => "pi_serve_sessions_open 1\n",
        Engine::Temporal => "pi_serve_sessions_open 0\n",
    };
    for line in [
        "pi_serve_turns_started_total 1\n",
        "pi_serve_turns_finished_total 1\n",
        "pi_serve_tokens_total{kind=\"input\"} 12\n",
        "pi_serve_tokens_total{kind=\"output\"} 5\n",
        "pi_serve_turn_duration_seconds_count 1\n",
        open,
    ] {
        assert!(metrics.contains(line), "{line:?} missing in\n{metrics}");
    }

    // Every operation the description lists is routed (no route gives axum's bare 404 or a 405).
    let (status, document) = server.get("/openapi.json").await;
    assert_eq!(status, 200);
    assert_eq!(document["openapi"], "3.0.3");
    assert!(document["components"]["schemas"]["PromptBody"]["properties"]["idempotency_key"].is_object(), "{document}");
    let paths = document["paths"].as_object().expect("paths");
    let operations: usize = paths.values().map(|operations| operations.as_object().map_or(0, |o| o.len())).sum();
    assert_eq!((paths.len(), operations), (20, 22));
    for (path, operations) in paths {
        for method in operations.as_object().expect("operations").keys() {
            let concrete = path.replace("{id}", "no-such-session").replace("{request_id}", "r1");
            let method = reqwest::Method::from_bytes(method.to_uppercase().as_bytes()).expect("a method");
            let response = server.send(method.clone(), &concrete, Some(json!({}))).await;
            let status = response.status().as_u16();
            let text = response.text().await.expect("body");
            assert_ne!(status, 405, "{method} {path}");
            let not_found = text.contains("session_not_found") || text.contains("batch_not_found");
            assert!(status != 404 || not_found, "{method} {path}: {status} {text}");
        }
    }
    let _: Value = document;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_and_thinking_level_set_over_http_hold_for_the_next_prompt() {
    model_and_thinking_hold(Engine::Embedded).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn on_temporal_a_model_and_thinking_level_set_over_http_hold_for_the_next_prompt() {
    model_and_thinking_hold(Engine::Temporal).await;
}

async fn model_and_thinking_hold(engine: Engine) {
    let mock = mock(json!([{"text": "From m."}, {"text": "From the thinker."}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let models = json!({"providers": {"mock": {
        "baseUrl": mock.base_url(), "api": "openai-completions", "apiKey": "mock-key",
        "models": [{"id": "m", "name": "Mock model"}, {"id": "thinker", "name": "Thinker", "reasoning": true}]
    }}});
    std::fs::write(sandbox.agent_dir().join("models.json"), models.to_string()).expect("models.json");
    let server = serve_on(engine, &sandbox, &[]).await;
    let id = server.create_session(&sandbox).await;
    let mut events = server.events(&id, None).await;
    for (prompt, switch) in [("first", true), ("second", false)] {
        let (status, body) = server.post(&format!("/v1/sessions/{id}/prompt"), json!({"message": prompt})).await;
        assert_eq!(status, 202, "{body}");
        events.until("agent_end").await;
        wait_idle(&server, &id).await;
        if switch {
            let path = format!("/v1/sessions/{id}/model");
            let (status, model) = server.post(&path, json!({"provider": "mock", "model": "thinker"})).await;
            assert_eq!((status, &model["id"]), (200, &json!("thinker")), "{model}");
            let (status, body) = server.post(&format!("/v1/sessions/{id}/thinking"), json!({"level": "high"})).await;
            assert_eq!(status, 200, "{body}");
            let changed = events.until("thinking_level_changed").await;
            assert_eq!(changed["level"], "high", "{changed}");
            let (_, state) = server.get(&format!("/v1/sessions/{id}")).await;
            assert_eq!(
                (&state["model"]["id"], &state["thinkingLevel"]),
                (&json!("thinker"), &json!("high")),
                "{state}"
            );
        }
    }
    let requests = mock.requests();
    let asked: Vec<(&Value, &Value)> =
        requests.iter().map(|request| (&request.body["model"], &request.body["reasoning_effort"])).collect();
    assert_eq!(
        asked,
        [(&json!("m"), &Value::Null), (&json!("thinker"), &json!("high"))],
        "the second turn on the new model"
    );
    if engine == Engine::Temporal {
        // The workflow's history, its settings updates included, replays on this build.
        pi_gen_tests::temporal::history_replays(&sandbox, &server.cluster, &id, "settings-commands").await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fork_continues_as_a_new_session_holding_the_path_before_the_entry() {
    fork(Engine::Embedded).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn on_temporal_a_fork_continues_as_a_new_session_holding_the_path_before_the_entry() {
    fork(Engine::Temporal).await;
}

async fn fork(engine: Engine) {
    let mock = mock(json!([{"text": "Answer one."}, {"text": "Answer two."}, {"text": "Answer three."}])).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let server = serve_on(engine, &sandbox, &[]).await;
    let id = server.create_session(&sandbox).await;
    for message in ["first", "second"] {
        let (status, body) = server.post(&format!("/v1/sessions/{id}/prompt"), json!({"message": message})).await;
        assert_eq!(status, 202, "{body}");
        wait_idle(&server, &id).await;
    }
    let lines = stored_session(&server, &sandbox, &id).await;
    let entries: Vec<Value> =
        String::from_utf8_lossy(&lines).lines().map(|line| serde_json::from_str(line).expect("JSON")).collect();
    let second = entries
        .iter()
        .find(|entry| entry["message"]["role"] == "user" && entry["message"]["content"][0]["text"] == "second")
        .expect("the second prompt's entry");

    let (status, forked) =
        server.post(&format!("/v1/sessions/{id}/fork"), json!({"entry_id": second["id"].clone()})).await;
    assert_eq!(status, 200, "{forked}");
    assert_eq!((&forked["text"], &forked["cancelled"]), (&json!("second"), &json!(false)), "{forked}");
    let fork = forked["id"].as_str().expect("the new session's id").to_owned();
    assert_ne!(fork, id);
    let (_, state) = server.get(&format!("/v1/sessions/{fork}")).await;
    assert_eq!(state["messageCount"], 2, "the first prompt and its answer: {state}");
    let (status, _) = server.post(&format!("/v1/sessions/{fork}/prompt"), json!({"message": "third"})).await;
    assert_eq!(status, 202);
    wait_idle(&server, &fork).await;
    let asked = mock.requests()[2].body["messages"].to_string();
    assert!(asked.contains("first") && asked.contains("third") && !asked.contains("second"), "{asked}");
    let lines = stored_session(&server, &sandbox, &fork).await;
    let text = String::from_utf8_lossy(&lines);
    let header: Value = serde_json::from_str(text.lines().next().expect("a header")).expect("JSON");
    assert!(header["parentSession"].as_str().is_some_and(|parent| parent.contains(&id)), "{header}");
}
