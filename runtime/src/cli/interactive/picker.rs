//! A selector in place of the editor: a title, hints, a search line and a filterable list (models, sessions,
//! the session tree). Typing filters, Up/Down move, Enter picks, Escape closes.

use pi_tui::keys::is_key;
use pi_tui::keys::{KeyCode, KeyEvent, KeyModifiers};
use pi_tui::select_list::{SelectItem, SelectList, SelectOutcome};
use pi_tui::text::truncate_to_width;
use pi_tui::{Component, Role, Theme};

/// Rows of the list shown at once.
const VISIBLE_ROWS: usize = 10;

/// What a key did to the picker.
pub enum PickerOutcome {
    /// Nothing to do but redraw.
    Stay,
    /// The item with this value was picked; `alternate` when it was picked with Alt+Enter.
    Picked {
        value: String,
        alternate: bool,
    },
    Closed,
    /// A key the picker leaves to its owner (Tab to switch scope, a label key).
    Other(KeyEvent),
}

/// A searchable list with a title.
pub struct Picker {
    pub title: String,
    pub hints: Vec<String>,
    query: String,
    list: SelectList,
    /// A line about an item (by value), shown under the list while it is selected.
    details: Vec<(String, String)>,
    theme: Theme,
}

impl Picker {
    pub fn new(title: &str, hints: Vec<String>, items: Vec<SelectItem>, theme: &Theme) -> Self {
        let list = SelectList::new(items, VISIBLE_ROWS, theme.clone());
        Self { title: title.to_owned(), hints, query: String::new(), list, details: Vec::new(), theme: theme.clone() }
    }

    /// Lines about items (value, text), shown under the list for the selected one.
    pub fn with_details(mut self, details: Vec<(String, String)>) -> Self {
        self.details = details;
        self
    }

    pub fn select_value(&mut self, value: &str) {
        self.list.set_selected_value(value);
    }

    pub fn mark_value(&mut self, value: Option<String>) {
        self.list.set_marked_value(value);
    }

    pub fn set_items(&mut self, items: Vec<SelectItem>) {
        self.list.set_items(items);
        self.list.set_filter(&self.query);
    }

    pub fn selected_value(&self) -> Option<String> {
        self.list.selected().map(|item| item.value.clone())
    }

    pub fn handle_key(&mut self, key: &KeyEvent) -> PickerOutcome {
        if is_key(key, "alt+enter") {
            return match self.list.selected() {
                Some(item) => PickerOutcome::Picked { value: item.value.clone(), alternate: true },
                None => PickerOutcome::Stay,
            };
        }
        match self.list.handle_key(key) {
            SelectOutcome::Selected(_) => {
                return match self.list.selected() {
                    Some(item) => PickerOutcome::Picked { value: item.value.clone(), alternate: false },
                    None => PickerOutcome::Stay,
                };
            }
            SelectOutcome::Cancelled => return PickerOutcome::Closed,
            SelectOutcome::Moved => return PickerOutcome::Stay,
            _ => {}
        }
        let plain = key.modifiers - KeyModifiers::SHIFT == KeyModifiers::NONE;
        match key.code {
            KeyCode::Char(character) if plain => {
                self.query.push(character);
                self.list.set_filter(&self.query);
                PickerOutcome::Stay
            }
            KeyCode::Backspace => {
                self.query.pop();
                self.list.set_filter(&self.query);
                PickerOutcome::Stay
            }
            _ if is_key(key, "ctrl+u") => {
                self.query.clear();
                self.list.set_filter("");
                PickerOutcome::Stay
            }
            _ if is_key(key, "ctrl+c") => PickerOutcome::Closed,
            _ => PickerOutcome::Other(*key),
        }
    }

    pub fn render(&mut self, width: usize) -> Vec<String> {
        let theme = &self.theme;
        let rule = theme.fg(Role::Border, &"─".repeat(width));
        let mut lines = vec![rule.clone(), format!(" {}", theme.bold(&theme.fg(Role::Accent, &self.title)))];
        for hint in &self.hints {
            lines.push(format!(" {}", theme.fg(Role::Muted, &truncate_to_width(hint, width.saturating_sub(1), "..."))));
        }
        lines.push(String::new());
        lines.push(format!("{} {}{}", theme.fg(Role::Accent, ">"), self.query, theme.inverse(" ")));
        lines.push(String::new());
        lines.extend(self.list.render(width));
        let selected = self.list.selected().map(|item| item.value.clone());
        if let Some(detail) =
            selected.and_then(|value| self.details.iter().find(|(v, _)| *v == value).map(|(_, d)| d.clone()))
        {
            lines.push(String::new());
            lines.push(format!(
                "  {}",
                theme.fg(Role::Muted, &truncate_to_width(&detail, width.saturating_sub(2), "..."))
            ));
        }
        lines.push(rule);
        lines
    }
}
