//! Permissions in a real terminal: agents/careful.yaml asks before a write; the person denies once, then
//! allows always for the session, after which the next write runs without a question. Files on disk prove
//! what ran.

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn ask_offers_once_always_or_deny_and_always_lasts_for_the_session() {
    let write = |content: &str| {
        format!(
            r#"{{"toolCalls": [{{"name": "write", "arguments": {{"path": "notes.md", "content": "{content}"}}}}]}}"#
        )
    };
    let script = format!(
        r#"{{"responses": [{}, {{"text": "Answer one."}}, {}, {{"text": "Answer two."}}, {}, {{"text": "Answer three."}}]}}"#,
        write("one"),
        write("two"),
        write("three")
    );
    let mock = server(&script).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let agent_dir = sandbox.agent_dir().to_string_lossy().into_owned();
    let env = [("CAREFUL_AGENT_DIR", agent_dir.as_str())];
    let mut agent = sandbox.spawn_pty_env(&agent_binary("careful"), &MODEL_ARGS, &env, 30, 100);
    agent.wait_for_text("%/");
    let notes = sandbox.work_dir().join("notes.md");

    agent.type_text("write the notes");
    agent.send(keys::ENTER);
    agent.wait_for_text("Allow write: notes.md? (permission rule \"changes\")");
    assert!(!notes.exists(), "nothing runs before the answer");
    // The options: allow once, allow always (this session), deny.
    agent.send(&format!("{}{}", keys::DOWN, keys::DOWN));
    agent.send(keys::ENTER);
    agent.wait_for_text("Answer one.");
    assert!(!notes.exists(), "the denied write never ran");

    agent.type_text("try again");
    agent.send(keys::ENTER);
    agent.wait_for_text("Allow always (this session)");
    agent.send(keys::DOWN);
    agent.send(keys::ENTER);
    agent.wait_for_text("Answer two.");
    assert_eq!(std::fs::read_to_string(&notes).expect("written"), "two");

    agent.type_text("once more");
    agent.send(keys::ENTER);
    agent.wait_for_text("Answer three.");
    assert_eq!(std::fs::read_to_string(&notes).expect("written"), "three", "no question the second time");
    let requests = mock.requests();
    assert_eq!(requests.len(), 6);
    let denied = pi_gen_tests::tool_results(&requests[1].body);
    assert_eq!(denied[0].1, "Denied by the user: permission rule \"changes\" asked for approval and it was refused.");
    quit(&mut agent);
}
