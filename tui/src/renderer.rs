//! The differential renderer: given the whole screen as lines, it writes only what changed since the last
//! frame. Inline, the lines grow down from where the program started and scroll into the terminal's own
//! scrollback (so the terminal scrolls, selects and copies them); fullscreen, the frame is exactly the
//! alternate screen's rows. Every update is wrapped in synchronized output so terminals that know it draw
//! it at once, without flicker.

use crate::text::{truncate_to_width, visible_width};

/// How the program uses the terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScreenMode {
    /// On the normal screen, below what was there; old lines go to the scrollback.
    Inline,
    /// On the alternate screen; the program scrolls its own content.
    Fullscreen,
}

const SYNC_START: &str = "\x1b[?2026h";
const SYNC_END: &str = "\x1b[?2026l";
const CLEAR_ALL: &str = "\x1b[2J\x1b[H\x1b[3J";

/// What the renderer knows of the screen after its last frame.
#[derive(Debug)]
pub struct DiffRenderer {
    mode: ScreenMode,
    /// The last frame as drawn (lines cut to the width).
    previous: Vec<String>,
    /// The last frame as given: a line given again unchanged is not measured again.
    previous_input: Vec<String>,
    size: Option<(usize, usize)>,
    /// Inline: the line of the frame the terminal's cursor is on.
    cursor_line: usize,
    /// Inline: the most lines the screen has held since the last full redraw (lines never scroll back down).
    max_lines: usize,
    full_redraws: usize,
}

impl DiffRenderer {
    pub fn new(mode: ScreenMode) -> Self {
        Self {
            mode,
            previous: Vec::new(),
            previous_input: Vec::new(),
            size: None,
            cursor_line: 0,
            max_lines: 0,
            full_redraws: 0,
        }
    }

    pub fn mode(&self) -> ScreenMode {
        self.mode
    }

    /// How many times the whole screen was redrawn (first frame, resize, a change scrolled out of view).
    pub fn full_redraws(&self) -> usize {
        self.full_redraws
    }

    /// The next frame redraws everything (after the terminal was used by someone else).
    pub fn invalidate(&mut self) {
        self.size = None;
    }

    /// The bytes that turn the last frame into `lines` on a `width` x `height` terminal. Lines wider than
    /// the terminal are cut; fullscreen frames are cut or padded to `height` rows.
    pub fn render(&mut self, given: &[String], width: usize, height: usize) -> String {
        self.render_from(given, 0, width, height)
    }

    /// As [`render`](Self::render), for a caller that knows the first `stable` lines are the ones it gave
    /// last time: they are neither measured, copied nor compared again, so a frame costs what follows them
    /// (a long conversation whose last answer streams costs that answer, not the conversation).
    pub fn render_from(&mut self, given: &[String], stable: usize, width: usize, height: usize) -> String {
        let (width, height) = (width.max(1), height.max(1));
        let same_width = self.size.is_some_and(|(old_width, _)| old_width == width);
        let stable = if same_width && self.mode == ScreenMode::Inline {
            stable.min(given.len()).min(self.previous.len()).min(self.previous_input.len())
        } else {
            0
        };
        let mut tail: Vec<String> = given[stable..]
            .iter()
            .enumerate()
            .map(|(offset, line)| {
                let index = stable + offset;
                // Measuring is the costly part of a frame: skip it for lines too short to be too wide (every
                // column takes a byte, tabs aside) and for lines drawn before at this width.
                if line.len() <= width && !line.contains('\t') {
                    return line.clone();
                }
                if same_width
                    && self.previous_input.get(index) == Some(line)
                    && let Some(drawn) = self.previous.get(index)
                {
                    return drawn.clone();
                }
                // A terminal moves a tab to its next stop, not the three columns text.rs counts.
                let line = if line.contains('\t') { line.replace('\t', "   ") } else { line.clone() };
                if visible_width(&line) > width { truncate_to_width(&line, width, "") } else { line }
            })
            .collect();
        self.previous_input.truncate(stable);
        self.previous_input.extend_from_slice(&given[stable..]);
        if self.mode == ScreenMode::Fullscreen {
            tail.resize(height, String::new());
        }
        // From here `previous` is the new frame and `old_tail` what followed the stable lines before.
        let old_len = self.previous.len();
        let old_tail = self.previous.split_off(stable);
        self.previous.extend(tail);
        let resized = self.size != Some((width, height));
        let mut out = String::from(SYNC_START);
        match self.mode {
            ScreenMode::Fullscreen => self.render_fullscreen(&old_tail, resized, &mut out),
            ScreenMode::Inline => self.render_inline(&old_tail, stable, old_len, resized, height, &mut out),
        }
        out.push_str(SYNC_END);
        self.size = Some((width, height));
        if out.len() == SYNC_START.len() + SYNC_END.len() {
            out.clear();
        }
        out
    }

    /// The bytes that leave the cursor on a fresh line below the content (inline), for exiting.
    pub fn finish(&mut self) -> String {
        match self.mode {
            ScreenMode::Fullscreen => String::new(),
            ScreenMode::Inline => {
                let mut out = String::new();
                let last = self.previous.len().saturating_sub(1);
                move_down(&mut out, last.saturating_sub(self.cursor_line));
                out.push_str("\r\n");
                self.cursor_line = self.previous.len();
                out
            }
        }
    }

    /// Draws the rows of `previous` (the new frame) that differ from `old` (the last one).
    fn render_fullscreen(&mut self, old: &[String], resized: bool, out: &mut String) {
        if resized {
            self.full_redraws += 1;
            out.push_str("\x1b[2J");
        }
        for (row, line) in self.previous.iter().enumerate() {
            if resized || old.get(row) != Some(line) {
                out.push_str(&format!("\x1b[{};1H\x1b[2K{line}", row + 1));
            }
        }
    }

    /// Draws the new frame (`previous`) over the last one, of which `old_tail` followed the first `stable`
    /// lines and which had `old_len` lines.
    fn render_inline(
        &mut self,
        old_tail: &[String],
        stable: usize,
        old_len: usize,
        resized: bool,
        height: usize,
        out: &mut String,
    ) {
        let first_render = self.size.is_none() && old_len == 0;
        if first_render {
            self.write_all(out);
            return;
        }
        let Some(first) = first_difference(old_tail, &self.previous[stable..]).map(|index| stable + index) else {
            if resized {
                self.redraw_all(out);
            }
            return;
        };
        let viewport_top = self.max_lines.saturating_sub(height);
        if resized || first < viewport_top {
            self.redraw_all(out);
            return;
        }
        self.move_to(first, old_len, out);
        let lines = &self.previous;
        if lines.len() == old_len {
            // Same length: rewrite the changed lines only.
            let last = last_difference(old_tail, &lines[stable..]).map_or(first, |index| stable + index);
            for (index, line) in lines.iter().enumerate().take(last + 1).skip(first) {
                if index > first {
                    out.push_str("\r\n");
                }
                out.push_str("\r\x1b[2K");
                out.push_str(line);
            }
            self.cursor_line = last;
            return;
        }
        // The length changed: everything from the first change down is written again.
        out.push_str("\r\x1b[J");
        for (index, line) in lines.iter().enumerate().skip(first) {
            if index > first {
                out.push_str("\r\n");
            }
            out.push_str(line);
        }
        self.cursor_line = if lines.len() > first { lines.len() - 1 } else { first };
        self.max_lines = self.max_lines.max(lines.len());
    }

    /// Clears screen and scrollback and writes every line (the lines in the scrollback were stale).
    fn redraw_all(&mut self, out: &mut String) {
        self.full_redraws += 1;
        out.push_str(CLEAR_ALL);
        self.write_all(out);
    }

    /// Writes every line of the new frame from the cursor down.
    fn write_all(&mut self, out: &mut String) {
        for (index, line) in self.previous.iter().enumerate() {
            if index > 0 {
                out.push_str("\r\n");
            }
            out.push_str(line);
        }
        self.cursor_line = self.previous.len().saturating_sub(1);
        self.max_lines = self.previous.len();
    }

    /// Moves the cursor from its line to line `target` of the frame (which is on the screen, or right
    /// below the last line of the old frame, which had `old_len` lines).
    fn move_to(&mut self, target: usize, old_len: usize, out: &mut String) {
        if target < self.cursor_line {
            out.push_str(&format!("\x1b[{}A", self.cursor_line - target));
        } else {
            let existing = old_len.saturating_sub(1);
            let within = target.min(existing).saturating_sub(self.cursor_line);
            move_down(out, within);
            // Lines below the last one do not exist yet: a line feed makes them (and scrolls if needed).
            for _ in existing.max(self.cursor_line)..target {
                out.push_str("\r\n");
            }
        }
        self.cursor_line = target;
    }
}

fn move_down(out: &mut String, lines: usize) {
    if lines > 0 {
        out.push_str(&format!("\x1b[{lines}B"));
    }
}

fn first_difference(old: &[String], new: &[String]) -> Option<usize> {
    let common = old.len().min(new.len());
    (0..common).find(|&i| old[i] != new[i]).or((old.len() != new.len()).then_some(common))
}

fn last_difference(old: &[String], new: &[String]) -> Option<usize> {
    (0..old.len().min(new.len())).rev().find(|&i| old[i] != new[i])
}

#[cfg(test)]
#[path = "renderer_tests.rs"]
mod tests;
