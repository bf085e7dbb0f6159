//! Tests of bracketed pastes (cleaning, markers, their expansion and atomic editing) and of prompt history.

use crossterm::event::KeyCode;

use super::EditorOutcome;
use super::tests_support::{alt, ctrl, editor_with, key, new_editor, press, type_text};

fn eleven_lines() -> String {
    (0..11).map(|index| format!("line {index}")).collect::<Vec<_>>().join("\n")
}

#[test]
fn pastes_are_cleaned() {
    let mut editor = new_editor();
    editor.handle_paste("a\r\nb\rc\td\x1b[31m\x07");
    assert_eq!(editor.text(), "a\nb\nc    d[31m");
    assert_eq!(editor.cursor(), (2, 10));
    press(&mut editor, &[ctrl('-')]);
    assert!(editor.is_empty());
}

#[test]
fn large_pastes_become_markers() {
    let mut editor = editor_with("a");
    editor.handle_paste(&eleven_lines());
    type_text(&mut editor, "b");
    assert_eq!(editor.display_text(), "a[paste #1 +11 lines]b");
    assert_eq!(editor.text(), format!("a{}b", eleven_lines()));
    let long_line = "x".repeat(1001);
    editor.handle_paste(&long_line);
    assert_eq!(editor.display_text(), "a[paste #1 +11 lines]b[paste #2 1001 chars]");
    // Exactly 10 lines and 1000 characters stay inline.
    let mut inline = new_editor();
    inline.handle_paste(&"y".repeat(1000));
    inline.handle_paste(&"\n".repeat(9));
    assert_eq!(inline.text().len(), 1009);
    assert!(!inline.display_text().contains("[paste"));
}

#[test]
fn a_marker_is_one_unit_for_the_cursor_and_deletion() {
    let mut editor = editor_with("a");
    editor.handle_paste(&eleven_lines());
    type_text(&mut editor, "b");
    press(&mut editor, &[key(KeyCode::Left), key(KeyCode::Left)]);
    assert_eq!(editor.cursor(), (0, 1));
    press(&mut editor, &[key(KeyCode::Right)]);
    assert_eq!(editor.cursor(), (0, 21));
    press(&mut editor, &[key(KeyCode::Backspace)]);
    assert_eq!(editor.display_text(), "ab");
    assert_eq!(editor.text(), "ab");
    press(&mut editor, &[ctrl('-')]);
    assert_eq!(editor.display_text(), "a[paste #1 +11 lines]b");
    press(&mut editor, &[key(KeyCode::Home), key(KeyCode::Right), key(KeyCode::Delete)]);
    assert_eq!(editor.display_text(), "ab");
}

#[test]
fn a_marker_is_one_word() {
    let mut editor = editor_with("say ");
    editor.handle_paste(&eleven_lines());
    type_text(&mut editor, "now");
    press(&mut editor, &[alt('b'), alt('b')]);
    assert_eq!(editor.cursor(), (0, 4));
    press(&mut editor, &[alt('f')]);
    assert_eq!(editor.cursor(), (0, 24));
    press(&mut editor, &[ctrl('w')]);
    assert_eq!(editor.text(), "say now");
}

#[test]
fn submitting_expands_markers_and_restarts_their_numbers() {
    let mut editor = new_editor();
    editor.handle_paste(&eleven_lines());
    assert_eq!(editor.handle_key(&key(KeyCode::Enter)), EditorOutcome::Submit(eleven_lines()));
    editor.handle_paste(&"z".repeat(1200));
    assert_eq!(editor.display_text(), "[paste #1 1200 chars]");
}

#[test]
fn marker_text_without_a_paste_is_plain_text() {
    let mut editor = new_editor();
    editor.set_text("[paste #1 +11 lines]");
    assert_eq!(editor.text(), "[paste #1 +11 lines]");
    press(&mut editor, &[key(KeyCode::Backspace)]);
    assert_eq!(editor.text(), "[paste #1 +11 lines");
}

#[test]
fn history_skips_empty_entries_and_repeats() {
    let mut editor = new_editor();
    for entry in ["one", "", "  ", "two", "two", "one"] {
        editor.add_to_history(entry.to_owned());
    }
    press(&mut editor, &[key(KeyCode::Up)]);
    assert_eq!(editor.text(), "one");
    press(&mut editor, &[key(KeyCode::Up)]);
    assert_eq!(editor.text(), "two");
    press(&mut editor, &[key(KeyCode::Up)]);
    assert_eq!(editor.text(), "one");
    // The oldest: Up stays there.
    press(&mut editor, &[key(KeyCode::Up)]);
    assert_eq!(editor.text(), "one");
    press(&mut editor, &[key(KeyCode::Down), key(KeyCode::Down)]);
    assert_eq!(editor.text(), "one");
    press(&mut editor, &[key(KeyCode::Down)]);
    assert!(editor.is_empty());
}

#[test]
fn history_keeps_the_hundred_newest() {
    let mut editor = new_editor();
    for index in 0..150 {
        editor.add_to_history(format!("entry {index}"));
    }
    press(&mut editor, &[key(KeyCode::Up); 200]);
    assert_eq!(editor.text(), "entry 50");
}

#[test]
fn browsing_from_the_first_line_comes_back_to_the_draft() {
    let mut editor = new_editor();
    editor.add_to_history("old\nmulti".to_owned());
    editor.add_to_history("newest".to_owned());
    type_text(&mut editor, "draft");
    press(&mut editor, &[key(KeyCode::Up)]);
    assert_eq!(editor.text(), "newest");
    press(&mut editor, &[key(KeyCode::Up)]);
    assert_eq!(editor.text(), "old\nmulti");
    assert_eq!(editor.cursor(), (1, 5));
    // Up first moves within a multi-line entry.
    press(&mut editor, &[key(KeyCode::Up)]);
    assert_eq!(editor.cursor(), (0, 3));
    press(&mut editor, &[key(KeyCode::Down), key(KeyCode::Down), key(KeyCode::Down)]);
    assert_eq!(editor.text(), "draft");
    assert_eq!(editor.cursor(), (0, 5));
}

#[test]
fn editing_a_recalled_entry_ends_browsing() {
    let mut editor = new_editor();
    editor.add_to_history("recalled".to_owned());
    press(&mut editor, &[key(KeyCode::Up)]);
    type_text(&mut editor, "!");
    press(&mut editor, &[key(KeyCode::Home), key(KeyCode::Down)]);
    assert_eq!(editor.text(), "recalled!");
    assert_eq!(editor.cursor(), (0, 9));
    // Undo goes back to before browsing began.
    press(&mut editor, &[ctrl('-'), ctrl('-')]);
    assert!(editor.is_empty());
}
