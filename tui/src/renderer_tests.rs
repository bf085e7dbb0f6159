//! Tests for the differential renderer, read back through a terminal emulator (vt100) with scrollback.

use std::num::NonZeroU16;

use super::*;

fn size(value: u16) -> NonZeroU16 {
    NonZeroU16::new(value).unwrap_or(NonZeroU16::MIN)
}

struct Screen {
    parser: vt100::Parser,
    renderer: DiffRenderer,
    written: usize,
}

impl Screen {
    fn new(mode: ScreenMode, rows: u16, cols: u16) -> Self {
        Self { parser: vt100::Parser::new(size(rows), size(cols), 1000), renderer: DiffRenderer::new(mode), written: 0 }
    }

    fn draw(&mut self, lines: &[&str]) -> String {
        let (rows, cols) = self.parser.screen().size();
        let lines: Vec<String> = lines.iter().map(|line| (*line).to_owned()).collect();
        let bytes = self.renderer.render(&lines, usize::from(cols.get()), usize::from(rows.get()));
        self.written += bytes.len();
        self.parser.process(bytes.as_bytes());
        bytes
    }

    /// Draws `lines` telling the renderer the first `stable` are the ones given last time.
    fn draw_from(&mut self, lines: &[String], stable: usize) -> String {
        let (rows, cols) = self.parser.screen().size();
        let bytes = self.renderer.render_from(lines, stable, usize::from(cols.get()), usize::from(rows.get()));
        self.written += bytes.len();
        self.parser.process(bytes.as_bytes());
        bytes
    }

    fn resize(&mut self, rows: u16, cols: u16) {
        self.parser.screen_mut().set_size(size(rows), size(cols));
    }

    fn visible(&self) -> Vec<String> {
        self.parser.screen().rows(0, self.parser.screen().size().1.get()).map(|row| row.trim_end().to_owned()).collect()
    }

    /// Every line: scrollback then screen.
    fn all(&mut self) -> Vec<String> {
        let mut lines = Vec::new();
        let back = self.parser.screen().scrollback_len();
        for offset in (1..=back).rev() {
            self.parser.screen_mut().set_scrollback(offset);
            if let Some(row) = self.parser.screen().rows(0, self.parser.screen().size().1.get()).next() {
                lines.push(row.trim_end().to_owned());
            }
        }
        self.parser.screen_mut().set_scrollback(0);
        lines.extend(self.visible());
        while lines.last().is_some_and(String::is_empty) {
            lines.pop();
        }
        lines
    }
}

#[test]
fn an_unchanged_frame_writes_nothing_and_a_changed_line_only_itself() {
    let mut screen = Screen::new(ScreenMode::Inline, 10, 20);
    screen.draw(&["header", "body", "editor", "footer"]);
    assert_eq!(screen.draw(&["header", "body", "editor", "footer"]), "");
    let update = screen.draw(&["header", "body!", "editor", "footer"]);
    assert!(update.contains("body!") && !update.contains("header") && !update.contains("footer"), "{update:?}");
    assert_eq!(&screen.visible()[..4], ["header", "body!", "editor", "footer"]);
}

#[test]
fn growing_and_shrinking_frames_keep_the_screen_exact() {
    let mut screen = Screen::new(ScreenMode::Inline, 10, 20);
    screen.draw(&["a", "b", "editor", "footer"]);
    screen.draw(&["a", "b", "c", "d", "editor", "footer"]);
    assert_eq!(&screen.visible()[..6], ["a", "b", "c", "d", "editor", "footer"]);
    screen.draw(&["a", "x", "footer"]);
    assert_eq!(&screen.visible()[..4], ["a", "x", "footer", ""]);
    screen.draw(&["a", "x", "footer", "more"]);
    assert_eq!(&screen.visible()[..5], ["a", "x", "footer", "more", ""]);
    assert_eq!(screen.renderer.full_redraws(), 0);
}

#[test]
fn content_taller_than_the_screen_goes_to_the_scrollback() {
    let mut screen = Screen::new(ScreenMode::Inline, 5, 20);
    let mut lines: Vec<String> = Vec::new();
    for n in 0..12 {
        lines.push(format!("line {n}"));
        let mut frame: Vec<&str> = lines.iter().map(String::as_str).collect();
        frame.push("-- editor --");
        screen.draw(&frame);
    }
    let all = screen.all();
    let expected: Vec<String> =
        (0..12).map(|n| format!("line {n}")).chain(std::iter::once("-- editor --".to_owned())).collect();
    assert_eq!(all, expected);
    assert_eq!(screen.visible().last().map(String::as_str), Some("-- editor --"));
    assert_eq!(screen.renderer.full_redraws(), 0, "appending never redraws everything");
}

#[test]
fn a_change_scrolled_out_of_view_redraws_everything_once() {
    let mut screen = Screen::new(ScreenMode::Inline, 4, 20);
    let frame: Vec<String> = (0..8).map(|n| format!("line {n}")).collect();
    let refs: Vec<&str> = frame.iter().map(String::as_str).collect();
    screen.draw(&refs);
    let mut changed = refs.clone();
    changed[1] = "changed 1";
    screen.draw(&changed);
    assert_eq!(screen.renderer.full_redraws(), 1);
    assert_eq!(screen.all()[..3], ["line 0", "changed 1", "line 2"]);
}

#[test]
fn a_resize_redraws_at_the_new_width() {
    let mut screen = Screen::new(ScreenMode::Inline, 6, 30);
    screen.draw(&["one", "two", "a line of twenty chars"]);
    screen.resize(6, 10);
    screen.draw(&["one", "two", "a line of twenty chars"]);
    assert_eq!(&screen.visible()[..3], ["one", "two", "a line of"]);
}

#[test]
fn fullscreen_frames_fill_the_screen_and_update_rows_in_place() {
    let mut screen = Screen::new(ScreenMode::Fullscreen, 4, 20);
    screen.draw(&["top", "middle"]);
    assert_eq!(screen.visible(), ["top", "middle", "", ""]);
    let update = screen.draw(&["top", "middle", "", "bottom"]);
    assert!(!update.contains("top"), "{update:?}");
    assert_eq!(screen.visible(), ["top", "middle", "", "bottom"]);
    screen.draw(&["1", "2", "3", "4", "5", "6"]);
    assert_eq!(screen.visible(), ["1", "2", "3", "4"]);
}

#[test]
fn finish_leaves_the_cursor_below_the_content() {
    let mut screen = Screen::new(ScreenMode::Inline, 10, 20);
    screen.draw(&["a", "b", "c"]);
    screen.draw(&["a", "B", "c"]);
    let bytes = screen.renderer.finish();
    screen.parser.process(bytes.as_bytes());
    assert_eq!(screen.parser.screen().cursor_position(), (3, 0));
}

#[test]
fn lines_wider_than_the_terminal_are_cut_the_same_when_given_again() {
    let mut screen = Screen::new(ScreenMode::Inline, 6, 10);
    let wide = "\x1b[1mthis line is far too wide\x1b[0m";
    screen.draw(&[wide, "tab\there and more", "short"]);
    assert_eq!(&screen.visible()[..3], ["this line", "tab   here", "short"], "tabs are written as spaces");
    assert_eq!(screen.draw(&[wide, "tab\there and more", "short"]), "", "an unchanged frame writes nothing");
    screen.draw(&[wide, "tab\there and more", "shorter"]);
    assert_eq!(&screen.visible()[..3], ["this line", "tab   here", "shorter"]);
}

/// A conversation of `turns` lines, a streamed answer of `answer` lines (the last one ending in `tail`), then
/// an editor and a footer.
fn streamed_frame(turns: usize, answer: usize, tail: &str) -> Vec<String> {
    let mut lines: Vec<String> = (0..turns).map(|n| format!("turn {n}")).collect();
    lines.extend(
        (0..answer).map(|n| if n + 1 == answer { format!("answer {n} {tail}") } else { format!("answer {n}") }),
    );
    lines.extend(["-- editor --".to_owned(), "footer".to_owned()]);
    lines
}

#[test]
fn frames_with_a_stable_prefix_draw_exactly_what_whole_frames_draw() {
    let mut whole = Screen::new(ScreenMode::Inline, 8, 30);
    let mut prefixed = Screen::new(ScreenMode::Inline, 8, 30);
    // The answer streams: its last line grows, then new lines come; the conversation before it is stable.
    let mut frames = Vec::new();
    for answer in 1..6 {
        for tail in ["a", "ab", "abc"] {
            frames.push(streamed_frame(20, answer, tail));
        }
    }
    for (number, frame) in frames.iter().enumerate() {
        let whole_bytes = whole.draw(&frame.iter().map(String::as_str).collect::<Vec<_>>());
        let stable = if number == 0 { 0 } else { 20 };
        let prefixed_bytes = prefixed.draw_from(frame, stable);
        assert_eq!(prefixed_bytes, whole_bytes, "frame {number}");
    }
    assert_eq!(prefixed.all(), whole.all());
    assert_eq!(prefixed.renderer.full_redraws(), 0);
    // A promise longer than the frame is held to the frame: a frame cut short clears what followed it.
    let cut: Vec<String> = frames[frames.len() - 1][..22].to_vec();
    prefixed.draw_from(&cut, 500);
    assert_eq!(prefixed.all(), cut);
}

#[test]
fn a_stable_prefix_is_ignored_when_the_width_changed() {
    let mut screen = Screen::new(ScreenMode::Inline, 6, 30);
    let frame: Vec<String> = ["one", "a line of twenty chars", "footer"].map(str::to_owned).to_vec();
    screen.draw_from(&frame, 0);
    screen.resize(6, 10);
    screen.draw_from(&frame, 3);
    assert_eq!(&screen.visible()[..3], ["one", "a line of", "footer"]);
}
