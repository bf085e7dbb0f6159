//! Smoke test of the MCP test servers themselves (not of pi-gen's client): the rmcp and Python SDK
//! servers answer rmcp's own client over stdio (both lifecycles: `initialize`, and 2026-07-28's
//! `server/discover` with list_changed on a `subscriptions/listen` stream), and a raw JSON-RPC exchange
//! over streamable HTTP.

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use pi_gen_tests::mcp_servers::{
    python_server_command, rmcp_server_bin, rmcp_server_command, spawn_python_http_server, spawn_rmcp_http_server,
};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, JsonObject, ProtocolVersion, ServerNotification, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::Notify;

/// A client that signals each `notifications/tools/list_changed`.
#[derive(Clone, Default)]
struct Client {
    tools_changed: Arc<Notify>,
}

impl ClientHandler for Client {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.notify_one();
    }
}

fn arguments(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        other => panic!("arguments must be an object, not {other}"),
    }
}

async fn call(client: &RunningService<RoleClient, Client>, name: &'static str, args: Value) -> CallToolResult {
    let params = CallToolRequestParams::new(name).with_arguments(arguments(args));
    client.call_tool(params).await.unwrap_or_else(|error| panic!("calling {name}: {error}"))
}

fn first_text(result: &CallToolResult) -> String {
    result.content.first().and_then(|block| block.as_text()).map(|text| text.text.clone()).unwrap_or_default()
}

async fn tool_names(client: &RunningService<RoleClient, Client>) -> Vec<String> {
    let tools = client.list_all_tools().await.expect("tools/list");
    tools.into_iter().map(|tool| tool.name.into_owned()).collect()
}

/// Starts `command` as a stdio server and runs the same checks against it; returns its first stderr line.
async fn exercise_stdio(command: Command) -> String {
    let client = Client::default();
    let (transport, stderr) = TokioChildProcess::builder(tokio::process::Command::from(command))
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawning the server");
    let mut stderr = BufReader::new(stderr.expect("piped stderr"));
    let client = client.clone().serve(transport).await.expect("the MCP handshake");

    let names = tool_names(&client).await;
    for tool in ["echo", "add", "image", "fail", "slow", "die", "add_tool", "env", "cwd"] {
        assert!(names.iter().any(|name| name == tool), "{tool} missing from {names:?}");
    }
    assert_eq!(first_text(&call(&client, "echo", json!({ "text": "hi there" })).await), "hi there");
    let sum = call(&client, "add", json!({ "a": 2, "b": 40 })).await;
    assert_eq!((first_text(&sum).as_str(), sum.structured_content), ("42", Some(json!({ "sum": 42 }))));
    let failed = call(&client, "fail", json!({ "message": "it broke" })).await;
    assert_eq!(failed.is_error, Some(true));
    assert!(first_text(&failed).contains("it broke"), "{failed:?}");

    let tools_changed = client.service().tools_changed.clone();
    assert_eq!(first_text(&call(&client, "add_tool", json!({ "name": "greet" })).await), "added greet");
    tokio::time::timeout(Duration::from_secs(10), tools_changed.notified())
        .await
        .expect("notifications/tools/list_changed after add_tool");
    assert!(tool_names(&client).await.iter().any(|name| name == "greet"));
    assert_eq!(first_text(&call(&client, "greet", json!({ "text": "hello" })).await), "greet: hello");

    client.cancel().await.expect("closing the client");
    let mut line = String::new();
    stderr.read_line(&mut line).await.expect("reading the server's stderr");
    line
}

#[tokio::test]
async fn rmcp_server_over_stdio() {
    assert_eq!(rmcp_server_bin(), std::path::PathBuf::from(env!("CARGO_BIN_EXE_mcp-test-server")));
    let ready = exercise_stdio(rmcp_server_command(&[])).await;
    assert_eq!(ready.trim(), "mcp-test-server ready");
}

#[tokio::test]
async fn python_server_over_stdio() {
    let ready = exercise_stdio(python_server_command(&[])).await;
    assert_eq!(ready.trim(), "python mcp server ready");
}

#[tokio::test]
async fn both_servers_with_discover_lifecycle() {
    for command in [rmcp_server_command(&[]), python_server_command(&[])] {
        let (transport, _) = TokioChildProcess::builder(tokio::process::Command::from(command))
            .stderr(Stdio::null())
            .spawn()
            .expect("spawning the server");
        let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
        let client = Client::default().serve_with_lifecycle(transport, lifecycle).await.expect("server/discover");
        let filter = SubscriptionFilter::builder().tools_list_changed().build();
        let mut subscription = client.peer().listen(filter).await.expect("subscriptions/listen");
        assert_eq!(first_text(&call(&client, "add_tool", json!({ "name": "greet" })).await), "added greet");
        let notification = tokio::time::timeout(Duration::from_secs(10), subscription.next())
            .await
            .expect("notifications/tools/list_changed on the listen stream")
            .expect("the listen stream");
        assert!(matches!(notification, Some(ServerNotification::ToolListChangedNotification(_))), "{notification:?}");
        assert_eq!(first_text(&call(&client, "greet", json!({ "text": "hi" })).await), "greet: hi");
        drop(subscription);
        client.cancel().await.expect("closing the client");
    }
}

#[test]
fn rmcp_server_fail_start() {
    let output = rmcp_server_command(&["--fail-start", "cannot start: no config"]).output().expect("running");
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(String::from_utf8_lossy(&output.stderr).trim(), "cannot start: no config");
}

/// POSTs one JSON-RPC message; returns the session id the server sent and the reply (the `data:` line of
/// an SSE answer, or the JSON body), `Value::Null` for an accepted notification.
async fn post(http: &reqwest::Client, url: &str, session: Option<&str>, message: Value) -> (Option<String>, Value) {
    let mut request = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", "Bearer test-token");
    if let Some(session) = session {
        request = request.header("mcp-session-id", session).header("mcp-protocol-version", "2025-06-18");
    }
    let response = request.body(message.to_string()).send().await.expect("POST");
    assert!(response.status().is_success(), "{message} got {}", response.status());
    let session = response.headers().get("mcp-session-id").and_then(|value| value.to_str().ok()).map(str::to_owned);
    let body = response.text().await.expect("the response body");
    let reply = body
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .chain(std::iter::once(body.as_str()))
        .filter_map(|json| serde_json::from_str::<Value>(json.trim()).ok())
        .find(|value| value.get("id").is_some())
        .unwrap_or(Value::Null);
    (session, reply)
}

async fn exercise_http(url: &str) {
    let http = reqwest::Client::new();
    let initialize = json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "smoke", "version": "1" } } });
    let (session, reply) = post(&http, url, None, initialize).await;
    assert!(reply["result"]["serverInfo"]["name"].is_string(), "{reply}");
    let session = session.expect("an mcp-session-id header");
    let initialized = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    post(&http, url, Some(&session), initialized).await;
    let echo = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": { "name": "echo", "arguments": { "text": "over http" } } });
    let (_, reply) = post(&http, url, Some(&session), echo).await;
    assert_eq!(reply["result"]["content"][0]["text"], "over http", "{reply}");
}

fn logged(log: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(log).expect("the server's log");
    text.lines().map(|line| serde_json::from_str(line).expect("a JSON log line")).collect()
}

#[tokio::test]
async fn both_servers_over_http() {
    let scratch = tempfile::tempdir().expect("tempdir");
    for (kind, log) in [("rmcp", scratch.path().join("rmcp.jsonl")), ("python", scratch.path().join("python.jsonl"))] {
        let log_arg = log.to_str().expect("a UTF-8 temp path");
        let (server, url) = match kind {
            "rmcp" => spawn_rmcp_http_server(&["--log", log_arg]),
            _ => spawn_python_http_server(&["--log", log_arg]),
        };
        assert!(url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"), "{kind}: {url}");
        exercise_http(&url).await;
        let entries = logged(&log);
        assert_eq!(entries[0]["headers"]["authorization"], "Bearer test-token", "{kind}: {entries:?}");
        let echo = json!({ "tool": "echo", "arguments": { "text": "over http" } });
        assert!(entries.contains(&echo), "{kind}: {entries:?}");
        drop(server);
    }
}
