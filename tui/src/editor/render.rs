//! Drawing the editor: a rule (with `↑ N more` when scrolled), the visible text rows with the cursor in
//! reverse video, a rule (with `↓ N more` when rows are hidden below), then the suggestions.

use unicode_segmentation::UnicodeSegmentation;

use super::Editor;
use super::buffer::Position;
use super::layout::{self, VisualRow};
use crate::text::{truncate_to_width, visible_width};

impl Editor {
    pub(crate) fn render_lines(&mut self, width: usize) -> Vec<String> {
        if width == 0 {
            return Vec::new();
        }
        // One column stays free for the cursor at the end of a full row.
        self.layout_width = width.saturating_sub(1).max(1);
        let rows = layout::visual_rows(self.buffer.lines(), self.layout_width);
        let cursor = self.buffer.cursor();
        let cursor_index = layout::cursor_row(&rows, cursor);
        let visible = self.max_rows.max(1);
        if cursor_index < self.scroll {
            self.scroll = cursor_index;
        } else if cursor_index >= self.scroll + visible {
            self.scroll = cursor_index + 1 - visible;
        }
        self.scroll = self.scroll.min(rows.len().saturating_sub(visible));

        let mut lines = vec![self.rule(width, self.scroll, '↑')];
        for (index, row) in rows.iter().enumerate().skip(self.scroll).take(visible) {
            let cursor = (index == cursor_index).then_some(cursor);
            lines.push(self.render_row(*row, cursor));
        }
        let below = rows.len().saturating_sub(self.scroll + visible);
        lines.push(self.rule(width, below, '↓'));
        if let Some(list) = &self.completion {
            lines.extend(list.render(&self.theme, width));
        }
        lines.into_iter().map(|line| truncate_to_width(&line, width, "")).collect()
    }

    /// A text row; with the cursor on it, the grapheme under the cursor (or a space at the end) inverted.
    fn render_row(&self, row: VisualRow, cursor: Option<Position>) -> String {
        let line = self.buffer.line(row.line);
        let text = line.get(row.start..row.end).unwrap_or_default();
        let Some(cursor) = cursor else { return text.to_owned() };
        let col = cursor.col.clamp(row.start, row.end);
        let before = line.get(row.start..col).unwrap_or_default();
        let rest = line.get(col..row.end).unwrap_or_default();
        match rest.graphemes(true).next() {
            Some(grapheme) => {
                let after = rest.get(grapheme.len()..).unwrap_or_default();
                format!("{before}{}{after}", self.theme.inverse(grapheme))
            }
            None => format!("{before}{}", self.theme.inverse(" ")),
        }
    }

    /// A rule across the width in the border colour, telling how many rows are hidden past it.
    fn rule(&self, width: usize, hidden: usize, arrow: char) -> String {
        let label = format!("─── {arrow} {hidden} more ");
        let label_width = visible_width(&label);
        // The count only shows when all of it fits, with at least one more column of rule.
        let rule = if hidden == 0 || label_width >= width {
            "─".repeat(width)
        } else {
            format!("{label}{}", "─".repeat(width - label_width))
        };
        self.theme.fg(self.border, &rule)
    }
}
