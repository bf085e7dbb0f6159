//! The bounded output buffer of a console panel: the last lines a background process printed, old lines
//! dropped whole and counted.
//!
//! A carriage return inside a line keeps only what follows it, as a terminal would show a progress bar that
//! redraws itself; `\r\n` line ends count as plain newlines.

use std::collections::VecDeque;

/// Most lines a console keeps.
pub const CONSOLE_MAX_LINES: usize = 500;
/// Most bytes a console keeps (64 KB).
pub const CONSOLE_MAX_BYTES: usize = 64 * 1024;

/// The recent output of a process.
#[derive(Debug, Clone)]
pub(crate) struct ConsoleOutput {
    max_lines: usize,
    max_bytes: usize,
    /// Complete lines, oldest first, without their newline.
    lines: VecDeque<String>,
    /// Bytes of `lines`, one newline each included.
    line_bytes: usize,
    /// The unfinished last line.
    partial: Vec<u8>,
    /// Lines dropped from the front so far.
    dropped_lines: u64,
}

impl Default for ConsoleOutput {
    fn default() -> Self {
        Self::new(CONSOLE_MAX_LINES, CONSOLE_MAX_BYTES)
    }
}

impl ConsoleOutput {
    /// A buffer keeping at most `max_lines` lines (the unfinished last line included) and `max_bytes` bytes.
    pub(crate) fn new(max_lines: usize, max_bytes: usize) -> Self {
        Self {
            max_lines: max_lines.max(1),
            max_bytes: max_bytes.max(1),
            lines: VecDeque::new(),
            line_bytes: 0,
            partial: Vec::new(),
            dropped_lines: 0,
        }
    }

    /// Adds a chunk of output as read from the pipe (it may end in the middle of a line or a character).
    pub(crate) fn push(&mut self, mut chunk: &[u8]) {
        while let Some(newline) = memchr::memchr(b'\n', chunk) {
            self.partial.extend_from_slice(&chunk[..newline]);
            let line = visible_line(&self.partial);
            self.partial.clear();
            self.line_bytes += line.len() + 1;
            self.lines.push_back(line);
            chunk = &chunk[newline + 1..];
        }
        self.partial.extend_from_slice(chunk);
        self.enforce_limits();
    }

    /// The kept output: a `[… N earlier lines dropped]` line when lines were dropped, then each kept line
    /// with its newline, then the unfinished line.
    pub(crate) fn text(&self) -> String {
        let mut text = String::with_capacity(self.line_bytes + self.partial.len() + 40);
        if self.dropped_lines > 0 {
            text.push_str(&format!("[… {} earlier lines dropped]\n", self.dropped_lines));
        }
        for line in &self.lines {
            text.push_str(line);
            text.push('\n');
        }
        text.push_str(&visible_line(&self.partial));
        text
    }

    fn enforce_limits(&mut self) {
        // A line that never ends keeps only its tail.
        if self.partial.len() > self.max_bytes {
            let cut = self.partial.len() - self.max_bytes;
            self.partial.drain(..cut);
        }
        let partial_lines = usize::from(!self.partial.is_empty());
        while !self.lines.is_empty()
            && (self.lines.len() + partial_lines > self.max_lines
                || self.line_bytes + self.partial.len() > self.max_bytes)
        {
            if let Some(line) = self.lines.pop_front() {
                self.line_bytes -= line.len() + 1;
                self.dropped_lines += 1;
            }
        }
    }
}

/// A line's bytes as text, as a terminal would leave it: after the last carriage return (one just before the
/// newline is a line end), invalid UTF-8 replaced.
fn visible_line(bytes: &[u8]) -> String {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    let shown = match memchr::memrchr(b'\r', bytes) {
        Some(carriage_return) => &bytes[carriage_return + 1..],
        None => bytes,
    };
    String::from_utf8_lossy(shown).into_owned()
}
