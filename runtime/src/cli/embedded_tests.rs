//! Tests for unpacking the agent's compiled-in resources.

use std::borrow::Cow;
use std::os::unix::fs::PermissionsExt as _;

use super::*;
use crate::definition::EmbeddedFile;

fn file(path: &str, contents: &'static str) -> EmbeddedFile {
    EmbeddedFile { path: path.to_owned(), contents: Cow::Borrowed(contents.as_bytes()), executable: false }
}

fn resources(files: Vec<EmbeddedFile>) -> EmbeddedResources {
    EmbeddedResources {
        hash: "abc123".to_owned(),
        files,
        skill_dirs: vec!["skills/0".to_owned()],
        prompt_dirs: vec!["prompts/0".to_owned()],
        source_dirs: Vec::new(),
    }
}

fn sample() -> EmbeddedResources {
    resources(vec![
        file("skills/0/review/SKILL.md", "---\nname: review\ndescription: Reviews.\n---\nReview it."),
        file("prompts/0/fix.md", "Fix $1"),
    ])
}

/// Entries of `dir` whose names start with a dot and contain `.tmp-` (staging leftovers).
fn staging_leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .expect("read dir")
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains(".tmp-"))
        .collect()
}

#[test]
fn files_are_unpacked_once_with_a_marker_and_reused() {
    let agent = tempfile::tempdir().expect("tempdir");
    let resources = sample();
    let root = unpack_embedded(agent.path(), "scout", &resources).expect("unpacked");
    assert_eq!(root, agent.path().join("embedded").join("scout-abc123"));
    assert!(root.join(COMPLETE_MARKER).is_file());
    let skill = std::fs::read_to_string(root.join("skills/0/review/SKILL.md")).expect("skill");
    assert!(skill.contains("Review it."));
    assert_eq!(std::fs::read_to_string(root.join("prompts/0/fix.md")).expect("prompt"), "Fix $1");

    // A second run finds the marker and writes nothing: a local change survives.
    std::fs::write(root.join("prompts/0/fix.md"), "changed").expect("write");
    assert_eq!(unpack_embedded(agent.path(), "scout", &resources), Some(root.clone()));
    assert_eq!(std::fs::read_to_string(root.join("prompts/0/fix.md")).expect("prompt"), "changed");
    assert!(staging_leftovers(&agent.path().join("embedded")).is_empty());
}

#[test]
fn a_new_hash_gets_its_own_directory() {
    let agent = tempfile::tempdir().expect("tempdir");
    let first = unpack_embedded(agent.path(), "scout", &sample()).expect("unpacked");
    let newer = EmbeddedResources { hash: "def456".to_owned(), ..sample() };
    let second = unpack_embedded(agent.path(), "scout", &newer).expect("unpacked");
    assert_ne!(first, second);
    assert!(second.join(COMPLETE_MARKER).is_file());
}

#[test]
fn no_files_cost_nothing() {
    let agent = tempfile::tempdir().expect("tempdir");
    let empty = resources(Vec::new());
    assert_eq!(unpack_embedded(agent.path(), "scout", &empty), None);
    assert!(!agent.path().join("embedded").exists(), "nothing is created");
}

#[test]
fn an_incomplete_directory_is_replaced() {
    let agent = tempfile::tempdir().expect("tempdir");
    let resources = sample();
    let root = embedded_root(agent.path(), "scout", &resources);
    std::fs::create_dir_all(root.join("skills")).expect("mkdir");
    std::fs::write(root.join("skills/stale.md"), "stale").expect("write");
    assert_eq!(unpack_embedded(agent.path(), "scout", &resources), Some(root.clone()));
    assert!(root.join(COMPLETE_MARKER).is_file());
    assert!(!root.join("skills/stale.md").exists());
    assert!(root.join("prompts/0/fix.md").is_file());
}

#[test]
fn concurrent_unpacks_all_succeed_with_one_complete_copy() {
    let agent = tempfile::tempdir().expect("tempdir");
    let resources = sample();
    let results: Vec<Option<PathBuf>> = std::thread::scope(|scope| {
        let handles: Vec<_> =
            (0..8).map(|_| scope.spawn(|| unpack_embedded(agent.path(), "scout", &resources))).collect();
        handles.into_iter().map(|handle| handle.join().expect("thread")).collect()
    });
    let root = embedded_root(agent.path(), "scout", &resources);
    assert!(results.iter().all(|result| result.as_deref() == Some(root.as_path())), "{results:?}");
    assert!(root.join(COMPLETE_MARKER).is_file());
    assert_eq!(std::fs::read_to_string(root.join("prompts/0/fix.md")).expect("prompt"), "Fix $1");
    assert!(staging_leftovers(&agent.path().join("embedded")).is_empty());
}

#[test]
fn paths_leaving_the_directory_fail_without_installing_anything() {
    let agent = tempfile::tempdir().expect("tempdir");
    let bad = resources(vec![file("prompts/ok.md", "ok"), file("../escape.md", "no")]);
    assert_eq!(unpack_embedded(agent.path(), "scout", &bad), None);
    assert!(!embedded_root(agent.path(), "scout", &bad).exists());
    assert!(!agent.path().join("escape.md").exists());
    assert!(staging_leftovers(&agent.path().join("embedded")).is_empty());
    let absolute = resources(vec![file("/etc/x.md", "no")]);
    assert_eq!(unpack_embedded(agent.path(), "scout", &absolute), None);
}

#[test]
fn an_unwritable_agent_dir_is_a_warning_not_an_error() {
    let place = tempfile::tempdir().expect("tempdir");
    let not_a_dir = place.path().join("agent");
    std::fs::write(&not_a_dir, "a file").expect("write");
    assert_eq!(unpack_embedded(&not_a_dir, "scout", &sample()), None);
}

#[test]
fn names_are_made_safe_and_resource_dirs_stay_inside() {
    let resources = EmbeddedResources { hash: "a/b".to_owned(), ..sample() };
    assert_eq!(embedded_root(Path::new("/agent"), "my agent", &resources), Path::new("/agent/embedded/my_agent-a_b"));
    let root = Path::new("/root");
    assert_eq!(resource_dir(root, "skills/0"), Some(root.join("skills/0")));
    assert_eq!(resource_dir(root, "."), Some(root.to_path_buf()));
    assert_eq!(resource_dir(root, ""), Some(root.to_path_buf()));
    assert_eq!(resource_dir(root, "../x"), None);
    assert_eq!(resource_dir(root, "/abs"), None);
    assert_eq!(safe_relative("./a/./b"), Some(PathBuf::from("a/b")));
    assert_eq!(safe_relative("a/../b"), None);
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).expect("metadata").permissions().mode() & 0o777
}

fn with_script() -> EmbeddedResources {
    let mut script = file("hooks/redact.sh", "#!/bin/sh\necho '{}'\n");
    script.executable = true;
    resources(vec![script, file("prompts/0/fix.md", "Fix $1")])
}

#[test]
fn executable_files_are_unpacked_with_the_executable_bit() {
    let agent = tempfile::tempdir().expect("tempdir");
    let root = unpack_embedded(agent.path(), "scout", &with_script()).expect("unpacked");
    assert_eq!(mode(&root.join("hooks/redact.sh")), EXECUTABLE_MODE);
    assert_eq!(mode(&root.join("prompts/0/fix.md")) & 0o111, 0, "other files are not executable");
    // Run it directly (retrying on ETXTBSY: a process forked by a parallel test may briefly hold a
    // descriptor of a file written concurrently).
    let run = || std::process::Command::new(root.join("hooks/redact.sh")).output();
    let mut output = run();
    for _ in 0..20 {
        match &output {
            Err(error) if error.raw_os_error() == Some(libc::ETXTBSY) => {
                std::thread::sleep(std::time::Duration::from_millis(50));
                output = run();
            }
            _ => break,
        }
    }
    let output = output.expect("runs");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "{}\n");
}

#[test]
fn a_complete_directory_gets_a_lost_executable_bit_back() {
    let agent = tempfile::tempdir().expect("tempdir");
    let resources = with_script();
    let root = unpack_embedded(agent.path(), "scout", &resources).expect("unpacked");
    let script = root.join("hooks/redact.sh");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    assert_eq!(unpack_embedded(agent.path(), "scout", &resources), Some(root.clone()));
    assert_eq!(mode(&script), EXECUTABLE_MODE);
    assert_eq!(mode(&root.join("prompts/0/fix.md")) & 0o111, 0);
    // A missing file is not an error (nothing is rewritten once the marker is there).
    std::fs::remove_file(&script).expect("rm");
    assert_eq!(unpack_embedded(agent.path(), "scout", &resources), Some(root));
}
