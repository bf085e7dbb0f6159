//! Tests for width, wrapping and truncation of styled text.

use super::*;

#[test]
fn width_ignores_escapes_and_counts_wide_characters() {
    assert_eq!(visible_width("hello"), 5);
    assert_eq!(visible_width("\x1b[1mbold\x1b[0m"), 4);
    assert_eq!(visible_width("\x1b]8;;http://x\x07link\x1b]8;;\x07"), 4);
    assert_eq!(visible_width("日本"), 4);
    assert_eq!(visible_width("e\u{301}"), 1);
    assert_eq!(visible_width("a\tb"), 5);
}

#[test]
fn wrapping_breaks_at_words_and_carries_the_style() {
    assert_eq!(wrap_line("the quick brown fox", 10), ["the quick", "brown fox"]);
    assert_eq!(wrap_line("abcdefghijkl", 5), ["abcde", "fghij", "kl"]);
    let styled = wrap_line("\x1b[1mbold words here\x1b[0m", 10);
    assert_eq!(styled, ["\x1b[1mbold words\x1b[0m", "\x1b[1mhere\x1b[0m"]);
    for line in &styled {
        assert!(visible_width(line) <= 10);
    }
    assert_eq!(wrap_line("日本語のテキスト", 6), ["日本語", "のテキ", "スト"]);
    assert_eq!(wrap_text("a\nb c", 10), ["a", "b c"]);
}

#[test]
fn truncation_fits_the_width_with_its_ellipsis() {
    assert_eq!(truncate_to_width("hello world", 8, "..."), "hello...");
    assert_eq!(truncate_to_width("short", 8, "..."), "short");
    assert_eq!(truncate_to_width("\x1b[2mdimmed text\x1b[0m", 6, "…"), "\x1b[2mdimme\x1b[0m…");
    assert_eq!(truncate_to_width("日本語", 5, ""), "日本");
}

#[test]
fn padding_and_stripping() {
    assert_eq!(pad_to_width("ab", 4), "ab  ");
    assert_eq!(visible_width(&pad_to_width("\x1b[1mab\x1b[0m", 4)), 4);
    assert_eq!(strip_escapes("\x1b[1mab\x1b[0mc"), "abc");
}
