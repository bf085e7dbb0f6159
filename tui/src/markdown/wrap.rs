//! Word wrapping for the layout. It breaks lines exactly where [`crate::text::wrap_line`] does, but it
//! carries the style onto the next line as the few attributes in force (not every escape seen so far, which
//! grows with each styled span of a long paragraph), and it does not split ASCII text into grapheme
//! clusters, since there every byte is one.

use unicode_segmentation::UnicodeSegmentation;

use super::sgr::SgrState;
use crate::text::{RESET, grapheme_width, truncate_to_width, visible_width};

/// The lines of `line` wrapped at `width` columns (at least one) at spaces; longer words are broken.
pub(super) fn wrap_fast(line: &str, width: usize) -> Vec<String> {
    if surely_fits(line, width) {
        return vec![line.to_owned()];
    }
    let width = width.max(1);
    let tokens = tokenize(line);
    if tokens.iter().map(|token| token.width).sum::<usize>() <= width {
        return vec![line.to_owned()];
    }
    let mut wrapper = Wrapper { width, lines: Vec::new(), line: String::new(), used: 0, style: SgrState::default() };
    let mut word_start = 0;
    let mut word_width = 0;
    for (index, token) in tokens.iter().enumerate() {
        match token.kind {
            Kind::Space => {
                wrapper.push_word(&tokens[word_start..index], word_width);
                word_start = index + 1;
                word_width = 0;
                wrapper.push_space();
            }
            Kind::Grapheme => word_width += token.width,
            Kind::Escape => {}
        }
    }
    wrapper.push_word(&tokens[word_start..], word_width);
    let last = std::mem::take(&mut wrapper.line);
    wrapper.lines.push(last);
    wrapper.lines
}

/// Whether `text` surely fits `width` columns, found without splitting it into graphemes: escapes count
/// nothing, tabs three columns, other ASCII one and any other character two (no character is wider).
pub(super) fn surely_fits(text: &str, width: usize) -> bool {
    let bytes = text.as_bytes();
    let mut columns = 0;
    let mut index = 0;
    while index < bytes.len() {
        match bytes[index] {
            0x1b => index = escape_len(bytes, index).map_or(index + 1, |length| index + length),
            byte => {
                columns += match byte {
                    b'\t' => 3,
                    _ if byte.is_ascii() => 1,
                    // The lead byte of a multi-byte character; its continuation bytes count nothing.
                    _ if byte >= 0xc0 => 2,
                    _ => 0,
                };
                index += 1;
            }
        }
        if columns > width {
            return false;
        }
    }
    true
}

/// `lines` with any line wider than `width` cut to it.
pub(super) fn fit(mut lines: Vec<String>, width: usize) -> Vec<String> {
    for line in &mut lines {
        if !surely_fits(line, width) && visible_width(line) > width {
            *line = truncate_to_width(line, width, "");
        }
    }
    lines
}

/// The byte length of the escape sequence at `start`, read as [`crate::text`] reads it: CSI up to its final
/// byte (`None` without one), OSC, APC and DCS up to BEL or ST, two bytes for another ASCII byte after ESC.
fn escape_len(bytes: &[u8], start: usize) -> Option<usize> {
    match bytes.get(start + 1) {
        Some(b'[') => bytes.get(start + 2..)?.iter().position(|byte| (0x40..=0x7e).contains(byte)).map(|end| end + 3),
        Some(b']' | b'_' | b'P') => {
            let mut index = start + 2;
            while index < bytes.len() {
                if bytes[index] == 0x07 {
                    return Some(index + 1 - start);
                }
                if bytes[index] == 0x1b && bytes.get(index + 1) == Some(&b'\\') {
                    return Some(index + 2 - start);
                }
                index += 1;
            }
            Some(bytes.len() - start)
        }
        Some(byte) if byte.is_ascii() => Some(2),
        _ => Some(1),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Escape,
    Space,
    Grapheme,
}

/// One piece of a line: an escape sequence, a space or another grapheme cluster, with its columns.
#[derive(Debug, Clone, Copy)]
struct Token<'a> {
    text: &'a str,
    width: usize,
    kind: Kind,
}

/// The pieces of `line`: escape sequences, and grapheme clusters between them (ASCII byte by byte).
fn tokenize(line: &str) -> Vec<Token<'_>> {
    let bytes = line.as_bytes();
    let mut tokens = Vec::with_capacity(line.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == 0x1b
            && let Some(length) = escape_len(bytes, index)
        {
            tokens.push(Token { text: &line[index..index + length], width: 0, kind: Kind::Escape });
            index += length;
            continue;
        }
        // A run of text up to the next escape (an ESC that starts no sequence is text, as in `text`).
        let end = bytes[index + 1..].iter().position(|&byte| byte == 0x1b).map_or(bytes.len(), |at| index + 1 + at);
        let run = &line[index..end];
        if run.is_ascii() && !run.contains("\r\n") {
            tokens.extend((0..run.len()).map(|at| grapheme(&run[at..at + 1])));
        } else {
            tokens.extend(run.graphemes(true).map(grapheme));
        }
        index = end;
    }
    tokens
}

fn grapheme(text: &str) -> Token<'_> {
    let kind = if text == " " { Kind::Space } else { Kind::Grapheme };
    Token { text, width: grapheme_width(text), kind }
}

/// The state of [`wrap_fast`]: finished lines, the line being filled and the style in force.
struct Wrapper {
    width: usize,
    lines: Vec<String>,
    line: String,
    used: usize,
    style: SgrState,
}

impl Wrapper {
    fn break_line(&mut self) {
        let mut finished = std::mem::replace(&mut self.line, self.style.replay());
        if self.style.is_active() {
            finished.push_str(RESET);
        }
        self.lines.push(finished);
        self.used = 0;
    }

    fn push_word(&mut self, word: &[Token<'_>], word_width: usize) {
        if word_width > 0 && self.used > 0 && self.used + word_width > self.width {
            // The word moves to the next line; this line's trailing spaces go.
            let kept = self.line.trim_end_matches(' ').len();
            self.line.truncate(kept);
            self.break_line();
        }
        for token in word {
            if token.kind == Kind::Escape {
                self.style.apply(token.text);
            } else if self.used + token.width > self.width && self.used > 0 {
                self.break_line();
            }
            self.line.push_str(token.text);
            self.used += token.width;
        }
    }

    fn push_space(&mut self) {
        if self.used < self.width {
            self.line.push(' ');
            self.used += 1;
        } else {
            self.break_line();
        }
    }
}
