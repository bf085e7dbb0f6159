//! Markdown source to [`Block`]s with pulldown-cmark (CommonMark with GFM tables, strikethrough and task
//! lists). Unfinished input, as it arrives while streaming, still gives blocks: whatever is open at the end
//! is closed there.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use super::blocks::{Block, List, ListItem, Table};
use super::inline::{InlineWriter, Style, Styles, push_sanitized};

/// Quotes and lists nest at most this deep; deeper ones add their content to the deepest one kept, so
/// that no input makes the layout recurse without end.
const MAX_NESTING: usize = 24;

/// Parses `source` into blocks styled with `styles`.
pub(super) fn parse(source: &str, styles: &Styles) -> Vec<Block> {
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let discarded = InlineWriter::new(styles, None);
    let mut builder =
        Builder { styles, document: Vec::new(), containers: Vec::new(), flattened: 0, leaf: None, discarded };
    for event in Parser::new_ext(source, options) {
        builder.event(event);
    }
    builder.finish()
}

/// A block that holds other blocks, still open.
enum Container {
    Quote(Vec<Block>),
    List(List),
    Item(ListItem),
}

/// The innermost block being written: one that holds text rather than blocks.
enum Leaf<'s> {
    Paragraph(InlineWriter<'s>),
    Heading(InlineWriter<'s>),
    Code { language: String, code: String },
    Html(String),
    Table(TableBuilder<'s>),
}

struct TableBuilder<'s> {
    table: Table,
    in_header: bool,
    row: Vec<String>,
    cell: Option<InlineWriter<'s>>,
}

struct Builder<'s> {
    styles: &'s Styles,
    document: Vec<Block>,
    containers: Vec<Container>,
    /// How many of the open quotes, lists and items were too deep to keep.
    flattened: usize,
    leaf: Option<Leaf<'s>>,
    /// Where inline content would go if no block could take it.
    discarded: InlineWriter<'s>,
}

impl<'s> Builder<'s> {
    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => match &mut self.leaf {
                Some(Leaf::Code { code, .. }) => code.push_str(&text),
                Some(Leaf::Html(html)) => html.push_str(&text),
                _ => self.inline().text(&text),
            },
            Event::Code(text) => {
                let style = &self.styles.code;
                self.inline().styled_text(style, &text);
            }
            Event::Html(html) => match &mut self.leaf {
                Some(Leaf::Html(block)) => block.push_str(&html),
                _ => self.inline().text(&html),
            },
            Event::InlineHtml(text) | Event::InlineMath(text) | Event::DisplayMath(text) => self.inline().text(&text),
            Event::FootnoteReference(label) => self.inline().text(&format!("[^{label}]")),
            Event::SoftBreak => self.inline().text(" "),
            Event::HardBreak => self.inline().hard_break(),
            Event::Rule => {
                self.finish_leaf();
                self.push_block(Block::Rule);
            }
            Event::TaskListMarker(done) => {
                if let Some(Container::Item(item)) = self.containers.last_mut() {
                    item.task = Some(done);
                }
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        let styles = self.styles;
        match tag {
            Tag::Paragraph => {
                self.finish_leaf();
                self.mark_loose();
                self.leaf = Some(Leaf::Paragraph(InlineWriter::new(styles, self.paragraph_style())));
            }
            Tag::Heading { level, .. } => {
                self.finish_leaf();
                let style = if level == HeadingLevel::H1 { &styles.title } else { &styles.heading };
                self.leaf = Some(Leaf::Heading(InlineWriter::new(styles, Some(style))));
            }
            Tag::CodeBlock(kind) => {
                self.finish_leaf();
                let language = match kind {
                    CodeBlockKind::Fenced(info) => info.split_whitespace().next().unwrap_or_default().to_owned(),
                    CodeBlockKind::Indented => String::new(),
                };
                let mut clean = String::new();
                push_sanitized(&mut clean, &language);
                self.leaf = Some(Leaf::Code { language: clean, code: String::new() });
            }
            Tag::HtmlBlock => {
                self.finish_leaf();
                self.leaf = Some(Leaf::Html(String::new()));
            }
            Tag::BlockQuote(_) => self.open_container(Container::Quote(Vec::new())),
            Tag::List(start) => self.open_container(Container::List(List { start, ..List::default() })),
            Tag::Item => self.open_container(Container::Item(ListItem::default())),
            Tag::Table(alignments) => {
                self.finish_leaf();
                let table = Table { alignments, ..Table::default() };
                self.leaf = Some(Leaf::Table(TableBuilder { table, in_header: false, row: Vec::new(), cell: None }));
            }
            Tag::TableHead => self.with_table(|table| {
                table.in_header = true;
                table.row.clear();
            }),
            Tag::TableRow => self.with_table(|table| table.row.clear()),
            Tag::TableCell => {
                let header = matches!(&self.leaf, Some(Leaf::Table(table)) if table.in_header);
                let base = header.then_some(&styles.bold);
                self.with_table(|table| table.cell = Some(InlineWriter::new(styles, base)));
            }
            Tag::Emphasis => self.inline().push_style(&styles.italic),
            Tag::Strong => self.inline().push_style(&styles.bold),
            Tag::Strikethrough => self.inline().push_style(&styles.strikethrough),
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                self.inline().start_link(&styles.link, &dest_url);
            }
            Tag::Superscript | Tag::Subscript => self.inline().push_style(&styles.plain),
            Tag::FootnoteDefinition(_)
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::MetadataBlock(_) => self.finish_leaf(),
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough | TagEnd::Superscript | TagEnd::Subscript => {
                self.inline().pop_style();
            }
            TagEnd::Link | TagEnd::Image => self.inline().end_link(),
            TagEnd::TableCell => self.with_table(|table| {
                if let Some(cell) = table.cell.take() {
                    table.row.push(cell.finish());
                }
            }),
            TagEnd::TableHead => self.with_table(|table| {
                table.table.header = std::mem::take(&mut table.row);
                table.in_header = false;
            }),
            TagEnd::TableRow => self.with_table(|table| {
                let row = std::mem::take(&mut table.row);
                table.table.rows.push(row);
            }),
            TagEnd::BlockQuote(_) | TagEnd::List(_) | TagEnd::Item => {
                self.finish_leaf();
                if self.flattened > 0 {
                    self.flattened -= 1;
                } else {
                    self.close_container();
                }
            }
            _ => self.finish_leaf(),
        }
    }

    /// The base style of a paragraph: italic quote text inside a block quote.
    fn paragraph_style(&self) -> Option<&'s Style> {
        let in_quote = self.containers.iter().any(|container| matches!(container, Container::Quote(_)));
        in_quote.then_some(&self.styles.quote)
    }

    /// A paragraph inside a list item makes the list loose.
    fn mark_loose(&mut self) {
        let len = self.containers.len();
        if len >= 2
            && matches!(self.containers[len - 1], Container::Item(_))
            && let Container::List(list) = &mut self.containers[len - 2]
        {
            list.loose = true;
        }
    }

    /// The writer for inline content; text outside any block (a tight list item's text) opens a paragraph.
    fn inline(&mut self) -> &mut InlineWriter<'s> {
        if !matches!(self.leaf, Some(Leaf::Paragraph(_) | Leaf::Heading(_) | Leaf::Table(_))) {
            self.finish_leaf();
            let writer = InlineWriter::new(self.styles, self.paragraph_style());
            self.leaf = Some(Leaf::Paragraph(writer));
        }
        let styles = self.styles;
        match &mut self.leaf {
            Some(Leaf::Paragraph(writer) | Leaf::Heading(writer)) => writer,
            Some(Leaf::Table(table)) => table.cell.get_or_insert_with(|| InlineWriter::new(styles, None)),
            // Not reached: a paragraph was just opened. Text here would be dropped.
            _ => &mut self.discarded,
        }
    }

    fn with_table(&mut self, change: impl FnOnce(&mut TableBuilder<'s>)) {
        if let Some(Leaf::Table(table)) = &mut self.leaf {
            change(table);
        }
    }

    /// Ends the open text block, if any, and adds it to its container.
    fn finish_leaf(&mut self) {
        let Some(leaf) = self.leaf.take() else { return };
        let block = match leaf {
            Leaf::Paragraph(writer) | Leaf::Heading(writer) if writer.is_blank() => return,
            Leaf::Paragraph(writer) => Block::Paragraph(writer.finish()),
            Leaf::Heading(writer) => Block::Heading(writer.finish()),
            Leaf::Code { language, code } => Block::Code { language, code },
            Leaf::Html(html) => Block::Html(html),
            Leaf::Table(mut builder) => {
                if let Some(cell) = builder.cell.take() {
                    builder.row.push(cell.finish());
                }
                if !builder.row.is_empty() {
                    let row = std::mem::take(&mut builder.row);
                    if builder.in_header { builder.table.header = row } else { builder.table.rows.push(row) }
                }
                Block::Table(normalize_table(builder.table))
            }
        };
        self.push_block(block);
    }

    fn open_container(&mut self, container: Container) {
        self.finish_leaf();
        if self.containers.len() >= MAX_NESTING {
            self.flattened += 1;
        } else {
            self.containers.push(container);
        }
    }

    fn close_container(&mut self) {
        let Some(container) = self.containers.pop() else { return };
        match container {
            Container::Quote(blocks) => self.push_block(Block::Quote(blocks)),
            Container::List(list) => self.push_block(Block::List(list)),
            Container::Item(item) => match self.containers.last_mut() {
                Some(Container::List(list)) => list.items.push(item),
                // An item outside a list does not come from the parser; keep its content anyway.
                _ => item.blocks.into_iter().for_each(|block| self.push_block(block)),
            },
        }
    }

    fn push_block(&mut self, block: Block) {
        match self.containers.last_mut() {
            None => self.document.push(block),
            Some(Container::Quote(blocks)) => blocks.push(block),
            Some(Container::Item(item)) => item.blocks.push(block),
            Some(Container::List(list)) => match list.items.last_mut() {
                Some(item) => item.blocks.push(block),
                None => list.items.push(ListItem { task: None, blocks: vec![block] }),
            },
        }
    }

    fn finish(mut self) -> Vec<Block> {
        self.finish_leaf();
        while !self.containers.is_empty() {
            self.close_container();
        }
        self.document
    }
}

/// Every row as long as the header (the widest row when the header is still missing).
fn normalize_table(mut table: Table) -> Table {
    let columns = table.header.len().max(table.rows.iter().map(Vec::len).max().unwrap_or(0));
    table.header.resize(columns, String::new());
    for row in &mut table.rows {
        row.resize(columns, String::new());
    }
    table.alignments.resize(columns, pulldown_cmark::Alignment::None);
    table
}
