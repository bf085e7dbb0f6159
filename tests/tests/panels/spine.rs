//! The Spine: a background console that exits after the last request was built wakes the agent once, at the
//! end of its run or, over RPC, when it is idle.

use serde_json::json;

use super::wire::{self, Part};
use super::{MODEL_ARGS, conversation, panel, panels, pilot_env, run, sandbox, server};
use pi_gen_tests::{agent_binary, stdout};

const WAKE_UP: &str = "Spine notifications that arrived while you were working:";

#[tokio::test(flavor = "multi_thread")]
async fn spine_wakes_the_agent_once_for_a_finished_console() {
    let api = "openai-completions";
    let start = json!({"action": "start", "command": "sleep 1; echo done", "name": "waiter"});
    let mock = server(json!([
        {"toolCalls": [{"id": "call_1", "name": "console", "arguments": start}]},
        // Slow enough that the process exits while this answer streams, after its request was built.
        {"text": "The console is running in the background now.", "delayMs": 600},
        {"text": "The process finished."}
    ]))
    .await;
    let sandbox = sandbox(api, &mock);
    let output = run(&sandbox, &["-p", "Start the waiter"]).await;
    assert_eq!(stdout(&output), "The process finished.\n", "print mode shows the woken turn's answer");
    let requests = mock.requests();
    assert_eq!(requests.len(), 3, "one wake-up, and none after the woken turn");

    let second = panels(&wire::parts(api, &requests[1].body));
    let console = panel(&second, "P12");
    assert!(console.shown.starts_with("======= [P12] Console: waiter ======="), "{second:#?}");
    assert!(!requests[1].body.to_string().contains(WAKE_UP));

    let body = &requests[2].body;
    assert_eq!(body.to_string().matches(WAKE_UP).count(), 1, "{body:#}");
    let turn = conversation(api, body);
    let Some(Part::Text { role, text }) = turn.last() else { panic!("{turn:#?}") };
    assert_eq!(role, "user", "the wake-up is sent as the user's");
    assert!(text.starts_with(WAKE_UP) && text.contains("process exited"), "{text}");
    let third = panels(&wire::parts(api, body));
    assert!(panel(&third, "P7").shown.contains("process exited"), "the Spine panel lists it: {third:#?}");
    assert!(panel(&third, "P12").shown.contains("done"), "the console's output: {third:#?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn over_rpc_a_console_that_exits_while_the_agent_is_idle_wakes_it_once() {
    let api = "openai-completions";
    let start = json!({"action": "start", "command": "sleep 1; echo done", "name": "waiter"});
    let mock = server(json!([
        {"toolCalls": [{"id": "call_1", "name": "console", "arguments": start}]},
        {"text": "Started; I will wait for it."},
        {"text": "The waiter finished."}
    ]))
    .await;
    let sandbox = sandbox(api, &mock);
    let env = pilot_env(&sandbox);
    let env: Vec<(&str, &str)> = env.iter().map(|(key, value)| (*key, value.as_str())).collect();
    let mut rpc = sandbox.spawn_rpc_env(&agent_binary("pilot"), &MODEL_ARGS, &env);
    rpc.call("p1", json!({"type": "prompt", "message": "Start the waiter"})).await;
    rpc.until(|line| line["type"] == "agent_end").await;
    assert_eq!(mock.requests().len(), 2, "the run ended before the process did");

    // The process exits about a second later, with the agent idle: the Spine starts a run of its own.
    let woken = rpc.until(|line| line["type"] == "message_end" && line["message"]["customType"] == "spine").await;
    let text = woken["message"]["content"][0]["text"].as_str().or_else(|| woken["message"]["content"].as_str());
    let text = text.unwrap_or_default();
    assert!(text.starts_with(WAKE_UP) && text.contains("process exited"), "{woken}");
    let end = rpc.until(|line| line["type"] == "agent_end").await;
    let last = end["messages"].as_array().and_then(|messages| messages.last()).cloned().unwrap_or_default();
    assert_eq!(last["content"][0]["text"], "The waiter finished.", "{end}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[2].body.to_string().matches(WAKE_UP).count(), 1);

    // Nothing else is pending: no second wake-up.
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    assert_eq!(mock.requests().len(), 3, "woken once");
    let (code, _) = rpc.close().await;
    assert_eq!(code, Some(0));
}
