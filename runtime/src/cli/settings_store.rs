//! The user's choices written to the agent directory's settings.json as pi writes them: the model
//! (`defaultProvider`, `defaultModel`), `defaultThinkingLevel`, `steeringMode`, `followUpMode`,
//! `compaction.enabled` and `retry.enabled`, merged into what the file holds (other keys and their order
//! kept), two-space indented, replaced atomically. A file that is not a JSON object is left alone.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::agent_session::{Preference, PreferenceStore};

/// The global settings file as a preference store.
pub struct SettingsFileStore {
    path: PathBuf,
}

impl SettingsFileStore {
    /// The store for `<agent_dir>/settings.json`.
    pub fn new(agent_dir: &Path) -> Self {
        Self { path: agent_dir.join("settings.json") }
    }
}

impl PreferenceStore for SettingsFileStore {
    fn save(&self, preference: Preference) {
        if let Err(error) = update_settings_file(&self.path, |settings| apply(settings, &preference)) {
            eprintln!("Warning: the setting was not saved to {}: {error}", self.path.display());
        }
    }
}

/// Sets the keys `preference` stands for.
fn apply(settings: &mut Map<String, Value>, preference: &Preference) {
    match preference {
        Preference::Model { provider, id } => {
            settings.insert("defaultProvider".into(), json!(provider));
            settings.insert("defaultModel".into(), json!(id));
        }
        Preference::ThinkingLevel(level) => {
            settings.insert("defaultThinkingLevel".into(), json!(level.as_str()));
        }
        Preference::SteeringMode(mode) => {
            settings.insert("steeringMode".into(), json!(mode.as_str()));
        }
        Preference::FollowUpMode(mode) => {
            settings.insert("followUpMode".into(), json!(mode.as_str()));
        }
        Preference::AutoCompaction(enabled) => set_nested(settings, "compaction", "enabled", json!(enabled)),
        Preference::AutoRetry(enabled) => set_nested(settings, "retry", "enabled", json!(enabled)),
    }
}

/// `settings[section][key] = value`, making `section` an object when it is not one.
fn set_nested(settings: &mut Map<String, Value>, section: &str, key: &str, value: Value) {
    let entry = settings.entry(section.to_owned()).or_insert_with(|| Value::Object(Map::new()));
    if !entry.is_object() {
        *entry = Value::Object(Map::new());
    }
    if let Value::Object(object) = entry {
        object.insert(key.to_owned(), value);
    }
}

/// Reads `path` (a missing file is an empty object), lets `change` edit it and writes it back through a
/// temporary file renamed over it, so a crash never leaves half a file.
pub fn update_settings_file(path: &Path, change: impl FnOnce(&mut Map<String, Value>)) -> Result<(), String> {
    let mut settings = match std::fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => Map::new(),
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err("it does not hold a JSON object; fix it or remove it".to_owned()),
            Err(error) => return Err(format!("it is not valid JSON ({error}); fix it or remove it")),
        },
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Map::new(),
        Err(error) => return Err(error.to_string()),
    };
    change(&mut settings);
    let text = serde_json::to_string_pretty(&Value::Object(settings)).map_err(|error| error.to_string())?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|error| error.to_string())?;
    }
    let temporary = path.with_extension(format!("json.{}.tmp", std::process::id()));
    std::fs::write(&temporary, text).map_err(|error| error.to_string())?;
    std::fs::rename(&temporary, path).map_err(|error| {
        let _ = std::fs::remove_file(&temporary);
        error.to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::QueueMode;
    use crate::ai::ThinkingLevel;

    #[test]
    fn choices_merge_into_the_file_in_pis_format() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("settings.json");
        std::fs::write(&path, r#"{"theme":"dark","retry":{"maxRetries":5}}"#).expect("write");
        let store = SettingsFileStore::new(dir.path());
        store.save(Preference::ThinkingLevel(ThinkingLevel::High));
        store.save(Preference::SteeringMode(QueueMode::All));
        store.save(Preference::AutoCompaction(false));
        store.save(Preference::AutoRetry(false));
        store.save(Preference::Model { provider: "mock".into(), id: "m2".into() });
        let written = std::fs::read_to_string(&path).expect("read");
        let expected = "{\n  \"theme\": \"dark\",\n  \"retry\": {\n    \"maxRetries\": 5,\n    \"enabled\": false\n  },\n  \"defaultThinkingLevel\": \"high\",\n  \"steeringMode\": \"all\",\n  \"compaction\": {\n    \"enabled\": false\n  },\n  \"defaultProvider\": \"mock\",\n  \"defaultModel\": \"m2\"\n}";
        assert_eq!(written, expected);
    }

    #[test]
    fn a_file_that_is_not_a_json_object_is_left_alone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("settings.json");
        std::fs::write(&path, "{ broken").expect("write");
        assert!(update_settings_file(&path, |settings| apply(settings, &Preference::AutoRetry(true))).is_err());
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "{ broken");
        let missing = dir.path().join("new").join("settings.json");
        update_settings_file(&missing, |settings| apply(settings, &Preference::FollowUpMode(QueueMode::All)))
            .expect("a missing file is created");
        assert_eq!(std::fs::read_to_string(&missing).expect("read"), "{\n  \"followUpMode\": \"all\"\n}");
    }
}
