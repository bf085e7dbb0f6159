//! What the interactive mode's screen costs to draw, built from pi-tui's pieces the way the interactive mode
//! composes them (a conversation of user boxes, markdown answers and tool boxes with a one-column margin,
//! then the editor and the two footer lines), diffed by the inline [`DiffRenderer`] on a 100x30 terminal:
//!
//! - `keypress`: one typed key into the [`Editor`] -> the bytes to write, with a ~30-line conversation above
//!   it, and with a 1,000-message one (every frame holds the whole conversation; as in the interactive
//!   mode, each item keeps its lines until the width changes);
//! - `stream_delta`: one ~4-character delta of a 2,000-token (~8 KB) markdown answer (headings, lists, code
//!   blocks, a table) at several points of the answer, under a few hundred lines of conversation;
//! - `stream_whole_answer`: the whole answer, delta by delta (divan's items/s counts deltas), and the same
//!   for the markdown alone and for the frame without the markdown, to split the cost;
//! - `parts`: the renderer alone, the conversation's lines alone (kept, and drawn again), and the visible
//!   width of every line of a frame (what a renderer that measured every line would pay), to tell where a
//!   frame's time goes.
//!
//! The state each measured call starts from is built outside the timed part. `main` prints the sizes (lines
//! per frame, deltas, bytes written, full redraws) before the figures.
//!
//! Run: `cargo bench -p pi-tui --bench render`

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use divan::counter::ItemsCount;
use divan::{Bencher, black_box};
use pi_tui::component::Component;
use pi_tui::editor::Editor;
use pi_tui::markdown::Markdown;
use pi_tui::renderer::{DiffRenderer, ScreenMode};
use pi_tui::text::{pad_to_width, truncate_to_width, visible_width, wrap_text};
use pi_tui::{Background, ColorDepth, Role, Theme};

const WIDTH: usize = 100;
const HEIGHT: usize = 30;
/// Characters per streamed delta (about one token).
const DELTA_CHARS: usize = 4;
/// Tool output lines shown while tools are collapsed (as the interactive mode shows them).
const COLLAPSED_LINES: usize = 10;

fn main() {
    let short = Screen::new(&Conversation::short(), false);
    let long = Screen::new(&Conversation::with_messages(1000), false);
    let mut stream = Screen::new(&Conversation::earlier(), true);
    let deltas = deltas(ANSWER);
    let first = stream.draw();
    let mut bytes = first.len();
    let redraws_before = stream.renderer.full_redraws();
    for &end in &deltas {
        stream.set_answer(&ANSWER[..end]);
        bytes += stream.draw().len();
    }
    eprintln!(
        "keypress: frames of {} lines (short conversation), {} lines (1,000 messages, {} items); {WIDTH}x{HEIGHT} inline",
        short.clone_frame_len(),
        long.clone_frame_len(),
        long.conversation.items.len(),
    );
    eprintln!(
        "stream: a {}-byte answer in {} deltas of {DELTA_CHARS} chars under {} lines of conversation; last frame {} lines; \
         {:.1} MB written over the stream, {} full redraws",
        ANSWER.len(),
        deltas.len(),
        Screen::new(&Conversation::earlier(), true).clone_frame_len() - Screen::BOTTOM_STREAMING,
        stream.clone_frame_len(),
        bytes as f64 / 1e6,
        stream.renderer.full_redraws() - redraws_before,
    );
    divan::main();
}

// ------------------------------------------------------------------------------------------------------
// The conversation, as the interactive mode's transcript draws it.

#[derive(Clone)]
enum Item {
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
struct Entry {
    item: Item,
    drawn: Option<(usize, Vec<String>)>,
}

/// The conversation: like the interactive mode's transcript, it draws an item again only when the width
/// changed (nothing else changes here: the streamed answer is drawn by [`Screen`] every frame).
#[derive(Clone)]
struct Conversation {
    items: Vec<Entry>,
    theme: Theme,
}

fn theme() -> Theme {
    Theme::dark(ColorDepth::TrueColor)
}

impl Conversation {
    fn new() -> Self {
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
    fn short() -> Self {
        let mut conversation = Self::new();
        conversation.push_user(0);
        conversation.push_tool(0);
        conversation.push_answer(0);
        conversation
    }

    /// `messages` session messages: prompts, each answered; every fourth answer first calls a tool (so an
    /// exchange is two messages, or four with the tool call and its result).
    fn with_messages(messages: usize) -> Self {
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
    fn earlier() -> Self {
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

    fn push(&mut self, item: Item) {
        self.items.push(Entry { item, drawn: None });
    }

    fn push_user(&mut self, index: usize) {
        self.push(Item::User(user_text(index)));
    }

    fn push_answer(&mut self, index: usize) {
        self.push(Item::Assistant(Box::new(Markdown::new(&answer_text(index), self.theme.clone()))));
    }

    fn push_tool(&mut self, index: usize) {
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
    fn render(&mut self, width: usize) -> Vec<String> {
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
    fn forget(&mut self) {
        for entry in &mut self.items {
            entry.drawn = None;
        }
    }
}

/// An item's lines: a blank line, then the item (the header as it is; an empty answer not at all).
fn draw(item: &mut Item, width: usize, theme: &Theme) -> Vec<String> {
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

fn user_box(text: &str, width: usize, theme: &Theme) -> Vec<String> {
    let inner = width.saturating_sub(2).max(1);
    let mut lines = vec![String::new()];
    lines.extend(wrap_text(text, inner));
    lines.push(String::new());
    lines.into_iter().map(|line| theme.bg(Background::UserMessage, &pad_to_width(&format!(" {line}"), width))).collect()
}

/// A finished tool call: the title, then the output collapsed to its first (bash: last) ten lines.
fn tool_box(title: &str, output: &str, bash: bool, width: usize, theme: &Theme) -> Vec<String> {
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

struct Screen {
    conversation: Conversation,
    /// The answer being streamed (drawn after the conversation), when streaming.
    answer: Option<Markdown>,
    editor: Editor,
    renderer: DiffRenderer,
    theme: Theme,
}

impl Screen {
    /// The lines under the conversation while an answer streams: a blank line, the status line and a blank
    /// line, the editor's two rules and one row, the two footer lines.
    const BOTTOM_STREAMING: usize = 8;

    fn new(conversation: &Conversation, streaming: bool) -> Self {
        let theme = theme();
        let mut editor = Editor::new(theme.clone());
        editor.set_text("Now make the renderer skip lines that did not chan");
        Self {
            conversation: conversation.clone(),
            answer: streaming.then(|| Markdown::new("", theme.clone())),
            editor,
            renderer: DiffRenderer::new(ScreenMode::Inline),
            theme,
        }
    }

    fn set_answer(&mut self, text: &str) {
        if let Some(answer) = &mut self.answer {
            answer.set_text(text);
        }
    }

    fn frame(&mut self) -> Vec<String> {
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

    fn bottom(&mut self, width: usize) -> Vec<String> {
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
    fn draw(&mut self) -> String {
        let lines = self.frame();
        self.renderer.render(&lines, WIDTH, HEIGHT)
    }

    /// The screen with its first frame drawn, as it stands before the measured key or delta.
    fn drawn(conversation: &Conversation, streaming: bool) -> Self {
        let mut screen = Self::new(conversation, streaming);
        black_box(screen.draw());
        screen
    }

    fn clone_frame_len(&self) -> usize {
        let mut copy = Self::new(&self.conversation, self.answer.is_some());
        copy.answer.clone_from(&self.answer);
        copy.frame().len()
    }
}

/// The two footer lines, formatted every frame as the interactive mode does.
fn footer(width: usize, theme: &Theme) -> Vec<String> {
    let first = theme.fg(Role::Dim, &truncate_to_width("~/src/pi-gen (main) • render benches", width, "..."));
    let left = format!("↑{} ↓{} R{} ${:.3} {:.1}%/{}{}", "12k", "3.4k", "410k", 0.123, 12.3, "200k", " (auto)");
    let right = "claude-sonnet-4-5 • medium";
    let gap = width.saturating_sub(visible_width(&left) + visible_width(right));
    let second = format!("{left}{}{right}", " ".repeat(gap));
    vec![first, theme.fg(Role::Dim, &second)]
}

// ------------------------------------------------------------------------------------------------------
// Benches.

fn conversation(name: &str) -> Conversation {
    match name {
        "30 lines" => Conversation::short(),
        "1,000 messages" => Conversation::with_messages(1000),
        _ => panic!("unknown conversation {name}"),
    }
}

/// One typed key: the editor takes it, the frame is built and diffed into the bytes to write.
#[divan::bench(args = ["30 lines", "1,000 messages"])]
fn keypress(bencher: Bencher, above: &str) {
    let above = conversation(above);
    let key = KeyEvent::new(KeyCode::Char('g'), KeyModifiers::NONE);
    bencher.with_inputs(|| Screen::drawn(&above, false)).bench_local_refs(|screen| {
        screen.editor.handle_key(&key);
        screen.draw()
    });
}

/// The end of every delta: the answer grows by about 4 characters (never splitting a character).
fn deltas(answer: &str) -> Vec<usize> {
    let mut ends: Vec<usize> = answer.char_indices().map(|(at, _)| at).skip(DELTA_CHARS).step_by(DELTA_CHARS).collect();
    ends.push(answer.len());
    ends
}

/// One delta at `percent` of the answer: the text grows, the frame is built and diffed.
#[divan::bench(args = [10, 50, 90, 100])]
fn stream_delta(bencher: Bencher, percent: usize) {
    let earlier = Conversation::earlier();
    let ends = deltas(ANSWER);
    let at = (ends.len() * percent / 100).clamp(1, ends.len() - 1);
    let (before, after) = (ends[at - 1], ends[at]);
    bencher
        .with_inputs(|| {
            let mut screen = Screen::new(&earlier, true);
            screen.set_answer(&ANSWER[..before]);
            black_box(screen.draw());
            screen
        })
        .bench_local_refs(|screen| {
            screen.set_answer(&ANSWER[..after]);
            screen.draw()
        });
}

/// The whole answer, delta by delta, each delta a frame diffed and its bytes produced.
#[divan::bench(sample_count = 10)]
fn stream_whole_answer(bencher: Bencher) {
    let earlier = Conversation::earlier();
    let ends = deltas(ANSWER);
    bencher.counter(ItemsCount::new(ends.len())).with_inputs(|| Screen::drawn(&earlier, true)).bench_local_refs(
        |screen| {
            let mut bytes = 0;
            for &end in &ends {
                screen.set_answer(&ANSWER[..end]);
                bytes += screen.draw().len();
            }
            bytes
        },
    );
}

/// The markdown alone over the whole stream: set the text, render at the conversation's inner width.
#[divan::bench(sample_count = 10)]
fn stream_whole_answer_markdown_only(bencher: Bencher) {
    let ends = deltas(ANSWER);
    bencher.counter(ItemsCount::new(ends.len())).with_inputs(|| Markdown::new("", theme())).bench_local_refs(
        |markdown| {
            let mut lines = 0;
            for &end in &ends {
                markdown.set_text(&ANSWER[..end]);
                lines += markdown.render(WIDTH - 2).len();
            }
            lines
        },
    );
}

/// The frame and the diff over the whole stream with the markdown's lines made beforehand: what the rest
/// of a delta costs (the conversation above, the editor, the footer, the renderer).
#[divan::bench(sample_count = 10)]
fn stream_whole_answer_frame_only(bencher: Bencher) {
    let earlier = Conversation::earlier();
    let ends = deltas(ANSWER);
    let mut markdown = Markdown::new("", theme());
    let bodies: Vec<Vec<String>> = ends
        .iter()
        .map(|&end| {
            markdown.set_text(&ANSWER[..end]);
            markdown.render(WIDTH - 2)
        })
        .collect();
    bencher.counter(ItemsCount::new(ends.len())).with_inputs(|| Screen::drawn(&earlier, false)).bench_local_refs(
        |screen| {
            let mut bytes = 0;
            for body in &bodies {
                let mut lines = screen.conversation.render(WIDTH);
                lines.push(String::new());
                lines.extend(body.iter().map(|line| if line.is_empty() { String::new() } else { format!(" {line}") }));
                lines.extend(screen.bottom(WIDTH));
                bytes += screen.renderer.render(&lines, WIDTH, HEIGHT).len();
            }
            bytes
        },
    );
}

/// The parts of a frame on their own, to tell where a frame's time goes.
mod parts {
    use super::*;

    fn frames(name: &str) -> (Vec<String>, Vec<String>) {
        let mut screen = match name {
            "stream end" => {
                let mut screen = Screen::new(&Conversation::earlier(), true);
                screen.set_answer(ANSWER);
                screen
            }
            "1,000 messages" => Screen::new(&Conversation::with_messages(1000), false),
            _ => panic!("unknown frame {name}"),
        };
        let before = screen.frame();
        screen.editor.handle_key(&KeyEvent::new(KeyCode::Char('g'), KeyModifiers::NONE));
        (before, screen.frame())
    }

    /// The renderer alone: the frame after a typed key diffed against the one before it.
    #[divan::bench(args = ["stream end", "1,000 messages"])]
    fn diff_renderer(bencher: Bencher, frame: &str) {
        let (before, after) = frames(frame);
        bencher
            .with_inputs(|| {
                let mut renderer = DiffRenderer::new(ScreenMode::Inline);
                black_box(renderer.render(&before, WIDTH, HEIGHT));
                renderer
            })
            .bench_local_refs(|renderer| renderer.render(&after, WIDTH, HEIGHT));
    }

    /// The conversation's lines as every frame gets them (each item's lines kept from the frame before).
    #[divan::bench(args = ["30 lines", "1,000 messages"])]
    fn conversation_render(bencher: Bencher, above: &str) {
        let mut conversation = conversation(above);
        black_box(conversation.render(WIDTH));
        bencher.bench_local(|| conversation.render(WIDTH));
    }

    /// The conversation drawn again item by item (markdown answers keep their own cache), as after a
    /// resize or a toggle (Ctrl+O, Ctrl+T).
    #[divan::bench(args = ["30 lines", "1,000 messages"])]
    fn conversation_draw_all(bencher: Bencher, above: &str) {
        let mut conversation = conversation(above);
        black_box(conversation.render(WIDTH));
        bencher.bench_local(|| {
            conversation.forget();
            conversation.render(WIDTH)
        });
    }

    /// The visible width of every line of a frame: what the renderer checks each line with.
    #[divan::bench(args = ["stream end", "1,000 messages"])]
    fn visible_width_of_every_line(bencher: Bencher, frame: &str) {
        let (_, lines) = frames(frame);
        bencher.bench_local(|| lines.iter().map(|line| visible_width(line)).sum::<usize>());
    }
}

// ------------------------------------------------------------------------------------------------------
// Text: prompts, short answers, tool output, and the long streamed answer.

fn user_text(index: usize) -> String {
    const PROMPTS: [&str; 4] = [
        "The session list takes several seconds to open when there are a few thousand sessions. Can you find \
         where the time goes and make it load lazily, newest first? Keep the existing sort order and the \
         filter behaviour.",
        "Please look at src/module_{} and fix the failing test; it panics with an index out of bounds when the \
         list is empty. Add a regression test next to the others and run the whole suite afterwards.",
        "Rename `render_lines` to `draw` everywhere in the editor, update the docs that mention it, and make \
         sure nothing else in the workspace still calls the old name.",
        "Why does the footer show 0.0% after a resume? I expected the context usage of the last answer. \
         Explain what happens first, then propose the smallest fix.",
    ];
    PROMPTS[index % PROMPTS.len()].replace("{}", &index.to_string())
}

fn answer_text(index: usize) -> String {
    match index % 3 {
        0 => format!(
            "The test indexes past the end: `get` reads `items[i + 1]` where it should read `items[i]`, so the \
             last element panics. I fixed it in `src/module_{index}.rs` and added a regression test:\n\n\
             ```rust\n#[test]\nfn gets_the_last_item() {{\n    assert_eq!(get(&[1, 2, 3], 2), 3);\n}}\n```\n\n\
             All 214 tests pass now."
        ),
        1 => format!(
            "Here is what I changed (step {index}):\n\n\
             - **Loading**: the list reads only each file's header and first user message, newest first.\n\
             - **Sorting**: unchanged; it still sorts by the modification time.\n\
             - **Filter**: matches the name, the first message and the directory, as before.\n\n\
             Opening the selector with 3,000 sessions went from 4.1 s to 120 ms."
        ),
        _ => format!(
            "After a resume the usage comes from the **last assistant message**, but the footer asked for the \
             usage before the messages were loaded, so it saw none and showed `0.0%`. The fix moves the \
             computation after `load` (exchange {index}); nothing else reads it earlier."
        ),
    }
}

fn read_output(index: usize) -> String {
    let mut out = String::new();
    for line in 1..=40 {
        out.push_str(&format!(
            "{line:>4}\tpub fn item_{index}_{line}(items: &[u32], i: usize) -> Option<u32> {{ items.get(i).copied() }}\n"
        ));
    }
    out
}

fn bash_output(index: usize) -> String {
    let mut out =
        String::from("   Compiling pi-tui v0.1.0 (/home/dev/pi-gen/tui)\n    Finished `test` profile in 4.21s\n");
    for test in 0..24 {
        out.push_str(&format!("test editor::tests_editing::case_{index}_{test} ... ok\n"));
    }
    out.push_str("\ntest result: ok. 214 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.31s\n");
    out
}

/// A 2,000-token (~8 KB) answer: headings, paragraphs with inline styles, lists, code blocks and a table.
const ANSWER: &str = r#"# Making the session selector fast

The selector was slow because it **parsed every session file completely** before it showed anything. With
3,000 sessions of 200 entries each that is about 600,000 JSON lines, and all of it happened on the thread
that draws the screen. Nothing in the list needs more than the header, the first user message and the
modification time, so most of that work was thrown away.

## What the time went to

I timed the three phases with a small harness on the sessions directory you pointed me at:

| phase | before | after | note |
|---|---:|---:|---|
| listing the directory | 9 ms | 9 ms | unchanged, `read_dir` plus `metadata` |
| parsing files | 3.9 s | 84 ms | now only the first 16 KiB of each file |
| sorting and filtering | 140 ms | 21 ms | keys computed once, not per comparison |
| first frame | 4.1 s | 120 ms | the list shows as soon as it is sorted |

The parsing dominated. Each file was read into a `String`, split into lines and every line was decoded into
a typed entry, including tool results that can be hundreds of kilobytes. The sort then called
`display_name()` inside the comparator, which lowercased the name and the first message again for every
comparison, so `n log n` allocations on top.

## The changes

1. **Read only the head of each file.** The header is the first line and the first user message is almost
   always within the first few entries, so the loader reads at most 16 KiB and stops at the first user
   message. Files whose first message lies further in fall back to reading line by line.
2. **Decode lazily.** Instead of the typed entries the loader now looks at `type` and `role` with a
   borrowed `serde_json::value::RawValue` and only decodes the one message it needs.
3. **Compute the sort keys once.** Each row keeps its lowercased name and its modification time, so the
   comparator compares two fields and allocates nothing.
4. **Show the list before the details.** The message counts are filled in by a background task and the rows
   redraw when they arrive; until then they show `…`.

The reading part now looks like this:

```rust
/// The header and the first user message of a session file, reading at most `limit` bytes.
pub fn read_head(path: &Path, limit: usize) -> io::Result<Option<SessionHead>> {
    let file = File::open(path)?;
    let mut reader = BufReader::new(file.take(limit as u64));
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let Ok(header) = serde_json::from_str::<SessionHeader>(&line) else {
        return Ok(None);
    };
    let mut first_message = None;
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            break;
        }
        let Ok(probe) = serde_json::from_str::<Probe<'_>>(&line) else { continue };
        if probe.kind == "message" && probe.role() == Some("user") {
            first_message = probe.text();
            break;
        }
    }
    Ok(Some(SessionHead { header, first_message }))
}
```

And the sort keys:

```rust
let mut rows: Vec<Row> = heads.into_iter().map(Row::new).collect();
rows.sort_by(|a, b| b.modified.cmp(&a.modified).then_with(|| a.key.cmp(&b.key)));
```

## Behaviour that stays the same

- The order is still newest first, ties broken by name.
- The filter still matches the session name, the first message and the working directory, case-insensitively.
- Sessions without a user message still show `(no messages)` and sort by their header's timestamp.
- A file that is not a session (no header) is skipped, as before, and does not stop the listing.

Two things changed on purpose:

- The message count shows `…` for a moment on very large directories.
- A session whose header is corrupt is now listed as unreadable instead of making the whole list fail; before,
  one bad file hid every session.

## Tests

I added three tests next to the existing ones in `session_list.rs`:

- `reads_only_the_head_of_a_large_session`, with a 40 MB file whose first user message is on line 3; it
  checks that no more than 16 KiB are read, through a reader that counts bytes;
- `falls_back_when_the_first_message_is_far_in`, where the first user message is entry 500;
- `a_corrupt_header_is_listed_not_fatal`.

The whole suite passes:

```text
$ cargo test -p pi-runtime session_list
running 17 tests
test cli::interactive::session_list::tests::reads_only_the_head_of_a_large_session ... ok
test cli::interactive::session_list::tests::falls_back_when_the_first_message_is_far_in ... ok
test cli::interactive::session_list::tests::a_corrupt_header_is_listed_not_fatal ... ok
test result: ok. 17 passed; 0 failed; 0 ignored; 0 measured; 512 filtered out; finished in 0.42s
```

## Numbers on your directory

With your 3,112 sessions (1.9 GB in total) the selector now opens in **118 ms** cold and **41 ms** warm,
against 4.1 s and 2.7 s before. Memory while it is open went from 410 MiB to 23 MiB, because the typed
entries are no longer kept; only the rows are.

| sessions | size | before (cold) | after (cold) | after (warm) |
|---:|---:|---:|---:|---:|
| 100 | 61 MB | 160 ms | 14 ms | 5 ms |
| 1,000 | 610 MB | 1.4 s | 46 ms | 16 ms |
| 3,112 | 1.9 GB | 4.1 s | 118 ms | 41 ms |

## What I did not do

- I did not add an on-disk index. It would make the warm case faster still, but it needs invalidation when
  another process writes a session, and the numbers above already feel instant.
- I left `export_html` alone; it still parses whole files, which is right since it needs every entry.
- The `--resume` path outside the interactive mode still uses the old loader. It lists sessions once and
  exits, so it matters less, but switching it over is a three-line change if you want it.

## Risks

- **Partial reads.** A session being written while the selector reads it may end mid-line in the first
  16 KiB; the loader treats an undecodable line as the end of the head, so the row shows the header and
  `(no messages)` until the next refresh.
- **Encodings.** Session files are UTF-8 by construction, but a truncated read could cut a character in two;
  `read_line` on the limited reader returns an error then, which the loader maps to the fallback path.
- **Clock skew.** Sorting still uses the file's modification time, so copying sessions between machines
  without preserving times reorders them. That was true before and is out of scope here.

The fallback path is small enough to show whole:

```rust
fn first_user_message(path: &Path) -> io::Result<Option<String>> {
    let reader = BufReader::new(File::open(path)?);
    for line in reader.lines().skip(1) {
        let line = line?;
        let Ok(probe) = serde_json::from_str::<Probe<'_>>(&line) else { continue };
        if probe.kind == "message" && probe.role() == Some("user") {
            return Ok(probe.text());
        }
    }
    Ok(None)
}
```

## Next steps

If you want, I can:

1. switch `--resume` to the new loader as well;
2. add a benchmark under `runtime/benches/` that builds 3,000 synthetic sessions and measures the listing, so
   a regression shows up in numbers rather than in a bug report;
3. look at the tree view, which has the same pattern of decoding every entry to draw a few hundred rows.

> Note: the 16 KiB limit is a constant, `HEAD_LIMIT`, in `session_list.rs`. Sessions written by extensions
> with very large custom entries before the first message may need more; they still work, only slower,
> because of the fallback.

Let me know which of these you want, or whether the `…` placeholder for the counts is acceptable. If it is
not, I can compute the counts while reading the head for small files and only defer the large ones, which
keeps the first frame fast and shows real counts for almost every row. One more detail: the background task
that fills in the counts is cancelled when the selector closes, so opening and closing it quickly does not
pile up work. The cancellation is tested by `closing_the_selector_stops_the_counting`, which opens and closes
the list a hundred times against a slow reader and checks that at most one count is in flight.

### Summary

- Parsing only the head of each file: **3.9 s → 84 ms**.
- Sort keys once: **140 ms → 21 ms**.
- First frame: **4.1 s → 120 ms**, memory **410 MiB → 23 MiB**.
- Three new tests, all 17 in the module passing.
"#;
