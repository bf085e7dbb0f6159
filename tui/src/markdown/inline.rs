//! Inline markdown (emphasis, code spans, links, breaks) written as one styled string: a stack of open
//! styles, so closing an inner style restores the outer ones (a code span inside a heading stays a heading).

use crate::theme::{Role, Theme};

/// The escapes that start and end one style, taken from the theme so `NO_COLOR` and the palette apply.
#[derive(Debug, Clone, Default)]
pub(super) struct Style {
    open: String,
    close: String,
}

impl Style {
    /// Splits what `apply` wraps around a marker character into the opening and closing escapes.
    fn from_wrapper(apply: impl Fn(&str) -> String) -> Self {
        const MARKER: &str = "\u{0}";
        let wrapped = apply(MARKER);
        match wrapped.split_once(MARKER) {
            Some((open, close)) => Self { open: open.to_owned(), close: close.to_owned() },
            None => Self::default(),
        }
    }

    pub(super) fn fg(theme: &Theme, role: Role) -> Self {
        Self::from_wrapper(|text| theme.fg(role, text))
    }

    pub(super) fn bold(theme: &Theme) -> Self {
        Self::from_wrapper(|text| theme.bold(text))
    }

    pub(super) fn italic(theme: &Theme) -> Self {
        Self::from_wrapper(|text| theme.italic(text))
    }

    pub(super) fn underline(theme: &Theme) -> Self {
        Self::from_wrapper(|text| theme.underline(text))
    }

    pub(super) fn strikethrough(theme: &Theme) -> Self {
        Self::from_wrapper(|text| theme.strikethrough(text))
    }

    /// Both styles at once: `self` outside, `inner` inside.
    pub(super) fn and(mut self, inner: Self) -> Self {
        self.open.push_str(&inner.open);
        self.close = inner.close + &self.close;
        self
    }

    /// `text` in this style.
    pub(super) fn paint(&self, text: &str) -> String {
        format!("{}{text}{}", self.open, self.close)
    }
}

/// Every style the parser applies, made once per theme.
#[derive(Debug, Clone)]
pub(super) struct Styles {
    pub(super) heading: Style,
    /// Level 1 headings are also underlined.
    pub(super) title: Style,
    pub(super) code: Style,
    pub(super) link: Style,
    pub(super) link_url: Style,
    pub(super) quote: Style,
    pub(super) bold: Style,
    pub(super) italic: Style,
    pub(super) strikethrough: Style,
    /// No style at all (for marks shown as plain text, such as superscript).
    pub(super) plain: Style,
}

impl Styles {
    pub(super) fn new(theme: &Theme) -> Self {
        let heading = Style::fg(theme, Role::MdHeading).and(Style::bold(theme));
        Self {
            title: heading.clone().and(Style::underline(theme)),
            heading,
            code: Style::fg(theme, Role::MdCode),
            link: Style::fg(theme, Role::MdLink).and(Style::underline(theme)),
            link_url: Style::fg(theme, Role::MdLinkUrl),
            quote: Style::fg(theme, Role::MdQuote).and(Style::italic(theme)),
            bold: Style::bold(theme),
            italic: Style::italic(theme),
            strikethrough: Style::strikethrough(theme),
            plain: Style::default(),
        }
    }
}

/// Inline styles nest at most this deep; deeper ones are left out.
const MAX_NESTED_STYLES: usize = 16;

/// A link or image being written: its target and the plain text of its label so far.
#[derive(Debug)]
struct OpenLink {
    url: String,
    label: String,
}

/// Builds the styled text of one paragraph, heading or table cell.
#[derive(Debug)]
pub(super) struct InlineWriter<'s> {
    out: String,
    /// Open styles, outermost first; the first `base` of them belong to the block and stay open.
    stack: Vec<&'s Style>,
    base: usize,
    link: Option<OpenLink>,
    link_url_style: &'s Style,
    /// Whether anything but spaces has been written.
    visible: bool,
    /// How many styles were left out for nesting too deep (each one closed restores the whole stack).
    ignored: usize,
}

impl<'s> InlineWriter<'s> {
    /// A writer whose text is all in the `base` style, if any (e.g. a heading's colour and bold).
    pub(super) fn new(styles: &'s Styles, base: Option<&'s Style>) -> Self {
        let mut out = String::new();
        let stack: Vec<&Style> = base.into_iter().collect();
        for style in &stack {
            out.push_str(&style.open);
        }
        Self { out, base: stack.len(), stack, link: None, link_url_style: &styles.link_url, visible: false, ignored: 0 }
    }

    /// Plain text: control characters dropped, tabs as three spaces, line feeds as spaces.
    pub(super) fn text(&mut self, text: &str) {
        if let Some(link) = &mut self.link {
            link.label.push_str(text);
        }
        self.visible |= text.chars().any(|character| !character.is_whitespace() && !character.is_control());
        push_sanitized(&mut self.out, text);
    }

    /// `text` in `style`, e.g. a code span.
    pub(super) fn styled_text(&mut self, style: &'s Style, text: &str) {
        self.push_style(style);
        self.text(text);
        self.pop_style();
    }

    pub(super) fn push_style(&mut self, style: &'s Style) {
        if self.stack.len() >= MAX_NESTED_STYLES {
            self.ignored += 1;
            return;
        }
        self.out.push_str(&style.open);
        self.stack.push(style);
    }

    /// Ends the innermost style (never a base style) and restores the ones around it.
    pub(super) fn pop_style(&mut self) {
        if self.ignored > 0 {
            self.ignored -= 1;
            return;
        }
        if self.stack.len() <= self.base {
            return;
        }
        if let Some(style) = self.stack.pop() {
            self.out.push_str(&style.close);
            self.reopen();
        }
    }

    fn reopen(&mut self) {
        for style in &self.stack {
            self.out.push_str(&style.open);
        }
    }

    /// A line break inside the block: every style ends before it and starts again after it, so each
    /// line of the result stands alone.
    pub(super) fn hard_break(&mut self) {
        for style in self.stack.iter().rev() {
            self.out.push_str(&style.close);
        }
        self.out.push('\n');
        self.reopen();
    }

    pub(super) fn start_link(&mut self, style: &'s Style, url: &str) {
        self.push_style(style);
        self.link = Some(OpenLink { url: url.to_owned(), label: String::new() });
    }

    /// Ends a link: its label, then ` (url)` unless the label already is the url.
    pub(super) fn end_link(&mut self) {
        self.pop_style();
        let Some(link) = self.link.take() else { return };
        let url = link.url.trim();
        let shown = url.strip_prefix("mailto:").unwrap_or(url);
        if url.is_empty() || link.label == url || link.label == shown {
            return;
        }
        let mut suffix = String::from(" (");
        push_sanitized(&mut suffix, url);
        suffix.push(')');
        let painted = self.link_url_style.paint(&suffix);
        self.out.push_str(&painted);
        self.reopen();
    }

    /// Whether nothing visible has been written.
    pub(super) fn is_blank(&self) -> bool {
        !self.visible
    }

    /// The styled text, every style closed.
    pub(super) fn finish(mut self) -> String {
        for style in self.stack.iter().rev() {
            self.out.push_str(&style.close);
        }
        self.out
    }
}

/// Appends `text` without the control characters that would move the cursor or restyle the terminal.
pub(super) fn push_sanitized(out: &mut String, text: &str) {
    if !text.chars().any(char::is_control) {
        out.push_str(text);
        return;
    }
    for character in text.chars() {
        match character {
            '\t' => out.push_str("   "),
            '\n' | '\r' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
}
