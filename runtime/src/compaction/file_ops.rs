//! The files a summarized stretch of conversation read and changed, as tracked from `read`, `write`
//! and `edit` tool calls, and the `<read-files>` / `<modified-files>` manifest appended to summaries.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::protocol::{AgentMessage, AssistantContent};

/// Paths touched by tool calls, by kind of access.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileOperations {
    pub read: BTreeSet<String>,
    pub written: BTreeSet<String>,
    pub edited: BTreeSet<String>,
}

/// The sorted lists stored in a compaction's `details`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileLists {
    /// Read but never modified.
    pub read_files: Vec<String>,
    /// Written or edited.
    pub modified_files: Vec<String>,
}

impl FileOperations {
    /// Records the `path` argument of every `read`, `write` and `edit` call of an assistant message.
    pub fn add_message(&mut self, message: &AgentMessage) {
        let Some(assistant) = message.as_assistant() else { return };
        for block in &assistant.content {
            let AssistantContent::ToolCall(call) = block else { continue };
            let Some(path) = call.arguments.get("path").and_then(Value::as_str) else { continue };
            let set = match call.name.as_str() {
                "read" => &mut self.read,
                "write" => &mut self.written,
                "edit" => &mut self.edited,
                _ => continue,
            };
            set.insert(path.to_owned());
        }
    }

    /// Adds the `readFiles` / `modifiedFiles` lists of an earlier compaction's or branch summary's `details`
    /// (modified files count as edited).
    pub fn add_details(&mut self, details: &Value) {
        let paths = |key: &str| {
            details
                .get(key)
                .and_then(Value::as_array)
                .map(|items| items.iter().filter_map(Value::as_str).map(str::to_owned).collect::<Vec<_>>())
                .unwrap_or_default()
        };
        self.read.extend(paths("readFiles"));
        self.edited.extend(paths("modifiedFiles"));
    }

    /// `modified = edited ∪ written`, `read = read − modified`, both sorted.
    pub fn file_lists(&self) -> FileLists {
        let modified: BTreeSet<&String> = self.edited.iter().chain(&self.written).collect();
        let read_files = self.read.iter().filter(|path| !modified.contains(path)).cloned().collect();
        FileLists { read_files, modified_files: modified.into_iter().cloned().collect() }
    }
}

impl FileLists {
    /// `{"readFiles": [...], "modifiedFiles": [...]}`.
    pub fn to_details(&self) -> Value {
        json!({ "readFiles": self.read_files, "modifiedFiles": self.modified_files })
    }

    /// The manifest for these lists (see [`format_file_tags`]).
    pub fn format_tags(&self) -> String {
        format_file_tags(&self.read_files, &self.modified_files)
    }
}

/// `\n\n<read-files>\n…\n</read-files>\n\n<modified-files>\n…\n</modified-files>`; an empty list's block is
/// left out, and with both empty the result is empty.
pub fn format_file_tags(read_files: &[String], modified_files: &[String]) -> String {
    let mut sections = Vec::new();
    if !read_files.is_empty() {
        sections.push(format!("<read-files>\n{}\n</read-files>", read_files.join("\n")));
    }
    if !modified_files.is_empty() {
        sections.push(format!("<modified-files>\n{}\n</modified-files>", modified_files.join("\n")));
    }
    if sections.is_empty() { String::new() } else { format!("\n\n{}", sections.join("\n\n")) }
}
