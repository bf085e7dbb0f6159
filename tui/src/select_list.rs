//! A filterable list to pick one item from (a model, a session, a command): fuzzy filtering, a scrolling
//! window that keeps the selection in view, and keys to move, select and cancel.

mod filter;

use crossterm::event::KeyEvent;

use crate::component::Component;
use crate::keys::is_key;
use crate::text::{pad_to_width, truncate_to_width, visible_width};
use crate::theme::{Role, Theme};

/// Columns between the label column and the descriptions.
const DESCRIPTION_GAP: usize = 2;
/// A description is left out when fewer columns than this remain for it.
const MIN_DESCRIPTION_WIDTH: usize = 10;

/// One entry of a [`SelectList`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SelectItem {
    /// What the item stands for (a model id, a command name).
    pub value: String,
    /// What the list shows.
    pub label: String,
    /// Shown after the labels, in a column of its own.
    pub description: Option<String>,
    /// Shown dim right after the label, e.g. `[provider]`.
    pub hint: Option<String>,
    /// Whether typing searches the value too (not for opaque values such as ids and paths).
    pub value_searched: bool,
}

impl SelectItem {
    pub fn new(value: impl Into<String>, label: impl Into<String>) -> Self {
        Self { value: value.into(), label: label.into(), description: None, hint: None, value_searched: true }
    }

    /// An item whose value is an opaque key (an entry id, a file path): searching looks at what is shown only.
    pub fn with_opaque_value(mut self) -> Self {
        self.value_searched = false;
        self
    }

    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

/// What a key did to a [`SelectList`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SelectOutcome {
    /// Not a key of the list.
    Ignored,
    /// The selection moved.
    Moved,
    /// Enter on an item: its index in the items the list was made with.
    Selected(usize),
    /// Escape.
    Cancelled,
}

/// A list of [`SelectItem`]s narrowed by a filter, with one of them selected.
#[derive(Debug, Clone)]
pub struct SelectList {
    items: Vec<SelectItem>,
    filter: String,
    /// Indices into `items` of the items the filter lets through, best match first.
    filtered: Vec<usize>,
    /// The selected position in `filtered`.
    selected: usize,
    max_visible: usize,
    marked_value: Option<String>,
    theme: Theme,
}

impl SelectList {
    /// A list showing at most `max_visible` items at once (at least one).
    pub fn new(items: Vec<SelectItem>, max_visible: usize, theme: Theme) -> Self {
        let filtered = (0..items.len()).collect();
        Self {
            items,
            filter: String::new(),
            filtered,
            selected: 0,
            max_visible: max_visible.max(1),
            theme,
            marked_value: None,
        }
    }

    pub fn items(&self) -> &[SelectItem] {
        &self.items
    }

    /// Replaces the items (e.g. when a list loaded late), keeping the filter and, when it is still shown,
    /// the selected value.
    pub fn set_items(&mut self, items: Vec<SelectItem>) {
        let selected_value = self.selected().map(|item| item.value.clone());
        self.items = items;
        let filter = std::mem::take(&mut self.filter);
        self.set_filter(&filter);
        if let Some(value) = selected_value {
            self.set_selected_value(&value);
        }
    }

    pub fn filter(&self) -> &str {
        &self.filter
    }

    /// Shows only the items matching `query` and selects the first: every word of it must occur in the
    /// label, value or description, case-insensitive, its characters in order. Items where a word starts a
    /// field come first, then those where it occurs whole, then those where its characters are scattered
    /// (a label or value match before a description match of the same kind); ties keep the items' order.
    pub fn set_filter(&mut self, query: &str) {
        self.filter = query.to_owned();
        self.filtered = filter::filter_items(&self.items, query);
        self.selected = 0;
    }

    /// How many items the filter lets through.
    pub fn filtered_len(&self) -> usize {
        self.filtered.len()
    }

    /// The selected item, `None` when nothing matches.
    pub fn selected(&self) -> Option<&SelectItem> {
        self.selected_index().and_then(|index| self.items.get(index))
    }

    /// The index of the selected item among all items.
    pub fn selected_index(&self) -> Option<usize> {
        self.filtered.get(self.selected).copied()
    }

    /// Selects the shown item whose value is `value`; false (and no change) when none is.
    pub fn set_selected_value(&mut self, value: &str) -> bool {
        let found =
            self.filtered.iter().position(|&index| self.items.get(index).is_some_and(|item| item.value == value));
        if let Some(position) = found {
            self.selected = position;
        }
        found.is_some()
    }

    /// Marks the item whose value is `value` with ` ✓` (e.g. the current model).
    pub fn set_marked_value(&mut self, value: Option<String>) {
        self.marked_value = value;
    }

    /// Up and Down move by one and wrap around, PageUp and PageDown by a window, Home and End to the ends;
    /// Enter selects, Escape cancels.
    pub fn handle_key(&mut self, key: &KeyEvent) -> SelectOutcome {
        if is_key(key, "escape") {
            return SelectOutcome::Cancelled;
        }
        let count = self.filtered.len();
        if is_key(key, "enter") {
            return self.selected_index().map_or(SelectOutcome::Ignored, SelectOutcome::Selected);
        }
        let last = count.saturating_sub(1);
        let target = if is_key(key, "up") {
            if self.selected == 0 { last } else { self.selected - 1 }
        } else if is_key(key, "down") {
            if self.selected >= last { 0 } else { self.selected + 1 }
        } else if is_key(key, "pageup") {
            self.selected.saturating_sub(self.max_visible)
        } else if is_key(key, "pagedown") {
            self.selected.saturating_add(self.max_visible).min(last)
        } else if is_key(key, "home") {
            0
        } else if is_key(key, "end") {
            last
        } else {
            return SelectOutcome::Ignored;
        };
        if count == 0 {
            return SelectOutcome::Ignored;
        }
        self.selected = target;
        SelectOutcome::Moved
    }

    /// The first shown position: the window is centred on the selection where the list allows.
    fn window_start(&self) -> usize {
        let count = self.filtered.len();
        let centred = self.selected.saturating_sub(self.max_visible / 2);
        centred.min(count.saturating_sub(self.max_visible))
    }

    /// The label (the value when the label is empty) with its hint and mark: its width and styled text.
    fn label_cell(&self, item: &SelectItem, selected: bool) -> (usize, String) {
        let label = single_line(if item.label.trim().is_empty() { &item.value } else { &item.label });
        let mut width = visible_width(&label);
        let mut styled = if selected { self.theme.fg(Role::Accent, &self.theme.bold(&label)) } else { label };
        if let Some(hint) = &item.hint {
            let hint = single_line(hint);
            width += 1 + visible_width(&hint);
            styled.push(' ');
            styled.push_str(&self.theme.dim(&hint));
        }
        if self.marked_value.as_deref() == Some(item.value.as_str()) {
            width += 2;
            styled.push_str(&self.theme.fg(Role::Success, " ✓"));
        }
        (width, styled)
    }
}

impl Component for SelectList {
    fn render(&mut self, width: usize) -> Vec<String> {
        if self.filtered.is_empty() {
            return vec![self.theme.fg(Role::Muted, &truncate_to_width("  No matches", width, ""))];
        }
        // The description column starts after the widest label (of all matches, so it stays put while
        // scrolling), but no further right than the middle of the width.
        let widest_label = self
            .filtered
            .iter()
            .filter_map(|&index| self.items.get(index))
            .map(|item| self.label_cell(item, false).0)
            .max();
        let label_column = widest_label.unwrap_or(0).min(width / 2);
        let start = self.window_start();
        let end = (start + self.max_visible).min(self.filtered.len());
        let mut lines = Vec::new();
        for position in start..end {
            let Some(item) = self.filtered.get(position).and_then(|&index| self.items.get(index)) else { continue };
            let selected = position == self.selected;
            let (label_width, label) = self.label_cell(item, selected);
            let mut row =
                if selected { self.theme.fg(Role::Accent, &self.theme.bold("→ ")) } else { "  ".to_owned() };
            row.push_str(&label);
            if let Some(description) = item.description.as_deref().map(single_line).filter(|text| !text.is_empty()) {
                let description_start = 2 + label_column.max(label_width) + DESCRIPTION_GAP;
                if width.saturating_sub(description_start) >= MIN_DESCRIPTION_WIDTH {
                    row = pad_to_width(&row, description_start);
                    let room = width - description_start;
                    row.push_str(&self.theme.fg(Role::Muted, &truncate_to_width(&description, room, "…")));
                }
            }
            lines.push(truncate_to_width(&row, width, "…"));
        }
        if self.filtered.len() > self.max_visible {
            let counter = format!("  ({}/{})", self.selected + 1, self.filtered.len());
            lines.push(self.theme.fg(Role::Muted, &truncate_to_width(&counter, width, "")));
        }
        lines
    }
}

/// `text` on one line: line breaks and tabs as spaces, other control characters dropped.
fn single_line(text: &str) -> String {
    let mut line = String::with_capacity(text.len());
    for character in text.trim().chars() {
        match character {
            '\n' | '\r' | '\t' => line.push(' '),
            c if c.is_control() => {}
            c => line.push(c),
        }
    }
    line
}

#[cfg(test)]
mod tests;
