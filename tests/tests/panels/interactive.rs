//! The panels strategy in interactive mode, in a real pseudo-terminal: `/context` shows the latest request's
//! panels, and a console that exits while the agent waits for the person wakes it (once).

use serde_json::json;

use super::{MODEL_ARGS, pilot_env, sandbox, server};
use pi_gen_tests::{PtyAgent, Sandbox, agent_binary, keys};

fn start(sandbox: &Sandbox) -> PtyAgent {
    let env = pilot_env(sandbox);
    let env: Vec<(&str, &str)> = env.iter().map(|(key, value)| (*key, value.as_str())).collect();
    let agent = sandbox.spawn_pty_env(&agent_binary("pilot"), &MODEL_ARGS, &env, 40, 120);
    agent.wait_for_text("%/");
    agent
}

fn submit(agent: &mut PtyAgent, text: &str) {
    agent.type_text(text);
    agent.send(keys::ENTER);
}

fn quit(agent: &mut PtyAgent) {
    agent.send(&keys::CTRL_C.repeat(2));
    assert_eq!(agent.wait_exit(), 0, "Ctrl+C twice exits with 0");
}

#[tokio::test(flavor = "multi_thread")]
async fn slash_context_shows_the_latest_requests_panels() {
    let mock = server(json!([{"text": "Hello there."}])).await;
    let sandbox = sandbox("openai-completions", &mock);
    let mut agent = start(&sandbox);
    submit(&mut agent, "/context");
    agent.wait_for_text("No request has been built with panels yet.");
    submit(&mut agent, "Hi");
    agent.wait_for_text("Hello there.");
    submit(&mut agent, "/context");
    let screen = agent.wait_for_text("Request 1:");
    assert!(screen.contains("panel tokens"), "{screen}");
    for line in ["P2", "Library", "P1", "Todo List", "P3", "Statistics"] {
        assert!(screen.contains(line), "{line} in {screen}");
    }
    assert_eq!(mock.requests().len(), 1, "/context asks the model nothing");
    quit(&mut agent);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_console_that_exits_while_the_person_is_typing_wakes_the_agent_once() {
    let start_console = json!({"action": "start", "command": "sleep 1; echo done", "name": "waiter"});
    let mock = server(json!([
        {"toolCalls": [{"id": "call_1", "name": "console", "arguments": start_console}]},
        {"text": "Started; waiting."},
        {"text": "The waiter is done."}
    ]))
    .await;
    let sandbox = sandbox("openai-completions", &mock);
    let mut agent = start(&sandbox);
    submit(&mut agent, "Start the waiter");
    agent.wait_for_text("Started; waiting.");
    agent.type_text("a draft");
    let screen = agent.wait_for_text("The waiter is done.");
    assert!(screen.contains("Spine notifications"), "the wake-up is shown: {screen}");
    assert!(screen.contains("a draft"), "the person's draft stays in the editor: {screen}");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert_eq!(mock.requests().len(), 3, "woken once");
    agent.send(keys::CTRL_C);
    quit(&mut agent);
}
