//! The session tree's labels and filters in a real pseudo-terminal.

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn shift_l_labels_an_entry_and_the_filters_show_what_they_name() {
    let mock = server(
        r#"{"responses": [
            {"toolCalls": [{"id": "call_1", "name": "read", "arguments": {"path": "notes.txt"}}]},
            {"text": "Read it."},
            {"text": "Second answer."}
        ]}"#,
    )
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    sandbox.write("notes.txt", "hello\n");
    let mut agent = start(&sandbox, &[]);
    agent.type_text("read the notes");
    agent.send(keys::ENTER);
    agent.wait_for_text("Read it.");
    agent.type_text("and then?");
    agent.send(keys::ENTER);
    agent.wait_for_text("Second answer.");
    agent.wait_for_absence("Working...");

    agent.type_text("/tree");
    agent.send(keys::ENTER);
    let tree = agent.wait_for_text("Session tree");
    assert!(tree.contains("• [read: notes.txt]") && !tree.contains("[model:"), "{tree}");
    // The leaf (the last answer) is selected: Shift+L asks for its label.
    agent.send("L");
    agent.wait_for_text("Label");
    agent.type_text("checkpoint");
    agent.send(keys::ENTER);
    let tree = agent.wait_for_text("[checkpoint]");
    assert!(tree.contains("• assistant: Second answer.  [checkpoint]"), "{tree}");

    // Ctrl+L: labeled entries only; Ctrl+U: user messages; Ctrl+T: no tools; Ctrl+A: everything.
    agent.send("\x0c");
    let labeled = agent.wait_for_absence("read the notes");
    assert!(labeled.contains("Session tree · labeled") && labeled.contains("[checkpoint]"), "{labeled}");
    agent.send("\x15");
    let users = agent.wait_for_text("Session tree · user messages");
    assert!(users.contains("• user: read the notes") && !users.contains("• assistant:"), "{users}");
    agent.send("\x14");
    let no_tools = agent.wait_for_text("Session tree · no tools");
    assert!(!no_tools.contains("[read: notes.txt]") && no_tools.contains("• assistant: Read it."), "{no_tools}");
    agent.send("\x01");
    agent.wait_for_text("Session tree · all entries");
    let all = agent.wait_for_text("[model: mock/m]");
    assert!(all.contains("[read result]") && all.contains("[thinking:"), "{all}");
    // Shift+T shows when the label was set; Ctrl+D goes back to the default view.
    agent.send("\x04");
    agent.wait_for_absence("[model: mock/m]");
    agent.send("T");
    agent.wait_for("the label's time", |screen| screen.contains("[checkpoint · 20"));

    // Shift+L on a labeled entry starts from its label; an empty label clears it.
    agent.send("\x0c");
    agent.wait_for_text("Session tree · labeled");
    agent.send("L");
    agent.wait_for_text("Label");
    agent.send(&"\x7f".repeat("checkpoint".len()));
    agent.send(keys::ENTER);
    agent.wait_for_text("Session tree");
    agent.wait_for_absence("[checkpoint");
    agent.send(keys::ESCAPE);
    agent.wait_for_absence("Session tree");
    quit(&mut agent);

    let files = session_files(&sandbox);
    let text = std::fs::read_to_string(&files[0]).expect("session file");
    let labels: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("a JSON line"))
        .filter(|entry| entry["type"] == "label")
        .collect();
    assert_eq!(labels.len(), 2, "{labels:?}");
    assert_eq!(labels[0]["label"], "checkpoint");
    assert!(labels[1].get("label").is_none_or(Value::is_null), "the second clears it: {:?}", labels[1]);
    assert_eq!(labels[0]["targetId"], labels[1]["targetId"]);
}
