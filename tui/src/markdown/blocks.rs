//! The block structure of a parsed document: what the layout turns into lines. Inline content is already
//! styled text here (it does not depend on the width); only wrapping and sizing are left to do.

use pulldown_cmark::Alignment;

/// One block of the document.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Block {
    /// Styled text; `\n` separates hard line breaks.
    Paragraph(String),
    Heading(String),
    Code {
        language: String,
        code: String,
    },
    List(List),
    Quote(Vec<Block>),
    Rule,
    Table(Table),
    /// Raw HTML, shown as plain text.
    Html(String),
}

/// A bullet or ordered list.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct List {
    /// The first number of an ordered list; `None` for bullets.
    pub(super) start: Option<u64>,
    pub(super) items: Vec<ListItem>,
    /// A loose list (items hold paragraphs) shows a blank line between its items and their blocks.
    pub(super) loose: bool,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct ListItem {
    /// `Some(done)` for a task item.
    pub(super) task: Option<bool>,
    pub(super) blocks: Vec<Block>,
}

/// A table: styled cell texts, each row as long as the header.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Table {
    pub(super) alignments: Vec<Alignment>,
    pub(super) header: Vec<String>,
    pub(super) rows: Vec<Vec<String>>,
}
