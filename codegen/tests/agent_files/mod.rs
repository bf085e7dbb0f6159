//! The agent files the codegen tests read: every agent YAML under agents/ (agent crates' included).

use std::path::{Path, PathBuf};

/// Every agent YAML under agents/ (including those of agent crates), sorted.
pub fn agent_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("read agents/").flatten() {
            let path = entry.path();
            if path.is_dir() && entry.file_name() != "target" {
                walk(&path, out);
            } else if path.extension().is_some_and(|ext| ext == "yaml") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../agents"), &mut files);
    files.sort();
    files
}
