//! [`Block`]s to lines at a width: wrapping, list markers and indents, quote borders, code fences and
//! rules. Tables are laid out in [`super::table`].

use super::blocks::{Block, List, ListItem};
use super::inline::Style;
use super::table::render_table;
use super::wrap::{surely_fits, wrap_fast};
use crate::text::{grapheme_width, visible_width};
use crate::theme::{Role, Theme};
use unicode_segmentation::UnicodeSegmentation;

/// How many columns nested lists move right per level.
const NESTED_LIST_INDENT: usize = 2;
/// The longest horizontal rule.
const RULE_WIDTH: usize = 80;

/// The lines of `blocks` at `width`, with a blank line between blocks when `spaced`.
pub(super) fn render_blocks(blocks: &[Block], width: usize, theme: &Theme, spaced: bool) -> Vec<String> {
    let mut lines = Vec::new();
    for block in blocks {
        let block_lines = render_block(block, width, theme);
        if block_lines.is_empty() {
            continue;
        }
        if spaced && !lines.is_empty() {
            lines.push(String::new());
        }
        lines.extend(block_lines);
    }
    lines
}

pub(super) fn render_block(block: &Block, width: usize, theme: &Theme) -> Vec<String> {
    match block {
        Block::Paragraph(text) | Block::Heading(text) => wrap_styled(text, width),
        Block::Code { language, code } => render_code(language, code, width, theme),
        Block::List(list) => render_list(list, width, theme),
        Block::Quote(blocks) => render_quote(blocks, width, theme),
        Block::Rule => vec![theme.fg(Role::MdHr, &"─".repeat(width.min(RULE_WIDTH)))],
        Block::Table(table) => render_table(table, width, theme),
        Block::Html(html) => {
            let mut lines = Vec::new();
            for line in html.trim_end_matches('\n').split('\n') {
                let mut clean = String::new();
                super::inline::push_sanitized(&mut clean, line);
                lines.extend(wrap_fast(clean.trim_end(), width));
            }
            lines
        }
    }
}

/// Styled text with `\n` line breaks, each line wrapped at words.
fn wrap_styled(text: &str, width: usize) -> Vec<String> {
    text.split('\n').flat_map(|line| wrap_fast(line, width)).collect()
}

/// A fenced code block: the fence with its language, each code line indented (long lines broken at the
/// width, not at words), the closing fence.
fn render_code(language: &str, code: &str, width: usize, theme: &Theme) -> Vec<String> {
    let border = Style::fg(theme, Role::MdCodeBlockBorder);
    let code_style = Style::fg(theme, Role::MdCodeBlock);
    let indent = if width > 2 { "  " } else { "" };
    let room = width.saturating_sub(indent.len()).max(1);
    let mut lines = vec![border.paint(&format!("```{language}"))];
    let code = code.strip_suffix('\n').unwrap_or(code);
    if !code.is_empty() {
        for source_line in code.split('\n') {
            let mut clean = String::new();
            super::inline::push_sanitized(&mut clean, source_line.trim_end_matches('\r'));
            for piece in break_at_width(&clean, room) {
                lines.push(format!("{indent}{}", code_style.paint(&piece)));
            }
        }
    }
    lines.push(border.paint("```"));
    lines
}

/// Plain `text` cut into pieces of at most `width` columns (a grapheme wider than that gets a piece alone).
pub(super) fn break_at_width(text: &str, width: usize) -> Vec<String> {
    if surely_fits(text, width) {
        return vec![text.to_owned()];
    }
    let mut pieces = Vec::new();
    let mut piece = String::new();
    let mut used = 0;
    for grapheme in text.graphemes(true) {
        let columns = grapheme_width(grapheme);
        if used + columns > width && used > 0 {
            pieces.push(std::mem::take(&mut piece));
            used = 0;
        }
        piece.push_str(grapheme);
        used += columns;
    }
    pieces.push(piece);
    pieces
}

fn render_list(list: &List, width: usize, theme: &Theme) -> Vec<String> {
    let mut lines = Vec::new();
    for (index, item) in list.items.iter().enumerate() {
        if list.loose && index > 0 {
            lines.push(String::new());
        }
        let number = list.start.map(|start| start.saturating_add(index as u64));
        lines.extend(render_item(item, number, list.loose, width, theme));
    }
    lines
}

/// One list item: its marker (`- `, `3. `, and `[ ] ` for a task) before the first line, the rest of its
/// lines indented under the text; nested lists indented by two columns.
fn render_item(item: &ListItem, number: Option<u64>, loose: bool, width: usize, theme: &Theme) -> Vec<String> {
    let mut marker = match number {
        Some(number) => format!("{number}. "),
        None => "- ".to_owned(),
    };
    if let Some(done) = item.task {
        marker.push_str(if done { "[x] " } else { "[ ] " });
    }
    let marker_width = visible_width(&marker);
    let styled_marker = theme.fg(Role::MdListBullet, &marker);
    let mut lines: Vec<String> = Vec::new();
    for block in &item.blocks {
        let first = lines.is_empty();
        let mut indent = if matches!(block, Block::List(_)) { NESTED_LIST_INDENT } else { marker_width };
        if first {
            indent = indent.max(marker_width);
        }
        let inner_width = width.saturating_sub(indent).max(1);
        let block_lines = render_block(block, inner_width, theme);
        if block_lines.is_empty() {
            continue;
        }
        if loose && !first {
            lines.push(String::new());
        }
        let pad = " ".repeat(indent);
        for (index, line) in block_lines.into_iter().enumerate() {
            if first && index == 0 {
                lines.push(format!("{styled_marker}{}{line}", " ".repeat(indent - marker_width)));
            } else if line.is_empty() {
                lines.push(line);
            } else {
                lines.push(format!("{pad}{line}"));
            }
        }
    }
    if lines.is_empty() {
        lines.push(theme.fg(Role::MdListBullet, marker.trim_end()));
    }
    lines
}

/// A block quote: its blocks two columns narrower, each line after a `│ ` border.
fn render_quote(blocks: &[Block], width: usize, theme: &Theme) -> Vec<String> {
    let inner = render_blocks(blocks, width.saturating_sub(2).max(1), theme, true);
    let border = theme.fg(Role::MdQuoteBorder, "│ ");
    let bare_border = theme.fg(Role::MdQuoteBorder, "│");
    inner
        .into_iter()
        .map(|line| if line.is_empty() { bare_border.clone() } else { format!("{border}{line}") })
        .collect()
}
