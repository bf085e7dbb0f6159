//! Project context files: AGENTS.md or CLAUDE.md from the agent directory, then from `/` down to the cwd.

use std::path::{Path, PathBuf};

use super::ContextFile;

/// File names looked for in each directory; the first one present wins.
pub const CONTEXT_FILE_NAMES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// Collects the context files for `cwd`: the agent directory's first, then each ancestor root-down.
pub fn load_context_files(agent_dir: &Path, cwd: &Path, names: &[&str]) -> Vec<ContextFile> {
    let mut files: Vec<ContextFile> = Vec::new();
    let mut push = |file: Option<ContextFile>| {
        if let Some(file) = file
            && !files.iter().any(|existing| existing.path == file.path)
        {
            files.push(file);
        }
    };
    push(first_in(agent_dir, names));
    let ancestors: Vec<PathBuf> = cwd.ancestors().map(Path::to_path_buf).collect();
    for dir in ancestors.iter().rev() {
        push(first_in(dir, names));
    }
    files
}

fn first_in(dir: &Path, names: &[&str]) -> Option<ContextFile> {
    names.iter().find_map(|name| {
        let path = dir.join(name);
        let content = std::fs::read_to_string(&path).ok()?;
        Some(ContextFile { path, content })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_dir_first_then_root_down_and_agents_md_wins() {
        let root = tempfile::tempdir().expect("tempdir");
        let agent = root.path().join("agent");
        let project = root.path().join("project");
        let nested = project.join("src");
        std::fs::create_dir_all(&agent).expect("mkdir");
        std::fs::create_dir_all(&nested).expect("mkdir");
        std::fs::write(agent.join("AGENTS.md"), "global").expect("write");
        std::fs::write(project.join("CLAUDE.md"), "claude").expect("write");
        std::fs::write(nested.join("AGENTS.md"), "agents").expect("write");
        std::fs::write(nested.join("CLAUDE.md"), "ignored").expect("write");
        let files = load_context_files(&agent, &nested, &CONTEXT_FILE_NAMES);
        let contents: Vec<&str> = files.iter().map(|f| f.content.as_str()).collect();
        assert_eq!(contents, vec!["global", "claude", "agents"]);
        assert_eq!(files[2].path, nested.join("AGENTS.md"));
    }
}
