//! Width-aware text on styled lines: the visible width of a string holding SGR escapes, wrapping that carries
//! the active style onto the next line, truncation and padding.

use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// SGR reset: ends every style.
pub const RESET: &str = "\x1b[0m";

/// One piece of a styled string: an escape sequence (zero width) or a grapheme cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece<'a> {
    Escape(&'a str),
    Grapheme(&'a str),
}

/// Splits `text` into escape sequences (CSI, OSC, and two-byte escapes) and grapheme clusters.
pub fn pieces(text: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(len) = escape_len(rest) {
            out.push(Piece::Escape(&rest[..len]));
            rest = &rest[len..];
            continue;
        }
        let next_escape = rest.as_bytes()[1..].iter().position(|&byte| byte == 0x1b).map_or(rest.len(), |at| at + 1);
        out.extend(rest[..next_escape].graphemes(true).map(Piece::Grapheme));
        rest = &rest[next_escape..];
    }
    out
}

/// The byte length of the escape sequence `text` starts with, if it starts with one.
fn escape_len(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    if bytes.first() != Some(&0x1b) {
        return None;
    }
    match bytes.get(1) {
        Some(b'[') => {
            // CSI: parameters and intermediates, then one final byte in 0x40..=0x7e.
            let end = bytes[2..].iter().position(|byte| (0x40..=0x7e).contains(byte))?;
            Some(end + 3)
        }
        Some(b']') | Some(b'_') | Some(b'P') => {
            // OSC / APC / DCS: up to BEL or ST (ESC \).
            let mut index = 2;
            while index < bytes.len() {
                if bytes[index] == 0x07 {
                    return Some(index + 1);
                }
                if bytes[index] == 0x1b && bytes.get(index + 1) == Some(&b'\\') {
                    return Some(index + 2);
                }
                index += 1;
            }
            Some(bytes.len())
        }
        Some(byte) if byte.is_ascii() => Some(2),
        _ => Some(1),
    }
}

/// The columns a grapheme takes: tabs count as three, control characters as none.
pub fn grapheme_width(grapheme: &str) -> usize {
    if grapheme == "\t" {
        return 3;
    }
    if grapheme.chars().all(char::is_control) {
        return 0;
    }
    UnicodeWidthStr::width(grapheme)
}

/// The columns `text` takes on a terminal, escapes not counted.
pub fn visible_width(text: &str) -> usize {
    if text.is_ascii() && !text.contains('\x1b') && !text.contains('\t') {
        return text.bytes().filter(|byte| !byte.is_ascii_control()).count();
    }
    pieces(text)
        .into_iter()
        .map(|piece| match piece {
            Piece::Escape(_) => 0,
            Piece::Grapheme(grapheme) => grapheme_width(grapheme),
        })
        .sum()
}

/// The SGR state a line has reached: the escapes since the last reset, replayed at the start of a wrapped line.
#[derive(Debug, Default, Clone)]
struct StyleState {
    active: String,
}

impl StyleState {
    fn apply(&mut self, escape: &str) {
        if !escape.starts_with("\x1b[") || !escape.ends_with('m') {
            return;
        }
        let params = &escape[2..escape.len() - 1];
        if params.is_empty() || params == "0" {
            self.active.clear();
        } else {
            self.active.push_str(escape);
        }
    }
}

/// Wraps one styled line to `width` columns at word boundaries (long words are broken); each output line
/// ends with a reset when a style is open and the next one starts with the styles still active.
pub fn wrap_line(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    if visible_width(text) <= width {
        return vec![text.to_owned()];
    }
    let mut wrapper = Wrapper { width, ..Wrapper::default() };
    let mut word: Vec<Piece<'_>> = Vec::new();
    let mut word_width = 0;
    for piece in pieces(text) {
        match piece {
            Piece::Grapheme(" ") => {
                wrapper.push_word(&mut word, word_width);
                word_width = 0;
                wrapper.push_space();
            }
            Piece::Grapheme(grapheme) => {
                word_width += grapheme_width(grapheme);
                word.push(piece);
            }
            Piece::Escape(_) => word.push(piece),
        }
    }
    wrapper.push_word(&mut word, word_width);
    wrapper.lines.push(wrapper.line);
    wrapper.lines
}

/// The state of [`wrap_line`]: the finished lines, the line being filled and the style in force.
#[derive(Default)]
struct Wrapper {
    width: usize,
    lines: Vec<String>,
    line: String,
    line_width: usize,
    state: StyleState,
}

impl Wrapper {
    fn break_line(&mut self) {
        let finished = std::mem::replace(&mut self.line, self.state.active.clone());
        self.lines.push(close(finished, &self.state));
        self.line_width = 0;
    }

    fn push_word(&mut self, word: &mut Vec<Piece<'_>>, word_width: usize) {
        if word_width > 0 && self.line_width > 0 && self.line_width + word_width > self.width {
            // The word moves to the next line; this line's trailing spaces go.
            let kept = self.line.trim_end_matches(' ').len();
            self.line.truncate(kept);
            self.break_line();
        }
        for piece in word.drain(..) {
            match piece {
                Piece::Escape(escape) => {
                    self.state.apply(escape);
                    self.line.push_str(escape);
                }
                Piece::Grapheme(grapheme) => {
                    let width = grapheme_width(grapheme);
                    if self.line_width + width > self.width && self.line_width > 0 {
                        self.break_line();
                    }
                    self.line.push_str(grapheme);
                    self.line_width += width;
                }
            }
        }
    }

    fn push_space(&mut self) {
        if self.line_width < self.width {
            self.line.push(' ');
            self.line_width += 1;
        } else {
            self.break_line();
        }
    }
}

fn close(mut line: String, state: &StyleState) -> String {
    if !state.active.is_empty() {
        line.push_str(RESET);
    }
    line
}

/// Wraps text that may hold line feeds: each of its lines wrapped to `width`.
pub fn wrap_text(text: &str, width: usize) -> Vec<String> {
    text.split('\n').flat_map(|line| wrap_line(line, width)).collect()
}

/// Cuts `text` to at most `width` columns; when it is cut, `ellipsis` (plain text) ends it inside the width.
pub fn truncate_to_width(text: &str, width: usize, ellipsis: &str) -> String {
    if visible_width(text) <= width {
        return text.to_owned();
    }
    let room = width.saturating_sub(visible_width(ellipsis));
    let mut out = String::new();
    let mut used = 0;
    let mut styled = false;
    for piece in pieces(text) {
        match piece {
            Piece::Escape(escape) => {
                styled = true;
                out.push_str(escape);
            }
            Piece::Grapheme(grapheme) => {
                let w = grapheme_width(grapheme);
                if used + w > room {
                    break;
                }
                out.push_str(grapheme);
                used += w;
            }
        }
    }
    if styled {
        out.push_str(RESET);
    }
    if width >= visible_width(ellipsis) {
        out.push_str(ellipsis);
    }
    out
}

/// `text` followed by spaces up to `width` columns (unchanged when it is already as wide).
pub fn pad_to_width(text: &str, width: usize) -> String {
    let used = visible_width(text);
    let mut out = text.to_owned();
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(used)));
    out
}

/// `text` without its escape sequences.
pub fn strip_escapes(text: &str) -> String {
    pieces(text)
        .into_iter()
        .filter_map(|piece| match piece {
            Piece::Grapheme(grapheme) => Some(grapheme),
            Piece::Escape(_) => None,
        })
        .collect()
}

#[cfg(test)]
#[path = "text_tests.rs"]
mod tests;
