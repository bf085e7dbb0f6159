//! MCP in interactive mode, in a real pseudo-terminal: a server that cannot start is a notice on the screen,
//! `/mcp` lists every server with its state and tools, an MCP tool call is shown and answered, and the
//! servers are gone after the agent quits.

use pi_gen_tests::{PtyAgent, keys};

use super::*;

fn submit(agent: &mut PtyAgent, text: &str) {
    agent.type_text(text);
    agent.send(keys::ENTER);
}

#[tokio::test(flavor = "multi_thread")]
async fn slash_mcp_lists_the_servers_and_their_tools() {
    let mock = server(json!([
        {"toolCalls": [{"id": "i1", "name": "mcp__files__echo", "arguments": {"text": "echoed in the terminal"}}]},
        {"text": "The echo came back."}
    ]))
    .await;
    let sandbox = McpSandbox::new(&mock);
    sandbox.user_servers(json!({"broken": rmcp_stdio_entry(&["--fail-start", "no display attached"])}));
    let agent_dir = sandbox.sandbox.agent_dir();
    let agent_dir = agent_dir.to_string_lossy();
    let env = [("MCPDEMO_AGENT_DIR", agent_dir.as_ref()), ("PATH", sandbox.path.as_str())];
    let args = [&MODEL_ARGS[..], &["--no-session"]].concat();
    let mut agent = sandbox.sandbox.spawn_pty_env(&agent_binary("mcp"), &args, &env, 40, 140);
    agent.wait_for_text("no display attached");

    // `/mcp` shows the servers as they are when asked; a cold Python interpreter may still be starting the
    // files server, so ask again until it is connected.
    let mut screen = String::new();
    for _ in 0..150 {
        submit(&mut agent, "/mcp");
        std::thread::sleep(std::time::Duration::from_millis(200));
        screen = agent.screen_text();
        if screen.contains("files: connected") {
            break;
        }
    }
    assert!(screen.contains("files: connected"), "the files server never connected: {screen}");
    for expected in ["mcp__files__echo", "broken: failed", "docs: disabled", "The project's files, read-only"] {
        assert!(screen.contains(expected), "{expected} in {screen}");
    }
    assert!(mock.requests().is_empty(), "/mcp asks the model nothing");

    submit(&mut agent, "Echo something");
    let screen = agent.wait_for_text("The echo came back.");
    assert!(screen.contains("mcp__files__echo"), "{screen}");
    assert_eq!(last_tool_result(&mock.requests()[1]), "echoed in the terminal");

    agent.send(&keys::CTRL_C.repeat(2));
    assert_eq!(agent.wait_exit(), 0, "Ctrl+C twice exits with 0");
    let log = sandbox.files_log();
    assert_eq!(processes_mentioning(&log.to_string_lossy()), Vec::<u32>::new(), "the server outlived the agent");
}

#[tokio::test(flavor = "multi_thread")]
async fn rpc_clients_are_told_of_failed_servers_and_can_ask_for_slash_mcp() {
    let mock = server(json!([{"text": "unused"}])).await;
    let sandbox = McpSandbox::new(&mock);
    sandbox.user_servers(json!({"broken": rmcp_stdio_entry(&["--fail-start", "port already taken"])}));
    let agent_dir = sandbox.sandbox.agent_dir();
    let agent_dir = agent_dir.to_string_lossy();
    let env = [("MCPDEMO_AGENT_DIR", agent_dir.as_ref()), ("PATH", sandbox.path.as_str())];
    let args = [&MODEL_ARGS[..], &["--no-session"]].concat();
    let mut rpc = sandbox.sandbox.spawn_rpc_env(&agent_binary("mcp"), &args, &env);
    let is_notice = |line: &Value, text: &str| {
        line["type"] == "extension_ui_request"
            && line["method"] == "notify"
            && line["message"].as_str().is_some_and(|message| message.contains(text))
    };
    let failed = rpc.until(|line| is_notice(line, "port already taken")).await;
    assert_eq!(failed["notifyType"], "warning", "{failed}");
    rpc.send(json!({"id": "m", "type": "prompt", "message": "/mcp"})).await;
    let listing = rpc.until(|line| is_notice(line, "broken: failed")).await;
    let text = listing["message"].as_str().unwrap_or_default();
    assert!(text.contains("port already taken") && text.contains("docs: disabled"), "{text}");
    assert!(text.contains("files: connected") || text.contains("files: starting"), "{text}");
    let (code, _) = rpc.close().await;
    assert_eq!(code, Some(0));
    assert!(mock.requests().is_empty(), "/mcp asks the model nothing");
}
