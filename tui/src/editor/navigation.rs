//! Cursor motions that need more than the buffer: Up/Down over visual rows keeping the column, history
//! browsing at the top and bottom, and jumping to a character.

use super::buffer::Position;
use super::layout::{self, VisualRow};
use super::paste;
use super::{Editor, JumpDirection};
use crate::text::visible_width;

impl Editor {
    /// Puts the cursor at `target`, if there is one.
    pub(crate) fn move_to(&mut self, target: Option<Position>) {
        if let Some(target) = target {
            self.buffer.set_cursor(target);
        }
    }

    /// Up: the row above; from the top row, the older history entry (or the line's start when there is none).
    pub(crate) fn move_up(&mut self) {
        if self.move_vertically(false) {
            return;
        }
        if !self.show_older_entry() {
            let cursor = self.buffer.cursor();
            self.buffer.set_cursor(cursor.with_col(0));
        }
    }

    /// Down: the row below; from the bottom row, the newer history entry (or the draft) while browsing,
    /// else the line's end.
    pub(crate) fn move_down(&mut self) {
        if self.move_vertically(true) {
            return;
        }
        if let Some(text) = self.history.newer() {
            self.buffer.replace_all(&paste::clean_input(&text));
            self.preferred_column = None;
        } else {
            let cursor = self.buffer.cursor();
            let end = self.buffer.line(cursor.row).len();
            self.buffer.set_cursor(cursor.with_col(end));
        }
    }

    /// Shows the next older history entry; the first step keeps the draft and is one undo step.
    fn show_older_entry(&mut self) -> bool {
        let starting = !self.history.is_browsing();
        let current = self.buffer.display_text();
        let Some(entry) = self.history.older(&current) else { return false };
        if starting {
            self.undo.push(self.buffer.snapshot());
        }
        self.buffer.replace_all(&paste::clean_input(&entry));
        self.preferred_column = None;
        true
    }

    /// Moves one visual row down or up (at the last render's width), to the column kept since the
    /// vertical moves began, or the nearest before it. `false` when there is no row to go to.
    fn move_vertically(&mut self, down: bool) -> bool {
        let rows = layout::visual_rows(self.buffer.lines(), self.layout_width);
        let cursor = self.buffer.cursor();
        let current = layout::cursor_row(&rows, cursor);
        let Some(&row) = rows.get(current) else { return false };
        let line = self.buffer.line(cursor.row);
        let column = visible_width(line.get(row.start..cursor.col).unwrap_or_default());
        let wanted = self.preferred_column.unwrap_or(column);
        let mut index = current;
        loop {
            index = match (down, index.checked_sub(1)) {
                (true, _) => index + 1,
                (false, Some(above)) => above,
                (false, None) => return false,
            };
            let Some(&target) = rows.get(index) else { return false };
            // A row inside a long marker has no place for the cursor: go on to the next.
            if let Some(col) = self.column_in_row(target, wanted) {
                self.buffer.set_cursor(Position::new(target.line, col));
                self.preferred_column = Some(wanted);
                return true;
            }
        }
    }

    /// The cursor position in `row` nearest before `wanted` columns from the row's start (its first
    /// position when all are after); `None` when the row holds no cursor position.
    fn column_in_row(&self, row: VisualRow, wanted: usize) -> Option<usize> {
        let line = self.buffer.line(row.line);
        let candidates: Vec<usize> =
            self.buffer.boundaries(row.line).into_iter().filter(|&boundary| row.holds(boundary)).collect();
        let fitting = candidates
            .iter()
            .rev()
            .find(|&&boundary| visible_width(line.get(row.start..boundary).unwrap_or_default()) <= wanted);
        fitting.or(candidates.first()).copied()
    }

    /// Ctrl+] then `target`: the cursor goes to the next (or previous) occurrence of the character.
    pub(crate) fn jump_to(&mut self, target: char, direction: JumpDirection) {
        let mut utf8 = [0; 4];
        let needle = target.encode_utf8(&mut utf8);
        if let Some(found) = self.buffer.find(needle, direction == JumpDirection::Forward) {
            self.buffer.set_cursor(found);
        }
    }
}
