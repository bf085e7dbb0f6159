//! Helpers for the editor's tests: key events, typing, plain renders, and a stub completion provider.

use std::cell::RefCell;
use std::rc::Rc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::{AutocompleteItem, AutocompleteProvider, CompletionTrigger, Editor, EditorOutcome, Suggestions};
use crate::text::{strip_escapes, visible_width};
use crate::theme::{ColorDepth, Theme};

/// An editor with the colourless dark theme (attributes such as inverse stay).
pub(crate) fn new_editor() -> Editor {
    Editor::new(Theme::dark(ColorDepth::None))
}

pub(crate) fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

pub(crate) fn with(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
    KeyEvent::new(code, modifiers)
}

pub(crate) fn ctrl(c: char) -> KeyEvent {
    with(KeyCode::Char(c), KeyModifiers::CONTROL)
}

pub(crate) fn alt(c: char) -> KeyEvent {
    with(KeyCode::Char(c), KeyModifiers::ALT)
}

/// Presses each key in turn; the outcome of the last.
pub(crate) fn press(editor: &mut Editor, keys: &[KeyEvent]) -> EditorOutcome {
    keys.iter().fold(EditorOutcome::Ignored, |_, key| editor.handle_key(key))
}

/// Types `text` key by key; LF is Shift+Enter.
pub(crate) fn type_text(editor: &mut Editor, text: &str) {
    for c in text.chars() {
        let key = if c == '\n' { with(KeyCode::Enter, KeyModifiers::SHIFT) } else { key(KeyCode::Char(c)) };
        assert_eq!(editor.handle_key(&key), EditorOutcome::Handled, "typing {c:?}");
    }
}

/// An editor holding `text` (typed), cursor at its end.
pub(crate) fn editor_with(text: &str) -> Editor {
    let mut editor = new_editor();
    type_text(&mut editor, text);
    editor
}

/// The render at `width` without escapes, lines joined by LF; checks every line fits.
pub(crate) fn render_plain(editor: &mut Editor, width: usize) -> String {
    let lines = editor.render(width);
    for line in &lines {
        assert!(visible_width(line) <= width, "{line:?} is wider than {width}");
    }
    lines.iter().map(|line| strip_escapes(line)).collect::<Vec<_>>().join("\n")
}

/// Answers slash commands, `@` file references and Tab path completion from fixed lists, and records
/// every question.
#[derive(Debug, Default, Clone)]
pub(crate) struct StubProvider {
    /// (name, description, submit on Enter)
    pub commands: Vec<(&'static str, &'static str, bool)>,
    pub files: Vec<&'static str>,
    pub asked: Rc<RefCell<Vec<(String, usize, CompletionTrigger)>>>,
}

impl StubProvider {
    pub(crate) fn standard() -> Self {
        Self {
            commands: vec![
                ("help", "show help", false),
                ("hotkeys", "list the keys", true),
                ("model", "choose a model", false),
                ("quit", "leave", true),
            ],
            files: vec!["src/main.rs", "src/lib.rs", "README.md"],
            asked: Rc::default(),
        }
    }
}

impl AutocompleteProvider for StubProvider {
    fn suggest(&mut self, line: &str, cursor: usize, trigger: CompletionTrigger) -> Suggestions {
        self.asked.borrow_mut().push((line.to_owned(), cursor, trigger));
        let before = line.get(..cursor).unwrap_or_default();
        let word_start = before.rfind(' ').map_or(0, |at| at + 1);
        let word = &before[word_start..];
        let items = match trigger {
            CompletionTrigger::SlashCommand => self
                .commands
                .iter()
                .filter(|(name, _, _)| name.starts_with(word.trim_start_matches('/')))
                .map(|&(name, description, submit)| {
                    let item = AutocompleteItem::new(format!("/{name}")).with_description(description);
                    if submit { item.submitting_on_enter() } else { item }
                })
                .collect(),
            CompletionTrigger::FileReference => self
                .files
                .iter()
                .filter(|file| file.contains(word.trim_start_matches('@')))
                .map(|file| AutocompleteItem::new(format!("@{file} ")).with_label(*file))
                .collect(),
            _ => self
                .files
                .iter()
                .filter(|file| file.starts_with(word))
                .map(|file| AutocompleteItem::new(*file))
                .collect(),
        };
        Suggestions { items, replace: word_start..cursor }
    }
}
