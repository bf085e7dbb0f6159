//! The figures at the top of an exported page, over every entry of the file (all branches): messages by
//! kind, tool calls, models, tokens and cost.

use std::fmt::Write as _;

use crate::cli::list_models::format_token_count;
use crate::protocol::{AgentMessage, AssistantContent};
use crate::session::{EntryKind, SessionEntry};

/// What a session holds, counted once over all its entries.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct SessionFigures {
    pub user: usize,
    pub assistant: usize,
    pub tool_results: usize,
    pub tool_errors: usize,
    pub tool_calls: usize,
    pub branch_summaries: usize,
    pub compactions: usize,
    /// Entries with no child: one per branch.
    pub leaves: usize,
    /// `provider/id`, in the order they first appear.
    pub models: Vec<String>,
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub cost: f64,
}

impl SessionFigures {
    pub fn count(entries: &[SessionEntry]) -> Self {
        let mut figures = Self::default();
        let add_model = |figures: &mut Self, provider: &str, id: &str| {
            let name = format!("{provider}/{id}");
            if !figures.models.contains(&name) {
                figures.models.push(name);
            }
        };
        let parents: std::collections::HashSet<&str> =
            entries.iter().filter_map(|entry| entry.parent_id.as_deref()).collect();
        figures.leaves = entries.iter().filter(|entry| !parents.contains(entry.id.as_str())).count();
        for entry in entries {
            match &entry.kind {
                EntryKind::ModelChange { provider, model_id } => add_model(&mut figures, provider, model_id),
                EntryKind::BranchSummary { .. } => figures.branch_summaries += 1,
                EntryKind::Compaction { .. } => figures.compactions += 1,
                EntryKind::Message { message } => match message {
                    AgentMessage::User(_) => figures.user += 1,
                    AgentMessage::Assistant(answer) => {
                        figures.assistant += 1;
                        add_model(&mut figures, &answer.provider, &answer.model);
                        figures.tool_calls += answer
                            .content
                            .iter()
                            .filter(|block| matches!(block, AssistantContent::ToolCall(_)))
                            .count();
                        let usage = &answer.usage;
                        figures.input += usage.input;
                        figures.output += usage.output;
                        figures.cache_read += usage.cache_read;
                        figures.cache_write += usage.cache_write;
                        figures.cost += usage.cost.total;
                    }
                    AgentMessage::ToolResult(result) => {
                        figures.tool_results += 1;
                        figures.tool_errors += usize::from(result.is_error);
                    }
                    _ => {}
                },
                _ => {}
            }
        }
        figures
    }

    /// "3 user, 5 assistant, 2 tool results (1 failed), 1 branch summary".
    pub fn messages_line(&self) -> String {
        let mut parts = vec![format!("{} user", self.user), format!("{} assistant", self.assistant)];
        if self.tool_results > 0 {
            let mut results = plural(self.tool_results, "tool result", "tool results");
            if self.tool_errors > 0 {
                let _ = write!(results, " ({} failed)", self.tool_errors);
            }
            parts.push(results);
        }
        if self.branch_summaries > 0 {
            parts.push(plural(self.branch_summaries, "branch summary", "branch summaries"));
        }
        if self.compactions > 0 {
            parts.push(plural(self.compactions, "compaction", "compactions"));
        }
        parts.join(", ")
    }

    /// "↑17.1K ↓327 R12.3K", the footer's notation; cache writes only when there were some.
    pub fn tokens_line(&self) -> String {
        let mut line = format!("↑{} ↓{}", format_token_count(self.input), format_token_count(self.output));
        if self.cache_read > 0 {
            let _ = write!(line, " R{}", format_token_count(self.cache_read));
        }
        if self.cache_write > 0 {
            let _ = write!(line, " W{}", format_token_count(self.cache_write));
        }
        line
    }

    /// "$0.019": three decimals, as the footer shows cost.
    pub fn cost_line(&self) -> String {
        format!("${:.3}", self.cost)
    }
}

fn plural(count: usize, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}
