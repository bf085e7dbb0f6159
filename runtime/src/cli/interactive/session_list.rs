//! Session files summed up for the resume selector: first message, name, message count, working directory
//! and last activity, read without loading the session.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::Value;

use crate::session::list_session_files;

/// Sessions read for one listing, at most (the newest).
const SESSION_LIMIT: usize = 500;

/// One session file, summed up.
#[derive(Debug, Clone)]
pub struct SessionSummary {
    pub path: PathBuf,
    pub modified: SystemTime,
    pub cwd: String,
    pub name: Option<String>,
    pub first_message: Option<String>,
    pub messages: usize,
}

impl SessionSummary {
    /// How long ago the session was last written: `just now`, `5m ago`, `3h ago`, `2d ago`.
    pub fn age(&self) -> String {
        let seconds = SystemTime::now().duration_since(self.modified).map_or(0, |age| age.as_secs());
        match seconds {
            0..60 => "just now".to_owned(),
            60..3_600 => format!("{}m ago", seconds / 60),
            3_600..86_400 => format!("{}h ago", seconds / 3_600),
            _ => format!("{}d ago", seconds / 86_400),
        }
    }
}

/// The sessions in `dir`, newest first.
pub fn list_sessions(dir: &Path) -> Vec<SessionSummary> {
    list_session_files(dir)
        .into_iter()
        .take(SESSION_LIMIT)
        .filter_map(|(path, modified)| summarize(&path, modified))
        .collect()
}

fn summarize(path: &Path, modified: SystemTime) -> Option<SessionSummary> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut lines = text.lines();
    let header: Value = serde_json::from_str(lines.next()?).ok()?;
    if header["type"] != "session" {
        return None;
    }
    let mut summary = SessionSummary {
        path: path.to_path_buf(),
        modified,
        cwd: header["cwd"].as_str().unwrap_or_default().to_owned(),
        name: None,
        first_message: None,
        messages: 0,
    };
    for line in lines {
        let Ok(entry) = serde_json::from_str::<Value>(line) else { continue };
        match entry["type"].as_str() {
            Some("message") => {
                summary.messages += 1;
                if summary.first_message.is_none() && entry["message"]["role"] == "user" {
                    summary.first_message = user_text(&entry["message"]["content"]);
                }
            }
            Some("session_info") => {
                summary.name = entry["name"].as_str().map(str::trim).filter(|name| !name.is_empty()).map(str::to_owned);
            }
            _ => {}
        }
    }
    Some(summary)
}

fn user_text(content: &Value) -> Option<String> {
    let text = match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|block| block["text"].as_str()).collect::<Vec<_>>().join(" "),
        _ => return None,
    };
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_file_is_summed_up() {
        let dir = tempfile::tempdir().expect("tempdir");
        let lines = [
            r#"{"type":"session","version":3,"id":"abc","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work/p"}"#,
            r#"{"type":"message","id":"1","parentId":null,"timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"Fix the build"}],"timestamp":1}}"#,
            r#"{"type":"message","id":"2","parentId":"1","timestamp":"t","message":{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":2}}"#,
            r#"{"type":"session_info","id":"3","parentId":"2","timestamp":"t","name":"build fix"}"#,
            "not json",
        ];
        std::fs::write(dir.path().join("2026_abc.jsonl"), lines.join("\n")).expect("write");
        std::fs::write(dir.path().join("broken.jsonl"), "garbage\n").expect("write");
        let sessions = list_sessions(dir.path());
        assert_eq!(sessions.len(), 1);
        let summary = &sessions[0];
        assert_eq!(summary.first_message.as_deref(), Some("Fix the build"));
        assert_eq!(summary.name.as_deref(), Some("build fix"));
        assert_eq!(summary.messages, 2);
        assert_eq!(summary.cwd, "/work/p");
        assert_eq!(summary.age(), "just now");
    }
}
