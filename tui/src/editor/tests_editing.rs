//! Tests of typing, submitting, line breaks, deleting, the kill ring and undo.

use crossterm::event::{KeyCode, KeyEventKind, KeyModifiers};

use super::EditorOutcome;
use super::tests_support::{alt, ctrl, editor_with, key, new_editor, press, type_text, with};

#[test]
fn typing_inserts_at_the_cursor() {
    let mut editor = editor_with("helo");
    press(&mut editor, &[key(KeyCode::Left), key(KeyCode::Left)]);
    type_text(&mut editor, "l");
    assert_eq!(editor.text(), "hello");
    assert_eq!(editor.cursor(), (0, 3));
    type_text(&mut editor, "É日");
    assert_eq!(editor.text(), "helÉ日lo");
    assert!(!editor.is_empty());
}

#[test]
fn enter_submits_and_clears_without_touching_history() {
    let mut editor = editor_with("first\nsecond ");
    assert_eq!(editor.handle_key(&key(KeyCode::Enter)), EditorOutcome::Submit("first\nsecond ".to_owned()));
    assert!(editor.is_empty());
    assert_eq!(editor.cursor(), (0, 0));
    // Nothing was added to the history: Up on the empty editor finds nothing.
    editor.handle_key(&key(KeyCode::Up));
    assert!(editor.is_empty());
    assert_eq!(editor.handle_key(&key(KeyCode::Enter)), EditorOutcome::Submit(String::new()));
}

#[test]
fn shift_enter_and_ctrl_j_break_the_line() {
    let mut editor = editor_with("ab");
    press(&mut editor, &[key(KeyCode::Left), with(KeyCode::Enter, KeyModifiers::SHIFT)]);
    assert_eq!(editor.text(), "a\nb");
    assert_eq!(editor.cursor(), (1, 0));
    press(&mut editor, &[ctrl('j')]);
    assert_eq!(editor.text(), "a\n\nb");
    assert_eq!(editor.cursor(), (2, 0));
}

#[test]
fn backslash_enter_becomes_a_line_break() {
    let mut editor = editor_with("one\\");
    assert_eq!(editor.handle_key(&key(KeyCode::Enter)), EditorOutcome::Handled);
    assert_eq!(editor.text(), "one\n");
    assert_eq!(editor.cursor(), (1, 0));
    type_text(&mut editor, "two");
    assert_eq!(editor.handle_key(&key(KeyCode::Enter)), EditorOutcome::Submit("one\ntwo".to_owned()));
}

#[test]
fn backspace_and_delete_join_lines_at_the_edges() {
    let mut editor = editor_with("ab\ncd");
    press(&mut editor, &[key(KeyCode::Home), key(KeyCode::Backspace)]);
    assert_eq!(editor.text(), "abcd");
    assert_eq!(editor.cursor(), (0, 2));
    press(&mut editor, &[key(KeyCode::Backspace)]);
    assert_eq!(editor.text(), "acd");
    press(&mut editor, &[key(KeyCode::Delete)]);
    assert_eq!(editor.text(), "ad");
    type_text(&mut editor, "\n");
    press(&mut editor, &[key(KeyCode::Up), key(KeyCode::End), key(KeyCode::Delete)]);
    assert_eq!(editor.text(), "ad");
    // Nothing before the start or after the end.
    press(&mut editor, &[key(KeyCode::End), key(KeyCode::Delete), key(KeyCode::Home), key(KeyCode::Backspace)]);
    assert_eq!(editor.text(), "ad");
}

#[test]
fn backspace_removes_whole_graphemes() {
    let mut editor = editor_with("ae\u{301}👍🏽");
    press(&mut editor, &[key(KeyCode::Backspace)]);
    assert_eq!(editor.text(), "ae\u{301}");
    press(&mut editor, &[key(KeyCode::Backspace)]);
    assert_eq!(editor.text(), "a");
}

#[test]
fn word_kills_go_backward_and_forward() {
    let mut editor = editor_with("foo bar.baz qux");
    press(&mut editor, &[ctrl('w')]);
    assert_eq!(editor.text(), "foo bar.baz ");
    press(&mut editor, &[with(KeyCode::Backspace, KeyModifiers::ALT)]);
    assert_eq!(editor.text(), "foo bar.");
    press(&mut editor, &[ctrl('w')]);
    assert_eq!(editor.text(), "foo bar");
    press(&mut editor, &[key(KeyCode::Home), alt('d')]);
    assert_eq!(editor.text(), " bar");
    press(&mut editor, &[with(KeyCode::Delete, KeyModifiers::ALT)]);
    assert_eq!(editor.text(), "");
}

#[test]
fn word_kills_join_lines_at_the_edges() {
    let mut editor = editor_with("ab\ncd");
    press(&mut editor, &[key(KeyCode::Home), ctrl('w')]);
    assert_eq!(editor.text(), "abcd");
    assert_eq!(editor.cursor(), (0, 2));
    type_text(&mut editor, "\n");
    press(&mut editor, &[key(KeyCode::Left), alt('d')]);
    assert_eq!(editor.text(), "abcd");
}

#[test]
fn line_kills_and_their_joins() {
    let mut editor = editor_with("hello world\nnext");
    press(&mut editor, &[key(KeyCode::Up), key(KeyCode::Home), alt('f'), ctrl('k')]);
    assert_eq!(editor.text(), "hello\nnext");
    // At the end of a line Ctrl+K joins the next one.
    press(&mut editor, &[ctrl('k')]);
    assert_eq!(editor.text(), "hellonext");
    press(&mut editor, &[ctrl('u')]);
    assert_eq!(editor.text(), "next");
    assert_eq!(editor.cursor(), (0, 0));
    // At the start of a line Ctrl+U joins the previous one.
    let mut editor = editor_with("ab\ncd");
    press(&mut editor, &[key(KeyCode::Home), ctrl('u')]);
    assert_eq!(editor.text(), "abcd");
}

#[test]
fn consecutive_kills_accumulate_into_one_entry() {
    let mut editor = editor_with("one two three");
    press(&mut editor, &[ctrl('w'), ctrl('w'), ctrl('w')]);
    assert!(editor.is_empty());
    press(&mut editor, &[ctrl('y')]);
    assert_eq!(editor.text(), "one two three");

    let mut editor = editor_with("abc\ndef");
    press(&mut editor, &[key(KeyCode::Up), key(KeyCode::Home), ctrl('k'), ctrl('k'), ctrl('k')]);
    assert!(editor.is_empty());
    press(&mut editor, &[ctrl('y')]);
    assert_eq!(editor.text(), "abc\ndef");
    assert_eq!(editor.cursor(), (1, 3));
}

#[test]
fn a_motion_between_kills_starts_a_new_entry() {
    let mut editor = editor_with("aa bb cc");
    press(&mut editor, &[ctrl('w'), key(KeyCode::Left), ctrl('w'), key(KeyCode::End), ctrl('y')]);
    assert_eq!(editor.text(), "aa  bb");
    press(&mut editor, &[alt('y')]);
    assert_eq!(editor.text(), "aa  cc");
}

#[test]
fn yank_pop_cycles_through_the_ring() {
    let mut editor = editor_with("first");
    press(&mut editor, &[ctrl('u')]);
    type_text(&mut editor, "second");
    press(&mut editor, &[ctrl('u')]);
    type_text(&mut editor, "third");
    press(&mut editor, &[ctrl('u')]);
    type_text(&mut editor, "> ");
    press(&mut editor, &[ctrl('y')]);
    assert_eq!(editor.text(), "> third");
    press(&mut editor, &[alt('y')]);
    assert_eq!(editor.text(), "> second");
    press(&mut editor, &[alt('y')]);
    assert_eq!(editor.text(), "> first");
    press(&mut editor, &[alt('y')]);
    assert_eq!(editor.text(), "> third");
    assert_eq!(editor.cursor(), (0, 7));
    // Alt+Y after anything but a yank does nothing.
    press(&mut editor, &[key(KeyCode::Left), alt('y')]);
    assert_eq!(editor.text(), "> third");
}

#[test]
fn yank_pop_replaces_multi_line_yanks() {
    let mut editor = editor_with("x");
    press(&mut editor, &[ctrl('u')]);
    type_text(&mut editor, "a\nb");
    press(&mut editor, &[ctrl('u'), ctrl('u'), ctrl('u')]);
    assert!(editor.is_empty());
    press(&mut editor, &[ctrl('y')]);
    assert_eq!(editor.text(), "a\nb");
    press(&mut editor, &[alt('y')]);
    assert_eq!(editor.text(), "x");
    press(&mut editor, &[alt('y')]);
    assert_eq!(editor.text(), "a\nb");
}

#[test]
fn undo_restores_each_step_and_groups_typing() {
    let mut editor = editor_with("hello world");
    press(&mut editor, &[ctrl('w')]);
    assert_eq!(editor.text(), "hello ");
    type_text(&mut editor, "there");
    press(&mut editor, &[ctrl('-')]);
    assert_eq!(editor.text(), "hello ");
    press(&mut editor, &[ctrl('_')]);
    assert_eq!(editor.text(), "hello world");
    press(&mut editor, &[with(KeyCode::Char('7'), KeyModifiers::CONTROL)]);
    assert!(editor.is_empty());
    assert_eq!(editor.handle_key(&ctrl('-')), EditorOutcome::Handled);
    assert!(editor.is_empty());
}

#[test]
fn a_motion_ends_a_typing_group() {
    let mut editor = editor_with("ab");
    press(&mut editor, &[key(KeyCode::Left)]);
    type_text(&mut editor, "X");
    press(&mut editor, &[ctrl('-')]);
    assert_eq!(editor.text(), "ab");
    assert_eq!(editor.cursor(), (0, 1));
    press(&mut editor, &[with(KeyCode::Enter, KeyModifiers::SHIFT), ctrl('-')]);
    assert_eq!(editor.text(), "ab");
}

#[test]
fn keys_for_the_application_are_ignored() {
    let mut editor = editor_with("text");
    let ignored = [
        ctrl('c'),
        ctrl('d'),
        ctrl('o'),
        ctrl('t'),
        ctrl('p'),
        ctrl('l'),
        ctrl('g'),
        ctrl('z'),
        key(KeyCode::Esc),
        key(KeyCode::Tab),
        with(KeyCode::Enter, KeyModifiers::ALT),
        with(KeyCode::BackTab, KeyModifiers::SHIFT),
        with(KeyCode::Up, KeyModifiers::ALT),
        key(KeyCode::PageUp),
        key(KeyCode::PageDown),
        key(KeyCode::F(5)),
    ];
    for event in ignored {
        assert_eq!(editor.handle_key(&event), EditorOutcome::Ignored, "{event:?}");
    }
    assert_eq!(editor.text(), "text");
    let mut release = key(KeyCode::Char('x'));
    release.kind = KeyEventKind::Release;
    assert_eq!(editor.handle_key(&release), EditorOutcome::Ignored);
    assert_eq!(editor.text(), "text");
}

#[test]
fn set_text_insert_text_and_clear() {
    let mut editor = new_editor();
    editor.set_text("a\r\nb\tc");
    assert_eq!(editor.text(), "a\nb    c");
    assert_eq!(editor.cursor(), (1, 6));
    press(&mut editor, &[key(KeyCode::Up)]);
    editor.insert_text("X\nY");
    assert_eq!(editor.text(), "aX\nY\nb    c");
    assert_eq!(editor.cursor(), (1, 1));
    press(&mut editor, &[ctrl('-')]);
    assert_eq!(editor.text(), "a\nb    c");
    press(&mut editor, &[ctrl('-')]);
    assert!(editor.is_empty());
    editor.set_text("gone");
    editor.clear();
    assert!(editor.is_empty());
    assert_eq!(editor.display_text(), "");
    press(&mut editor, &[ctrl('-')]);
    assert!(editor.is_empty());
}

#[test]
fn altgr_characters_are_typed() {
    let mut editor = new_editor();
    let altgr = KeyModifiers::CONTROL | KeyModifiers::ALT;
    press(&mut editor, &[with(KeyCode::Char('@'), altgr), with(KeyCode::Char('€'), altgr)]);
    assert_eq!(editor.text(), "@€");
    assert_eq!(editor.handle_key(&with(KeyCode::Char('x'), altgr)), EditorOutcome::Ignored);
}
