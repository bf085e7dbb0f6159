//! Interactive mode at level 1.5: fullscreen unless asked otherwise, `read` calls collapsed to their title
//! until Ctrl+O, and `/thinking` among the commands.

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn level_1_5_opens_fullscreen_collapses_reads_and_offers_thinking() {
    let mock = server(
        r#"{"responses": [
            {"toolCalls": [{"id": "call_1", "name": "read", "arguments": {"path": "notes.txt"}}]},
            {"text": "It says hello."}
        ]}"#,
    )
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    sandbox.write("notes.txt", "hello from notes\n");
    let mut agent = start(&sandbox, &["--pi-compat", "1.5"]);
    assert!(agent.screen().last().is_some_and(|line| line.ends_with(" m")), "fullscreen: the footer is the last row");

    agent.type_text("What does notes.txt say?");
    agent.send(keys::ENTER);
    let screen = agent.wait_for_text("It says hello.");
    assert!(screen.contains(" read notes.txt"), "{screen}");
    assert!(!screen.contains("hello from notes"), "a successful read shows its title alone: {screen}");
    agent.send(keys::CTRL_O);
    agent.wait_for_text("hello from notes");
    assert!(agent.history().len() <= 30, "fullscreen leaves nothing in the scrollback");

    agent.send("/thi");
    agent.wait_for_text("→ thinking");
    agent.type_text("nking high");
    agent.wait_for_text("/thinking high");
    agent.send(keys::ENTER);
    agent.wait_for_text("Thinking level:");
    assert_eq!(mock.requests().len(), 2, "/thinking never reaches the model");
    quit(&mut agent);
}

#[tokio::test(flavor = "multi_thread")]
async fn level_0_73_stays_inline_with_read_output_and_without_thinking() {
    let mock = server(r#"{"responses": []}"#).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let mut agent = start(&sandbox, &[]);
    agent.send("/thi");
    agent.wait_for_text("/thi");
    let screen = agent.screen_text();
    assert!(!screen.contains("→ thinking"), "{screen}");
    agent.send(keys::CTRL_C);
    agent.wait_for_absence("/thi");
    quit(&mut agent);
    // pi 1.5 with `tuiMode: "regular"` draws inline as well.
    std::fs::write(sandbox.agent_dir().join("settings.json"), r#"{"tuiMode": "regular"}"#).expect("settings");
    let mut regular = start(&sandbox, &["--pi-compat", "1.5"]);
    let screen = regular.screen_text();
    assert!(!regular.screen().last().is_some_and(|line| line.ends_with(" m")), "inline: {screen}");
    quit(&mut regular);
}
