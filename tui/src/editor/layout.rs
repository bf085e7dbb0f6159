//! Where the text falls on screen: each line word-wrapped into visual rows (byte ranges of the line), and
//! which row holds the cursor. A row may end with one space past the width (it "hangs" in the column the
//! editor keeps free for the cursor), so no row starts with the space that broke it.

use std::ops::Range;

use unicode_segmentation::UnicodeSegmentation;

use super::buffer::Position;
use crate::text::grapheme_width;

/// One screen row of the text: bytes `start..end` of line `line`; `last` for the line's final row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct VisualRow {
    pub line: usize,
    pub start: usize,
    pub end: usize,
    pub last: bool,
}

impl VisualRow {
    /// Whether the cursor at byte `col` of this row's line is drawn on this row: from its start up to (not
    /// including) its end, where the next row begins, or up to the end on a line's last row.
    pub(crate) fn holds(&self, col: usize) -> bool {
        col >= self.start && (col < self.end || (self.last && col == self.end))
    }
}

/// Cuts `line` into rows of at most `width` columns, breaking after spaces where it can and inside a word
/// only when the word alone is wider than a row. The ranges cover the line, in order.
pub(crate) fn wrap_rows(line: &str, width: usize) -> Vec<Range<usize>> {
    let width = width.max(1);
    let graphemes: Vec<(usize, &str)> = line.grapheme_indices(true).collect();
    let mut rows = Vec::new();
    let mut start = 0;
    let mut used = 0;
    // Where a row could break (the start of a word after a space) and the columns used before it.
    let mut break_point: Option<(usize, usize)> = None;
    let mut index = 0;
    while let Some(&(at, grapheme)) = graphemes.get(index) {
        let grapheme_columns = grapheme_width(grapheme);
        let is_space = grapheme == " ";
        if used + grapheme_columns > width && at > start {
            if is_space {
                // The space hangs at the end of this row.
                let end = at + grapheme.len();
                rows.push(start..end);
                (start, used, break_point) = (end, 0, None);
                index += 1;
                continue;
            }
            match break_point.take() {
                Some((word_start, columns_before)) if word_start > start => {
                    rows.push(start..word_start);
                    start = word_start;
                    used = used.saturating_sub(columns_before);
                }
                _ => {
                    rows.push(start..at);
                    (start, used) = (at, 0);
                }
            }
            // The same grapheme again, on the new row.
            continue;
        }
        used += grapheme_columns;
        if is_space && graphemes.get(index + 1).is_some_and(|&(_, next)| next != " ") {
            break_point = Some((at + grapheme.len(), used));
        }
        index += 1;
    }
    if used > width {
        // A grapheme wider than the row fills it alone: the cursor at the line's end goes to a row of its own.
        rows.push(start..line.len());
        start = line.len();
    }
    rows.push(start..line.len());
    rows
}

/// The visual rows of all lines at `width` columns.
pub(crate) fn visual_rows(lines: &[String], width: usize) -> Vec<VisualRow> {
    let mut rows = Vec::new();
    for (line_index, line) in lines.iter().enumerate() {
        let ranges = wrap_rows(line, width);
        let count = ranges.len();
        rows.extend(ranges.into_iter().enumerate().map(|(index, range)| VisualRow {
            line: line_index,
            start: range.start,
            end: range.end,
            last: index + 1 == count,
        }));
    }
    rows
}

/// The index of the row the cursor is drawn on (0 when none holds it, which a valid cursor never is).
pub(crate) fn cursor_row(rows: &[VisualRow], cursor: Position) -> usize {
    rows.iter().position(|row| row.line == cursor.row && row.holds(cursor.col)).unwrap_or(0)
}
