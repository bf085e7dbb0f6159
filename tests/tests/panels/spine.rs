//! The Spine: a background console that exits after the last request was built wakes the agent once.

use serde_json::json;

use super::wire::{self, Part};
use super::{conversation, panel, panels, run, sandbox, server};
use pi_gen_tests::stdout;

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
