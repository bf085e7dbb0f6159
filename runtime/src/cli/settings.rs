//! `settings.json` as pi reads it: the global file in the agent directory and the project file in the
//! project config directory, project keys winning (objects merged one level deep), old formats migrated.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// Both settings files and their merge.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    global: Map<String, Value>,
    project: Map<String, Value>,
    merged: Map<String, Value>,
}

/// A settings file that exists but could not be used (the run goes on without it), or a key in it whose
/// value has the wrong type (the run goes on without that key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsProblem {
    pub path: PathBuf,
    pub message: String,
    /// Only one key is ignored, not the file.
    pub key_only: bool,
}

impl std::fmt::Display for SettingsProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.key_only {
            write!(f, "{}: {}", self.path.display(), self.message)
        } else {
            write!(f, "ignoring {}: {} (fix the file or remove it)", self.path.display(), self.message)
        }
    }
}

impl Settings {
    /// Reads `<agent_dir>/settings.json` and `<project_dir>/settings.json` (no project file for a folder that
    /// is not trusted). A missing file counts as empty; an unreadable or malformed one is reported and counts
    /// as empty.
    pub fn load(agent_dir: &Path, project_dir: Option<&Path>) -> (Self, Vec<SettingsProblem>) {
        let mut problems = Vec::new();
        let mut read = |path: PathBuf| match read_object(&path) {
            Ok(map) => {
                for message in super::settings_types::type_problems(&map) {
                    problems.push(SettingsProblem { path: path.clone(), message, key_only: true });
                }
                map
            }
            Err(message) => {
                problems.push(SettingsProblem { path, message, key_only: false });
                Map::new()
            }
        };
        let global = read(agent_dir.join("settings.json"));
        let project = project_dir.map(|dir| read(dir.join("settings.json"))).unwrap_or_default();
        (Self::from_maps(global, project), problems)
    }

    /// Settings from already-parsed files (objects; anything else counts as empty).
    pub fn from_values(global: Value, project: Value) -> Self {
        let as_map = |value: Value| match value {
            Value::Object(map) => migrate(map),
            _ => Map::new(),
        };
        Self::from_maps(as_map(global), as_map(project))
    }

    fn from_maps(global: Map<String, Value>, project: Map<String, Value>) -> Self {
        let merged = merge(&global, &project);
        Self { global, project, merged }
    }

    /// A string setting after the merge (`None` when absent or not a string).
    pub fn string(&self, key: &str) -> Option<&str> {
        self.merged.get(key).and_then(Value::as_str)
    }

    /// Any setting after the merge.
    pub fn value(&self, key: &str) -> Option<&Value> {
        self.merged.get(key)
    }

    /// A boolean setting after the merge.
    pub fn bool(&self, key: &str) -> Option<bool> {
        self.merged.get(key).and_then(Value::as_bool)
    }

    /// A string setting of the agent directory's file only (for settings a project may not change).
    pub fn global_string(&self, key: &str) -> Option<&str> {
        self.global.get(key).and_then(Value::as_str)
    }

    /// A setting as the project file has it (before the merge).
    pub fn project_value(&self, key: &str) -> Option<&Value> {
        self.project.get(key)
    }

    /// A setting as the agent directory's file has it (before the merge).
    pub fn global_value(&self, key: &str) -> Option<&Value> {
        self.global.get(key)
    }

    /// The string entries of an array setting in the project file only.
    pub fn project_list(&self, key: &str) -> Vec<String> {
        string_list(&self.project, key)
    }

    /// The string entries of an array setting in the global file only.
    pub fn global_list(&self, key: &str) -> Vec<String> {
        string_list(&self.global, key)
    }
}

fn read_object(path: &Path) -> Result<Map<String, Value>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(err) => return Err(err.to_string()),
    };
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(migrate(map)),
        Ok(_) => Err("expected a JSON object".to_owned()),
        Err(err) => Err(format!("invalid JSON at line {} column {}: {err}", err.line(), err.column())),
    }
}

/// pi's format migrations that matter here: the old `skills` object (`enableSkillCommands`,
/// `customDirectories`) becomes the top-level flag and the `skills` path list.
fn migrate(mut map: Map<String, Value>) -> Map<String, Value> {
    if let Some(Value::Object(old)) = map.get("skills").cloned() {
        if let Some(enabled) = old.get("enableSkillCommands")
            && !map.contains_key("enableSkillCommands")
        {
            map.insert("enableSkillCommands".to_owned(), enabled.clone());
        }
        match old.get("customDirectories") {
            Some(Value::Array(dirs)) if !dirs.is_empty() => {
                map.insert("skills".to_owned(), Value::Array(dirs.clone()));
            }
            _ => {
                map.remove("skills");
            }
        }
    }
    map
}

/// Project over global: objects on both sides merge their keys, anything else is replaced.
fn merge(global: &Map<String, Value>, project: &Map<String, Value>) -> Map<String, Value> {
    let mut merged = global.clone();
    for (key, value) in project {
        match (merged.get_mut(key), value) {
            (Some(Value::Object(base)), Value::Object(over)) => {
                for (inner_key, inner) in over {
                    base.insert(inner_key.clone(), inner.clone());
                }
            }
            _ => {
                merged.insert(key.clone(), value.clone());
            }
        }
    }
    merged
}

fn string_list(map: &Map<String, Value>, key: &str) -> Vec<String> {
    match map.get(key) {
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn project_keys_win_and_objects_merge_one_level() {
        let settings = Settings::from_values(
            json!({"shellPath": "/bin/zsh", "retry": {"maxRetries": 5, "baseDelayMs": 100}, "skills": ["a"]}),
            json!({"shellPath": "/bin/bash", "retry": {"maxRetries": 1}, "skills": ["b"]}),
        );
        assert_eq!(settings.string("shellPath"), Some("/bin/bash"));
        assert_eq!(settings.merged["retry"], json!({"maxRetries": 1, "baseDelayMs": 100}));
        assert_eq!(settings.global_list("skills"), ["a"]);
        assert_eq!(settings.project_list("skills"), ["b"]);
    }

    #[test]
    fn the_old_skills_object_is_migrated() {
        let settings = Settings::from_values(
            json!({"skills": {"enableSkillCommands": false, "customDirectories": ["~/my-skills"]}}),
            json!({"skills": {"enableSkillCommands": true}}),
        );
        // Each file is migrated on its own; the project flag then wins.
        assert_eq!(settings.bool("enableSkillCommands"), Some(true));
        assert_eq!(settings.global_list("skills"), ["~/my-skills"]);
        assert!(settings.project_list("skills").is_empty());
    }

    #[test]
    fn broken_files_are_reported_with_their_place_and_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let (agent, project) = (dir.path().join("agent"), dir.path().join("project"));
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(agent.join("settings.json"), "{\n  \"shellPath\": \"/bin/sh\",\n}\n").unwrap();
        std::fs::write(project.join("settings.json"), "{\"shellCommandPrefix\": \"set -e\"}").unwrap();
        let (settings, problems) = Settings::load(&agent, Some(&project));
        assert_eq!(problems.len(), 1, "{problems:?}");
        let shown = problems[0].to_string();
        assert!(shown.contains("settings.json") && shown.contains("line 3 column 1"), "{shown}");
        assert_eq!(settings.string("shellPath"), None);
        assert_eq!(settings.string("shellCommandPrefix"), Some("set -e"));
    }

    #[test]
    fn missing_and_empty_files_are_empty_settings() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("settings.json"), "  \n").unwrap();
        let (settings, problems) = Settings::load(dir.path(), Some(&dir.path().join("nowhere")));
        assert!(problems.is_empty());
        assert_eq!(settings.string("shellPath"), None);
    }
}
