//! The conversation as the screen shows it: user messages, answers (markdown, thinking), tool calls, the
//! user's own commands and status notices, built from the session's events and drawn with a one-column margin.

use pi_tui::markdown::Markdown;
use pi_tui::text::{pad_to_width, wrap_text};
use pi_tui::{Background, Component, Role, Theme};

use super::tool_view::{ToolState, ToolView, text_of};
use crate::protocol::{AgentMessage, AssistantContent, AssistantMessage, StopReason};

/// One entry of the conversation on screen.
pub enum Item {
    /// Lines drawn as they are (the header).
    Static(Vec<String>),
    User(String),
    Assistant(AssistantView),
    Tool(ToolView),
    /// The user's own `!command` and its output.
    Bash {
        command: String,
        output: String,
        excluded: bool,
        exit_code: Option<i64>,
    },
    Notice {
        text: String,
        role: Role,
    },
    /// Text the program shows as markdown (`/hotkeys`).
    Markdown(Box<Markdown>),
}

/// A custom message an extension asked to show (`display: true`), under its type: `[spine] ...`.
pub fn custom_message_item(message: &crate::protocol::CustomMessage) -> Item {
    Item::Notice { text: format!("[{}] {}", message.custom_type, message.content.text()), role: Role::Muted }
}

/// An answer: its thinking and text blocks in order, rendered as markdown.
pub struct AssistantView {
    blocks: Vec<Block>,
    pub stop_reason: StopReason,
    pub error: Option<String>,
}

enum Block {
    Thinking(Markdown),
    Text(Markdown),
}

impl AssistantView {
    pub fn new() -> Self {
        Self { blocks: Vec::new(), stop_reason: StopReason::Stop, error: None }
    }

    /// Takes the message's blocks so far (streaming replaces the whole message each time).
    pub fn update(&mut self, message: &AssistantMessage, theme: &Theme) {
        let mut index = 0;
        for content in &message.content {
            let (text, thinking) = match content {
                AssistantContent::Text(text) => (text.text.as_str(), false),
                AssistantContent::Thinking(thinking) => (thinking.thinking.as_str(), true),
                AssistantContent::ToolCall(_) => continue,
            };
            match self.blocks.get_mut(index) {
                Some(Block::Text(view)) if !thinking => view.set_text(text),
                Some(Block::Thinking(view)) if thinking => view.set_text(text),
                _ => {
                    let view = Markdown::new(text, theme.clone());
                    let block = if thinking { Block::Thinking(view) } else { Block::Text(view) };
                    self.blocks.truncate(index);
                    self.blocks.push(block);
                }
            }
            index += 1;
        }
        self.blocks.truncate(index);
        self.stop_reason = message.stop_reason;
        self.error = message.error_message.clone();
    }

    fn render(&mut self, width: usize, show_thinking: bool, theme: &Theme) -> Vec<String> {
        let mut lines = Vec::new();
        for block in &mut self.blocks {
            let rendered = match block {
                Block::Text(view) => view.render(width),
                Block::Thinking(view) if show_thinking => {
                    view.render(width).iter().map(|line| theme.italic(&theme.fg(Role::ThinkingText, line))).collect()
                }
                Block::Thinking(_) => vec![theme.italic(&theme.fg(Role::ThinkingText, "Thinking..."))],
            };
            if rendered.iter().all(|line| line.trim().is_empty()) {
                continue;
            }
            if !lines.is_empty() {
                lines.push(String::new());
            }
            lines.extend(rendered);
        }
        match self.stop_reason {
            StopReason::Aborted => {
                push_gap(&mut lines);
                lines.push(theme.fg(Role::Error, "Aborted"));
            }
            StopReason::Error => {
                push_gap(&mut lines);
                let text = self.error.as_deref().unwrap_or("the request failed");
                lines.extend(wrap_text(&theme.fg(Role::Error, &format!("Error: {text}")), width));
            }
            _ => {}
        }
        lines
    }
}

fn push_gap(lines: &mut Vec<String>) {
    if !lines.is_empty() {
        lines.push(String::new());
    }
}

/// An item and its lines as last drawn (for the width and toggles they were drawn with).
struct Entry {
    item: Item,
    drawn: Option<(DrawnWith, Vec<String>)>,
}

/// What an item's lines depend on besides the item.
#[derive(Clone, Copy, PartialEq, Eq)]
struct DrawnWith {
    width: usize,
    expand_tools: bool,
    show_thinking: bool,
}

/// The conversation: its items and how they are shown. An item is drawn again only when it changed (the
/// streamed answer, a running tool) or the width or a toggle did, and the frame's lines are kept between
/// frames and rebuilt from the first changed item on, so a frame costs what changed, not the length of the
/// conversation.
pub struct Transcript {
    entries: Vec<Entry>,
    pub expand_tools: bool,
    pub show_thinking: bool,
    /// pi 1.5 shows a successful `read` as its title alone until tools are expanded.
    pub collapse_reads: bool,
    /// The last frame: the conversation's lines, then the lines below it.
    lines: Vec<String>,
    /// The line each entry starts at in `lines`, for the entries drawn into it.
    starts: Vec<usize>,
    /// How many of `lines` are the conversation's.
    conversation_lines: usize,
    /// The first entry whose lines in `lines` may be stale.
    stale_from: usize,
    /// What `lines` were drawn with.
    lines_drawn_with: Option<DrawnWith>,
}

/// A frame: its lines, of which the first `stable` are the last frame's.
pub struct Frame<'a> {
    pub lines: &'a [String],
    pub stable: usize,
}

impl Transcript {
    pub fn new() -> Self {
        Self {
            entries: Vec::new(),
            expand_tools: false,
            show_thinking: true,
            collapse_reads: false,
            lines: Vec::new(),
            starts: Vec::new(),
            conversation_lines: 0,
            stale_from: 0,
            lines_drawn_with: None,
        }
    }

    /// The view of a tool call as this transcript shows tools.
    pub fn tool_view(&self, id: &str, name: &str, args: serde_json::Value) -> ToolView {
        let mut view = ToolView::new(id, name, args);
        view.quiet_when_done = self.collapse_reads && name == "read";
        view
    }

    /// Entry `index` and every one after it are drawn into the next frame again.
    fn stale(&mut self, index: usize) {
        self.stale_from = self.stale_from.min(index);
    }

    pub fn push(&mut self, item: Item) {
        self.stale(self.entries.len());
        self.entries.push(Entry { item, drawn: None });
    }

    pub fn notice(&mut self, text: impl Into<String>, role: Role) {
        self.push(Item::Notice { text: text.into(), role });
    }

    /// Everything but the header (a new session, a session switch).
    pub fn clear_conversation(&mut self) {
        self.stale(0);
        self.entries.retain(|entry| matches!(entry.item, Item::Static(_)));
    }

    /// A failed answer that is about to be retried leaves the screen.
    pub fn drop_failed_answer(&mut self) {
        if let Some(Entry { item: Item::Assistant(view), .. }) = self.entries.last()
            && view.stop_reason == StopReason::Error
        {
            self.entries.pop();
            self.stale(self.entries.len());
        }
    }

    /// The answer being streamed (the last one); it is drawn again.
    pub fn last_assistant(&mut self) -> Option<&mut AssistantView> {
        let index = self.entries.iter().rposition(|entry| matches!(entry.item, Item::Assistant(_)))?;
        self.redraw(index)
    }

    /// Entry `index`, drawn again into the next frame.
    fn redraw<T: FromItem>(&mut self, index: usize) -> Option<&mut T> {
        self.stale(index);
        let entry = self.entries.get_mut(index)?;
        entry.drawn = None;
        T::from_item(&mut entry.item)
    }

    /// The tool call `id`; it is drawn again.
    pub fn tool(&mut self, id: &str) -> Option<&mut ToolView> {
        let index = self.entries.iter().rposition(|entry| matches!(&entry.item, Item::Tool(view) if view.id == id))?;
        self.redraw(index)
    }

    /// Rebuilds the conversation from a session's messages (on resume, a new session, a tree move).
    pub fn load(&mut self, messages: &[AgentMessage], theme: &Theme) {
        self.clear_conversation();
        for message in messages {
            match message {
                AgentMessage::User(user) => self.push(Item::User(user.content.text())),
                AgentMessage::Assistant(assistant) => {
                    let mut view = AssistantView::new();
                    view.update(assistant, theme);
                    self.push(Item::Assistant(view));
                    for content in &assistant.content {
                        if let AssistantContent::ToolCall(call) = content {
                            self.push(Item::Tool(self.tool_view(&call.id, &call.name, call.arguments.clone())));
                        }
                    }
                }
                AgentMessage::ToolResult(result) => {
                    if let Some(view) = self.tool(&result.tool_call_id) {
                        view.output = text_of(&result.content);
                        view.state = if result.is_error { ToolState::Failed } else { ToolState::Done };
                    }
                }
                AgentMessage::BashExecution(bash) => self.push(Item::Bash {
                    command: bash.command.clone(),
                    output: bash.output.clone(),
                    excluded: bash.exclude_from_context.unwrap_or(false),
                    exit_code: bash.exit_code,
                }),
                AgentMessage::CompactionSummary(_) => {
                    self.notice("Earlier messages were compacted into a summary.", Role::Muted)
                }
                AgentMessage::BranchSummary(_) => self.notice("A summary of the branch left behind.", Role::Muted),
                AgentMessage::Custom(custom) if custom.display => self.push(custom_message_item(custom)),
                _ => {}
            }
        }
        for entry in &mut self.entries {
            if let Item::Tool(view) = &mut entry.item
                && view.state == ToolState::Running
            {
                view.state = ToolState::Failed;
                entry.drawn = None;
            }
        }
        self.stale(0);
    }

    /// The frame at `width`: every line of the conversation (a blank line before each item), then `below`.
    /// Only the items from the first changed one on are copied into it again.
    pub fn frame(&mut self, width: usize, theme: &Theme, below: Vec<String>) -> Frame<'_> {
        let with = DrawnWith { width, expand_tools: self.expand_tools, show_thinking: self.show_thinking };
        if self.lines_drawn_with != Some(with) {
            self.stale(0);
            self.lines_drawn_with = Some(with);
        }
        let from = self.stale_from.min(self.entries.len()).min(self.starts.len());
        let stable = self.starts.get(from).copied().unwrap_or(self.conversation_lines);
        self.lines.truncate(stable);
        self.starts.truncate(from);
        for entry in &mut self.entries[from..] {
            if !entry.drawn.as_ref().is_some_and(|(drawn_with, _)| *drawn_with == with) {
                entry.drawn = Some((with, draw(&mut entry.item, with, theme)));
            }
            self.starts.push(self.lines.len());
            if let Some((_, drawn)) = &entry.drawn {
                self.lines.extend(drawn.iter().cloned());
            }
        }
        self.conversation_lines = self.lines.len();
        self.stale_from = self.entries.len();
        self.lines.extend(below);
        Frame { lines: &self.lines, stable }
    }

    /// The conversation's lines as the last frame drew them.
    pub fn conversation(&self) -> &[String] {
        &self.lines[..self.conversation_lines.min(self.lines.len())]
    }
}

/// The view an item holds, for [`Transcript::redraw`].
trait FromItem {
    fn from_item(item: &mut Item) -> Option<&mut Self>;
}

impl FromItem for AssistantView {
    fn from_item(item: &mut Item) -> Option<&mut Self> {
        match item {
            Item::Assistant(view) => Some(view),
            _ => None,
        }
    }
}

impl FromItem for ToolView {
    fn from_item(item: &mut Item) -> Option<&mut Self> {
        match item {
            Item::Tool(view) => Some(view),
            _ => None,
        }
    }
}

/// An item's lines: a blank line, then the item (the header as it is; an empty answer not at all).
fn draw(item: &mut Item, with: DrawnWith, theme: &Theme) -> Vec<String> {
    let DrawnWith { width, expand_tools, show_thinking } = with;
    let inner = width.saturating_sub(2).max(1);
    let rendered = match item {
        Item::Static(static_lines) => return static_lines.clone(),
        Item::User(text) => user_box(text, width, theme),
        Item::Assistant(view) => {
            let body = view.render(inner, show_thinking, theme);
            if body.is_empty() {
                return Vec::new();
            }
            margin(body)
        }
        Item::Tool(view) => view.render(width, expand_tools, theme),
        Item::Bash { command, output, excluded, exit_code } => {
            bash_box(command, output, *excluded, *exit_code, width, expand_tools, theme)
        }
        Item::Notice { text, role } => {
            margin(text.split('\n').flat_map(|line| wrap_text(&theme.fg(*role, line), inner)).collect())
        }
        Item::Markdown(view) => margin(view.render(inner)),
    };
    let mut lines = Vec::with_capacity(rendered.len() + 1);
    lines.push(String::new());
    lines.extend(rendered);
    lines
}

fn margin(lines: Vec<String>) -> Vec<String> {
    lines.into_iter().map(|line| if line.is_empty() { line } else { format!(" {line}") }).collect()
}

fn user_box(text: &str, width: usize, theme: &Theme) -> Vec<String> {
    let inner = width.saturating_sub(2).max(1);
    let mut lines = vec![String::new()];
    lines.extend(wrap_text(text, inner));
    lines.push(String::new());
    lines.into_iter().map(|line| theme.bg(Background::UserMessage, &pad_to_width(&format!(" {line}"), width))).collect()
}

fn bash_box(
    command: &str,
    output: &str,
    excluded: bool,
    exit_code: Option<i64>,
    width: usize,
    expanded: bool,
    theme: &Theme,
) -> Vec<String> {
    let mut view = ToolView::new("", "bash", serde_json::json!({ "command": command }));
    view.output = output.to_owned();
    if let Some(code) = exit_code.filter(|code| *code != 0) {
        view.output.push_str(&format!("\n(exit code {code})"));
    }
    view.state = if exit_code == Some(0) { ToolState::Done } else { ToolState::Failed };
    let mut lines = view.render(width, expanded, theme);
    if excluded {
        lines.push(format!(" {}", theme.fg(Role::Muted, "(not sent to the model)")));
    }
    lines
}

#[cfg(test)]
#[path = "transcript_tests.rs"]
mod tests;
