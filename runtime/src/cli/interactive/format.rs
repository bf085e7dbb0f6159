//! Numbers and paths as the interactive footer and notices show them: `2.9k` tokens, `1.2%/128k`, `~/project`.

use std::path::Path;

/// Tokens as pi's footer writes them: `25`, `2.9k`, `18k`, `1.2M`.
pub fn tokens(count: u64) -> String {
    match count {
        0..1_000 => count.to_string(),
        1_000..10_000 => format!("{:.1}k", count as f64 / 1_000.0),
        10_000..1_000_000 => format!("{}k", (count as f64 / 1_000.0).round() as u64),
        1_000_000..10_000_000 => format!("{:.1}M", count as f64 / 1_000_000.0),
        _ => format!("{}M", (count as f64 / 1_000_000.0).round() as u64),
    }
}

/// `path` with the home directory written `~`.
pub fn home_relative(path: &Path, home: Option<&Path>) -> String {
    if let Some(home) = home.filter(|home| !home.as_os_str().is_empty())
        && let Ok(rest) = path.strip_prefix(home)
    {
        return if rest.as_os_str().is_empty() { "~".to_owned() } else { format!("~/{}", rest.display()) };
    }
    path.display().to_string()
}

/// The git branch of the repository `cwd` is in, read from `.git/HEAD` (a detached head shows no branch).
pub fn git_branch(cwd: &Path) -> Option<String> {
    let mut dir = Some(cwd);
    while let Some(current) = dir {
        let dot_git = current.join(".git");
        let head_path = if dot_git.is_dir() {
            dot_git.join("HEAD")
        } else if dot_git.is_file() {
            // A worktree: `.git` names the real git dir.
            let pointer = std::fs::read_to_string(&dot_git).ok()?;
            let git_dir = pointer.trim().strip_prefix("gitdir:")?.trim();
            current.join(git_dir).join("HEAD")
        } else {
            dir = current.parent();
            continue;
        };
        let head = std::fs::read_to_string(head_path).ok()?;
        return head.trim().strip_prefix("ref: refs/heads/").map(str::to_owned);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_counts_are_short() {
        assert_eq!(tokens(25), "25");
        assert_eq!(tokens(2_900), "2.9k");
        assert_eq!(tokens(18_400), "18k");
        assert_eq!(tokens(1_260_000), "1.3M");
    }

    #[test]
    fn paths_under_home_start_with_a_tilde() {
        let home = Path::new("/home/me");
        assert_eq!(home_relative(Path::new("/home/me/project"), Some(home)), "~/project");
        assert_eq!(home_relative(Path::new("/home/me"), Some(home)), "~");
        assert_eq!(home_relative(Path::new("/srv/x"), Some(home)), "/srv/x");
    }

    #[test]
    fn the_branch_comes_from_head() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join(".git")).expect("git dir");
        std::fs::write(dir.path().join(".git/HEAD"), "ref: refs/heads/main\n").expect("head");
        std::fs::create_dir_all(dir.path().join("src/deep")).expect("dirs");
        assert_eq!(git_branch(&dir.path().join("src/deep")).as_deref(), Some("main"));
        std::fs::write(dir.path().join(".git/HEAD"), "0123abcd\n").expect("head");
        assert_eq!(git_branch(dir.path()), None);
    }
}
