//! pi 1.5's seventh thinking level, `max`: at level 1.5 `--thinking max` reaches the request of a model whose
//! thinking map names it (Claude Opus 4.7, re-routed to the mock by models.json) and RPC offers and sets it;
//! at level 0.73 the flag is refused as before and no list names it.

use serde_json::json;

use super::*;

/// A sandbox whose models.json sends pi's built-in `anthropic` provider to `mock`.
fn anthropic_sandbox(mock: &MockLlmServer) -> Sandbox {
    let sandbox = Sandbox::new(&mock.base_url());
    let base_url = format!("http://127.0.0.1:{}", mock.addr().port());
    let models = json!({"providers": {"anthropic": {"baseUrl": base_url, "apiKey": "mock-key"}}});
    std::fs::write(sandbox.agent_dir().join("models.json"), models.to_string()).expect("models.json");
    sandbox
}

const OPUS: [&str; 2] = ["--model", "anthropic/claude-opus-4-7"];

/// Runs the pi agent in json mode with `extra` flags; returns the one request's body, the JSON lines and
/// stderr.
async fn opus_run(extra: &[&str]) -> (Value, Vec<Value>, String) {
    let mock = server(r#"{"responses": [{"text": "ok"}]}"#).await;
    let sandbox = anthropic_sandbox(&mock);
    let args = [&OPUS[..], extra, &["--mode", "json", "hi"]].concat();
    let output = sandbox.run(&agent_binary("pi"), &args).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    let lines = stdout(&output).lines().map(|line| serde_json::from_str(line).expect("JSON")).collect();
    let request = mock.requests().into_iter().next().expect("one request");
    (request.body, lines, stderr(&output))
}

#[tokio::test(flavor = "multi_thread")]
async fn thinking_max_reaches_the_request_at_1_5() {
    let (body, lines, _) = opus_run(&["--pi-compat", "1.5", "--thinking", "max"]).await;
    assert_eq!(body["thinking"]["type"], "adaptive", "{body}");
    assert_eq!(body["output_config"], json!({"effort": "max"}), "{body}");
    let answers = message_ends(&lines, "assistant");
    assert_eq!(answers[0]["thinkingLevel"], "max");

    let (body, _, _) = opus_run(&["--pi-compat", "1.5", "--thinking", "xhigh"]).await;
    assert_eq!(body["output_config"], json!({"effort": "xhigh"}), "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn thinking_max_is_refused_at_0_73_as_before() {
    let (body, _, stderr) = opus_run(&["--thinking", "max"]).await;
    assert!(
        stderr.contains(
            "Warning: invalid thinking level \"max\" (expected one of: off, minimal, low, medium, high, xhigh); ignoring --thinking"
        ),
        "{stderr}"
    );
    assert_eq!(body["output_config"], json!({"effort": "medium"}), "pi's default level: {body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn rpc_offers_and_sets_max_only_at_1_5() {
    let mock = server(r#"{"responses": []}"#).await;
    let sandbox = anthropic_sandbox(&mock);
    let binary = agent_binary("pi");
    let six = ["off", "minimal", "low", "medium", "high", "xhigh"];

    let mut rpc = sandbox.spawn_rpc(&binary, &[&OPUS[..], &["--pi-compat", "1.5"]].concat());
    let levels = rpc.call("l", json!({"type": "get_available_thinking_levels"})).await;
    assert_eq!(levels["data"]["levels"], json!([&six[..], &["max"]].concat()), "{levels}");
    let set = rpc.call("x", json!({"type": "set_thinking_level", "level": "xhigh"})).await;
    assert_eq!(set["success"], true, "{set}");
    let cycled = rpc.call("c1", json!({"type": "cycle_thinking_level"})).await;
    assert_eq!(cycled["data"], json!({"level": "max"}), "after xhigh comes max: {cycled}");
    let set = rpc.call("s", json!({"type": "set_thinking_level", "level": "max"})).await;
    assert_eq!(set["success"], true, "{set}");
    let state = rpc.call("g", json!({"type": "get_state"})).await;
    assert_eq!(state["data"]["thinkingLevel"], "max", "{state}");
    let cycled = rpc.call("c", json!({"type": "cycle_thinking_level"})).await;
    assert_eq!(cycled["data"], json!({"level": "off"}), "after max comes off: {cycled}");
    let (code, _) = rpc.close().await;
    assert_eq!(code, Some(0));

    let mut rpc = sandbox.spawn_rpc(&binary, &OPUS);
    let levels = rpc.call("l", json!({"type": "get_available_thinking_levels"})).await;
    assert_eq!(levels["data"]["levels"], json!(six), "{levels}");
    let set = rpc.call("s", json!({"type": "set_thinking_level", "level": "max"})).await;
    assert_eq!(set["success"], false, "{set}");
    assert_eq!(
        set["error"], "invalid thinking level \"max\" (expected one of: off, minimal, low, medium, high, xhigh)",
        "{set}"
    );
    let (code, _) = rpc.close().await;
    assert_eq!(code, Some(0));
}
