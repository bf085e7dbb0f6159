//! Tests for truncation: head and tail, by lines and by bytes, and pi's size formatting.

use super::truncate::{
    DEFAULT_MAX_BYTES, TruncatedBy, TruncationOptions, format_size, truncate_head, truncate_line, truncate_tail,
};

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}")).collect::<Vec<_>>().join("\n")
}

#[test]
fn head_within_limits_is_untouched() {
    let t = truncate_head("a\nb\n", TruncationOptions::default());
    assert!(!t.truncated);
    assert_eq!(t.truncated_by, None);
    assert_eq!(t.content, "a\nb\n");
    assert_eq!(t.total_lines, 3);
    assert_eq!(t.output_lines, 3);
}

#[test]
fn head_cuts_by_lines() {
    let t = truncate_head(&numbered(2500), TruncationOptions::default());
    assert!(t.truncated);
    assert_eq!(t.truncated_by, Some(TruncatedBy::Lines));
    assert_eq!(t.total_lines, 2500);
    assert_eq!(t.output_lines, 2000);
    assert!(t.content.ends_with("line 2000"));
    assert!(!t.content.contains("line 2001"));
}

#[test]
fn head_cuts_by_bytes_on_whole_lines() {
    let line = "x".repeat(1000);
    let content = vec![line.as_str(); 100].join("\n");
    let t = truncate_head(&content, TruncationOptions::default());
    assert_eq!(t.truncated_by, Some(TruncatedBy::Bytes));
    assert_eq!(t.output_lines, 51);
    assert_eq!(t.output_bytes, 51_050);
    assert_eq!(t.content.len(), 51_050);
    assert_eq!(t.total_bytes, 100 * 1000 + 99);
}

#[test]
fn head_first_line_over_limit_keeps_nothing() {
    let t = truncate_head(&format!("{}\nshort", "y".repeat(60_000)), TruncationOptions::default());
    assert!(t.first_line_exceeds_limit);
    assert_eq!(t.content, "");
    assert_eq!(t.output_lines, 0);
    assert_eq!(t.truncated_by, Some(TruncatedBy::Bytes));
}

#[test]
fn tail_cuts_by_lines_keeping_the_end() {
    let t = truncate_tail(&numbered(2500), TruncationOptions::default());
    assert_eq!(t.truncated_by, Some(TruncatedBy::Lines));
    assert_eq!(t.output_lines, 2000);
    assert!(t.content.starts_with("line 501\n"));
    assert!(t.content.ends_with("line 2500"));
}

#[test]
fn tail_keeps_a_partial_last_line_of_exactly_the_byte_limit() {
    let t = truncate_tail(&format!("a\n{}", "z".repeat(60_000)), TruncationOptions::default());
    assert!(t.last_line_partial);
    assert_eq!(t.content.len(), DEFAULT_MAX_BYTES);
    assert_eq!(t.output_lines, 1);
    assert_eq!(t.truncated_by, Some(TruncatedBy::Bytes));
}

#[test]
fn tail_partial_line_starts_on_a_char_boundary() {
    // 3-byte characters: 51200 is not a multiple of 3, so the cut must move forward to a boundary.
    let t = truncate_tail(&"€".repeat(20_000), TruncationOptions::default());
    assert!(t.last_line_partial);
    assert!(t.content.len() <= DEFAULT_MAX_BYTES);
    assert_eq!(t.content.len() % 3, 0);
    assert!(t.content.chars().all(|c| c == '€'));
}

#[test]
fn tail_cuts_by_bytes_on_whole_lines() {
    let line = "x".repeat(1000);
    let content = vec![line.as_str(); 100].join("\n");
    let t = truncate_tail(&content, TruncationOptions { max_lines: 2000, max_bytes: 5000 });
    assert_eq!(t.truncated_by, Some(TruncatedBy::Bytes));
    assert_eq!(t.output_lines, 4);
    assert_eq!(t.output_bytes, 4003);
    assert!(!t.last_line_partial);
}

#[test]
fn format_size_matches_pi() {
    assert_eq!(format_size(512), "512B");
    assert_eq!(format_size(DEFAULT_MAX_BYTES), "50.0KB");
    assert_eq!(format_size(60_000), "58.6KB");
    assert_eq!(format_size(1024 * 1024 * 3 / 2), "1.5MB");
}

#[test]
fn serializes_with_pi_field_names() {
    let t = truncate_head(&numbered(2500), TruncationOptions::default());
    let v = serde_json::to_value(&t).unwrap();
    assert_eq!(v["truncatedBy"], "lines");
    assert_eq!(v["totalLines"], 2500);
    assert_eq!(v["outputLines"], 2000);
    assert_eq!(v["firstLineExceedsLimit"], false);
    assert_eq!(v["maxBytes"], 51_200);
    let untouched = serde_json::to_value(truncate_head("x", TruncationOptions::default())).unwrap();
    assert!(untouched["truncatedBy"].is_null());
}

#[test]
fn truncate_line_adds_marker() {
    assert_eq!(truncate_line("abc", 5), ("abc".to_owned(), false));
    assert_eq!(truncate_line("abcdef", 3), ("abc... [truncated]".to_owned(), true));
}
