//! What the interactive mode's screen costs to draw, built from pi-tui's pieces the way the interactive mode
//! composes them (a conversation of user boxes, markdown answers and tool boxes with a one-column margin,
//! then the editor and the two footer lines), diffed by the inline [`DiffRenderer`] on a 100x30 terminal:
//!
//! - `keypress`: one typed key into the [`Editor`] -> the bytes to write, with a ~30-line conversation above
//!   it, and with a 1,000-message one (as in the interactive mode, the conversation's lines are kept
//!   between frames and the renderer is told they did not change, `DiffRenderer::render_from`);
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

#[path = "render/screen.rs"]
mod screen;
#[path = "render/text.rs"]
mod text;

use screen::*;
use text::*;

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
                bytes += screen.draw_with(Some(body)).len();
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

    /// The conversation's lines copied from each item's kept lines, as a frame after a change near the top
    /// of the conversation gets them.
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
