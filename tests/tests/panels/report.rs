//! What each request held, for the user: `context_panels` lines in `--mode json` (tokens and prefix-cache
//! hits per panel) and `contextPanels` in RPC `get_session_stats`.

use serde_json::{Value, json};

use super::wire;
use super::{MODEL_ARGS, ids, panels, pilot_env, run, sandbox, server};
use pi_gen_tests::{agent_binary, stdout};

fn panel_ids(report: &Value) -> Vec<&str> {
    report["panels"].as_array().expect("panels").iter().filter_map(|panel| panel["id"].as_str()).collect()
}

fn hits(report: &Value) -> Vec<&str> {
    let list = report["panels"].as_array().expect("panels");
    list.iter().filter(|panel| panel["cacheHit"] == true).filter_map(|panel| panel["id"].as_str()).collect()
}

/// The totals add up and the hits are a prefix (a prompt cache matches from the start).
fn assert_consistent(report: &Value) {
    let list = report["panels"].as_array().expect("panels");
    let tokens = |hit: Option<bool>| -> u64 {
        let chosen = list.iter().filter(|panel| hit.is_none_or(|hit| panel["cacheHit"] == hit));
        chosen.map(|panel| panel["tokens"].as_u64().expect("tokens")).sum()
    };
    assert_eq!(report["panelTokens"], tokens(None), "{report}");
    assert_eq!(report["cacheHitTokens"], tokens(Some(true)), "{report}");
    assert_eq!(report["cacheMissTokens"], tokens(Some(false)), "{report}");
    let flags: Vec<bool> = list.iter().map(|panel| panel["cacheHit"] == true).collect();
    assert!(flags.windows(2).all(|pair| pair[0] || !pair[1]), "hits come first: {report}");
    let times: Vec<i64> = list.iter().map(|panel| panel["lastRefreshMs"].as_i64().expect("time")).collect();
    assert!(times.windows(2).all(|pair| pair[0] <= pair[1]), "sorted by refresh: {report}");
    assert!(list.iter().all(|panel| panel["header"].is_string() && panel["tokens"].as_u64() > Some(0)), "{report}");
}

#[tokio::test(flavor = "multi_thread")]
async fn json_mode_reports_panels_and_cache_hits() {
    let api = "openai-completions";
    let mock = server(json!([
        {"toolCalls": [{"id": "call_1", "name": "open", "arguments": {"path": "notes.txt"}}]},
        {"toolCalls": [{"id": "call_2", "name": "read", "arguments": {"path": "notes.txt"}}]},
        {"text": "Read it."}
    ]))
    .await;
    let sandbox = sandbox(api, &mock);
    sandbox.write("notes.txt", "some notes\n");
    let output = run(&sandbox, &["--mode", "json", "-p", "Look at the notes"]).await;
    let lines: Vec<Value> = stdout(&output).lines().map(|line| serde_json::from_str(line).expect("JSON")).collect();
    let reports: Vec<&Value> = lines.iter().filter(|line| line["type"] == "context_panels").collect();
    assert_eq!(reports.len(), 3, "one line per request");
    let requests = mock.requests();
    assert_eq!(requests.len(), 3);
    for (index, report) in reports.iter().enumerate() {
        assert_eq!(report["requests"], index + 1);
        assert_consistent(report);
        let sent = panels(&wire::parts(api, &requests[index].body));
        assert_eq!(panel_ids(report), ids(&sent), "the report lists the panels in the order they were sent");
    }
    // Each line comes before the answer to its request.
    let order: Vec<&str> = lines
        .iter()
        .filter(|line| {
            line["type"] == "context_panels"
                || (line["type"] == "message_start" && line["message"]["role"] == "assistant")
        })
        .filter_map(|line| line["type"].as_str())
        .collect();
    assert_eq!(order, ["context_panels", "message_start"].repeat(3));

    assert_eq!(hits(reports[0]), Vec::<&str>::new(), "nothing was sent before");
    assert_eq!(reports[0]["conversationMessages"], 1);
    // Opening the file changed Statistics and Logs and added P12: they move to the end, after the panels that
    // kept their place (and so their cache).
    let stable = ["P2", "P4", "P5", "P6", "P9", "P1", "P11", "P7"];
    assert_eq!(panel_ids(reports[1]), [&stable[..], &["P12", "P8", "P3"]].concat());
    assert_eq!(hits(reports[1]), stable);
    assert_eq!(reports[1]["conversationMessages"], 3);
    // Reading changed only Statistics: everything before it is where it was.
    assert_eq!(panel_ids(reports[2]), [&stable[..], &["P12", "P8", "P3"]].concat());
    assert_eq!(hits(reports[2]), [&stable[..], &["P12", "P8"]].concat());
    assert_eq!(reports[2]["conversationMessages"], 5);
}

#[tokio::test(flavor = "multi_thread")]
async fn rpc_session_stats_carry_context_panels() {
    let mock = server(json!([{"text": "Hello."}])).await;
    let sandbox = sandbox("openai-completions", &mock);
    let env = pilot_env(&sandbox);
    let env: Vec<(&str, &str)> = env.iter().map(|(key, value)| (*key, value.as_str())).collect();
    let mut rpc = sandbox.spawn_rpc_env(&agent_binary("pilot"), &MODEL_ARGS, &env);
    let before = rpc.call("s0", json!({"type": "get_session_stats"})).await;
    assert_eq!(before["success"], true, "{before}");
    assert!(before["data"]["contextPanels"].is_null(), "no request yet: {before}");

    rpc.call("p1", json!({"type": "prompt", "message": "Hi"})).await;
    rpc.until(|line| line["type"] == "agent_end").await;
    let event = rpc.seen.iter().find(|line| line["type"] == "context_panels").cloned().expect("a context_panels event");
    let stats = rpc.call("s1", json!({"type": "get_session_stats"})).await;
    let report = &stats["data"]["contextPanels"];
    assert_eq!(report["requests"], 1, "{stats}");
    assert_consistent(report);
    assert_eq!(report["panels"][0]["id"], "P2");
    assert_eq!(report["panels"][0]["header"], "Library");
    let mut expected = event;
    expected.as_object_mut().expect("object").remove("type");
    assert_eq!(report, &expected, "the stats hold the latest request's report");
    let (code, _) = rpc.close().await;
    assert_eq!(code, Some(0));
}
