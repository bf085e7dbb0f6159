//! The generated pi binary, driven by the scripted server through read, bash, ls, grep, find, edit
//! and write calls in a fixture tree, leaves the tree exactly as pi 0.73.1 did and returns tool
//! results carrying the same text (recorded from pi in tests/fixtures/pi-0.73.1/tool-round-trip.json).

use std::collections::BTreeMap;
use std::path::Path;

use pi_gen_tests::{Sandbox, agent_binary, stderr, stdout, workspace_root};
use pi_runtime::testing::{MockLlmServer, MockScript};
use serde_json::Value;

/// The tree the recorded pi run started from.
const FIXTURE: [(&str, &str); 8] = [
    ("src/main.py", "def greet(name):\n    return \"Hello, \" + name\n\n\nprint(greet(\"world\"))\n"),
    ("src/util.py", "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"),
    ("README.md", "# Fixture\n\nA tiny project for tool round trips.\n"),
    (".gitignore", "build/\n*.log\n"),
    ("build/out.py", "def generated():\n    pass\n"),
    (".hidden/config.toml", "debug = true\n"),
    ("app.log", "noise\n"),
    ("docs/usage.md", "Usage: run main.py\n"),
];

fn recorded() -> Value {
    let path = workspace_root().join("tests/fixtures/pi-0.73.1/tool-round-trip.json");
    let text = std::fs::read_to_string(&path).expect("recorded fixture");
    serde_json::from_str(&text).expect("fixture is JSON")
}

fn files_under(root: &Path) -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("readable dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let relative = path.strip_prefix(root).expect("under root").to_string_lossy().into_owned();
                files.insert(relative, std::fs::read_to_string(&path).expect("text file"));
            }
        }
    }
    files
}

/// Lines in a stable order: rg and fd emit files in whatever order their parallel walks finish, so
/// pi's own output order varies from run to run; the content must match line for line.
fn sorted_lines(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    lines
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_leave_the_tree_and_report_results_as_pi_does() {
    let binary = agent_binary("pi");
    let expected = recorded();
    let script = MockScript::from_json_str(&expected["script"].to_string()).expect("script");
    let mock = MockLlmServer::start(script).await.expect("mock starts");
    let sandbox = Sandbox::new(&mock.base_url());
    for (path, content) in FIXTURE {
        sandbox.write(path, content);
    }
    let tools = "read,bash,edit,write,grep,find,ls";
    let args = ["--provider", "mock", "--model", "m", "--tools", tools, "-p", "Go through the tools"];
    let output = sandbox.run(&binary, &args).await;
    assert!(output.status.success(), "stderr: {}", stderr(&output));
    assert_eq!(stdout(&output), "All done.\n");

    let after: BTreeMap<String, String> = files_under(&sandbox.work_dir());
    let expected_after: BTreeMap<String, String> = expected["filesAfter"]
        .as_object()
        .expect("files")
        .iter()
        .map(|(path, content)| (path.clone(), content.as_str().unwrap_or_default().to_owned()))
        .collect();
    assert_eq!(after, expected_after, "the tree after the run differs from pi's");

    let requests = mock.requests();
    let last = requests.last().expect("requests").body["messages"].as_array().cloned().unwrap_or_default();
    let cwd = sandbox.work_dir().canonicalize().expect("cwd");
    let ours: BTreeMap<String, String> = last
        .iter()
        .filter(|message| message["role"] == "tool")
        .map(|message| {
            let id = message["tool_call_id"].as_str().unwrap_or_default().to_owned();
            let text =
                message["content"].as_str().unwrap_or_default().replace(&cwd.to_string_lossy().into_owned(), "<cwd>");
            (id, text)
        })
        .collect();
    let theirs = expected["toolResults"].as_object().expect("results");
    assert_eq!(ours.len(), theirs.len(), "one result per call: {ours:#?}");
    for (id, pi_text) in theirs {
        let pi_text = pi_text.as_str().unwrap_or_default();
        let our_text = ours.get(id).map(String::as_str).unwrap_or("<missing>");
        if id.starts_with("call_grep") || id.starts_with("call_find") {
            assert_eq!(sorted_lines(our_text), sorted_lines(pi_text), "{id}:\nours:\n{our_text}\npi:\n{pi_text}");
        } else {
            assert_eq!(our_text, pi_text, "{id}");
        }
    }
}
