//! The notes binary as a process: its command line is the runtime's (pi's flags), under its own name.
//! (Being an integration test, this also makes `cargo test` build the binary the end-to-end tests run.)

use std::process::Command;

const NOTES: &str = env!("CARGO_BIN_EXE_notes");

#[test]
fn version_and_help_name_the_agent() {
    let version = Command::new(NOTES).arg("--version").output().expect("runs");
    assert!(version.status.success());
    assert_eq!(String::from_utf8_lossy(&version.stdout), format!("{}\n", env!("CARGO_PKG_VERSION")));
    let help = Command::new(NOTES).arg("--help").output().expect("runs");
    assert!(help.status.success());
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(text.contains("notes"), "{text}");
    assert!(text.contains("NOTES_AGENT_DIR"), "the agent's own directory variable is documented: {text}");
}
