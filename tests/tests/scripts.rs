//! The scripts the README and CI run: the excerpt step of `scripts/try-pi` cannot die of a broken pipe,
//! and no script pipes into a reader that may stop early while `pipefail` is on.

use std::path::Path;
use std::process::Command;

use pi_gen_tests::workspace_root;

fn excerpt(file: &Path, line: &str, chars: &str) -> std::process::Output {
    Command::new(workspace_root().join("scripts").join("excerpt"))
        .args([file.as_os_str(), line.as_ref(), chars.as_ref()])
        .output()
        .expect("scripts/excerpt runs")
}

/// The step that failed with exit 141 now and then: a request line far longer than a pipe's buffer (64 KiB),
/// cut to 600 characters, many times over and several at once.
#[test]
fn the_excerpt_of_a_line_far_longer_than_a_pipe_buffer_never_fails() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("requests.jsonl");
    let long: String = "0123456789".repeat(100_000);
    std::fs::write(&file, format!("{{\"first\":1}}\n{long}\n{{\"third\":3}}")).expect("write");
    let expected = format!("{}\n", &long[..600]);
    for round in 0..25 {
        let runs: Vec<_> = (0..8)
            .map(|_| {
                Command::new(workspace_root().join("scripts").join("excerpt"))
                    .arg(&file)
                    .args(["2", "600"])
                    .stdout(std::process::Stdio::piped())
                    .spawn()
                    .expect("spawn")
            })
            .collect();
        for run in runs {
            let output = run.wait_with_output().expect("wait");
            assert!(output.status.success(), "round {round}: {:?}", output.status);
            assert_eq!(String::from_utf8_lossy(&output.stdout), expected, "round {round}");
        }
    }
    // The last line counts without a line feed; a line past the end is a clear error.
    assert_eq!(String::from_utf8_lossy(&excerpt(&file, "3", "5").stdout), "{\"thi\n");
    let missing = excerpt(&file, "4", "5");
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("has 3 line(s), not 4"), "{missing:?}");
    let usage = excerpt(&file, "0", "5");
    assert_eq!(usage.status.code(), Some(2));
}

/// `a | head` (or `grep -q`, which also stops reading at its first match) makes the writer die of SIGPIPE,
/// and `pipefail` turns that into the pipeline's failure.
#[test]
fn no_script_pipes_into_a_reader_that_stops_early() {
    let root = workspace_root();
    let mut scripts: Vec<_> =
        std::fs::read_dir(root.join("scripts")).expect("scripts/").map(|entry| entry.expect("entry").path()).collect();
    scripts.push(root.join(".ci").join("run"));
    let early_readers = ["head", "grep -q", "grep -m", "sed -n 1q"];
    let mut offending = Vec::new();
    for script in &scripts {
        let text = std::fs::read_to_string(script).expect("a script is text");
        for (number, line) in text.lines().enumerate() {
            let code = line.split(" #").next().unwrap_or_default();
            if code.trim_start().starts_with('#') {
                continue;
            }
            for segment in code.split('|').skip(1) {
                if early_readers.iter().any(|reader| segment.trim_start().starts_with(reader)) {
                    offending.push(format!("{}:{}: {}", script.display(), number + 1, line.trim()));
                }
            }
        }
    }
    assert!(offending.is_empty(), "pipes that can break under pipefail:\n{}", offending.join("\n"));
}

/// `scripts/bench-vs-pi` installs pi and Node from npm when it runs, so CI only checks that it parses and that
/// `--help` and a bad argument are answered before anything is installed or built.
#[test]
fn bench_vs_pi_answers_help_and_bad_arguments_without_installing_anything() {
    let script = workspace_root().join("scripts").join("bench-vs-pi");
    let syntax = Command::new("bash").arg("-n").arg(&script).output().expect("bash runs");
    assert!(syntax.status.success(), "{syntax:?}");
    let scratch = tempfile::tempdir().expect("tempdir");
    let run = |args: &[&str]| {
        Command::new(&script)
            .args(args)
            .env("BENCH_VS_PI_SCRATCH", scratch.path().join("bench"))
            .output()
            .expect("scripts/bench-vs-pi runs")
    };
    let help = run(&["--help"]);
    assert_eq!(help.status.code(), Some(0), "{help:?}");
    assert!(String::from_utf8_lossy(&help.stdout).contains("usage: scripts/bench-vs-pi [--runs N]"), "{help:?}");
    let bad = run(&["--runs", "0"]);
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--runs takes a positive number"), "{bad:?}");
    assert!(!scratch.path().join("bench").exists(), "nothing is installed for --help or a bad argument");
}

#[test]
fn measure_resume_refuses_a_missing_agent_with_its_usage() {
    let script = workspace_root().join("scripts").join("measure-resume");
    let syntax = Command::new("bash").arg("-n").arg(&script).output().expect("bash runs");
    assert!(syntax.status.success(), "{syntax:?}");
    for args in [&[][..], &["/nonexistent/agent"][..], &["a", "b", "c"][..]] {
        let run = Command::new(&script).args(args).output().expect("scripts/measure-resume runs");
        assert_eq!(run.status.code(), Some(2), "{args:?}: {run:?}");
        assert!(String::from_utf8_lossy(&run.stderr).contains("usage: scripts/measure-resume AGENT_BINARY"), "{run:?}");
    }
}
