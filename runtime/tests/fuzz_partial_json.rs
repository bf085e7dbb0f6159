//! Property tests of the streaming tool-argument parser (`parse_streaming_json`): every prefix of valid
//! JSON reads without a panic, the whole text reads exactly as serde_json reads it, garbage never panics, and
//! reading piece by piece (`StreamingArguments`) always agrees with reading the whole text. Bounded for CI; `scripts/fuzz` runs more cases.

mod fuzz_support;

use fuzz_support::{config, json_object, json_value, within};
use pi_runtime::ai::parse_streaming_json;
use pi_runtime::ai::streaming_arguments::StreamingArguments;
use proptest::prelude::*;
use serde_json::Value;

/// Parses every prefix (at char boundaries) of `text` on a guarded thread; returns the results.
fn parse_prefixes(text: String) -> Vec<(usize, Value)> {
    let shown = text.clone();
    within(
        move || shown,
        move || {
            text.char_indices()
                .map(|(at, _)| at)
                .chain([text.len()])
                .map(|at| (at, parse_streaming_json(&text[..at])))
                .collect()
        },
    )
}

fn parse_guarded(text: String) -> Value {
    let shown = text.clone();
    within(move || shown, move || parse_streaming_json(&text))
}

proptest! {
    #![proptest_config(config(128))]

    #[test]
    fn every_prefix_of_an_object_reads_as_an_object(value in json_object(), pretty in any::<bool>()) {
        let text = if pretty { serde_json::to_string_pretty(&value) } else { serde_json::to_string(&value) }
            .expect("serialize");
        let results = parse_prefixes(text.clone());
        for (at, partial) in &results {
            prop_assert!(partial.is_object(), "prefix {:?} read as {partial}", &text[..*at]);
        }
        let (_, whole) = results.last().expect("the whole text is one of the prefixes");
        prop_assert_eq!(whole, &value);
    }

    #[test]
    fn every_prefix_of_any_value_reads_without_panicking(value in json_value(), pretty in any::<bool>()) {
        let text = if pretty { serde_json::to_string_pretty(&value) } else { serde_json::to_string(&value) }
            .expect("serialize");
        let results = parse_prefixes(text.clone());
        let strict: Value = serde_json::from_str(&text).expect("serde_json reads its own output");
        let (_, whole) = results.last().expect("the whole text is one of the prefixes");
        prop_assert_eq!(whole, &strict);
    }

    /// Valid JSON with spacing and escapes serde_json never writes (`\u00e9`, `\/`, surrogate pairs).
    #[test]
    fn hand_written_json_reads_like_serde_json(text in hand_written_json()) {
        let results = parse_prefixes(text.clone());
        if let Ok(strict) = serde_json::from_str::<Value>(&text) {
            let (_, whole) = results.last().expect("the whole text is one of the prefixes");
            prop_assert_eq!(whole, &strict);
        }
    }

    /// Arguments fed in random pieces read, after every piece, exactly as the whole text so far does.
    #[test]
    fn arguments_read_piece_by_piece_match_the_whole_text(
        text in prop_oneof![
            json_value().prop_map(|value| serde_json::to_string(&value).expect("serialize")),
            hand_written_json(),
            json_like_garbage(),
        ],
        sizes in prop::collection::vec(1_usize..12, 1..40),
    ) {
        let mut arguments = StreamingArguments::new();
        let (mut start, mut step) = (0, 0);
        while start < text.len() {
            let mut end = (start + sizes[step % sizes.len()]).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            let read = arguments.push(&text[start..end]).clone();
            prop_assert_eq!(read, parse_streaming_json(&text[..end]), "after {:?}", &text[..end]);
            start = end;
            step += 1;
        }
    }

    #[test]
    fn garbage_never_panics(text in any::<String>()) {
        parse_guarded(text);
    }

    #[test]
    fn json_like_garbage_never_panics(text in json_like_garbage()) {
        parse_guarded(text);
    }
}

/// JSON text with escapes and spacing of every kind, sometimes not quite valid.
fn hand_written_json() -> impl Strategy<Value = String> {
    let token = prop::sample::select(vec![
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        " \n\t\r",
        "\"k\"",
        "\"\\u00e9\\/\\b\\f\\n\\r\\t\\\\\\\"\"",
        "\"\\ud83d\\ude00\"",
        "-12.5e+3",
        "0",
        "true",
        "null",
    ]);
    prop::collection::vec(token, 0..24).prop_map(|tokens| tokens.concat())
}

/// Garbage made of JSON's own pieces, including escapes cut short and lone surrogates.
fn json_like_garbage() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        prop::sample::select(vec![
            "{", "}", "[", "]", ",", ":", "\"", "\\", "\\u", "\\ud800", "\\udc00", "\\uD83D", "\\uZZZZ", "\\x", "1e",
            "-", ".", "tru", "nul", "é", "😀"
        ])
        .prop_map(str::to_owned),
        "[0-9a-fA-F]{1,4}",
        "[ -~]{1,3}",
    ];
    prop::collection::vec(token, 0..24).prop_map(|tokens| tokens.concat())
}

/// A `\uXXXX` high surrogate followed by an escape that is not a low surrogate, in an unfinished
/// string: once an overflow in the code point arithmetic (a panic in debug builds); now the lone half
/// reads as U+FFFD and the escape after it as itself.
#[test]
fn a_high_surrogate_followed_by_a_non_low_surrogate_does_not_overflow() {
    let value = parse_guarded(r#"{"t": "\ud800\u0041"#.to_owned());
    assert!(value.get("t").is_some_and(Value::is_string), "{value}");
}

/// Deeply nested unfinished JSON (a model streaming `[[[[…`): serde_json stops at its recursion limit, and
/// the prefix reader stops at the same depth instead of recursing until the stack overflows.
#[test]
fn deeply_nested_unfinished_json_does_not_overflow_the_stack() {
    let value = parse_guarded("[".repeat(100_000));
    assert!(value.is_array() || value.is_object(), "{value}");
}
