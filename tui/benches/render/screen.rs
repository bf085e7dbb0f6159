//! The bench's screen, composed like the interactive mode's: conversation items that keep their lines, the
//! editor, the footer, and the inline renderer that diffs the frames.

use super::*;

#[derive(Clone)]
pub(crate) enum Item {
    /// The header lines.
    Static(Vec<String>),
    User(String),
    Assistant(Box<Markdown>),
    Tool {
        title: String,
        output: String,
        bash: bool,
    },
}

/// An item and its lines as last drawn, with the width they were drawn for.
#[derive(Clone)]
pub(crate) struct Entry {
    pub(crate) item: Item,
    pub(crate) drawn: Option<(usize, Vec<String>)>,
}

/// The conversation: like the interactive mode's transcript, it draws an item again only when the width
/// changed (nothing else changes here: the streamed answer is drawn by [`Screen`] every frame).
#[derive(Clone)]
pub(crate) struct Conversation {
    pub(crate) items: Vec<Entry>,
    pub(crate) theme: Theme,
}

pub(crate) fn theme() -> Theme {
    Theme::dark(ColorDepth::TrueColor)
}

impl Conversation {
    pub(crate) fn new() -> Self {
        let theme = theme();
        let header = vec![
            String::new(),
            format!(" {}", theme.bold(&theme.fg(Role::Accent, "pi v0.1.0"))),
            format!(
                " {} {}{}{} {}",
                theme.fg(Role::Dim, "escape"),
                theme.fg(Role::Muted, "interrupt"),
                theme.fg(Role::Dim, " · "),
                theme.fg(Role::Dim, "ctrl+c/ctrl+d"),
                theme.fg(Role::Muted, "clear/exit"),
            ),
            format!(" {}", theme.fg(Role::Dim, "Type /hotkeys for every key, / for the commands.")),
        ];
        Self { items: vec![Entry { item: Item::Static(header), drawn: None }], theme }
    }

    /// The header and one exchange: a prompt, a tool call, the answer (about 30 lines).
    pub(crate) fn short() -> Self {
        let mut conversation = Self::new();
        conversation.push_user(0);
        conversation.push_tool(0);
        conversation.push_answer(0);
        conversation
    }

    /// `messages` session messages: prompts, each answered; every fourth answer first calls a tool (so an
    /// exchange is two messages, or four with the tool call and its result).
    pub(crate) fn with_messages(messages: usize) -> Self {
        let mut conversation = Self::new();
        let (mut count, mut index) = (0, 0);
        while count < messages {
            conversation.push_user(index);
            if index % 4 == 3 {
                conversation.push_tool(index);
                count += 2;
            }
            conversation.push_answer(index);
            count += 2;
            index += 1;
        }
        conversation
    }

    /// What is above a streamed answer: ten exchanges (a few hundred lines) and the new prompt.
    pub(crate) fn earlier() -> Self {
        let mut conversation = Self::new();
        for index in 0..10 {
            conversation.push_user(index);
            if index % 2 == 1 {
                conversation.push_tool(index);
            }
            conversation.push_answer(index);
        }
        conversation.push_user(10);
        conversation
    }

    pub(crate) fn push(&mut self, item: Item) {
        self.items.push(Entry { item, drawn: None });
    }

    pub(crate) fn push_user(&mut self, index: usize) {
        self.push(Item::User(user_text(index)));
    }

    pub(crate) fn push_answer(&mut self, index: usize) {
        self.push(Item::Assistant(Box::new(Markdown::new(&answer_text(index), self.theme.clone()))));
    }

    pub(crate) fn push_tool(&mut self, index: usize) {
        let bash = index.is_multiple_of(2);
        let (title, output) = if bash {
            let title =
                format!("{} {}", self.theme.bold("bash"), self.theme.fg(Role::Accent, "$ cargo test -p pi-tui"));
            (title, bash_output(index))
        } else {
            let path = format!("src/module_{index}.rs");
            (format!("{} {}", self.theme.bold("read"), self.theme.fg(Role::Accent, &path)), read_output(index))
        };
        self.push(Item::Tool { title, output, bash });
    }

    /// Every line at `width`, a blank line before each item (as the transcript renders): the lines kept
    /// from the last frame, items drawn only when new or when the width changed.
    pub(crate) fn render(&mut self, width: usize) -> Vec<String> {
        let mut lines = Vec::new();
        for entry in &mut self.items {
            if entry.drawn.as_ref().is_none_or(|(drawn_width, _)| *drawn_width != width) {
                entry.drawn = Some((width, draw(&mut entry.item, width, &self.theme)));
            }
            if let Some((_, drawn)) = &entry.drawn {
                lines.extend(drawn.iter().cloned());
            }
        }
        lines
    }

    /// Forgets every item's lines (as a resize or a toggle does).
    pub(crate) fn forget(&mut self) {
        for entry in &mut self.items {
            entry.drawn = None;
        }
    }
}

/// An item's lines: a blank line, then the item (the header as it is; an empty answer not at all).
pub(crate) fn draw(item: &mut Item, width: usize, theme: &Theme) -> Vec<String> {
    let inner = width.saturating_sub(2).max(1);
    let rendered = match item {
        Item::Static(static_lines) => return static_lines.clone(),
        Item::User(text) => user_box(text, width, theme),
        Item::Assistant(view) => {
            let body = view.render(inner);
            if body.iter().all(|line| line.trim().is_empty()) {
                return Vec::new();
            }
            body.into_iter().map(|line| if line.is_empty() { line } else { format!(" {line}") }).collect()
        }
        Item::Tool { title, output, bash } => tool_box(title, output, *bash, width, theme),
    };
    let mut lines = Vec::with_capacity(rendered.len() + 1);
    lines.push(String::new());
    lines.extend(rendered);
    lines
}

pub(crate) fn user_box(text: &str, width: usize, theme: &Theme) -> Vec<String> {
    let inner = width.saturating_sub(2).max(1);
    let mut lines = vec![String::new()];
    lines.extend(wrap_text(text, inner));
    lines.push(String::new());
    lines.into_iter().map(|line| theme.bg(Background::UserMessage, &pad_to_width(&format!(" {line}"), width))).collect()
}

/// A finished tool call: the title, then the output collapsed to its first (bash: last) ten lines.
pub(crate) fn tool_box(title: &str, output: &str, bash: bool, width: usize, theme: &Theme) -> Vec<String> {
    let inner = width.saturating_sub(2).max(1);
    let mut body = vec![String::new()];
    body.extend(wrap_text(title, inner));
    let output = output.trim_end_matches('\n');
    if !output.is_empty() {
        body.push(String::new());
        let lines: Vec<&str> = output.split('\n').collect();
        let shown = if lines.len() <= COLLAPSED_LINES {
            &lines[..]
        } else if bash {
            &lines[lines.len() - COLLAPSED_LINES..]
        } else {
            &lines[..COLLAPSED_LINES]
        };
        let hidden = lines.len() - shown.len();
        if hidden > 0 && bash {
            body.push(theme.fg(Role::Muted, &format!("… {hidden} earlier lines (ctrl+o to expand)")));
        }
        for line in shown {
            let line = line.replace('\t', "   ");
            body.push(theme.fg(Role::ToolOutput, &truncate_to_width(&line, inner, "…")));
        }
        if hidden > 0 && !bash {
            body.push(theme.fg(Role::Muted, &format!("… {hidden} more lines (ctrl+o to expand)")));
        }
    }
    body.push(String::new());
    body.into_iter().map(|line| theme.bg(Background::ToolSuccess, &pad_to_width(&format!(" {line}"), width))).collect()
}

// ------------------------------------------------------------------------------------------------------
// The whole screen: the conversation, then the status line while streaming, the editor and the footer.

pub(crate) struct Screen {
    pub(crate) conversation: Conversation,
    /// The answer being streamed (drawn after the conversation), when streaming.
    pub(crate) answer: Option<Markdown>,
    pub(crate) editor: Editor,
    pub(crate) renderer: DiffRenderer,
    pub(crate) theme: Theme,
    /// The last frame's lines, the conversation's first (kept between frames, as the interactive mode keeps
    /// them, so the renderer is told they did not change).
    kept: Vec<String>,
    conversation_lines: Option<usize>,
}

impl Screen {
    /// The lines under the conversation while an answer streams: a blank line, the status line and a blank
    /// line, the editor's two rules and one row, the two footer lines.
    pub(crate) const BOTTOM_STREAMING: usize = 8;

    pub(crate) fn new(conversation: &Conversation, streaming: bool) -> Self {
        let theme = theme();
        let mut editor = Editor::new(theme.clone());
        editor.set_text("Now make the renderer skip lines that did not chan");
        Self {
            conversation: conversation.clone(),
            answer: streaming.then(|| Markdown::new("", theme.clone())),
            editor,
            renderer: DiffRenderer::new(ScreenMode::Inline),
            theme,
            kept: Vec::new(),
            conversation_lines: None,
        }
    }

    pub(crate) fn set_answer(&mut self, text: &str) {
        if let Some(answer) = &mut self.answer {
            answer.set_text(text);
        }
    }

    pub(crate) fn frame(&mut self) -> Vec<String> {
        let mut lines = self.conversation.render(WIDTH);
        let inner = WIDTH - 2;
        if let Some(answer) = &mut self.answer {
            let body = answer.render(inner);
            if !body.iter().all(|line| line.trim().is_empty()) {
                lines.push(String::new());
                lines.extend(body.into_iter().map(|line| if line.is_empty() { line } else { format!(" {line}") }));
            }
        }
        lines.extend(self.bottom(WIDTH));
        lines
    }

    pub(crate) fn bottom(&mut self, width: usize) -> Vec<String> {
        let theme = &self.theme;
        let mut lines = vec![String::new()];
        if self.answer.is_some() {
            lines.push(format!(
                " {} {} {}",
                theme.fg(Role::Accent, "⠹"),
                theme.fg(Role::Muted, "Working..."),
                theme.fg(Role::Dim, "(esc to interrupt)")
            ));
            lines.push(String::new());
        }
        lines.extend(self.editor.render(width));
        lines.extend(footer(width, theme));
        lines
    }

    /// A frame diffed against the last one: the bytes to write.
    pub(crate) fn draw(&mut self) -> String {
        let body = self.answer.as_mut().map(|answer| answer.render(WIDTH - 2));
        self.draw_with(body.as_deref())
    }

    /// A frame with `body` as the streamed answer's lines: the conversation's lines kept from the last frame
    /// (drawn on the first), the answer and the bottom after them.
    pub(crate) fn draw_with(&mut self, body: Option<&[String]>) -> String {
        let stable = match self.conversation_lines {
            Some(lines) => lines,
            None => {
                self.kept = self.conversation.render(WIDTH);
                self.conversation_lines = Some(self.kept.len());
                0
            }
        };
        let conversation_lines = self.conversation_lines.unwrap_or_default();
        self.kept.truncate(conversation_lines);
        if let Some(body) = body
            && !body.iter().all(|line| line.trim().is_empty())
        {
            self.kept.push(String::new());
            self.kept.extend(body.iter().map(|line| if line.is_empty() { String::new() } else { format!(" {line}") }));
        }
        let bottom = self.bottom(WIDTH);
        self.kept.extend(bottom);
        self.renderer.render_from(&self.kept, stable, WIDTH, HEIGHT)
    }

    /// The screen with its first frame drawn, as it stands before the measured key or delta.
    pub(crate) fn drawn(conversation: &Conversation, streaming: bool) -> Self {
        let mut screen = Self::new(conversation, streaming);
        black_box(screen.draw());
        screen
    }

    pub(crate) fn clone_frame_len(&self) -> usize {
        let mut copy = Self::new(&self.conversation, self.answer.is_some());
        copy.answer.clone_from(&self.answer);
        copy.frame().len()
    }
}

/// The two footer lines, formatted every frame as the interactive mode does.
pub(crate) fn footer(width: usize, theme: &Theme) -> Vec<String> {
    let first = theme.fg(Role::Dim, &truncate_to_width("~/src/pi-gen (main) • render benches", width, "..."));
    let left = format!("↑{} ↓{} R{} ${:.3} {:.1}%/{}{}", "12k", "3.4k", "410k", 0.123, 12.3, "200k", " (auto)");
    let right = "claude-sonnet-4-5 • medium";
    let gap = width.saturating_sub(visible_width(&left) + visible_width(right));
    let second = format!("{left}{}{right}", " ".repeat(gap));
    vec![first, theme.fg(Role::Dim, &second)]
}
