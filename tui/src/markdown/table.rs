//! GFM tables drawn with box-drawing borders: columns as wide as their content, shrunk (widest first) to
//! fit the width, cells wrapped inside their column and aligned as the table's delimiter row says.

use pulldown_cmark::Alignment;
use unicode_segmentation::UnicodeSegmentation;

use super::blocks::Table;
use super::wrap::wrap_fast;
use crate::text::{grapheme_width, strip_escapes, visible_width};
use crate::theme::Theme;

/// A column is not shrunk below its longest word (up to this many columns) while another column can give.
const LONGEST_KEPT_WORD: usize = 30;

pub(super) fn render_table(table: &Table, width: usize, _theme: &Theme) -> Vec<String> {
    let columns = table.header.len();
    if columns == 0 {
        return Vec::new();
    }
    let rows: Vec<&Vec<String>> = std::iter::once(&table.header).chain(&table.rows).collect();
    let Some(widths) = column_widths(&rows, width) else {
        return render_without_grid(&rows, width);
    };
    let rule = |left: &str, middle: &str, right: &str| {
        let parts: Vec<String> = widths.iter().map(|&column| "─".repeat(column)).collect();
        format!("{left}─{}─{right}", parts.join(&format!("─{middle}─")))
    };
    let separator = rule("├", "┼", "┤");
    let mut lines = vec![rule("┌", "┬", "┐")];
    for (index, row) in rows.iter().enumerate() {
        if index > 0 {
            lines.push(separator.clone());
        }
        lines.extend(render_row(row, &widths, &table.alignments));
    }
    lines.push(rule("└", "┴", "┘"));
    lines
}

/// The lines of one row: each cell wrapped to its column, the row as tall as its tallest cell.
fn render_row(row: &[String], widths: &[usize], alignments: &[Alignment]) -> Vec<String> {
    let cells: Vec<Vec<String>> = row
        .iter()
        .zip(widths)
        .map(|(cell, &width)| if cell.is_empty() { Vec::new() } else { wrap_fast(cell, width) })
        .collect();
    let height = cells.iter().map(Vec::len).max().unwrap_or(0).max(1);
    (0..height)
        .map(|line_index| {
            let parts: Vec<String> = cells
                .iter()
                .zip(widths)
                .enumerate()
                .map(|(column, (lines, &width))| {
                    let text = lines.get(line_index).map_or("", String::as_str);
                    let alignment = alignments.get(column).copied().unwrap_or(Alignment::None);
                    align(text, width, alignment)
                })
                .collect();
            format!("│ {} │", parts.join(" │ "))
        })
        .collect()
}

fn align(text: &str, width: usize, alignment: Alignment) -> String {
    let room = width.saturating_sub(visible_width(text));
    let (left, right) = match alignment {
        Alignment::Right => (room, 0),
        Alignment::Center => (room / 2, room - room / 2),
        Alignment::Left | Alignment::None => (0, room),
    };
    format!("{}{text}{}", " ".repeat(left), " ".repeat(right))
}

/// The width of each column, or `None` when even the narrowest grid does not fit.
fn column_widths(rows: &[&Vec<String>], width: usize) -> Option<Vec<usize>> {
    let columns = rows.first().map_or(0, |row| row.len());
    let borders = 3 * columns + 1;
    let mut natural = vec![1; columns];
    let mut longest_word = vec![1; columns];
    // No column is narrower than its widest character, or a wide character would not fit in it.
    let mut floor = vec![1; columns];
    for row in rows {
        for (column, cell) in row.iter().enumerate().take(columns) {
            let plain = strip_escapes(cell);
            natural[column] = natural[column].max(visible_width(&plain));
            for word in plain.split(' ') {
                longest_word[column] = longest_word[column].max(visible_width(word).min(LONGEST_KEPT_WORD));
            }
            let widest_character = plain.graphemes(true).map(grapheme_width).max().unwrap_or(1);
            floor[column] = floor[column].max(widest_character);
        }
    }
    let available = width.checked_sub(borders)?;
    if floor.iter().sum::<usize>() > available {
        return None;
    }
    let mut widths: Vec<usize> = natural.iter().zip(&floor).map(|(&n, &f)| n.max(f)).collect();
    let keep: Vec<usize> = longest_word.iter().zip(&floor).map(|(&word, &f)| word.max(f)).collect();
    let mut excess = widths.iter().sum::<usize>().saturating_sub(available);
    while excess > 0 {
        // Shrink the widest column that is still wider than its longest word, else the widest one left.
        let column = widest_above(&widths, &keep).or_else(|| widest_above(&widths, &floor))?;
        widths[column] -= 1;
        excess -= 1;
    }
    Some(widths)
}

/// The index of the widest column wider than its `limit` (the leftmost of equals).
fn widest_above(widths: &[usize], limits: &[usize]) -> Option<usize> {
    widths
        .iter()
        .zip(limits)
        .enumerate()
        .filter(|(_, (width, limit))| width > limit)
        .max_by(|(a_index, (a, _)), (b_index, (b, _))| a.cmp(b).then(b_index.cmp(a_index)))
        .map(|(index, _)| index)
}

/// A table too wide for any grid: each row on its own lines, cells between `│`.
fn render_without_grid(rows: &[&Vec<String>], width: usize) -> Vec<String> {
    rows.iter().flat_map(|row| wrap_fast(&row.join(" │ "), width)).collect()
}
