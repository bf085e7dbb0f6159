//! One streaming pass over a text file for the `read` tool: counts the file's lines, measures the selected
//! window (offset and limit) and keeps only the leading lines of it that fit the output limits, so memory stays
//! at a buffer plus the returned text however large the file is.
//!
//! Lines are what `String::from_utf8_lossy(file).split('\n')` gives, and sizes are those of the lossy text
//! (each invalid sequence counts as the 3 bytes of U+FFFD), so the tool's output is the same as if the whole
//! file had been decoded and split: a newline never belongs to an invalid sequence, so decoding line by line
//! (or chunk by chunk, carrying an unfinished character over) gives the same text.

use std::io::{self, BufRead};

use super::truncate::TruncationOptions;

/// What one pass found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Window {
    /// Lines in the file (a trailing newline counts as one more, empty, line).
    pub total_lines: usize,
    /// Lines in the selection (0 when it starts past the end or the limit is 0).
    pub selected_lines: usize,
    /// Bytes of the selected lines' lossy text, newlines between them not counted.
    pub selected_line_bytes: usize,
    /// Size of the selection's first line (lossy), when there is one.
    pub first_line_bytes: Option<usize>,
    /// The selection's leading lines that fit `max_lines` and `max_bytes` (as `truncate_head` keeps them).
    pub kept: Vec<String>,
    /// Keeping stopped because the next line would have passed `max_bytes` (not because of `max_lines`).
    pub stopped_by_bytes: bool,
}

impl Window {
    /// Size of the selected text with the newlines between its lines.
    pub fn selected_bytes(&self) -> usize {
        self.selected_line_bytes + self.selected_lines.saturating_sub(1)
    }
}

/// Sizes lossy UTF-8 text fed in pieces, carrying an unfinished character from one piece to the next.
#[derive(Debug, Default)]
struct LossyLength {
    total: usize,
    /// The start of a character the last piece cut (at most 3 bytes).
    carry: Vec<u8>,
}

/// The size of U+FFFD in UTF-8, which replaces each invalid sequence.
const REPLACEMENT_BYTES: usize = 3;

impl LossyLength {
    fn feed(&mut self, bytes: &[u8]) {
        if self.carry.is_empty() {
            self.carry = measure(bytes, &mut self.total).to_vec();
        } else {
            // Rare (a character cut by the end of a buffer): measure the piece with the cut start before it.
            let mut joined = std::mem::take(&mut self.carry);
            joined.extend_from_slice(bytes);
            self.carry = measure(&joined, &mut self.total).to_vec();
        }
    }

    /// The line (or the file) ended: an unfinished character is one invalid sequence.
    fn end_line(&mut self) {
        if !self.carry.is_empty() {
            self.total += REPLACEMENT_BYTES;
            self.carry.clear();
        }
    }
}

/// Adds the lossy size of `bytes` to `total`, except for an unfinished character at the end, which is returned.
fn measure<'a>(mut bytes: &'a [u8], total: &mut usize) -> &'a [u8] {
    loop {
        match std::str::from_utf8(bytes) {
            Ok(text) => {
                *total += text.len();
                return &[];
            }
            Err(error) => {
                *total += error.valid_up_to();
                match error.error_len() {
                    Some(invalid) => {
                        *total += REPLACEMENT_BYTES;
                        bytes = &bytes[error.valid_up_to() + invalid..];
                    }
                    None => return &bytes[error.valid_up_to()..],
                }
            }
        }
    }
}

/// The pass: `start` is the first selected line (0-based), `end` the line after the selection (`None`: to the
/// end of the file). `cancelled` is asked between buffers; when it says yes the pass stops with
/// [`io::ErrorKind::Interrupted`].
pub(super) fn scan_window(
    reader: &mut impl BufRead,
    start: usize,
    end: Option<usize>,
    limits: TruncationOptions,
    cancelled: &dyn Fn() -> bool,
) -> io::Result<Window> {
    let mut scan = Scan::new(start, end, limits);
    loop {
        if cancelled() {
            return Err(io::Error::new(io::ErrorKind::Interrupted, "cancelled"));
        }
        let buffer = match reader.fill_buf() {
            Ok(buffer) => buffer,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if buffer.is_empty() {
            break;
        }
        scan.chunk(buffer);
        let length = buffer.len();
        reader.consume(length);
    }
    Ok(scan.finish())
}

/// The pass's state between buffers.
struct Scan {
    start: usize,
    end: Option<usize>,
    limits: TruncationOptions,
    /// The line the next byte belongs to.
    line: usize,
    /// Sizes the selected lines.
    length: LossyLength,
    /// `length.total` when the current line started.
    line_start_total: usize,
    /// The current line's bytes while it may still be kept (never more than `max_bytes`).
    raw: Vec<u8>,
    raw_fits: bool,
    keeping: bool,
    kept: Vec<String>,
    kept_bytes: usize,
    stopped_by_bytes: bool,
    first_line_bytes: Option<usize>,
}

impl Scan {
    fn new(start: usize, end: Option<usize>, limits: TruncationOptions) -> Self {
        Self {
            start,
            end,
            limits,
            line: 0,
            length: LossyLength::default(),
            line_start_total: 0,
            raw: Vec::new(),
            raw_fits: true,
            keeping: limits.max_lines > 0,
            kept: Vec::new(),
            kept_bytes: 0,
            stopped_by_bytes: false,
            first_line_bytes: None,
        }
    }

    fn selected(&self, line: usize) -> bool {
        line >= self.start && self.end.is_none_or(|end| line < end)
    }

    fn chunk(&mut self, buffer: &[u8]) {
        let mut at = 0;
        while at < buffer.len() {
            let rest = &buffer[at..];
            if self.line < self.start {
                // Before the selection only newlines matter: count them a buffer at a time.
                let needed = self.start - self.line;
                let newlines = count_newlines(rest);
                if newlines < needed {
                    self.line += newlines;
                    return;
                }
                let mut positions = rest.iter().enumerate().filter(|(_, byte)| **byte == b'\n');
                let position = positions.nth(needed - 1).map_or(rest.len(), |(position, _)| position);
                self.line = self.start;
                at += position + 1;
                continue;
            }
            if !self.selected(self.line) {
                // Past the selection: only the number of lines is left to find.
                self.line += count_newlines(rest);
                return;
            }
            let newline = rest.iter().position(|byte| *byte == b'\n');
            self.take(&rest[..newline.unwrap_or(rest.len())]);
            match newline {
                Some(position) => {
                    self.end_line();
                    at += position + 1;
                }
                None => return,
            }
        }
    }

    /// Bytes of a selected line.
    fn take(&mut self, piece: &[u8]) {
        self.length.feed(piece);
        if self.keeping && self.raw_fits {
            if self.raw.len() + piece.len() <= self.limits.max_bytes {
                self.raw.extend_from_slice(piece);
            } else {
                // Lossy text is never shorter than the bytes: this line cannot fit.
                self.raw_fits = false;
                self.raw = Vec::new();
            }
        }
    }

    /// A newline ended the current line (or the file ended).
    fn end_line(&mut self) {
        if self.selected(self.line) {
            self.length.end_line();
            let bytes = self.length.total - self.line_start_total;
            self.line_start_total = self.length.total;
            if self.line == self.start {
                self.first_line_bytes = Some(bytes);
            }
            if self.keeping {
                self.keep(bytes);
            }
        }
        self.line += 1;
    }

    /// Keeps the line just ended when it fits, as `truncate_head` does; the first line that does not fit ends
    /// the keeping.
    fn keep(&mut self, bytes: usize) {
        let cost = bytes + usize::from(!self.kept.is_empty());
        if self.raw_fits && self.kept_bytes + cost <= self.limits.max_bytes {
            self.kept.push(String::from_utf8_lossy(&self.raw).into_owned());
            self.kept_bytes += cost;
            self.keeping = self.kept.len() < self.limits.max_lines;
        } else {
            self.keeping = false;
            self.stopped_by_bytes = true;
        }
        self.raw.clear();
        self.raw_fits = true;
    }

    fn finish(mut self) -> Window {
        // The last line has no newline after it (it is empty when the file ends with one).
        self.end_line();
        let total_lines = self.line;
        let selected_end = self.end.map_or(total_lines, |end| end.min(total_lines));
        Window {
            total_lines,
            selected_lines: selected_end.saturating_sub(self.start),
            selected_line_bytes: self.length.total,
            first_line_bytes: self.first_line_bytes,
            kept: self.kept,
            stopped_by_bytes: self.stopped_by_bytes,
        }
    }
}

fn count_newlines(bytes: &[u8]) -> usize {
    bytes.iter().filter(|byte| **byte == b'\n').count()
}
