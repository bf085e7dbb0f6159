//! The text being edited: its lines, the cursor (always on a unit boundary), the folded pastes, and the
//! primitive edits and one-step motions everything else is built from.

use super::paste::PasteStore;
use super::units::{self, Unit};

/// A place in the text: a line and a byte offset into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub(crate) struct Position {
    pub row: usize,
    pub col: usize,
}

impl Position {
    pub(crate) fn new(row: usize, col: usize) -> Self {
        Self { row, col }
    }

    /// The same line at byte `col`.
    pub(crate) fn with_col(self, col: usize) -> Self {
        Self { col, ..self }
    }
}

/// The lines and cursor at one moment, for undo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Snapshot {
    lines: Vec<String>,
    cursor: Position,
}

/// Lines of text (never none) with a cursor; every change bumps [`Buffer::version`].
#[derive(Debug, Clone)]
pub(crate) struct Buffer {
    lines: Vec<String>,
    cursor: Position,
    pub(crate) pastes: PasteStore,
    version: u64,
}

impl Default for Buffer {
    fn default() -> Self {
        Self { lines: vec![String::new()], cursor: Position::default(), pastes: PasteStore::default(), version: 0 }
    }
}

impl Buffer {
    pub(crate) fn lines(&self) -> &[String] {
        &self.lines
    }

    /// Line `row`, or an empty line past the end.
    pub(crate) fn line(&self, row: usize) -> &str {
        self.lines.get(row).map_or("", String::as_str)
    }

    pub(crate) fn cursor(&self) -> Position {
        self.cursor
    }

    /// Counts changes to the text (not cursor moves).
    pub(crate) fn version(&self) -> u64 {
        self.version
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.lines.iter().all(String::is_empty) && self.lines.len() == 1
    }

    /// The text as shown: lines joined by LF, markers not expanded.
    pub(crate) fn display_text(&self) -> String {
        self.lines.join("\n")
    }

    /// The end of the last line.
    pub(crate) fn end(&self) -> Position {
        let row = self.lines.len().saturating_sub(1);
        Position::new(row, self.line(row).len())
    }

    /// Replaces the whole text (already cleaned) and puts the cursor at its end.
    pub(crate) fn replace_all(&mut self, text: &str) {
        self.lines = text.split('\n').map(str::to_owned).collect();
        if self.lines.is_empty() {
            self.lines.push(String::new());
        }
        self.version += 1;
        self.cursor = self.end();
        self.snap_cursor();
    }

    pub(crate) fn snapshot(&self) -> Snapshot {
        Snapshot { lines: self.lines.clone(), cursor: self.cursor }
    }

    pub(crate) fn restore(&mut self, snapshot: Snapshot) {
        self.lines = snapshot.lines;
        if self.lines.is_empty() {
            self.lines.push(String::new());
        }
        self.version += 1;
        self.set_cursor(snapshot.cursor);
    }

    /// The units of line `row`.
    pub(crate) fn units(&self, row: usize) -> Vec<Unit> {
        units::line_units(self.line(row), &self.pastes)
    }

    /// The positions the cursor may take in line `row`.
    pub(crate) fn boundaries(&self, row: usize) -> Vec<usize> {
        units::boundaries(&self.units(row), self.line(row).len())
    }

    /// Moves the cursor to `position`, brought inside the text and onto a unit boundary (the next one).
    pub(crate) fn set_cursor(&mut self, position: Position) {
        let row = position.row.min(self.lines.len().saturating_sub(1));
        self.cursor = Position::new(row, position.col.min(self.line(row).len()));
        self.snap_cursor();
    }

    /// Puts the cursor on the first unit boundary at or after it (an edit can join graphemes or form a marker).
    fn snap_cursor(&mut self) {
        let row = self.cursor.row.min(self.lines.len().saturating_sub(1));
        let col = self.cursor.col;
        let boundaries = self.boundaries(row);
        let snapped = boundaries.iter().copied().find(|&boundary| boundary >= col);
        self.cursor = Position::new(row, snapped.unwrap_or(self.line(row).len()));
    }

    /// `position` inside the text and on a character boundary (the one before).
    fn clamp(&self, position: Position) -> Position {
        let row = position.row.min(self.lines.len().saturating_sub(1));
        let line = self.line(row);
        let mut col = position.col.min(line.len());
        while col > 0 && !line.is_char_boundary(col) {
            col -= 1;
        }
        Position::new(row, col)
    }

    /// Inserts cleaned text (it may hold LF) at the cursor; the cursor ends after it.
    pub(crate) fn insert(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        let at = self.clamp(self.cursor);
        let Some(line) = self.lines.get_mut(at.row) else { return };
        let tail = line.split_off(at.col);
        let mut parts = text.split('\n');
        line.push_str(parts.next().unwrap_or_default());
        let mut added: Vec<String> = parts.map(str::to_owned).collect();
        let cursor = match added.last_mut() {
            Some(last) => {
                let col = last.len();
                last.push_str(&tail);
                Position::new(at.row + added.len(), col)
            }
            None => {
                let col = line.len();
                line.push_str(&tail);
                Position::new(at.row, col)
            }
        };
        let after = at.row + 1;
        self.lines.splice(after..after, added.drain(..));
        self.version += 1;
        self.cursor = cursor;
        self.snap_cursor();
    }

    /// The text between two positions (in either order), lines joined by LF.
    pub(crate) fn text_between(&self, a: Position, b: Position) -> String {
        let (from, to) = self.ordered(a, b);
        if from.row == to.row {
            return self.line(from.row).get(from.col..to.col).unwrap_or_default().to_owned();
        }
        let mut out = self.line(from.row).get(from.col..).unwrap_or_default().to_owned();
        for row in from.row + 1..to.row {
            out.push('\n');
            out.push_str(self.line(row));
        }
        out.push('\n');
        out.push_str(self.line(to.row).get(..to.col).unwrap_or_default());
        out
    }

    /// Removes the text between two positions (in either order) and returns it; the cursor goes to its start.
    pub(crate) fn remove(&mut self, a: Position, b: Position) -> String {
        let (from, to) = self.ordered(a, b);
        if from == to {
            return String::new();
        }
        let removed = self.text_between(from, to);
        let tail = self.line(to.row).get(to.col..).unwrap_or_default().to_owned();
        if let Some(line) = self.lines.get_mut(from.row) {
            line.truncate(from.col);
            line.push_str(&tail);
        }
        if to.row > from.row && to.row < self.lines.len() {
            self.lines.drain(from.row + 1..=to.row);
        }
        self.version += 1;
        self.cursor = from;
        self.snap_cursor();
        removed
    }

    fn ordered(&self, a: Position, b: Position) -> (Position, Position) {
        let (a, b) = (self.clamp(a), self.clamp(b));
        if a <= b { (a, b) } else { (b, a) }
    }

    /// One unit before `position`, or the end of the previous line from a line's start.
    pub(crate) fn position_before(&self, position: Position) -> Option<Position> {
        if position.col > 0 {
            let col = self.boundaries(position.row).into_iter().rev().find(|&boundary| boundary < position.col)?;
            return Some(Position::new(position.row, col));
        }
        let row = position.row.checked_sub(1)?;
        Some(Position::new(row, self.line(row).len()))
    }

    /// One unit after `position`, or the start of the next line from a line's end.
    pub(crate) fn position_after(&self, position: Position) -> Option<Position> {
        if position.col < self.line(position.row).len() {
            let col = self.boundaries(position.row).into_iter().find(|&boundary| boundary > position.col)?;
            return Some(Position::new(position.row, col));
        }
        let row = position.row + 1;
        (row < self.lines.len()).then(|| Position::new(row, 0))
    }

    /// Where a backward word motion lands: the end of the previous line from a line's start.
    pub(crate) fn word_start_before(&self, position: Position) -> Option<Position> {
        if position.col == 0 {
            return self.position_before(position);
        }
        Some(Position::new(position.row, units::word_start_before(&self.units(position.row), position.col)))
    }

    /// Where a forward word motion lands: the start of the next line from a line's end.
    pub(crate) fn word_end_after(&self, position: Position) -> Option<Position> {
        let len = self.line(position.row).len();
        if position.col >= len {
            return self.position_after(position);
        }
        Some(Position::new(position.row, units::word_end_after(&self.units(position.row), position.col, len)))
    }

    /// The nearest unit equal to `needle` after (forward) or before the cursor, over lines.
    pub(crate) fn find(&self, needle: &str, forward: bool) -> Option<Position> {
        let cursor = self.cursor;
        let matches = |row: usize, unit: &Unit| {
            unit.class != units::UnitClass::Marker && self.line(row).get(unit.start..unit.end) == Some(needle)
        };
        if forward {
            (cursor.row..self.lines.len()).find_map(|row| {
                let units = self.units(row);
                let found =
                    units.iter().find(|unit| (row > cursor.row || unit.start > cursor.col) && matches(row, unit));
                found.map(|unit| Position::new(row, unit.start))
            })
        } else {
            (0..=cursor.row).rev().find_map(|row| {
                let units = self.units(row);
                let found =
                    units.iter().rev().find(|unit| (row < cursor.row || unit.start < cursor.col) && matches(row, unit));
                found.map(|unit| Position::new(row, unit.start))
            })
        }
    }
}
