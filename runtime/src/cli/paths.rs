//! Where an agent's files live: the global agent directory and the project config directory.

use std::path::{Path, PathBuf};

use crate::AgentDefinition;

/// The global agent directory: `$<AGENT_DIR_ENV>` if set, else `~/<config_dir>/agent`.
pub fn agent_dir(definition: &AgentDefinition) -> PathBuf {
    if let Some(dir) = std::env::var_os(&definition.agent_dir_env).filter(|value| !value.is_empty()) {
        return expand_home(Path::new(&dir));
    }
    home_dir().join(&definition.config_dir).join("agent")
}

/// The project config directory, `<cwd>/<config_dir>`.
pub fn project_dir(definition: &AgentDefinition, cwd: &Path) -> PathBuf {
    cwd.join(&definition.config_dir)
}

/// `~` and `~/…` expanded against the home directory.
pub fn expand_home(path: &Path) -> PathBuf {
    match path.to_str() {
        Some("~") => home_dir(),
        Some(text) if text.starts_with("~/") => home_dir().join(&text[2..]),
        _ => path.to_path_buf(),
    }
}

pub(crate) fn home_dir() -> PathBuf {
    std::env::var_os("HOME").filter(|home| !home.is_empty()).map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_home_prefix_only() {
        let home = home_dir();
        assert_eq!(expand_home(Path::new("~/x")), home.join("x"));
        assert_eq!(expand_home(Path::new("~")), home);
        assert_eq!(expand_home(Path::new("/a/~/b")), PathBuf::from("/a/~/b"));
    }

    #[test]
    fn default_agent_dir_uses_config_dir() {
        let definition = AgentDefinition {
            agent_dir_env: "PI_GEN_TEST_UNSET_AGENT_DIR".into(),
            config_dir: ".coder".into(),
            ..AgentDefinition::default()
        };
        assert_eq!(agent_dir(&definition), home_dir().join(".coder").join("agent"));
    }
}
