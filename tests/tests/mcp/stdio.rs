//! Stdio servers: the YAML's (rmcp) and one from `mcp.json` (the Python SDK's).

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn the_yaml_server_s_tools_are_declared_called_and_answered() {
    let mock = server(json!({"responses": [
        {"toolCalls": [{"id": "c1", "name": "mcp__files__echo", "arguments": {"text": "hello from the model"}}]},
        {"toolCalls": [{"id": "c2", "name": "mcp__files__add", "arguments": {"a": "2", "b": 3}}]},
        {"toolCalls": [{"id": "c3", "name": "mcp__files__add", "arguments": {"a": "two"}}]},
        {"toolCalls": [{"id": "c4", "name": "mcp__files__fail", "arguments": {"message": "no such thing"}}]},
        {"toolCalls": [{"id": "c5", "name": "mcp__files__image", "arguments": {}}]},
        {"toolCalls": [{"id": "c6", "name": "mcp__files__echo", "arguments": {"text": "x", "path": "prod.env"}}]},
        {"text": "All answered."}
    ]}))
    .await;
    let sandbox = McpSandbox::new(&mock);
    let output = sandbox.run(&["--mode", "json", "Use the files server"]).await;
    assert_success(&output);
    let requests = mock.requests();
    assert_eq!(requests.len(), 7, "stderr: {}", stderr(&output));

    // Declared with the server's description and schema; the YAML's `exclude` holds nothing the test server has.
    let first = &requests[0];
    let names = tool_names(first);
    for name in ["read", "mcp__files__echo", "mcp__files__add", "mcp__files__die", "mcp__files__add_tool"] {
        assert!(names.iter().any(|known| known == name), "{name} missing from {names:?}");
    }
    let echo = tool_declaration(first, "mcp__files__echo");
    assert_eq!(echo["description"], "Echoes the text back.");
    assert_eq!(echo["parameters"]["required"], json!(["text"]));
    assert_eq!(echo["parameters"]["properties"]["text"]["type"], "string");
    let prompt = system_prompt(first);
    assert!(prompt.contains("- mcp__files__echo: Echoes the text back."), "{prompt}");

    // The answers reach the model; arguments were coerced and validated like a built-in tool's.
    assert_eq!(last_tool_result(&requests[1]), "hello from the model");
    assert!(last_tool_result(&requests[2]).contains('5'), "{}", last_tool_result(&requests[2]));
    let invalid = last_tool_result(&requests[3]);
    assert!(invalid.contains("Validation failed for tool \"mcp__files__add\""), "{invalid}");
    assert!(last_tool_result(&requests[4]).contains("no such thing"));

    let events = events(&output);
    let echo_end = tool_end(&events, "c1");
    assert_eq!(echo_end["isError"], false);
    assert_eq!(echo_end["result"]["details"]["server"], "files");
    assert_eq!(echo_end["result"]["details"]["tool"], "echo");
    assert_eq!(tool_end(&events, "c2")["result"]["details"]["structuredContent"], json!({"sum": 5}));
    assert_eq!(tool_end(&events, "c3")["isError"], true);
    assert_eq!(tool_end(&events, "c4")["isError"], true);
    let image = tool_end(&events, "c5");
    let kinds: Vec<&str> = image["result"]["content"]
        .as_array()
        .expect("content")
        .iter()
        .filter_map(|block| block["type"].as_str())
        .collect();
    assert!(kinds.contains(&"image"), "{image}");
    // The YAML's hook refused this call before it reached the server.
    let refused = tool_end(&events, "c6");
    assert_eq!(refused["isError"], true);
    assert!(refused["result"]["content"][0]["text"].as_str().unwrap_or_default().contains(".env files hold secrets"));

    // The server saw exactly the valid calls (the invalid one never left the agent), and is gone now.
    let calls: Vec<String> =
        log_lines(&sandbox.files_log()).iter().filter_map(|line| line["tool"].as_str().map(str::to_owned)).collect();
    assert_eq!(calls, ["echo", "add", "fail", "image"]);
    let log = sandbox.files_log();
    assert_eq!(processes_mentioning(&log.to_string_lossy()), Vec::<u32>::new(), "the server outlived the agent");
    let stderr_log = sandbox.sandbox.agent_dir().join("mcp-logs/files.log");
    let server_stderr = std::fs::read_to_string(&stderr_log).unwrap_or_default();
    assert!(server_stderr.contains("mcp-test-server ready"), "stderr log: {server_stderr:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_python_sdk_server_from_mcp_json_answers_and_lists_changed_tools() {
    let mock = server(json!({"responses": [
        {"toolCalls": [{"id": "p0", "name": "mcp__py__add", "arguments": {"a": "twenty", "b": 22}}]},
        {"toolCalls": [{"id": "p1", "name": "mcp__py__add", "arguments": {"a": 20, "b": 22}}]},
        {"toolCalls": [{"id": "p2", "name": "mcp__py__add_tool", "arguments": {"name": "shout"}}]},
        {"text": "Added a tool."},
        {"toolCalls": [{"id": "p4", "name": "mcp__py__shout", "arguments": {"text": "hi"}}]},
        {"text": "Done with python."}
    ]}))
    .await;
    let sandbox = McpSandbox::new(&mock);
    let log = sandbox.sandbox.root.path().join("py.log");
    sandbox.user_servers(json!({"py": python_stdio_entry(&log), "files": {"enabled": false}}));
    let output = sandbox.run(&["-p", "Use python", "Now the new tool"]).await;
    assert_success(&output);
    assert!(stdout(&output).ends_with("Done with python.\n"), "{}", stdout(&output));
    let requests = mock.requests();
    assert_eq!(requests.len(), 6, "stderr: {}", stderr(&output));
    let names = tool_names(&requests[0]);
    assert!(names.iter().any(|name| name == "mcp__py__add"), "{names:?}");
    assert!(!names.iter().any(|name| name.starts_with("mcp__files__")), "files is disabled: {names:?}");
    assert!(!sandbox.files_log().exists(), "a disabled server is never started");
    // The SDK's schema is checked before the call leaves the agent.
    let invalid = last_tool_result(&requests[1]);
    assert!(invalid.contains("Validation failed for tool \"mcp__py__add\"") && invalid.contains("twenty"), "{invalid}");
    assert!(last_tool_result(&requests[2]).contains("42"), "{}", last_tool_result(&requests[2]));

    // After `add_tool` the server announced a new tool: from the next prompt on it is declared and listed,
    // and it answers (a run keeps the tools it started with, as pi's agent loop does).
    assert!(!tool_names(&requests[3]).iter().any(|name| name == "mcp__py__shout"));
    assert!(tool_names(&requests[4]).iter().any(|name| name == "mcp__py__shout"), "{:?}", tool_names(&requests[4]));
    assert!(system_prompt(&requests[4]).contains("- mcp__py__shout"), "the prompt lists the new tool");
    assert_eq!(last_tool_result(&requests[5]), "shout: hi");
    let calls: Vec<Value> = log_lines(&log).into_iter().filter(|line| line.get("tool").is_some()).collect();
    assert_eq!(calls.len(), 3, "the invalid call never reached the server: {calls:?}");
}
