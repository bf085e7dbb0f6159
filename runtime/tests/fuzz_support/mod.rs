//! What the property tests (`fuzz_*.rs`) share: a bounded proptest configuration and a guard that turns a
//! hang into a failure.
//!
//! The number of cases is small by default so `cargo test --workspace` stays quick; `PROPTEST_CASES`
//! raises it (`scripts/fuzz` runs them for longer in release mode).

#![allow(dead_code)]

use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use proptest::sample::Index;
use proptest::test_runner::Config;

/// How long one case may run before it counts as a hang (generous: debug builds on a busy 2-core machine).
pub const CASE_LIMIT: Duration = Duration::from_secs(20);

/// `default_cases` cases (or `PROPTEST_CASES` when set), no failure-persistence files, bounded shrinking.
pub fn config(default_cases: u32) -> Config {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|value| value.parse().ok()).unwrap_or(default_cases);
    Config { cases, failure_persistence: None, max_shrink_iters: 2_000, max_shrink_time: 60_000, ..Config::default() }
}

/// Runs `work` on its own thread and returns its result; a panic in it is re-raised here. When it runs
/// longer than [`CASE_LIMIT`], the input (`describe()`) is printed and the process aborts: a hang cannot
/// be shrunk, and every further hanging case would leave another thread spinning.
pub fn within<T: Send + 'static>(describe: impl FnOnce() -> String, work: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::Builder::new()
        .name("fuzz-case".into())
        .spawn(move || {
            let _ = tx.send(work());
        })
        .expect("spawn the case thread");
    match rx.recv_timeout(CASE_LIMIT) {
        Ok(value) => {
            let _ = handle.join();
            value
        }
        Err(RecvTimeoutError::Disconnected) => match handle.join() {
            Err(payload) => std::panic::resume_unwind(payload),
            Ok(()) => panic!("the case thread ended without a result"),
        },
        Err(RecvTimeoutError::Timeout) => {
            eprintln!("HANG: a case ran longer than {CASE_LIMIT:?}; its input:\n{}", describe());
            std::process::abort();
        }
    }
}

/// Cuts `bytes` at `cuts` (any byte offsets, in any order; out-of-range ones are clamped), keeping empty
/// pieces, as a socket may deliver a body.
pub fn split_at_offsets(bytes: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut cuts: Vec<usize> = cuts.iter().map(|cut| (*cut).min(bytes.len())).collect();
    cuts.sort_unstable();
    let mut chunks = Vec::with_capacity(cuts.len() + 1);
    let mut start = 0;
    for cut in cuts {
        chunks.push(bytes[start..cut].to_vec());
        start = cut;
    }
    chunks.push(bytes[start..].to_vec());
    chunks
}

/// Offsets where a cut is most likely to hurt: inside a multi-byte UTF-8 character and between `\r` and `\n`.
pub fn awkward_offsets(bytes: &[u8]) -> Vec<usize> {
    (1..bytes.len())
        .filter(|&at| (bytes[at] & 0xC0) == 0x80 || (bytes[at - 1] == b'\r' && bytes[at] == b'\n'))
        .collect()
}

/// Text that stresses encoders: ASCII, JSON and SSE metacharacters, line breaks, and 2-, 3- and 4-byte
/// characters (plus, now and then, any `char` at all).
pub fn tricky_text(max: usize) -> proptest::strategy::BoxedStrategy<String> {
    use proptest::prelude::*;
    let piece = prop_oneof![
        6 => "[ -~]{1,6}",
        2 => prop::sample::select(vec![
            "\n", "\r\n", "\r", "\t", "\\", "\"", "\u{0}", "data: ", "event: x", "\n\n", "[DONE]", "{", "}", ":",
            "é", "ü", "—", "日本語", "😀", "🧑‍💻", "\u{feff}", "\u{2028}", "\u{fffd}", "\u{85}",
        ])
        .prop_map(str::to_owned),
        1 => any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..max).prop_map(|pieces| pieces.concat()).boxed()
}

/// A JSON number that survives a trip through text exactly (integers, and decimals with few digits).
pub fn json_number() -> proptest::strategy::BoxedStrategy<serde_json::Value> {
    use proptest::prelude::*;
    prop_oneof![
        any::<i64>().prop_map(serde_json::Value::from),
        any::<u64>().prop_map(serde_json::Value::from),
        (any::<i32>(), 1u32..4).prop_map(|(mantissa, places)| {
            serde_json::Value::from(f64::from(mantissa) / 10f64.powi(places as i32))
        }),
    ]
    .boxed()
}

/// Any JSON value, a few levels deep.
pub fn json_value() -> proptest::strategy::BoxedStrategy<serde_json::Value> {
    use proptest::prelude::*;
    use serde_json::Value;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        json_number(),
        tricky_text(6).prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 40, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((tricky_text(3), inner), 0..5)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
    .boxed()
}

/// A JSON object (what tool-call arguments are).
pub fn json_object() -> proptest::strategy::BoxedStrategy<serde_json::Value> {
    use proptest::prelude::*;
    prop::collection::vec(("[a-z_]{1,8}", json_value()), 0..5)
        .prop_map(|pairs| serde_json::Value::Object(pairs.into_iter().collect()))
        .boxed()
}

/// One change to a body's bytes (for `byte_mutation`).
#[derive(Debug, Clone)]
pub enum ByteMutation {
    Set(Index, u8),
    Insert(Index, Vec<u8>),
    Delete(Index, usize),
    Repeat(Index, usize),
}

impl ByteMutation {
    pub fn apply(&self, body: &mut Vec<u8>) {
        match self {
            Self::Set(at, byte) if !body.is_empty() => {
                let at = at.index(body.len());
                body[at] = *byte;
            }
            Self::Set(..) => {}
            Self::Insert(at, bytes) => {
                let at = at.index(body.len() + 1);
                body.splice(at..at, bytes.iter().copied());
            }
            Self::Delete(at, len) => {
                let at = at.index(body.len() + 1);
                let end = (at + len).min(body.len());
                body.drain(at..end);
            }
            Self::Repeat(at, len) => {
                let at = at.index(body.len() + 1);
                let end = (at + len).min(body.len());
                let copy = body[at..end].to_vec();
                body.splice(end..end, copy);
            }
        }
    }
}

/// Random changes to a body: bytes set, inserted (SSE syntax among them), deleted or repeated.
pub fn byte_mutation() -> impl proptest::strategy::Strategy<Value = ByteMutation> {
    use proptest::prelude::*;
    let inserted = prop_oneof![
        prop::collection::vec(any::<u8>(), 1..8),
        prop::sample::select(vec![
            "\n",
            "\r",
            "\r\n",
            "\n\n",
            "data: ",
            "event: error\n",
            ":\n",
            "data: [DONE]\n\n",
            "\u{feff}",
            "\"",
            "}",
            "\\",
            "é",
            "😀",
        ])
        .prop_map(|text| text.as_bytes().to_vec()),
    ];
    prop_oneof![
        (any::<Index>(), any::<u8>()).prop_map(|(at, byte)| ByteMutation::Set(at, byte)),
        (any::<Index>(), inserted).prop_map(|(at, bytes)| ByteMutation::Insert(at, bytes)),
        (any::<Index>(), 1usize..64).prop_map(|(at, len)| ByteMutation::Delete(at, len)),
        (any::<Index>(), 1usize..200).prop_map(|(at, len)| ByteMutation::Repeat(at, len)),
    ]
}

/// `seed` with each edit replacing up to `longest` characters (or none) at some char position by its piece.
pub fn apply_edits(seed: &str, edits: &[(Index, Index, String)], longest: usize) -> String {
    let mut chars: Vec<char> = seed.chars().collect();
    for (at, len, piece) in edits {
        let start = at.index(chars.len() + 1);
        let end = (start + len.index(longest + 1)).min(chars.len());
        chars.splice(start..end, piece.chars());
    }
    chars.into_iter().collect()
}
