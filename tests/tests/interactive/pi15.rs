//! Interactive mode at level 1.5: fullscreen unless asked otherwise, `read` calls collapsed to their title
//! until Ctrl+O, `/thinking` among the commands, and the project-trust question and `/trust`.

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

/// The saved trust decisions, as JSON.
fn trust_file(sandbox: &Sandbox) -> Option<Value> {
    let text = std::fs::read_to_string(sandbox.agent_dir().join("trust.json")).ok()?;
    Some(serde_json::from_str(&text).expect("trust.json is JSON"))
}

#[tokio::test(flavor = "multi_thread")]
async fn level_1_5_asks_about_a_folders_own_files_first_and_trust_saves_a_decision() {
    let mock = server(r#"{"responses": [{"text": "Noted."}, {"text": "Noted."}]}"#).await;
    let sandbox = Sandbox::new(&mock.base_url());
    sandbox.write(".pi/APPEND_SYSTEM.md", "APPEND-MARK from the project.\n");
    let work = std::fs::canonicalize(sandbox.work_dir()).expect("work dir").display().to_string();
    let args = [&MODEL_ARGS[..], &["--pi-compat", "1.5"]].concat();

    // Closing the question trusts nothing and saves nothing.
    let mut agent = sandbox.spawn_pty(&agent_binary("pi"), &args, 30, 100);
    let screen = agent.wait_for_text("Do not trust for this session only");
    assert!(screen.contains(&work) && screen.contains("→ Trust this folder"), "{screen}");
    agent.send(keys::ESCAPE);
    agent.wait_for_text("%/");
    agent.type_text("hello");
    agent.send(keys::ENTER);
    agent.wait_for_text("Noted.");
    assert!(!mock.requests()[0].body.to_string().contains("APPEND-MARK"));
    assert_eq!(trust_file(&sandbox), None);

    // `/trust` saves "trusted" for the next start, which then asks nothing and uses the files.
    agent.send("/trust");
    agent.wait_for_text("Save whether this folder");
    agent.send(keys::ENTER);
    let screen = agent.wait_for_text("Saved decision: none");
    assert!(screen.contains("This session: not trusted"), "{screen}");
    agent.send(keys::ENTER);
    agent.wait_for_text("Saved: this folder is trusted");
    assert_eq!(trust_file(&sandbox), Some(serde_json::json!({ work.clone(): true })));
    quit(&mut agent);

    let mut again = start(&sandbox, &["--pi-compat", "1.5"]);
    again.type_text("hello");
    again.send(keys::ENTER);
    again.wait_for_text("Noted.");
    assert!(mock.requests()[1].body.to_string().contains("APPEND-MARK"), "the saved decision applies");
    again.send("/trust");
    again.wait_for_text("Save whether this folder");
    again.send(keys::ENTER);
    let screen = again.wait_for_text("Saved decision: trusted");
    assert!(screen.contains("✓ Trust this folder"), "{screen}");
    again.send(keys::ESCAPE);
    again.wait_for_absence("Saved decision");
    quit(&mut again);

    // At the question, the parent folder's choice saves the parent and clears the folder's own entry.
    std::fs::remove_file(sandbox.agent_dir().join("trust.json")).expect("remove");
    let mut third = sandbox.spawn_pty(&agent_binary("pi"), &args, 30, 100);
    third.wait_for_text("Trust the parent folder");
    third.send(keys::DOWN);
    third.send(keys::ENTER);
    third.wait_for_text("%/");
    let parent = std::path::Path::new(&work).parent().expect("parent").display().to_string();
    assert_eq!(trust_file(&sandbox), Some(serde_json::json!({ parent: true })));
    quit(&mut third);
}
