//! Tests of the cursor motions: graphemes, words, lines, visual rows and jumps to a character.

use crossterm::event::{KeyCode, KeyModifiers};

use super::EditorOutcome;
use super::tests_support::{alt, ctrl, editor_with, key, press, type_text, with};

#[test]
fn left_and_right_cross_lines() {
    let mut editor = editor_with("ab\ncd");
    press(&mut editor, &[key(KeyCode::Home), key(KeyCode::Left)]);
    assert_eq!(editor.cursor(), (0, 2));
    press(&mut editor, &[ctrl('b'), ctrl('b'), ctrl('b')]);
    assert_eq!(editor.cursor(), (0, 0));
    press(&mut editor, &[key(KeyCode::Right), key(KeyCode::Right), ctrl('f')]);
    assert_eq!(editor.cursor(), (1, 0));
    press(&mut editor, &[key(KeyCode::End), key(KeyCode::Right)]);
    assert_eq!(editor.cursor(), (1, 2));
}

#[test]
fn the_cursor_steps_over_graphemes() {
    let mut editor = editor_with("e\u{301}日👍🏽x");
    press(&mut editor, &[key(KeyCode::Home), key(KeyCode::Right)]);
    assert_eq!(editor.cursor(), (0, 3));
    press(&mut editor, &[key(KeyCode::Right)]);
    assert_eq!(editor.cursor(), (0, 6));
    press(&mut editor, &[key(KeyCode::Right)]);
    assert_eq!(editor.cursor(), (0, 14));
    press(&mut editor, &[key(KeyCode::Left), key(KeyCode::Delete)]);
    assert_eq!(editor.text(), "e\u{301}日x");
}

#[test]
fn home_and_end() {
    let mut editor = editor_with("one two\nthree");
    press(&mut editor, &[key(KeyCode::Home)]);
    assert_eq!(editor.cursor(), (1, 0));
    press(&mut editor, &[ctrl('e')]);
    assert_eq!(editor.cursor(), (1, 5));
    press(&mut editor, &[ctrl('a')]);
    assert_eq!(editor.cursor(), (1, 0));
    press(&mut editor, &[key(KeyCode::Up), key(KeyCode::End)]);
    assert_eq!(editor.cursor(), (0, 7));
}

#[test]
fn word_motions() {
    let mut editor = editor_with("foo.bar  baz\nnext");
    press(&mut editor, &[key(KeyCode::Up), key(KeyCode::End)]);
    press(&mut editor, &[with(KeyCode::Left, KeyModifiers::ALT)]);
    assert_eq!(editor.cursor(), (0, 9));
    press(&mut editor, &[with(KeyCode::Left, KeyModifiers::CONTROL)]);
    assert_eq!(editor.cursor(), (0, 4));
    press(&mut editor, &[alt('b')]);
    assert_eq!(editor.cursor(), (0, 3));
    press(&mut editor, &[alt('b')]);
    assert_eq!(editor.cursor(), (0, 0));
    press(&mut editor, &[alt('f')]);
    assert_eq!(editor.cursor(), (0, 3));
    press(&mut editor, &[with(KeyCode::Right, KeyModifiers::ALT), with(KeyCode::Right, KeyModifiers::CONTROL)]);
    assert_eq!(editor.cursor(), (0, 7));
    press(&mut editor, &[alt('f'), alt('f')]);
    assert_eq!(editor.cursor(), (1, 0));
    press(&mut editor, &[alt('b')]);
    assert_eq!(editor.cursor(), (0, 12));
}

#[test]
fn up_and_down_keep_the_column() {
    let mut editor = editor_with("long line here\nab\nanother long one");
    press(&mut editor, &[key(KeyCode::Home)]);
    press(&mut editor, &[key(KeyCode::Right); 10]);
    press(&mut editor, &[key(KeyCode::Up)]);
    assert_eq!(editor.cursor(), (1, 2));
    press(&mut editor, &[key(KeyCode::Up)]);
    assert_eq!(editor.cursor(), (0, 10));
    press(&mut editor, &[key(KeyCode::Down), key(KeyCode::Down)]);
    assert_eq!(editor.cursor(), (2, 10));
    // Down on the last line goes to its end when not browsing history.
    press(&mut editor, &[key(KeyCode::Down)]);
    assert_eq!(editor.cursor(), (2, 16));
}

#[test]
fn up_and_down_keep_the_column_in_cells() {
    let mut editor = editor_with("日本語です\nabcdefgh");
    press(&mut editor, &[key(KeyCode::Home), key(KeyCode::Right), key(KeyCode::Right), key(KeyCode::Right)]);
    press(&mut editor, &[key(KeyCode::Right), key(KeyCode::Up)]);
    // Column 4 is after the second wide character.
    assert_eq!(editor.cursor(), (0, 6));
}

#[test]
fn up_and_down_move_over_wrapped_rows() {
    let mut editor = editor_with("aaaa bbbb cccc");
    // Width 8 wraps at 7 columns: "aaaa " / "bbbb " / "cccc".
    editor.render(8);
    press(&mut editor, &[key(KeyCode::Home), key(KeyCode::Right), key(KeyCode::Right)]);
    press(&mut editor, &[key(KeyCode::Down)]);
    assert_eq!(editor.cursor(), (0, 7));
    press(&mut editor, &[key(KeyCode::Down)]);
    assert_eq!(editor.cursor(), (0, 12));
    press(&mut editor, &[key(KeyCode::Up), key(KeyCode::Up)]);
    assert_eq!(editor.cursor(), (0, 2));
    // Up on the top row with no history goes to the line's start.
    press(&mut editor, &[key(KeyCode::Up)]);
    assert_eq!(editor.cursor(), (0, 0));
}

#[test]
fn jump_to_a_character_forward_and_backward() {
    let mut editor = editor_with("a-b-c\nd-e");
    press(&mut editor, &[key(KeyCode::Up), key(KeyCode::Home)]);
    assert_eq!(press(&mut editor, &[ctrl(']'), key(KeyCode::Char('-'))]), EditorOutcome::Handled);
    assert_eq!(editor.cursor(), (0, 1));
    press(&mut editor, &[ctrl(']'), key(KeyCode::Char('-'))]);
    assert_eq!(editor.cursor(), (0, 3));
    // Legacy terminals send Ctrl+] as Ctrl+5; the search goes on over lines.
    press(&mut editor, &[ctrl('5'), key(KeyCode::Char('-'))]);
    assert_eq!(editor.cursor(), (1, 1));
    let ctrl_alt = KeyModifiers::CONTROL | KeyModifiers::ALT;
    press(&mut editor, &[with(KeyCode::Char(']'), ctrl_alt), key(KeyCode::Char('a'))]);
    assert_eq!(editor.cursor(), (0, 0));
    // No match: the cursor stays and the character is not typed.
    press(&mut editor, &[ctrl(']'), key(KeyCode::Char('z'))]);
    assert_eq!(editor.cursor(), (0, 0));
    assert_eq!(editor.text(), "a-b-c\nd-e");
}

#[test]
fn a_jump_is_cancelled_by_its_key_or_another_command() {
    let mut editor = editor_with("abc");
    press(&mut editor, &[key(KeyCode::Home), ctrl(']'), ctrl(']')]);
    type_text(&mut editor, "c");
    assert_eq!(editor.text(), "cabc");
    press(&mut editor, &[ctrl(']'), key(KeyCode::End)]);
    assert_eq!(editor.cursor(), (0, 4));
    type_text(&mut editor, "a");
    assert_eq!(editor.text(), "cabca");
}
