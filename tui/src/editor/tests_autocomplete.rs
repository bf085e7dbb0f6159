//! Tests of autocompletion with a stub provider: when the list opens, moving in it, accepting, closing,
//! Tab completion, and ranges a provider gets wrong.

use crossterm::event::KeyCode;

use super::tests_support::{StubProvider, key, new_editor, press, render_plain, type_text};
use super::{AutocompleteItem, AutocompleteProvider, CompletionTrigger, Editor, EditorOutcome, Suggestions};

fn editor_with_stub() -> (Editor, StubProvider) {
    let mut editor = new_editor();
    let provider = StubProvider::standard();
    editor.set_autocomplete(Box::new(provider.clone()));
    (editor, provider)
}

#[test]
fn a_slash_on_the_first_line_opens_the_list_and_typing_narrows_it() {
    let (mut editor, provider) = editor_with_stub();
    type_text(&mut editor, "/");
    assert!(editor.is_autocomplete_open());
    assert_eq!(provider.asked.borrow().last(), Some(&("/".to_owned(), 1, CompletionTrigger::SlashCommand)));
    type_text(&mut editor, "h");
    let render = render_plain(&mut editor, 40);
    assert!(render.ends_with("→ /help     show help\n  /hotkeys  list the keys"), "{render}");
    type_text(&mut editor, "x");
    assert!(!editor.is_autocomplete_open());
    press(&mut editor, &[key(KeyCode::Backspace)]);
    assert!(editor.is_autocomplete_open());
    // A space ends the command word.
    type_text(&mut editor, " ");
    assert!(!editor.is_autocomplete_open());
}

#[test]
fn up_and_down_move_the_selection_and_wrap() {
    let (mut editor, _) = editor_with_stub();
    type_text(&mut editor, "/");
    press(&mut editor, &[key(KeyCode::Up)]);
    assert!(render_plain(&mut editor, 40).contains("→ /quit"));
    press(&mut editor, &[key(KeyCode::Down)]);
    assert!(render_plain(&mut editor, 40).contains("→ /help"));
    press(&mut editor, &[key(KeyCode::Down), key(KeyCode::Down)]);
    assert!(render_plain(&mut editor, 40).contains("→ /model"));
    assert_eq!(editor.text(), "/");
}

#[test]
fn tab_accepts_the_selection() {
    let (mut editor, _) = editor_with_stub();
    type_text(&mut editor, "/h");
    assert_eq!(press(&mut editor, &[key(KeyCode::Down), key(KeyCode::Tab)]), EditorOutcome::Handled);
    assert_eq!(editor.text(), "/hotkeys");
    assert_eq!(editor.cursor(), (0, 8));
    assert!(!editor.is_autocomplete_open());
}

#[test]
fn enter_accepts_and_submits_only_when_the_item_says_so() {
    let (mut editor, _) = editor_with_stub();
    type_text(&mut editor, "/h");
    assert_eq!(editor.handle_key(&key(KeyCode::Enter)), EditorOutcome::Handled);
    assert_eq!(editor.text(), "/help");
    assert!(!editor.is_autocomplete_open());
    editor.clear();
    type_text(&mut editor, "/ho");
    assert_eq!(editor.handle_key(&key(KeyCode::Enter)), EditorOutcome::Submit("/hotkeys".to_owned()));
    assert!(editor.is_empty());
}

#[test]
fn escape_closes_the_list_and_is_consumed() {
    let (mut editor, _) = editor_with_stub();
    type_text(&mut editor, "/m");
    assert_eq!(editor.handle_key(&key(KeyCode::Esc)), EditorOutcome::Handled);
    assert!(!editor.is_autocomplete_open());
    assert_eq!(editor.text(), "/m");
    assert_eq!(editor.handle_key(&key(KeyCode::Esc)), EditorOutcome::Ignored);
}

#[test]
fn motions_close_the_list() {
    let (mut editor, _) = editor_with_stub();
    type_text(&mut editor, "/mo");
    press(&mut editor, &[key(KeyCode::Left)]);
    assert!(!editor.is_autocomplete_open());
}

#[test]
fn slash_commands_only_open_on_the_first_line() {
    let (mut editor, _) = editor_with_stub();
    type_text(&mut editor, "text\n/");
    assert!(!editor.is_autocomplete_open());
}

#[test]
fn an_at_word_opens_file_suggestions() {
    let (mut editor, provider) = editor_with_stub();
    type_text(&mut editor, "see @");
    assert!(editor.is_autocomplete_open());
    assert_eq!(provider.asked.borrow().last(), Some(&("see @".to_owned(), 5, CompletionTrigger::FileReference)));
    type_text(&mut editor, "lib");
    assert!(render_plain(&mut editor, 40).ends_with("→ src/lib.rs"));
    press(&mut editor, &[key(KeyCode::Tab)]);
    assert_eq!(editor.text(), "see @src/lib.rs ");
    assert!(!editor.is_autocomplete_open());
}

#[test]
fn tab_with_one_suggestion_applies_it_at_once() {
    let (mut editor, provider) = editor_with_stub();
    type_text(&mut editor, "open src/m");
    assert!(!editor.is_autocomplete_open());
    assert_eq!(editor.handle_key(&key(KeyCode::Tab)), EditorOutcome::Handled);
    assert_eq!(provider.asked.borrow().last(), Some(&("open src/m".to_owned(), 10, CompletionTrigger::Tab)));
    assert_eq!(editor.text(), "open src/main.rs");
    assert!(!editor.is_autocomplete_open());
    press(&mut editor, &[super::tests_support::ctrl('-')]);
    assert_eq!(editor.text(), "open src/m");
}

#[test]
fn tab_with_several_suggestions_opens_the_list_and_typing_keeps_it() {
    let (mut editor, _) = editor_with_stub();
    type_text(&mut editor, "x src/");
    press(&mut editor, &[key(KeyCode::Tab)]);
    assert!(editor.is_autocomplete_open());
    type_text(&mut editor, "l");
    assert!(render_plain(&mut editor, 40).ends_with("→ src/lib.rs"));
    assert_eq!(editor.handle_key(&key(KeyCode::Enter)), EditorOutcome::Handled);
    assert_eq!(editor.text(), "x src/lib.rs");
    // Nothing to complete: Tab is still the editor's, and no list opens.
    type_text(&mut editor, " q");
    assert_eq!(editor.handle_key(&key(KeyCode::Tab)), EditorOutcome::Handled);
    assert!(!editor.is_autocomplete_open());
}

#[test]
fn tab_without_a_provider_is_ignored() {
    let mut editor = new_editor();
    type_text(&mut editor, "/he");
    assert_eq!(editor.handle_key(&key(KeyCode::Tab)), EditorOutcome::Ignored);
    assert!(!editor.is_autocomplete_open());
}

#[test]
fn many_suggestions_show_five_and_the_position() {
    struct Numbers;
    impl AutocompleteProvider for Numbers {
        fn suggest(&mut self, _line: &str, cursor: usize, _trigger: CompletionTrigger) -> Suggestions {
            let items =
                (1..=8).map(|n| AutocompleteItem::new(format!("/cmd{n}")).with_description(format!("number {n}")));
            Suggestions { items: items.collect(), replace: 0..cursor }
        }
    }
    let mut editor = new_editor();
    editor.set_autocomplete(Box::new(Numbers));
    type_text(&mut editor, "/");
    press(&mut editor, &[key(KeyCode::Up)]);
    let render = render_plain(&mut editor, 40);
    assert!(render.contains("  /cmd4  number 4\n"), "{render}");
    assert!(render.ends_with("→ /cmd8  number 8\n  (8/8)"), "{render}");
}

#[test]
fn a_range_outside_the_line_inserts_at_the_cursor() {
    struct Wrong;
    impl AutocompleteProvider for Wrong {
        fn suggest(&mut self, _line: &str, _cursor: usize, _trigger: CompletionTrigger) -> Suggestions {
            Suggestions { items: vec![AutocompleteItem::new("X")], replace: 40..100 }
        }
    }
    let mut editor = new_editor();
    editor.set_autocomplete(Box::new(Wrong));
    type_text(&mut editor, "日本");
    press(&mut editor, &[key(KeyCode::Left), key(KeyCode::Tab)]);
    assert_eq!(editor.text(), "日X本");
}
