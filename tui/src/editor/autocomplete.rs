//! Autocompletion: the provider trait a caller implements (slash commands, `@file` references, paths), the
//! suggestions it returns, and the open list of suggestions with its selection and its drawing.

use std::ops::Range;

use crate::text::{pad_to_width, truncate_to_width, visible_width};
use crate::theme::{Role, Theme};

/// How many suggestions the list shows at once.
pub(crate) const VISIBLE_SUGGESTIONS: usize = 5;
/// The widest a label column grows before labels are cut.
const LABEL_COLUMN_LIMIT: usize = 32;

/// Why the editor asks for suggestions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompletionTrigger {
    /// The first line starts with `/` and the cursor is in its first word: complete a command name.
    SlashCommand,
    /// The word before the cursor starts with `@`: complete a file reference.
    FileReference,
    /// The user pressed Tab: complete the word before the cursor (a path, typically).
    Tab,
}

/// One suggestion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutocompleteItem {
    /// The text that replaces [`Suggestions::replace`] when the item is accepted.
    pub value: String,
    /// What the list shows.
    pub label: String,
    /// Shown after the label, muted.
    pub description: Option<String>,
    /// Enter on this item accepts it and then submits the editor's text (a command that runs at once).
    pub submit_on_enter: bool,
}

impl AutocompleteItem {
    /// An item inserting `value`, labelled with it, without description.
    pub fn new(value: impl Into<String>) -> Self {
        let value = value.into();
        Self { label: value.clone(), value, description: None, submit_on_enter: false }
    }

    /// The same item shown as `label`.
    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    /// The same item with a description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The same item, submitting the text when accepted with Enter.
    pub fn submitting_on_enter(mut self) -> Self {
        self.submit_on_enter = true;
        self
    }
}

/// A provider's answer: the items, and the byte range of the line an accepted item replaces (the prefix
/// being completed). No items means nothing to suggest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Suggestions {
    pub items: Vec<AutocompleteItem>,
    pub replace: Range<usize>,
}

/// Where suggestions come from; the caller sets one with `Editor::set_autocomplete`.
pub trait AutocompleteProvider {
    /// The suggestions for `line` (the text of the cursor's line, paste markers unexpanded) with the cursor
    /// at byte `cursor` of it. Ranges outside the line or off character boundaries are treated as an empty
    /// range at the cursor.
    fn suggest(&mut self, line: &str, cursor: usize, trigger: CompletionTrigger) -> Suggestions;
}

/// The open list of suggestions.
#[derive(Debug, Clone)]
pub(crate) struct CompletionList {
    pub items: Vec<AutocompleteItem>,
    pub replace: Range<usize>,
    pub trigger: CompletionTrigger,
    pub selected: usize,
}

impl CompletionList {
    /// A list for non-empty suggestions, keeping the selection of `previous` when its item is still there.
    pub(crate) fn open(suggestions: Suggestions, trigger: CompletionTrigger, previous: Option<&Self>) -> Option<Self> {
        if suggestions.items.is_empty() {
            return None;
        }
        let selected = previous
            .and_then(|list| list.items.get(list.selected))
            .and_then(|kept| suggestions.items.iter().position(|item| item.value == kept.value))
            .unwrap_or(0);
        Some(Self { items: suggestions.items, replace: suggestions.replace, trigger, selected })
    }

    pub(crate) fn select_previous(&mut self) {
        let count = self.items.len().max(1);
        self.selected = (self.selected + count - 1) % count;
    }

    pub(crate) fn select_next(&mut self) {
        self.selected = (self.selected + 1) % self.items.len().max(1);
    }

    /// The list's lines at `width`: up to [`VISIBLE_SUGGESTIONS`] rows around the selection, `→ ` before the
    /// selected one, labels padded to one column and then the description, and `  (i/n)` when some items
    /// are out of view. Every line is cut to the width.
    pub(crate) fn render(&self, theme: &Theme, width: usize) -> Vec<String> {
        let count = self.items.len();
        let first =
            self.selected.saturating_sub(VISIBLE_SUGGESTIONS / 2).min(count.saturating_sub(VISIBLE_SUGGESTIONS));
        let shown = self.items.iter().enumerate().skip(first).take(VISIBLE_SUGGESTIONS);
        let label_column = self.items[first.min(count)..]
            .iter()
            .take(VISIBLE_SUGGESTIONS)
            .map(|item| visible_width(&item.label))
            .max()
            .unwrap_or(0)
            .min(LABEL_COLUMN_LIMIT);
        let mut lines: Vec<String> = shown
            .map(|(index, item)| {
                let selected = index == self.selected;
                let label = truncate_to_width(&item.label, label_column, "…");
                let head = if selected { format!("→ {label}") } else { format!("  {label}") };
                let head = if selected { theme.fg(Role::Accent, &head) } else { head };
                let line = match &item.description {
                    Some(description) => {
                        let padded = pad_to_width(&head, label_column + 2);
                        format!("{padded}  {}", theme.fg(Role::Muted, description))
                    }
                    None => head,
                };
                truncate_to_width(&line, width, "…")
            })
            .collect();
        if count > VISIBLE_SUGGESTIONS {
            let position = theme.fg(Role::Muted, &format!("  ({}/{count})", self.selected + 1));
            lines.push(truncate_to_width(&position, width, "…"));
        }
        lines
    }
}
