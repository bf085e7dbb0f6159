//! The layout's wrapping breaks lines where `text::wrap_line` does and shows the same cells on a terminal
//! (checked with vt100), and its quick width test never accepts a line that is too wide.

use std::num::NonZeroU16;

use super::wrap::{surely_fits, wrap_fast};
use crate::text::{strip_escapes, visible_width, wrap_line};

/// A small deterministic generator (a linear congruential one), enough to vary the inputs.
struct Numbers(u64);

impl Numbers {
    fn below(&mut self, limit: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % limit.max(1)
    }
}

/// Pieces of well-formed styled text.
const PIECES: &[&str] = &[
    "word",
    "a",
    "longerwordthanmostwidths",
    " ",
    " ",
    "  ",
    "x.y/z?q=1",
    "-",
    "\x1b[1m",
    "\x1b[22m",
    "\x1b[3m",
    "\x1b[23m",
    "\x1b[4m",
    "\x1b[24m",
    "\x1b[7m",
    "\x1b[27m",
    "\x1b[38;2;1;2;3m",
    "\x1b[38;5;10m",
    "\x1b[31m",
    "\x1b[39m",
    "\x1b[48;2;9;9;9m",
    "\x1b[49m",
    "\x1b[0m",
    "\x1b[m",
    "\x1b[1;3m",
    "日本",
    "é",
    "e\u{301}",
    "—",
    "\x1b]8;;http://x\x07",
];

/// Pieces that only the plain-text comparison uses: broken escapes and control characters.
const ODD_PIECES: &[&str] = &["\x1b[", "\x1b", "\t", "\r\n", "\x1bx", "\x1b]unterminated"];

fn random_line(numbers: &mut Numbers, odd: bool) -> String {
    let mut line = String::new();
    for _ in 0..numbers.below(40) {
        if odd && numbers.below(6) == 0 {
            line.push_str(ODD_PIECES[numbers.below(ODD_PIECES.len())]);
        } else {
            line.push_str(PIECES[numbers.below(PIECES.len())]);
        }
    }
    line
}

fn plain(lines: &[String]) -> Vec<String> {
    lines.iter().map(|line| strip_escapes(line)).collect()
}

/// What a terminal shows for `lines`, one per row, each starting from no style.
fn screen(lines: &[String], width: usize) -> String {
    let size = |value: usize| NonZeroU16::new(u16::try_from(value).unwrap_or(u16::MAX)).unwrap_or(NonZeroU16::MIN);
    let mut parser = vt100::Parser::new(size(lines.len() + 1), size(width + 4), 0);
    for (row, line) in lines.iter().enumerate() {
        parser.process(format!("\x1b[0m\x1b[{};1H{line}", row + 1).as_bytes());
    }
    parser.screen().contents_formatted()
}

#[test]
fn lines_break_where_wrap_line_breaks_them() {
    let mut numbers = Numbers(7);
    for round in 0..4_000 {
        let odd = round % 2 == 0;
        let line = random_line(&mut numbers, odd);
        let width = numbers.below(40);
        let fast = wrap_fast(&line, width);
        assert_eq!(plain(&fast), plain(&wrap_line(&line, width)), "{line:?} at {width}");
        // (A broken escape can swallow the reset that ends a line; the layout never writes one.)
        if !odd {
            for wrapped in &fast {
                assert!(visible_width(wrapped) <= width.max(2), "{wrapped:?} at {width}");
            }
        }
    }
}

#[test]
fn a_terminal_shows_the_same_cells() {
    let mut numbers = Numbers(11);
    for _ in 0..1_500 {
        let line = random_line(&mut numbers, false);
        let width = 1 + numbers.below(40);
        let fast = wrap_fast(&line, width);
        assert_eq!(screen(&fast, width), screen(&wrap_line(&line, width), width), "{line:?} at {width}");
    }
}

#[test]
fn the_carried_style_stays_short() {
    let mut paragraph = String::new();
    for _ in 0..500 {
        paragraph.push_str("word \x1b[38;2;1;2;3mcode\x1b[39m \x1b[1mbold\x1b[22m ");
    }
    paragraph.insert_str(0, "\x1b[3m");
    for line in wrap_fast(&paragraph, 30) {
        assert!(line.len() < 200, "{line:?}");
        assert!(line.starts_with("\x1b[3m"), "{line:?}");
    }
}

#[test]
fn surely_fits_never_says_yes_wrongly() {
    for text in ["abc", "\x1b[1mabc\x1b[0m", "日本語", "e\u{301}", "a\tb", "\x1b[", "👍🏽 ok", "", "\x1b]8;;x\x07ab"]
    {
        for width in 0..12 {
            if surely_fits(text, width) {
                assert!(visible_width(text) <= width, "{text:?} at {width}");
            }
        }
    }
}
