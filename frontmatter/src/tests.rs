//! Where a frontmatter error points: the line in the whole file (the opening `---` is line 1) and the
//! column of the offending character.

use crate::{FrontmatterError, parse_frontmatter};

fn error_of(content: &str) -> FrontmatterError {
    match parse_frontmatter(content) {
        Ok(frontmatter) => panic!("expected an error for {content:?}, got {frontmatter:?}"),
        Err(error) => error,
    }
}

#[test]
fn a_colon_in_a_plain_value_points_at_the_colon() {
    let error = error_of("---\nname: review\ndescription: Review: the diff\n---\nBody\n");
    assert_eq!((error.line, error.column), (3, 20));
    assert_eq!(
        error.to_string(),
        "invalid frontmatter at line 3, column 20: a plain value cannot contain `: `; quote the value"
    );
}

#[test]
fn a_colon_on_a_continuation_line_points_at_that_line() {
    let error = error_of("---\ndescription: Review\n  the diff: carefully\n---\n");
    assert_eq!(
        (error.line, error.column, error.reason.as_str()),
        (3, 11, "a plain value cannot contain `: `; quote the value")
    );
}

#[test]
fn a_tab_in_the_indentation_points_at_the_tab() {
    let error = error_of("---\nname: a\n\tdescription: b\n---\n");
    assert_eq!((error.line, error.column), (3, 1));
    assert_eq!(error.reason, "tabs cannot indent YAML; indent with spaces");
}

#[test]
fn other_errors_point_at_the_value_or_the_line() {
    let text_after_quote = error_of("---\ndescription: \"quoted\" tail\n---\n");
    assert_eq!((text_after_quote.line, text_after_quote.column), (2, 23));
    assert_eq!(text_after_quote.reason, "unexpected text after a quoted value");
    let alias = error_of("---\nname: *anchor\n---\n");
    assert_eq!((alias.line, alias.column, alias.reason.as_str()), (2, 7, "aliases are not supported"));
    let duplicate = error_of("---\nname: a\n\nname: b\n---\n");
    assert_eq!((duplicate.line, duplicate.column, duplicate.reason.as_str()), (4, 1, "duplicate key"));
    let unterminated = error_of("---\nname: [a, b\n---\n");
    assert_eq!((unterminated.line, unterminated.column), (2, 7));
    assert_eq!(unterminated.reason, "unterminated flow collection");
}

#[test]
fn columns_count_characters_not_bytes() {
    let error = error_of("---\ndescription: Überblick: alles\n---\n");
    assert_eq!((error.line, error.column), (2, 23));
}
