//! End to end: agents/pi.yaml built by pi-gen, run as a process against the scripted mock server.

use pi_gen_tests::{Sandbox, agent_binary, stderr, stdout};
use pi_runtime::testing::{MockLlmServer, MockScript};
use serde_json::Value;

async fn server(script: &str) -> MockLlmServer {
    let script = MockScript::from_json_str(script).expect("valid script");
    MockLlmServer::start(script).await.expect("mock server starts")
}

const MODEL_ARGS: [&str; 4] = ["--provider", "mock", "--model", "m"];

#[tokio::test(flavor = "multi_thread")]
async fn plain_text_answer_in_print_mode() {
    let binary = agent_binary("pi");
    let mock = server(r#"{"responses": [{"text": "Hello there, friend."}]}"#).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let output = sandbox.run(&binary, &[&MODEL_ARGS[..], &["-p", "Say hello"]].concat()).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert_eq!(stdout(&output), "Hello there, friend.\n");

    let requests = mock.requests();
    assert_eq!(requests.len(), 1);
    let body = &requests[0].body;
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(body["model"], "m");
    assert_eq!(body["messages"][0]["role"], "system");
    let system = body["messages"][0]["content"].as_str().expect("system prompt is a string");
    assert!(system.contains("Available tools:\n- read: "), "{system}");
    let cwd = sandbox.work_dir().canonicalize().expect("cwd");
    assert!(system.ends_with(&format!("Current working directory: {}", cwd.display())), "{system}");
    assert_eq!(
        body["messages"][1],
        serde_json::json!({"role": "user", "content": [{"type": "text", "text": "Say hello"}]})
    );
    let tools: Vec<&str> =
        body["tools"].as_array().expect("tools").iter().filter_map(|t| t["function"]["name"].as_str()).collect();
    assert_eq!(tools, ["read", "bash", "edit", "write"]);
    let auth = requests[0].headers.iter().find(|(name, _)| name.eq_ignore_ascii_case("authorization"));
    assert_eq!(auth.map(|(_, value)| value.as_str()), Some("Bearer mock-key"));
}

#[tokio::test(flavor = "multi_thread")]
async fn read_round_trip() {
    let binary = agent_binary("pi");
    let mock = server(
        r#"{"responses": [
            {"toolCalls": [{"id": "call_1", "name": "read", "arguments": {"path": "hello.txt"}}]},
            {"text": "The file says hello from the fixture."}
        ]}"#,
    )
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    sandbox.write("hello.txt", "Hello from the fixture file.\nSecond line.\n");
    let output = sandbox.run(&binary, &[&MODEL_ARGS[..], &["-p", "What does hello.txt say?"]].concat()).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert_eq!(stdout(&output), "The file says hello from the fixture.\n");

    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let messages = requests[1].body["messages"].as_array().expect("messages");
    let assistant = &messages[2];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(assistant["tool_calls"][0]["id"], "call_1");
    assert_eq!(assistant["tool_calls"][0]["function"]["arguments"], "{\"path\":\"hello.txt\"}");
    assert_eq!(
        messages[3],
        serde_json::json!({"role": "tool", "content": "Hello from the fixture file.\nSecond line.\n", "tool_call_id": "call_1"})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bash_round_trip_runs_in_the_working_directory() {
    let binary = agent_binary("pi");
    let mock = server(
        r#"{"responses": [
            {"toolCalls": [{"id": "call_b", "name": "bash", "arguments": {"command": "cat marker.txt; echo oops >&2; exit 3"}}]},
            {"text": "Done."}
        ]}"#,
    )
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    sandbox.write("marker.txt", "marker-content\n");
    let output = sandbox.run(&binary, &[&MODEL_ARGS[..], &["-p", "run it"]].concat()).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert_eq!(stdout(&output), "Done.\n");
    let requests = mock.requests();
    let tool = &requests[1].body["messages"][3];
    assert_eq!(tool["role"], "tool");
    let text = tool["content"].as_str().expect("text");
    assert!(text.starts_with("marker-content\noops\n"), "{text}");
    assert!(text.contains("Command exited with code 3"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn json_mode_prints_header_then_events_in_pi_order() {
    let binary = agent_binary("pi");
    let mock = server(
        r#"{"responses": [
            {"toolCalls": [{"id": "call_1", "name": "read", "arguments": {"path": "hello.txt"}}]},
            {"text": "It says hello."}
        ]}"#,
    )
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    sandbox.write("hello.txt", "hello\n");
    let output =
        sandbox.run(&binary, &[&MODEL_ARGS[..], &["--mode", "json", "What does hello.txt say?"]].concat()).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let lines: Vec<Value> =
        stdout(&output).lines().map(|line| serde_json::from_str(line).expect("every line is JSON")).collect();
    let header = &lines[0];
    assert_eq!(header["type"], "session");
    assert_eq!(header["version"], 3);
    assert_eq!(header["id"].as_str().map(str::len), Some(36));
    assert!(header["timestamp"].as_str().is_some_and(|t| t.ends_with('Z')));

    let mut kinds: Vec<String> = Vec::new();
    for line in &lines[1..] {
        let kind = line["type"].as_str().expect("type").to_owned();
        let label = match kind.as_str() {
            "message_start" | "message_end" => format!("{kind} {}", line["message"]["role"].as_str().unwrap_or("?")),
            "message_update" => format!("{kind} {}", line["assistantMessageEvent"]["type"].as_str().unwrap_or("?")),
            "tool_execution_start" | "tool_execution_end" => {
                format!("{kind} {}", line["toolName"].as_str().unwrap_or("?"))
            }
            _ => kind,
        };
        if kinds.last() != Some(&label) || !label.contains("delta") {
            kinds.push(label);
        }
    }
    let expected = [
        "agent_start",
        "turn_start",
        "message_start user",
        "message_end user",
        "message_start assistant",
        "message_update toolcall_start",
        "message_update toolcall_delta",
        "message_update toolcall_end",
        "message_end assistant",
        "tool_execution_start read",
        "tool_execution_end read",
        "message_start toolResult",
        "message_end toolResult",
        "turn_end",
        "turn_start",
        "message_start assistant",
        "message_update text_start",
        "message_update text_delta",
        "message_update text_end",
        "message_end assistant",
        "turn_end",
        "agent_end",
    ];
    assert_eq!(kinds, expected);
    let end = lines.last().expect("agent_end");
    let roles: Vec<&str> =
        end["messages"].as_array().expect("messages").iter().filter_map(|m| m["role"].as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "toolResult", "assistant"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn errors_go_to_stderr_with_exit_code_1() {
    let binary = agent_binary("pi");
    let mock = server(
        r#"{"responses": [{"error": {"status": 400, "body": "{\"error\":{\"message\":\"the mock exploded\"}}"}}]}"#,
    )
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    let output = sandbox.run(&binary, &[&MODEL_ARGS[..], &["-p", "hi"]].concat()).await;
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stderr(&output), "400 the mock exploded\n");
    assert_eq!(stdout(&output), "");

    let output = sandbox.run(&binary, &["--provider", "nope", "-p", "hi"]).await;
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).starts_with("Error: "), "{}", stderr(&output));
    assert!(stderr(&output).contains("\"nope\""), "{}", stderr(&output));

    let output = sandbox.run(&binary, &["--frobnicate"]).await;
    assert_eq!(output.status.code(), Some(1));
}

#[tokio::test(flavor = "multi_thread")]
async fn version_and_help() {
    let binary = agent_binary("pi");
    let sandbox = Sandbox::new("http://127.0.0.1:9/v1");
    let output = sandbox.run(&binary, &["--version"]).await;
    assert!(output.status.success());
    assert_eq!(stdout(&output).trim(), env!("CARGO_PKG_VERSION"));
    let output = sandbox.run(&binary, &["--help"]).await;
    assert!(output.status.success());
    for flag in ["--print", "--mode", "--provider", "--model", "--api-key", "--tools", "--no-tools"] {
        assert!(stdout(&output).contains(flag), "{flag} missing from help");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn piped_stdin_is_prepended_to_the_first_message_and_means_print_mode() {
    let binary = agent_binary("pi");
    let mock = server(r#"{"responses": [{"text": "first"}, {"text": "second"}, {"text": "third"}]}"#).await;
    let sandbox = Sandbox::new(&mock.base_url());
    // Like pi: the piped text is trimmed and joined to the first message without a separator.
    let output = sandbox
        .run_with_stdin(
            &binary,
            &[&MODEL_ARGS[..], &["-p", "Summarize it", "Then more"]].concat(),
            "Context from a pipe.\n",
        )
        .await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert_eq!(stdout(&output), "second\n", "print mode shows the last answer only");
    // No -p: a pipe alone selects print mode.
    let output = sandbox.run_with_stdin(&binary, &MODEL_ARGS, "  just the pipe  \n").await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert_eq!(stdout(&output), "third\n");

    let requests = mock.requests();
    assert_eq!(requests.len(), 3);
    let user_text =
        |index: usize, message: usize| requests[index].body["messages"][message]["content"][0]["text"].clone();
    assert_eq!(user_text(0, 1), "Context from a pipe.Summarize it");
    assert_eq!(user_text(1, 3), "Then more");
    assert_eq!(user_text(2, 1), "just the pipe");
}

#[tokio::test(flavor = "multi_thread")]
async fn no_prompt_at_all_exits_quietly_like_pi() {
    let binary = agent_binary("pi");
    let mock = server(r#"{"responses": []}"#).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let output = sandbox.run(&binary, &MODEL_ARGS).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert_eq!(stdout(&output), "");
    let output = sandbox.run(&binary, &[&MODEL_ARGS[..], &["--mode", "json"]].concat()).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "only the session header: {lines:?}");
    assert!(lines[0].starts_with("{\"type\":\"session\",\"version\":3,"), "{}", lines[0]);
    assert!(mock.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_flags_and_api_key_shape_the_request() {
    let binary = agent_binary("pi");
    let mock = server(r#"{"responses": [{"text": "a"}, {"text": "b"}, {"text": "c"}, {"text": "d"}]}"#).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let run = |extra: &'static [&'static str]| {
        let args: Vec<&str> = MODEL_ARGS.iter().copied().chain(extra.iter().copied()).collect();
        let sandbox = &sandbox;
        let binary = binary.clone();
        async move { sandbox.run(&binary, &args).await }
    };
    for output in [
        run(&["--tools", "bash,read", "-p", "one"]).await,
        run(&["--no-tools", "--api-key", "flag-key", "-p", "two"]).await,
        run(&["-nt", "-p", "three"]).await,
    ] {
        assert!(output.status.success(), "stderr: {}", stderr(&output));
    }
    let requests = mock.requests();
    let names = |index: usize| -> Vec<String> {
        requests[index].body["tools"]
            .as_array()
            .map(|tools| tools.iter().filter_map(|t| t["function"]["name"].as_str().map(str::to_owned)).collect())
            .unwrap_or_default()
    };
    assert_eq!(names(0), ["bash", "read"], "--tools keeps the order given");
    let system = requests[0].body["messages"][0]["content"].as_str().unwrap_or("");
    assert!(system.contains("- bash: ") && !system.contains("- edit: "), "only active tools are listed: {system}");
    assert!(requests[1].body.get("tools").is_none(), "no tools, no tools field: {}", requests[1].body);
    assert!(requests[2].body.get("tools").is_none());
    let auth = |index: usize| requests[index].header("authorization").map(str::to_owned);
    assert_eq!(auth(0).as_deref(), Some("Bearer mock-key"));
    assert_eq!(auth(1).as_deref(), Some("Bearer flag-key"), "--api-key wins over models.json");

    // Like pi, an unknown tool name does not stop the run; unlike pi, it is reported.
    let output = sandbox.run(&binary, &[&MODEL_ARGS[..], &["--tools", "read,teleport", "-p", "x"]].concat()).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert!(stderr(&output).contains("unknown tool \"teleport\""), "{}", stderr(&output));
    assert_eq!(mock.requests()[3].body["tools"].as_array().map(Vec::len), Some(1));
}

#[tokio::test(flavor = "multi_thread")]
async fn settings_of_the_wrong_type_are_named_on_stderr_and_the_run_goes_on() {
    let binary = agent_binary("pi");
    let mock = server(r#"{"responses": [{"text": "Still fine."}]}"#).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let settings = r#"{"defaultModel": 5, "compaction": "yes", "retry": {"maxRetries": "lots"}}"#;
    std::fs::write(sandbox.agent_dir().join("settings.json"), settings).expect("settings");
    let output = sandbox.run(&binary, &[&MODEL_ARGS[..], &["-p", "hi"]].concat()).await;
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(stdout(&output), "Still fine.\n");
    let said = stderr(&output);
    for key in ["`defaultModel`", "`compaction`", "`retry.maxRetries`"] {
        assert!(said.contains(key) && said.contains("settings.json"), "{key} is named: {said}");
    }
}

mod children;
mod signals;
