//! `pi-gen new --rust`: the crate it writes outside any workspace builds at once with `--locked --offline`
//! (its lock file is the checkout's, trimmed, with no version changed), and the binary passes the crate's
//! example test through `pi-gen test --binary`.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

const PI_GEN: &str = env!("CARGO_BIN_EXE_pi-gen");

/// `name` → `version` of every registry package in a Cargo.lock.
fn locked_versions(lock: &Path) -> BTreeMap<String, Vec<String>> {
    let text = std::fs::read_to_string(lock).expect("a lock file");
    let mut versions: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for package in text.split("[[package]]").skip(1) {
        let field = |key: &str| {
            package.lines().find_map(|line| {
                line.strip_prefix(&format!("{key} = \"")).map(|rest| rest.trim_end_matches('"').to_owned())
            })
        };
        if let (Some(name), Some(version)) = (field("name"), field("version")) {
            versions.entry(name).or_default().push(version);
        }
    }
    versions
}

#[test]
fn a_new_rust_crate_builds_with_the_checkouts_versions_and_passes_its_test() {
    let dir = tempfile::tempdir().expect("tempdir");
    let created = Command::new(PI_GEN).args(["new", "--rust", "tally"]).current_dir(dir.path()).output().expect("runs");
    assert!(created.status.success(), "{}", String::from_utf8_lossy(&created.stderr));
    let crate_dir = dir.path().join("tally");
    for file in ["Cargo.toml", "Cargo.lock", "build.rs", "src/main.rs", "tally.yaml", "tests/basics.yaml", "README.md"]
    {
        assert!(crate_dir.join(file).is_file(), "{file} is missing");
    }
    let workspace_lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock");
    let ours = locked_versions(&crate_dir.join("Cargo.lock"));
    let theirs = locked_versions(&workspace_lock);
    for (name, versions) in &ours {
        if name != "tally" {
            let known = theirs.get(name).cloned().unwrap_or_default();
            assert!(versions.iter().all(|version| known.contains(version)), "{name} {versions:?} was resolved anew");
        }
    }
    assert!(ours.contains_key("pi-runtime") && ours.contains_key("tally"));
    assert!(ours.len() < theirs.len(), "the lock was not trimmed to what the crate uses");

    // The runtime compiled for generated agents is reused from pi-gen's shared target directory.
    let target = std::env::var_os("PI_GEN_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/agents"));
    let build = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["build", "--locked", "--offline"])
        .current_dir(&crate_dir)
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .expect("cargo runs");
    assert!(build.status.success(), "{}", String::from_utf8_lossy(&build.stderr));
    let binary = target.join("debug").join("tally");
    let tested = Command::new(PI_GEN)
        .args(["test", "tally.yaml", "--binary"])
        .arg(&binary)
        .current_dir(&crate_dir)
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&tested.stdout);
    assert_eq!(tested.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&tested.stderr));
    assert!(stdout.contains("ok      counts the TODO lines ("), "{stdout}");
}
