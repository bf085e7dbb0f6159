//! A multi-line text editor component in the manner of pi's prompt editor: grapheme-wise cursor, Emacs-style
//! motions and kills with a kill ring, undo, prompt history, large pastes folded into markers, completion
//! through a caller's [`AutocompleteProvider`], and drawing between two rules with a reverse-video cursor.
//!
//! Keys arrive as crossterm [`KeyEvent`](crossterm::event::KeyEvent)s through [`Editor::handle_key`], which
//! tells the caller whether the key was used ([`EditorOutcome`]); bracketed pastes go to
//! [`Editor::handle_paste`]. The editor's keys:
//!
//! | keys | action |
//! | --- | --- |
//! | printable characters | insert |
//! | Enter | submit (a `\` before the cursor becomes a line break instead) |
//! | Shift+Enter, Ctrl+J | line break |
//! | Left / Ctrl+B, Right / Ctrl+F | one grapheme (a paste marker is one), across lines |
//! | Up, Down | one visual row, keeping the column; history at the top/bottom |
//! | Alt+Left / Ctrl+Left / Alt+B, Alt+Right / Ctrl+Right / Alt+F | one word |
//! | Home / Ctrl+A, End / Ctrl+E | start, end of line |
//! | Ctrl+] *c*, Ctrl+Alt+] *c* | jump forward, backward to the character *c* |
//! | Backspace, Delete | one grapheme, joining lines at the edges |
//! | Ctrl+W / Alt+Backspace, Alt+D / Alt+Delete | kill a word backward, forward |
//! | Ctrl+U, Ctrl+K | kill to the start, end of line (joining lines at the edges) |
//! | Ctrl+Y, Alt+Y | yank the newest kill, replace the yank by the kill before it |
//! | Ctrl+- (Ctrl+_) | undo (a run of typing is one step, every other edit one step) |
//! | Tab | complete (with a provider) |
//! | Up/Down, Tab/Enter, Escape while suggestions show | select, accept, close |
//!
//! Every other key (Ctrl+C, Ctrl+D, Escape without suggestions, Alt+Enter, PageUp, ...) is
//! [`EditorOutcome::Ignored`] for the application to handle.

mod autocomplete;
mod buffer;
mod completion;
mod editing;
mod history;
mod input;
mod keymap;
mod kill_ring;
mod layout;
mod navigation;
mod paste;
mod render;
mod undo;
mod units;

#[cfg(test)]
mod tests_autocomplete;
#[cfg(test)]
mod tests_editing;
#[cfg(test)]
mod tests_navigation;
#[cfg(test)]
mod tests_paste_history;
#[cfg(test)]
mod tests_random;
#[cfg(test)]
mod tests_render;
#[cfg(test)]
mod tests_support;

use std::fmt;

pub use autocomplete::{AutocompleteItem, AutocompleteProvider, CompletionTrigger, Suggestions};

use crate::component::Component;
use crate::theme::{Role, Theme};
use autocomplete::CompletionList;
use buffer::{Buffer, Position};
use history::History;
use kill_ring::KillRing;
use undo::UndoStack;

/// The most text rows shown when the caller sets none.
const DEFAULT_MAX_ROWS: usize = 20;
/// The width Up/Down assume before the first render.
const DEFAULT_LAYOUT_WIDTH: usize = 79;

/// What [`Editor::handle_key`] did with a key.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EditorOutcome {
    /// The key is not the editor's: the caller may act on it.
    Ignored,
    /// The editor used the key (the caller redraws).
    Handled,
    /// Enter: the whole text, paste markers expanded and nothing trimmed. The editor has cleared itself; it
    /// does not add the text to its history (the caller calls [`Editor::add_to_history`]).
    Submit(String),
}

/// What the previous command was, for undo grouping, kill accumulation and yank cycling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LastAction {
    Other,
    Typing,
    Kill,
    Yank,
}

/// The direction of a pending Ctrl+] jump.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JumpDirection {
    Forward,
    Backward,
}

/// A multi-line text editor. See the [module documentation](self) for its keys.
pub struct Editor {
    theme: Theme,
    border: Role,
    buffer: Buffer,
    undo: UndoStack,
    kill_ring: KillRing,
    history: History,
    last_action: LastAction,
    /// Where the text inserted by the last yank starts (the cursor is at its end).
    yank_start: Option<Position>,
    /// The column (in cells, within a visual row) Up/Down keep while moving.
    preferred_column: Option<usize>,
    pending_jump: Option<JumpDirection>,
    provider: Option<Box<dyn AutocompleteProvider>>,
    completion: Option<CompletionList>,
    max_rows: usize,
    /// The first visual row shown.
    scroll: usize,
    /// The wrapping width of the last render (its width less the column kept for the cursor).
    layout_width: usize,
}

impl fmt::Debug for Editor {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("Editor")
            .field("text", &self.buffer.display_text())
            .field("cursor", &self.buffer.cursor())
            .field("completion", &self.completion)
            .finish_non_exhaustive()
    }
}

impl Editor {
    /// An empty editor drawn with `theme`, rules in [`Role::Border`], at most 20 text rows.
    pub fn new(theme: Theme) -> Self {
        Self {
            theme,
            border: Role::Border,
            buffer: Buffer::default(),
            undo: UndoStack::default(),
            kill_ring: KillRing::default(),
            history: History::default(),
            last_action: LastAction::Other,
            yank_start: None,
            preferred_column: None,
            pending_jump: None,
            provider: None,
            completion: None,
            max_rows: DEFAULT_MAX_ROWS,
            scroll: 0,
            layout_width: DEFAULT_LAYOUT_WIDTH,
        }
    }

    /// Draws with `theme` from now on.
    pub fn set_theme(&mut self, theme: Theme) {
        self.theme = theme;
    }

    /// Colours the two rules with `role` (pi colours them by thinking level).
    pub fn set_border_color(&mut self, role: Role) {
        self.border = role;
    }

    /// Shows at most `rows` text rows (at least 1), scrolling to keep the cursor in view.
    pub fn set_max_rows(&mut self, rows: usize) {
        self.max_rows = rows.max(1);
    }

    /// Sets where suggestions come from; without a provider there is no completion and Tab is ignored.
    pub fn set_autocomplete(&mut self, provider: Box<dyn AutocompleteProvider>) {
        self.provider = Some(provider);
        self.completion = None;
    }

    /// Whether the list of suggestions is showing.
    pub fn is_autocomplete_open(&self) -> bool {
        self.completion.is_some()
    }

    /// The text with paste markers expanded to the pasted content, lines joined by LF.
    pub fn text(&self) -> String {
        self.buffer.pastes.expand(&self.buffer.display_text())
    }

    /// The text as shown, paste markers unexpanded.
    pub fn display_text(&self) -> String {
        self.buffer.display_text()
    }

    /// Whether there is no text at all.
    pub fn is_empty(&self) -> bool {
        self.buffer.is_empty()
    }

    /// The cursor: its line, and its byte offset in the line as [`Editor::display_text`] shows it.
    pub fn cursor(&self) -> (usize, usize) {
        let cursor = self.buffer.cursor();
        (cursor.row, cursor.col)
    }

    /// Replaces the text (cleaned like a paste, never folded) and puts the cursor at its end; one undo step.
    pub fn set_text(&mut self, text: &str) {
        let text = paste::clean_input(text);
        if text != self.buffer.display_text() {
            self.undo.push(self.buffer.snapshot());
        }
        self.buffer.replace_all(&text);
        self.history.stop_browsing();
        self.reset_transient_state();
    }

    /// Empties the editor and forgets its pastes and undo steps (history and kill ring stay).
    pub fn clear(&mut self) {
        self.buffer.replace_all("");
        self.buffer.pastes.clear();
        self.undo.clear();
        self.history.stop_browsing();
        self.reset_transient_state();
        self.scroll = 0;
    }

    /// Inserts text at the cursor (cleaned like a paste, never folded); one undo step.
    pub fn insert_text(&mut self, text: &str) {
        let text = paste::clean_input(text);
        if text.is_empty() {
            return;
        }
        self.undo.push(self.buffer.snapshot());
        self.buffer.insert(&text);
        self.history.stop_browsing();
        self.reset_transient_state();
    }

    /// A bracketed paste: CRLF and CR become LF, each tab four spaces, other control characters go. A paste
    /// of more than 10 lines or 1000 characters goes in as one marker, `[paste #N +L lines]` or
    /// `[paste #N C chars]` (N counts from 1 until the editor is submitted or cleared), which moves and
    /// deletes as one unit and which [`Editor::text`] expands. One undo step; suggestions close.
    pub fn handle_paste(&mut self, text: &str) {
        let text = paste::clean_input(text);
        if text.is_empty() {
            return;
        }
        self.undo.push(self.buffer.snapshot());
        if paste::PasteStore::is_large(&text) {
            let marker = self.buffer.pastes.fold(text);
            self.buffer.insert(&marker);
        } else {
            self.buffer.insert(&text);
        }
        self.history.stop_browsing();
        self.reset_transient_state();
    }

    /// Adds a submitted text to the history Up browses: trimmed; empty texts and a repeat of the newest
    /// entry are skipped; the oldest go past 100 entries.
    pub fn add_to_history(&mut self, text: String) {
        self.history.add(&text);
    }

    /// The lines at `width` columns: a rule, the text rows (at most the maximum, scrolled to the cursor;
    /// the cursor drawn in reverse video), a rule, and the suggestions when open. None is wider than `width`.
    pub fn render(&mut self, width: usize) -> Vec<String> {
        self.render_lines(width)
    }

    /// Forgets what only matters between keys: the last action, the yank, the column kept by Up/Down, a
    /// pending jump and the suggestions.
    fn reset_transient_state(&mut self) {
        self.last_action = LastAction::Other;
        self.yank_start = None;
        self.preferred_column = None;
        self.pending_jump = None;
        self.completion = None;
    }
}

impl Component for Editor {
    fn render(&mut self, width: usize) -> Vec<String> {
        Editor::render(self, width)
    }
}
