//! How one tool call looks in the conversation: the tool and its main argument while it runs, then its
//! output, collapsed to a few lines until Ctrl+O expands every tool.

use pi_tui::text::{pad_to_width, truncate_to_width, wrap_text};
use pi_tui::{Background, Role, Theme};
use serde_json::Value;

/// Output lines shown while a tool is collapsed.
pub const COLLAPSED_LINES: usize = 10;

/// A tool call and what it produced so far.
#[derive(Debug, Clone)]
pub struct ToolView {
    pub id: String,
    pub name: String,
    pub args: Value,
    /// The output so far (partial while running).
    pub output: String,
    pub state: ToolState,
    /// Once it succeeded, only the title shows until tools are expanded (pi 1.5's `read`).
    pub quiet_when_done: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolState {
    Running,
    Done,
    Failed,
}

impl ToolView {
    pub fn new(id: &str, name: &str, args: Value) -> Self {
        Self {
            id: id.to_owned(),
            name: name.to_owned(),
            args,
            output: String::new(),
            state: ToolState::Running,
            quiet_when_done: false,
        }
    }

    /// The title: the tool in bold and its main argument (the path, the command, the pattern).
    pub fn title(&self, theme: &Theme) -> String {
        let arg = |key: &str| self.args.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
        let detail = match self.name.as_str() {
            "read" => {
                let mut path = arg("path");
                let offset = self.args.get("offset").and_then(Value::as_u64);
                let limit = self.args.get("limit").and_then(Value::as_u64);
                match (offset, limit) {
                    (Some(offset), Some(limit)) => path.push_str(&format!(":{offset}-{}", offset + limit.max(1) - 1)),
                    (Some(offset), None) => path.push_str(&format!(":{offset}")),
                    (None, Some(limit)) => path.push_str(&format!(":1-{limit}")),
                    (None, None) => {}
                }
                theme.fg(Role::Accent, &path)
            }
            "bash" => theme.fg(Role::Accent, &format!("$ {}", arg("command"))),
            "edit" | "write" | "ls" => theme.fg(Role::Accent, &arg("path")),
            "grep" | "find" => {
                let place = arg("path");
                let pattern = theme.fg(Role::Accent, &arg("pattern"));
                if place.is_empty() {
                    pattern
                } else {
                    format!("{pattern} {}", theme.fg(Role::Muted, &format!("in {place}")))
                }
            }
            // A sub-agent's call: its task, as text.
            _ if self.args.as_object().is_some_and(|args| args.len() == 1) && self.args["task"].is_string() => {
                theme.fg(Role::Accent, &arg("task"))
            }
            _ => {
                let compact = if self.args.as_object().is_some_and(serde_json::Map::is_empty) {
                    String::new()
                } else {
                    self.args.to_string()
                };
                theme.fg(Role::Muted, &compact)
            }
        };
        let name = theme.bold(&self.name);
        if detail.is_empty() { name } else { format!("{name} {detail}") }
    }

    /// The box: a padded title, then the output (the first lines, or the last ones for bash), on the
    /// background of the tool's state.
    pub fn render(&self, width: usize, expanded: bool, theme: &Theme) -> Vec<String> {
        let background = match self.state {
            ToolState::Running => Background::ToolPending,
            ToolState::Done => Background::ToolSuccess,
            ToolState::Failed => Background::ToolError,
        };
        let inner = width.saturating_sub(2).max(1);
        let mut body = vec![String::new()];
        body.extend(wrap_text(&self.title(theme), inner));
        let output = self.output.trim_end_matches('\n');
        let quiet = self.quiet_when_done && self.state == ToolState::Done && !expanded;
        if !output.is_empty() && !quiet {
            body.push(String::new());
            let lines: Vec<&str> = output.split('\n').collect();
            let shown: Vec<&str> = if expanded || lines.len() <= COLLAPSED_LINES {
                lines.clone()
            } else if self.name == "bash" {
                lines[lines.len() - COLLAPSED_LINES..].to_vec()
            } else {
                lines[..COLLAPSED_LINES].to_vec()
            };
            let role = if self.state == ToolState::Failed { Role::Error } else { Role::ToolOutput };
            let hidden = lines.len() - shown.len();
            if hidden > 0 && self.name == "bash" {
                body.push(theme.fg(Role::Muted, &format!("… {hidden} earlier lines (ctrl+o to expand)")));
            }
            for line in shown {
                let line = line.replace('\t', "   ");
                body.push(theme.fg(role, &truncate_to_width(&line, inner, "…")));
            }
            if hidden > 0 && self.name != "bash" {
                body.push(theme.fg(Role::Muted, &format!("… {hidden} more lines (ctrl+o to expand)")));
            }
        }
        body.push(String::new());
        body.into_iter()
            .map(|line| {
                let padded = pad_to_width(&format!(" {line}"), width);
                theme.bg(background, &padded)
            })
            .collect()
    }
}

/// The text blocks of a tool's output, one after another (images are not shown).
pub fn text_of(content: &[crate::protocol::UserContent]) -> String {
    content.iter().filter_map(|block| block.as_text()).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
#[path = "tool_view_tests.rs"]
mod tests;
