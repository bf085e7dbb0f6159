//! Servers that fail to start, die mid-call or time out; `required`; `--no-mcp`, `--tools`; `mcp list`.

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn failing_dying_and_slow_servers_never_hang_the_agent() {
    let mock = server(json!({"responses": [
        {"toolCalls": [{"id": "s1", "name": "mcp__slow__slow", "arguments": {"ms": 20000}}]},
        {"toolCalls": [{"id": "d1", "name": "mcp__files__die", "arguments": {}}]},
        {"toolCalls": [{"id": "d2", "name": "mcp__files__echo", "arguments": {"text": "anyone?"}}]},
        {"text": "Survived."}
    ]}))
    .await;
    let sandbox = McpSandbox::new(&mock);
    let slow_log = sandbox.sandbox.root.path().join("slow.log");
    sandbox.user_servers(json!({
        "broken": rmcp_stdio_entry(&["--fail-start", "no licence for this machine"]),
        "slow": {"command": rmcp_server_bin().to_string_lossy(), "args": ["--log", slow_log.to_string_lossy()], "timeout": 0.5}
    }));
    let output = sandbox.run(&["--mode", "json", "Try everything"]).await;
    assert_success(&output);
    let errors = stderr(&output);
    assert!(errors.contains("\"broken\"") && errors.contains("no licence for this machine"), "{errors}");
    assert!(errors.contains("\"files\"") && errors.contains("exited"), "the dead server is reported: {errors}");

    let events = events(&output);
    let slow = tool_end(&events, "s1");
    assert_eq!(slow["isError"], true);
    assert!(slow["result"]["content"][0]["text"].as_str().unwrap_or_default().contains("0.5 s"), "{slow}");
    let dead = tool_end(&events, "d1");
    assert_eq!(dead["isError"], true, "{dead}");
    let text = dead["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("\"files\"") && text.contains("not running"), "{text}");
    // The next call starts the server again, as pi does.
    let again = tool_end(&events, "d2");
    assert_eq!(again["isError"], false, "{again}");
    assert_eq!(again["result"]["content"][0]["text"], "anyone?");
    assert_eq!(mock.requests().len(), 4);
    let log = sandbox.files_log();
    let calls: Vec<Value> = log_lines(&log).into_iter().filter(|line| line.get("tool").is_some()).collect();
    assert_eq!(calls.len(), 2, "die, then echo on a new process: {calls:?}");
    assert_eq!(processes_mentioning(&log.to_string_lossy()), Vec::<u32>::new(), "the restarted server was stopped");
    assert_eq!(processes_mentioning(&slow_log.to_string_lossy()), Vec::<u32>::new(), "the slow server was stopped");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_required_server_that_cannot_start_stops_the_agent() {
    let mock = server(json!({"responses": [{"text": "never asked"}]})).await;
    let sandbox = McpSandbox::new(&mock);
    let mut entry = rmcp_stdio_entry(&["--fail-start", "missing credentials"]);
    entry["required"] = json!(true);
    sandbox.user_servers(json!({"needed": entry}));
    let output = sandbox.run(&["-p", "hello"]).await;
    assert_eq!(output.status.code(), Some(1), "stderr: {}", stderr(&output));
    let errors = stderr(&output);
    assert!(errors.contains("required MCP server \"needed\"") && errors.contains("missing credentials"), "{errors}");
    assert!(mock.requests().is_empty(), "no request without a required server");
}

#[tokio::test(flavor = "multi_thread")]
async fn no_mcp_and_tools_select_what_the_model_gets() {
    let mock = server(json!({"responses": [{"text": "one"}, {"text": "two"}, {"text": "three"}]})).await;
    let sandbox = McpSandbox::new(&mock);
    assert_success(&sandbox.run(&["--no-mcp", "-p", "hello"]).await);
    assert!(!sandbox.files_log().exists(), "--no-mcp starts no server");
    assert_success(&sandbox.run(&["--tools", "read,mcp__files__e*", "-p", "hello"]).await);
    assert_success(&sandbox.run(&["--tools", "read", "-p", "hello"]).await);
    let requests = mock.requests();
    assert!(!tool_names(&requests[0]).iter().any(|name| name.starts_with("mcp__")));
    assert_eq!(tool_names(&requests[1]), ["read", "mcp__files__echo", "mcp__files__env"]);
    assert_eq!(tool_names(&requests[2]), ["read"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_list_shows_every_server_and_fails_when_one_does() {
    let mock = server(json!({"responses": []})).await;
    let sandbox = McpSandbox::new(&mock);
    sandbox.user_servers(json!({
        "broken": rmcp_stdio_entry(&["--fail-start", "cannot bind"]),
        "bad name!": {"command": "x"}
    }));
    let agent_dir = sandbox.sandbox.agent_dir();
    let agent_dir = agent_dir.to_string_lossy();
    let env = [("MCPDEMO_AGENT_DIR", agent_dir.as_ref()), ("PATH", sandbox.path.as_str())];
    let output = sandbox.sandbox.run_env(&agent_binary("mcp"), &["mcp", "list"], &env).await;
    assert_eq!(output.status.code(), Some(1), "stderr: {}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("files: connected,") && text.contains("mcp__files__echo"), "{text}");
    assert!(text.contains("docs: disabled"), "{text}");
    assert!(text.contains("broken: failed") && text.contains("cannot bind"), "{text}");
    assert!(text.contains("config error:") && text.contains("bad name!"), "{text}");

    let output = sandbox.sandbox.run_env(&agent_binary("mcp"), &["mcp", "list", "--json"], &env).await;
    let listing: Value = serde_json::from_str(stdout(&output).trim()).expect("mcp list --json is JSON");
    let files =
        listing["servers"].as_array().expect("servers").iter().find(|server| server["name"] == "files").cloned();
    let files = files.expect("files listed");
    assert_eq!(files["state"], "connected");
    assert!(files["tools"].as_array().is_some_and(|tools| tools.contains(&json!("echo"))), "{files}");
    assert_eq!(listing["errors"].as_array().map(Vec::len), Some(1));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_server_dying_or_timing_out_is_an_error_result() {
    let mock = server(json!({"responses": [
        {"toolCalls": [{"id": "t1", "name": "mcp__py__slow", "arguments": {"ms": 30000}}]},
        {"toolCalls": [{"id": "t2", "name": "mcp__py__die", "arguments": {}}]},
        {"text": "Python is gone."}
    ]}))
    .await;
    let sandbox = McpSandbox::new(&mock);
    let log = sandbox.sandbox.root.path().join("py.log");
    let mut entry = python_stdio_entry(&log);
    entry["timeout"] = json!(6);
    sandbox.user_servers(json!({"py": entry, "files": {"enabled": false}}));
    let output = sandbox.run(&["--mode", "json", "Try python"]).await;
    assert_success(&output);
    let events = events(&output);
    let slow = tool_end(&events, "t1");
    assert_eq!(slow["isError"], true);
    assert!(slow["result"]["content"][0]["text"].as_str().unwrap_or_default().contains("within 6 s"), "{slow}");
    let died = tool_end(&events, "t2");
    assert_eq!(died["isError"], true);
    assert!(died["result"]["content"][0]["text"].as_str().unwrap_or_default().contains("not running"), "{died}");
    assert!(stderr(&output).contains("\"py\" exited"), "{}", stderr(&output));
    assert_eq!(processes_mentioning(&log.to_string_lossy()), Vec::<u32>::new());
}

/// Waits (up to 10 s) until `check` holds.
async fn eventually(mut check: impl FnMut() -> bool) -> bool {
    for _ in 0..200 {
        if check() {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    check()
}

#[tokio::test(flavor = "multi_thread")]
async fn servers_go_with_the_agent_on_sigterm_and_when_it_is_killed() {
    for signal in [libc::SIGTERM, libc::SIGKILL] {
        let mock = server(json!({"responses": [
            {"toolCalls": [{"id": "w1", "name": "mcp__files__slow", "arguments": {"ms": 30000}}]},
            {"text": "too late"}
        ]}))
        .await;
        let sandbox = McpSandbox::new(&mock);
        let agent_dir = sandbox.sandbox.agent_dir();
        let mut child = tokio::process::Command::new(agent_binary("mcp"))
            .args([&MODEL_ARGS[..], &["--no-session", "-p", "wait for it"]].concat())
            .current_dir(sandbox.sandbox.work_dir())
            .env("MCPDEMO_AGENT_DIR", &agent_dir)
            .env("PATH", &sandbox.path)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("agent starts");
        let log = sandbox.files_log();
        let called = eventually(|| log_lines(&log).iter().any(|line| line["tool"] == "slow")).await;
        assert!(called, "the slow call reached the server");
        let running = processes_mentioning(&log.to_string_lossy());
        assert_eq!(running.len(), 1, "one server runs: {running:?}");
        let pid = i32::try_from(child.id().expect("pid")).expect("pid fits");
        // SAFETY: kill(2) on the agent this test started.
        unsafe {
            libc::kill(pid, signal);
        }
        let status = child.wait().await.expect("agent exits");
        assert!(!status.success(), "signal {signal}: {status:?}");
        let gone = eventually(|| processes_mentioning(&log.to_string_lossy()).is_empty()).await;
        assert!(gone, "signal {signal}: the server outlived the agent");
    }
}
