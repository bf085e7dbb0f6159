//! `pi-gen test`, `pi-gen run --mock` and an agent's `--record`, as processes: a small agent with a command
//! tool and a blocking hook is built, its test cases pass and fail as they should, and a recorded session
//! replays as a test.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const PI_GEN: &str = env!("CARGO_BIN_EXE_pi-gen");

/// An agent in `dir`: a `shout` command tool, and a hook that blocks `rm -rf`.
fn write_agent(dir: &Path, name: &str) -> PathBuf {
    let yaml = dir.join(format!("{name}.yaml"));
    let text = format!(
        r#"version: 1
name: {name}
model: {{ provider: anthropic, id: claude-sonnet-4-5 }}
tools:
  builtin: [read, bash, write]
  custom:
    - name: shout
      description: Print a word in capitals
      parameters:
        type: object
        properties:
          word: {{ type: string, description: The word }}
        required: [word]
      command: "echo {{{{ word }}}} | tr a-z A-Z"
hooks:
  - on: tool_call
    match: {{ tool: bash, command: {{ regex: "rm -rf" }} }}
    block: Recursive deletes are refused here.
"#
    );
    std::fs::write(&yaml, text).expect("write the agent");
    yaml
}

fn pi_gen(dir: &Path, args: &[&str]) -> Output {
    Command::new(PI_GEN).args(args).current_dir(dir).output().expect("pi-gen runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const CASES: &str = r#"cases:
  - name: shouts
    prompt: Shout hello
    model:
      - toolCalls: [{ name: shout, arguments: { word: hello } }]
      - text: It printed HELLO.
    expect:
      tools:
        - name: shout
          arguments: { word: hello }
          result_contains: HELLO
      answer: It printed HELLO.
  - name: the hook blocks a recursive delete
    prompt: Remove the build directory
    files:
      build/keep.txt: precious
    model:
      - toolCalls: [{ name: bash, arguments: { command: rm -rf build } }]
      - text: The delete was refused.
    expect:
      tools:
        - name: bash
          blocked: Recursive deletes are refused
      files:
        build/keep.txt: unchanged
      not_called: [write]
  - name: writes a file
    prompt: Write notes
    model:
      - toolCalls: [{ name: write, arguments: { path: notes.md, content: "first line\n" } }]
      - text: Written.
    expect:
      files:
        notes.md: { equals: "first line\n" }
      answer_contains: Written
"#;

const FAILING: &str = r#"cases:
  - name: wrong expectations
    prompt: Shout hello
    files:
      keep.txt: same
    model:
      - toolCalls: [{ name: shout, arguments: { word: hello } }]
      - text: It printed HELLO.
    expect:
      tools:
        - name: shout
          arguments: { word: goodbye }
      answer: It printed GOODBYE.
      files:
        keep.txt: absent
  - name: an unused response
    prompt: hi
    model:
      - text: one
      - text: two
"#;

#[test]
fn test_runs_every_case_and_reports_failures_with_their_place_and_a_diff() {
    let dir = tempfile::tempdir().expect("tempdir");
    let yaml = write_agent(dir.path(), "tested");
    std::fs::create_dir(dir.path().join("tests")).expect("mkdir");
    std::fs::write(dir.path().join("tests/cases.yaml"), CASES).expect("write cases");

    let passing = pi_gen(dir.path(), &["test", "tested.yaml"]);
    let stdout = text(&passing.stdout);
    assert_eq!(passing.status.code(), Some(0), "{stdout}\n{}", text(&passing.stderr));
    let verdicts: Vec<&str> =
        stdout.lines().filter(|line| line.starts_with("ok ") || line.starts_with("FAILED")).collect();
    assert_eq!(verdicts.len(), 3, "{stdout}");
    for (verdict, name) in verdicts.iter().zip(["shouts", "the hook blocks a recursive delete", "writes a file"]) {
        assert!(verdict.starts_with(&format!("ok      {name} (")), "{stdout}");
    }
    assert!(stdout.ends_with("\n3 passed, 0 failed\n"), "{stdout}");

    std::fs::write(dir.path().join("failing.yaml"), FAILING).expect("write failing cases");
    let failing = pi_gen(dir.path(), &["test", yaml.to_str().expect("utf-8"), "failing.yaml"]);
    let stdout = text(&failing.stdout);
    assert_eq!(failing.status.code(), Some(1), "{stdout}\n{}", text(&failing.stderr));
    let expected = [
        "failing.yaml: 2 case(s)",
        "FAILED  wrong expectations",
        "        failing.yaml:12:22: expect.tools[0].arguments: `shout` was called with other arguments",
        "            {",
        "          -   \"word\": \"goodbye\"",
        "          +   \"word\": \"hello\"",
        "            }",
        "        failing.yaml:13:15: expect.answer: the final answer differs",
        "          expected: It printed GOODBYE.",
        "          actual:   It printed HELLO.",
        "        failing.yaml:15:19: expect.files.keep.txt: keep.txt exists; it should not",
        "FAILED  an unused response",
        "        failing.yaml:19:7: model: the model was asked 1 time(s) but the script has 2 response(s); set \
         `expect.model_calls` if that is intended",
        "",
        "0 passed, 2 failed",
    ];
    let lines: Vec<String> = stdout
        .lines()
        .map(|line| match line.find(" (") {
            // The durations vary.
            Some(at) if line.starts_with("FAILED") => line[..at].to_owned(),
            _ => line.to_owned(),
        })
        .collect();
    assert_eq!(lines, expected, "{stdout}");
}

#[test]
fn a_test_file_with_mistakes_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_agent(dir.path(), "refused");
    let bad = "cases:\n  - name: x\n    model:\n      - { text: hi, tolCalls: [] }\n    expect:\n      files:\n        a.txt: unchanged\n";
    std::fs::write(dir.path().join("bad.yaml"), bad).expect("write");
    let output = pi_gen(dir.path(), &["test", "refused.yaml", "bad.yaml"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 4, "{stderr}");
    assert_eq!(lines[0], "bad.yaml:2:5: cases[0]: a case needs `prompt: <text>` (or `prompts:` for several messages)");
    assert!(
        lines[1].starts_with("bad.yaml:4:9: cases[0].model[0]: unknown field `tolCalls`, expected one of"),
        "{stderr}"
    );
    assert_eq!(
        lines[2],
        "bad.yaml:7:16: cases[0].expect.files.a.txt: `unchanged` compares with the file as the case wrote it: add \
         `a.txt` under `files:`"
    );
    assert_eq!(lines[3], "Error: 3 problem(s) in bad.yaml");
    assert!(!stderr.contains("Compiling"), "nothing is built for a bad test file: {stderr}");
}

#[test]
fn run_mock_answers_from_the_script_and_a_recorded_session_replays_as_a_test() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_agent(dir.path(), "replayed");
    let script = r#"{"responses": [
        {"toolCalls": [{"name": "shout", "arguments": {"word": "quiet"}}]},
        {"thinking": "It worked.", "text": "QUIET, it says."}
    ]}"#;
    std::fs::write(dir.path().join("script.json"), script).expect("write the script");
    let output = pi_gen(
        dir.path(),
        &[
            "run",
            "replayed.yaml",
            "--mock",
            "script.json",
            "--log",
            "requests.jsonl",
            "--",
            "--record",
            "recorded.json",
            "-p",
            "Shout quiet",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), "QUIET, it says.\n");
    // The mock spoke the agent's own API (anthropic-messages) and got both requests.
    let requests = std::fs::read_to_string(dir.path().join("requests.jsonl")).expect("the request log");
    let paths: Vec<String> = requests
        .lines()
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(line).expect("json")["path"].as_str().unwrap_or("").to_owned()
        })
        .collect();
    assert_eq!(paths, ["/v1/messages", "/v1/messages"]);
    assert!(!requests.contains("mock-key") && !text(&output.stderr).contains("mock-key"));

    let recorded: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("recorded.json")).expect("recorded"))
            .expect("json");
    let responses = recorded["responses"].as_array().expect("responses");
    assert_eq!(responses.len(), 2, "{recorded}");
    assert_eq!(responses[0]["toolCalls"][0]["name"], "shout");
    assert_eq!(responses[0]["toolCalls"][0]["arguments"], serde_json::json!({"word": "quiet"}));
    assert_eq!(responses[1]["text"], "QUIET, it says.");
    assert_eq!(responses[1]["thinking"], "It worked.");

    let replay = "cases:\n  - name: replayed\n    prompt: Shout quiet\n    model: recorded.json\n    expect:\n      tools:\n        - { name: shout, result_contains: QUIET }\n      answer: QUIET, it says.\n";
    std::fs::write(dir.path().join("replay.yaml"), replay).expect("write");
    let output = pi_gen(dir.path(), &["test", "replayed.yaml", "replay.yaml"]);
    assert_eq!(output.status.code(), Some(0), "{}\n{}", text(&output.stdout), text(&output.stderr));
    assert!(text(&output.stdout).contains("ok      replayed ("));
}

#[test]
fn a_new_agent_passes_its_own_example_test() {
    let dir = tempfile::tempdir().expect("tempdir");
    let created = pi_gen(dir.path(), &["new", "starter"]);
    assert!(created.status.success(), "{}", text(&created.stderr));
    let output = pi_gen(&dir.path().join("starter"), &["test", "starter.yaml"]);
    assert_eq!(output.status.code(), Some(0), "{}\n{}", text(&output.stdout), text(&output.stderr));
    assert!(text(&output.stdout).contains("ok      finds the TODO comments ("), "{}", text(&output.stdout));
}
