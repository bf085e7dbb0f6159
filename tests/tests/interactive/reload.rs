//! `/reload` in a real pseudo-terminal: files changed while the agent runs take effect without a restart.

use super::*;

/// The system prompt of a recorded OpenAI request.
fn system_prompt(body: &Value) -> String {
    body["messages"][0]["content"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn reload_reads_context_files_templates_and_settings_again() {
    let mock = server(r#"{"responses": [{"text": "first answer"}, {"text": "second answer"}]}"#).await;
    let sandbox = Sandbox::new(&mock.base_url());
    sandbox.write("AGENTS.md", "Rule one: answer briefly.\n");
    let mut agent = start(&sandbox, &[]);
    agent.type_text("hello");
    agent.send(keys::ENTER);
    agent.wait_for_text("first answer");
    agent.wait_for_text("(auto)");

    // While the agent runs: a changed context file, a new prompt template, automatic compaction turned off.
    sandbox.write("AGENTS.md", "Rule two: cite the file you read.\n");
    sandbox.write(".pi/prompts/review.md", "---\ndescription: Review a file\n---\nReview $1 for mistakes.\n");
    std::fs::write(sandbox.agent_dir().join("settings.json"), r#"{"compaction": {"enabled": false}}"#)
        .expect("settings");
    agent.type_text("/reload");
    agent.wait_for_text("/reload");
    agent.send(keys::ENTER);
    agent.wait_for_text("Reloaded settings");
    let screen = agent.wait_for_text("1 prompt templates");
    assert!(!screen.contains("Warning"), "{screen}");
    agent.wait_for_absence("(auto)");

    // The new template is offered and expands; the next request has the new context file.
    agent.send("/rev");
    agent.wait_for_text("Review a file");
    agent.type_text("iew main.rs");
    agent.wait_for_absence("Review a file");
    agent.send(keys::ENTER);
    agent.wait_for_text("second answer");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let (before, after) = (system_prompt(&requests[0].body), system_prompt(&requests[1].body));
    assert!(before.contains("Rule one") && !before.contains("Rule two"), "{before}");
    assert!(after.contains("Rule two") && !after.contains("Rule one"), "{after}");
    assert_eq!(user_texts(&requests[1].body).last().map(String::as_str), Some("Review main.rs for mistakes."));
    quit(&mut agent);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reload_that_fails_changes_nothing_and_says_why() {
    let mock = server(r#"{"responses": [{"text": "still here"}]}"#).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let mut agent = start(&sandbox, &[]);
    let models = sandbox.agent_dir().join("models.json");
    let good = std::fs::read_to_string(&models).expect("models.json");
    std::fs::write(&models, "{ not json").expect("write");
    agent.type_text("/reload");
    agent.wait_for_text("/reload");
    agent.send(keys::ENTER);
    let screen = agent.wait_for_text("the reload failed");
    assert!(screen.contains("models.json"), "the error names the file: {screen}");
    std::fs::write(&models, good).expect("write");
    agent.type_text("still working?");
    agent.send(keys::ENTER);
    agent.wait_for_text("still here");
    quit(&mut agent);
}
