//! Streamable HTTP servers from `mcp.json`: the rmcp one and the Python SDK's, headers from the environment.

use pi_gen_tests::mcp_servers::{spawn_python_http_server, spawn_rmcp_http_server};

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn http_servers_answer_with_headers_from_the_environment() {
    let mock = server(json!({"responses": [
        {"toolCalls": [
            {"id": "h1", "name": "mcp__web__echo", "arguments": {"text": "over http"}},
            {"id": "h2", "name": "mcp__pyweb__add", "arguments": {"a": 1, "b": 2}}
        ]},
        {"toolCalls": [{"id": "h3", "name": "mcp__web__add_tool", "arguments": {"name": "later"}}]},
        {"text": "Added."},
        {"toolCalls": [{"id": "h5", "name": "mcp__web__later", "arguments": {"text": "x"}}]},
        {"text": "Both answered."}
    ]}))
    .await;
    let sandbox = McpSandbox::new(&mock);
    let web_log = sandbox.sandbox.root.path().join("web.log");
    let py_log = sandbox.sandbox.root.path().join("pyweb.log");
    let (_web, web_url) = spawn_rmcp_http_server(&["--log", &web_log.to_string_lossy()]);
    let (_py, py_url) = spawn_python_http_server(&["--log", &py_log.to_string_lossy()]);
    sandbox.user_servers(json!({
        "files": {"enabled": false},
        "web": {"url": web_url, "headers": {"Authorization": "Bearer ${WEB_TOKEN}", "X-Plain": "$$literal"}},
        "pyweb": {"type": "http", "url": py_url}
    }));
    let output =
        sandbox.run_env(&["--mode", "json", "Use both", "Use the new one"], &[("WEB_TOKEN", "s3cret-token")]).await;
    assert_success(&output);
    let requests = mock.requests();
    assert_eq!(requests.len(), 5, "stderr: {}", stderr(&output));
    let events = events(&output);
    assert_eq!(tool_end(&events, "h1")["result"]["content"][0]["text"], "over http");
    assert_eq!(tool_end(&events, "h2")["result"]["content"][0]["text"], "3");
    assert_eq!(tool_end(&events, "h5")["isError"], false, "{}\nstderr: {}", tool_end(&events, "h5"), stderr(&output));

    let headers =
        log_lines(&web_log).into_iter().find_map(|line| line.get("headers").cloned()).expect("headers logged");
    assert_eq!(headers["authorization"], "Bearer s3cret-token");
    assert_eq!(headers["x-plain"], "$literal");
    // The token is nowhere in what the agent printed.
    assert!(!stdout(&output).contains("s3cret-token") && !stderr(&output).contains("s3cret-token"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_header_variable_fails_only_that_server() {
    let mock = server(json!({"responses": [{"text": "Still here."}]})).await;
    let sandbox = McpSandbox::new(&mock);
    let (_web, web_url) = spawn_rmcp_http_server(&[]);
    sandbox.user_servers(json!({
        "files": {"enabled": false},
        "web": {"url": web_url, "headers": {"Authorization": "Bearer ${MCP_TEST_UNSET_TOKEN}"}}
    }));
    let output = sandbox.run(&["-p", "hello"]).await;
    assert_success(&output);
    assert_eq!(stdout(&output), "Still here.\n");
    let errors = stderr(&output);
    assert!(errors.contains("\"web\"") && errors.contains("MCP_TEST_UNSET_TOKEN"), "{errors}");
    assert!(!tool_names(&mock.requests()[0]).iter().any(|name| name.starts_with("mcp__")));
}
