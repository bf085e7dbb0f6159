//! The panel state a session keeps (saved as `custom` entries of type [`STATE_ENTRY_TYPE`], so `-c`
//! restores it): todos, memories, scratchpad cells, open files and watched commands, message summaries
//! and deletions, and where the conversation was detached. Detached chunks are kept as message ranges; their
//! text is rebuilt from the session's own messages, so a snapshot stays small.

use serde::{Deserialize, Serialize};

use super::FIRST_DYNAMIC_PANEL;

/// The `customType` of the entries holding [`PanelState`] snapshots (the last one on the branch wins).
pub const STATE_ENTRY_TYPE: &str = "context-panels";

/// A todo's progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    #[default]
    Pending,
    InProgress,
    Done,
}

impl TodoStatus {
    pub fn mark(self) -> &'static str {
        match self {
            Self::Pending => "[ ]",
            Self::InProgress => "[~]",
            Self::Done => "[x]",
        }
    }
}

/// One todo; `parent` nests it under another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TodoItem {
    /// `T1`, `T2`, ...
    pub id: String,
    pub text: String,
    #[serde(default)]
    pub status: TodoStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
}

/// How much a memory matters (shown first when higher).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Importance {
    Low,
    #[default]
    Medium,
    High,
    Critical,
}

impl Importance {
    pub fn name(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::Critical => "critical",
        }
    }
}

/// Something the model chose to remember.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Memory {
    /// `M1`, `M2`, ...
    pub id: String,
    pub text: String,
    #[serde(default)]
    pub importance: Importance,
}

/// A scratchpad cell the model wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScratchCell {
    /// `C1`, `C2`, ...
    pub id: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub title: String,
    pub content: String,
}

/// A file open as a panel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenFile {
    #[serde(rename = "panelId")]
    pub panel_id: String,
    /// As the model gave it (relative to the working directory, or absolute).
    pub path: String,
    /// Shown as `Skill: <name>` instead of `File: <path>` (a skill's SKILL.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skill: Option<String>,
}

/// A command whose output the model asked to watch as a panel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WatchedCommand {
    #[serde(rename = "panelId")]
    pub panel_id: String,
    pub command: String,
    #[serde(rename = "refreshSecs")]
    pub refresh_secs: u64,
}

/// What the model did to one conversation message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum MessageEditAction {
    /// Later requests carry `tl_dr` instead of the message.
    Summarize { tl_dr: String },
    /// Later requests leave the message out.
    Delete,
}

/// An edit of message `#number` (1-based in the context since the last compaction), valid while that
/// message still has `timestamp`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageEdit {
    pub number: usize,
    pub timestamp: i64,
    #[serde(flatten)]
    pub action: MessageEditAction,
}

/// Messages `#start..#end` (1-based, end inclusive) moved into the frozen history panel `panel_id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DetachedChunk {
    #[serde(rename = "panelId")]
    pub panel_id: String,
    pub start: usize,
    pub end: usize,
    /// Timestamps of the first and last message, to notice when the context under it changed.
    #[serde(rename = "firstTimestamp")]
    pub first_timestamp: i64,
    #[serde(rename = "lastTimestamp")]
    pub last_timestamp: i64,
    /// When it was detached (its panel's refresh time, so it sorts as stable).
    #[serde(rename = "detachedAt")]
    pub detached_at: i64,
}

/// Everything a session remembers of its panels.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PanelState {
    pub version: u32,
    #[serde(default)]
    pub todos: Vec<TodoItem>,
    #[serde(default)]
    pub memories: Vec<Memory>,
    #[serde(default)]
    pub scratchpad: Vec<ScratchCell>,
    #[serde(default)]
    pub open_files: Vec<OpenFile>,
    #[serde(default)]
    pub watched: Vec<WatchedCommand>,
    #[serde(default)]
    pub message_edits: Vec<MessageEdit>,
    #[serde(default)]
    pub detached: Vec<DetachedChunk>,
    /// Built-in or YAML panels the model closed (by id).
    #[serde(default)]
    pub closed: Vec<String>,
    /// The next number for `P<n>`, `T<n>`, `M<n>`, `C<n>`.
    pub next_panel: u32,
    pub next_todo: u32,
    pub next_memory: u32,
    pub next_cell: u32,
}

impl Default for PanelState {
    fn default() -> Self {
        Self {
            version: 1,
            todos: Vec::new(),
            memories: Vec::new(),
            scratchpad: Vec::new(),
            open_files: Vec::new(),
            watched: Vec::new(),
            message_edits: Vec::new(),
            detached: Vec::new(),
            closed: Vec::new(),
            next_panel: FIRST_DYNAMIC_PANEL,
            next_todo: 1,
            next_memory: 1,
            next_cell: 1,
        }
    }
}

impl PanelState {
    /// A fresh `P<n>` id.
    pub fn allocate_panel(&mut self) -> String {
        let id = format!("P{}", self.next_panel);
        self.next_panel += 1;
        id
    }

    pub fn allocate_todo(&mut self) -> String {
        let id = format!("T{}", self.next_todo);
        self.next_todo += 1;
        id
    }

    pub fn allocate_memory(&mut self) -> String {
        let id = format!("M{}", self.next_memory);
        self.next_memory += 1;
        id
    }

    pub fn allocate_cell(&mut self) -> String {
        let id = format!("C{}", self.next_cell);
        self.next_cell += 1;
        id
    }

    /// The message number where the live conversation starts (1 when nothing is detached).
    pub fn live_start(&self) -> usize {
        self.detached.last().map_or(1, |chunk| chunk.end + 1)
    }

    /// The edit of message `#number`, if any.
    pub fn edit_of(&self, number: usize) -> Option<&MessageEditAction> {
        self.message_edits.iter().rev().find(|edit| edit.number == number).map(|edit| &edit.action)
    }
}
