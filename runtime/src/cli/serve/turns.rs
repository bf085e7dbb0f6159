//! Markers of the turns `serve` is running, one file per session under `<agent dir>/serve/turns/`: written
//! as a prompt is accepted, removed when its run ends. A marker left behind means the server died during the
//! turn, so the next start finishes it (see [`crate::agent_session::AgentSession::resume_interrupted`]).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::protocol::ImageContent;

/// A turn under way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnMarker {
    pub session_id: String,
    pub cwd: PathBuf,
    /// The session's last entry before the prompt; `None` when it had none.
    pub leaf: Option<String>,
    /// The prompt, to send again when the session file never got it.
    pub message: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImageContent>,
    pub turn_id: String,
}

/// The folder of markers.
#[derive(Debug, Clone)]
pub struct TurnMarkers {
    dir: PathBuf,
}

impl TurnMarkers {
    pub fn new(agent_dir: &Path) -> Self {
        Self { dir: agent_dir.join("serve").join("turns") }
    }

    /// Records `marker` (replacing the session's earlier one), whole or not at all.
    pub fn write(&self, marker: &TurnMarker) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let text = serde_json::to_string(marker).map_err(std::io::Error::other)?;
        let path = self.path(&marker.session_id);
        let partial = path.with_extension(format!("json.{}.tmp", std::process::id()));
        std::fs::write(&partial, text)?;
        std::fs::rename(&partial, &path)
    }

    /// Forgets the session's marker (its turn ended).
    pub fn remove(&self, session_id: &str) {
        let _ = std::fs::remove_file(self.path(session_id));
    }

    /// Every marker left, oldest first; unreadable ones are reported and skipped.
    pub fn all(&self) -> Vec<TurnMarker> {
        let mut found: Vec<(std::time::SystemTime, TurnMarker)> = Vec::new();
        for entry in std::fs::read_dir(&self.dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.extension().is_none_or(|ext| ext != "json") {
                continue;
            }
            let modified = entry.metadata().and_then(|meta| meta.modified()).unwrap_or(std::time::UNIX_EPOCH);
            match std::fs::read_to_string(&path)
                .map_err(|error| error.to_string())
                .and_then(|text| serde_json::from_str::<TurnMarker>(&text).map_err(|error| error.to_string()))
            {
                Ok(marker) => found.push((modified, marker)),
                Err(problem) => eprintln!("Warning: skipping the turn marker {}: {problem}", path.display()),
            }
        }
        found.sort_by_key(|(modified, _)| *modified);
        found.into_iter().map(|(_, marker)| marker).collect()
    }

    fn path(&self, session_id: &str) -> PathBuf {
        // Session ids are uuids or `[A-Za-z0-9._-]` names; anything else cannot leave the folder.
        let safe: String =
            session_id.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect();
        self.dir.join(format!("{safe}.json"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_written_listed_and_removed() {
        let dir = tempfile::tempdir().expect("dir");
        let markers = TurnMarkers::new(dir.path());
        assert!(markers.all().is_empty());
        let marker = TurnMarker {
            session_id: "0195-abc".into(),
            cwd: "/work".into(),
            leaf: Some("e1".into()),
            message: "hello".into(),
            images: Vec::new(),
            turn_id: "t1".into(),
        };
        markers.write(&marker).expect("written");
        std::fs::write(dir.path().join("serve/turns/broken.json"), "{").expect("a broken one");
        assert_eq!(markers.all(), vec![marker]);
        markers.remove("0195-abc");
        assert!(markers.all().is_empty());
        assert_eq!(markers.path("../x").file_name().and_then(|n| n.to_str()), Some(".._x.json"));
    }
}
