//! A markdown view: CommonMark with GFM tables, strikethrough and task lists, drawn as styled lines for a
//! width. Built for streaming: the text may grow delta by delta (unfinished blocks still render), the last
//! render is kept until the text or the width changes, and blocks that did not change keep their lines.

mod blocks;
mod inline;
mod layout;
mod parse;
mod sgr;
mod table;
mod wrap;

use blocks::Block;
use inline::Styles;

use crate::component::Component;
use crate::theme::Theme;

/// Markdown text rendered with a [`Theme`].
#[derive(Debug, Clone)]
pub struct Markdown {
    text: String,
    theme: Theme,
    styles: Styles,
    /// The lines of the last render and the width they were made for.
    rendered: Option<(usize, Vec<String>)>,
    /// The top-level blocks of the last render with their lines at `laid_out_width`: a block equal to the
    /// one at its place last time reuses its lines (while streaming, only the last block changes).
    laid_out: Vec<(Block, Vec<String>)>,
    laid_out_width: usize,
}

impl Markdown {
    pub fn new(text: &str, theme: Theme) -> Self {
        let styles = Styles::new(&theme);
        Self { text: text.to_owned(), theme, styles, rendered: None, laid_out: Vec::new(), laid_out_width: 0 }
    }

    /// Replaces the text (e.g. the message so far, while it streams in).
    pub fn set_text(&mut self, text: &str) {
        if self.text != text {
            self.text.clear();
            self.text.push_str(text);
            self.rendered = None;
        }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// Draws with another theme from the next render on.
    pub fn set_theme(&mut self, theme: Theme) {
        self.styles = Styles::new(&theme);
        self.theme = theme;
        self.rendered = None;
        self.laid_out.clear();
    }
}

impl Component for Markdown {
    fn render(&mut self, width: usize) -> Vec<String> {
        if let Some((cached_width, lines)) = &self.rendered
            && *cached_width == width
        {
            return lines.clone();
        }
        let mut previous = std::mem::take(&mut self.laid_out);
        if self.laid_out_width != width {
            previous.clear();
        }
        let mut lines = Vec::new();
        for (index, block) in parse::parse(&self.text, &self.styles).into_iter().enumerate() {
            let block_lines = match previous.get_mut(index) {
                Some((old, old_lines)) if *old == block => std::mem::take(old_lines),
                _ => wrap::fit(layout::render_block(&block, width, &self.theme), width),
            };
            if !block_lines.is_empty() {
                if !lines.is_empty() {
                    lines.push(String::new());
                }
                lines.extend(block_lines.iter().cloned());
            }
            self.laid_out.push((block, block_lines));
        }
        self.laid_out_width = width;
        self.rendered = Some((width, lines.clone()));
        lines
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod width_tests;
#[cfg(test)]
mod wrap_tests;
