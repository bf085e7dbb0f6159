//! Render snapshots at widths 40 and 10 (escapes stripped), and the styling the snapshots cannot show: the
//! reverse-video cursor and the border colour.

use crossterm::event::KeyCode;

use super::tests_support::{StubProvider, editor_with, key, new_editor, press, render_plain, type_text};
use crate::text::visible_width;
use crate::theme::{ColorDepth, Role, Theme};

#[test]
fn empty_editor() {
    let mut editor = new_editor();
    insta::assert_snapshot!("empty_40", render_plain(&mut editor, 40));
    insta::assert_snapshot!("empty_10", render_plain(&mut editor, 10));
}

#[test]
fn wrapped_prose_with_an_empty_line() {
    let mut editor = editor_with("The quick brown fox jumps over the lazy dog, twice.\n\nEnd");
    press(&mut editor, &[key(KeyCode::Up), key(KeyCode::Up)]);
    insta::assert_snapshot!("prose_40", render_plain(&mut editor, 40));
    insta::assert_snapshot!("prose_10", render_plain(&mut editor, 10));
}

#[test]
fn wide_characters_and_emoji() {
    let mut editor = editor_with("日本語のテキストと絵文字👍🏽🎉です\nmixed 漢字 text");
    insta::assert_snapshot!("wide_40", render_plain(&mut editor, 40));
    insta::assert_snapshot!("wide_10", render_plain(&mut editor, 10));
}

#[test]
fn a_long_word_is_broken() {
    let mut editor = editor_with("https://example.com/a/very/long/path/that/never/ends");
    press(&mut editor, &[key(KeyCode::Home)]);
    insta::assert_snapshot!("long_word_40", render_plain(&mut editor, 40));
    insta::assert_snapshot!("long_word_10", render_plain(&mut editor, 10));
}

#[test]
fn scrolling_keeps_the_cursor_in_view() {
    let mut editor = editor_with("1\n2\n3\n4\n5\n6\n7\n8");
    editor.set_max_rows(3);
    insta::assert_snapshot!("scrolled_to_end_40", render_plain(&mut editor, 40));
    press(&mut editor, &[key(KeyCode::Up); 4]);
    insta::assert_snapshot!("scrolled_middle_40", render_plain(&mut editor, 40));
    insta::assert_snapshot!("scrolled_middle_10", render_plain(&mut editor, 10));
}

#[test]
fn paste_marker_in_the_text() {
    let mut editor = editor_with("see ");
    editor.handle_paste(&"data\n".repeat(20));
    type_text(&mut editor, " please");
    insta::assert_snapshot!("marker_40", render_plain(&mut editor, 40));
    insta::assert_snapshot!("marker_10", render_plain(&mut editor, 10));
}

#[test]
fn the_suggestion_list_below_the_rule() {
    let mut editor = new_editor();
    editor.set_autocomplete(Box::new(StubProvider::standard()));
    type_text(&mut editor, "/");
    press(&mut editor, &[key(KeyCode::Down)]);
    insta::assert_snapshot!("suggestions_40", render_plain(&mut editor, 40));
    insta::assert_snapshot!("suggestions_10", render_plain(&mut editor, 10));
}

#[test]
fn the_cursor_is_reverse_video_and_the_rules_take_the_border_colour() {
    let mut editor = editor_with("ab");
    press(&mut editor, &[key(KeyCode::Left)]);
    let lines = editor.render(20);
    assert_eq!(lines[1], "a\x1b[7mb\x1b[27m");
    press(&mut editor, &[key(KeyCode::End)]);
    assert_eq!(editor.render(20)[1], "ab\x1b[7m \x1b[27m");
    let mut colored = super::Editor::new(Theme::dark(ColorDepth::TrueColor));
    let default_rule = colored.render(10)[0].clone();
    assert_eq!(default_rule, Theme::dark(ColorDepth::TrueColor).fg(Role::Border, &"─".repeat(10)));
    colored.set_border_color(Role::Warning);
    let lines = colored.render(10);
    let warning_rule = Theme::dark(ColorDepth::TrueColor).fg(Role::Warning, &"─".repeat(10));
    assert_eq!(lines[0], warning_rule);
    assert_eq!(lines[2], warning_rule);
}

#[test]
fn every_width_fits() {
    let mut editor = editor_with("日本語 text👍🏽 with\nlines and a\u{301}ccents");
    editor.handle_paste(&"x".repeat(1500));
    editor.set_autocomplete(Box::new(StubProvider::standard()));
    type_text(&mut editor, " @");
    for width in 0..60 {
        for line in editor.render(width) {
            assert!(visible_width(&line) <= width, "{line:?} at {width}");
        }
    }
    assert!(editor.render(0).is_empty());
}

#[test]
fn rows_break_after_spaces_and_keep_room_for_the_cursor() {
    let wrap_rows = |line: &str, width: usize| -> Vec<(usize, usize)> {
        super::layout::wrap_rows(line, width).into_iter().map(|range| (range.start, range.end)).collect()
    };
    assert_eq!(wrap_rows("", 5), [(0, 0)]);
    assert_eq!(wrap_rows("abc d", 5), [(0, 5)]);
    assert_eq!(wrap_rows("abc de", 5), [(0, 4), (4, 6)]);
    // The space that overflows hangs at the row's end instead of starting the next row.
    assert_eq!(wrap_rows("abcde fg", 5), [(0, 6), (6, 8)]);
    assert_eq!(wrap_rows("ab cdef", 5), [(0, 3), (3, 7)]);
    assert_eq!(wrap_rows("abcdefgh", 3), [(0, 3), (3, 6), (6, 8)]);
    assert_eq!(wrap_rows("日本語", 3), [(0, 3), (3, 6), (6, 9)]);
    // A grapheme wider than the row: the end of the line gets a row of its own for the cursor.
    assert_eq!(wrap_rows("日", 1), [(0, 3), (3, 3)]);
}
