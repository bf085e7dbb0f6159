//! The streaming `read` against the implementation it replaced (decode the whole file, split it, join the
//! window, `truncate_head`): byte-identical results for generated files (empty lines, CRLF, long lines,
//! multi-byte characters, invalid UTF-8, characters cut by the end of a buffer) and every kind of offset and
//! limit, read through buffers of many sizes.

use std::io::BufReader;

use serde_json::json;

use super::read::text_result;
use super::read_scan::scan_window;
use super::truncate::{DEFAULT_MAX_BYTES, TruncatedBy, TruncationOptions, format_size, truncate_head};
use super::{ToolError, js_number};
use crate::protocol::{AgentToolResult, UserContent};

/// The previous implementation, verbatim: the whole text in memory.
fn reference(text: &str, path: &str, offset: Option<f64>, limit: Option<f64>) -> Result<AgentToolResult, ToolError> {
    let lines: Vec<&str> = text.split('\n').collect();
    let total = lines.len();
    let start = match offset {
        Some(o) if o.is_finite() && o.trunc() >= 1.0 => (o.trunc() as usize).saturating_sub(1),
        _ => 0,
    };
    if start >= total {
        let shown = offset.map(js_number).unwrap_or_default();
        return Err(ToolError::new(format!("Offset {shown} is beyond end of file ({total} lines total)")));
    }
    let end = match limit {
        Some(l) => start.saturating_add(if l.is_finite() && l > 0.0 { l.trunc() as usize } else { 0 }).min(total),
        None => total,
    };
    let selected = lines[start..end].join("\n");
    let truncation = truncate_head(&selected, TruncationOptions::default());
    let first = start + 1;
    let mut details = None;
    let output = if truncation.first_line_exceeds_limit {
        let size = format_size(lines[start].len());
        let limit_size = format_size(DEFAULT_MAX_BYTES);
        details = Some(json!({ "truncation": truncation }));
        format!(
            "[Line {first} is {size}, exceeds {limit_size} limit. Use bash: sed -n '{first}p' {path} | head -c {DEFAULT_MAX_BYTES}]"
        )
    } else if truncation.truncated {
        let last = first + truncation.output_lines - 1;
        let next = last + 1;
        let notice = match truncation.truncated_by {
            Some(TruncatedBy::Bytes) => format!(
                "[Showing lines {first}-{last} of {total} ({} limit). Use offset={next} to continue.]",
                format_size(DEFAULT_MAX_BYTES)
            ),
            _ => format!("[Showing lines {first}-{last} of {total}. Use offset={next} to continue.]"),
        };
        let body = format!("{}\n\n{notice}", truncation.content);
        details = Some(json!({ "truncation": truncation }));
        body
    } else if limit.is_some() && end < total {
        let remaining = total - end;
        format!("{}\n\n[{remaining} more lines in file. Use offset={} to continue.]", truncation.content, end + 1)
    } else {
        truncation.content
    };
    Ok(AgentToolResult { content: vec![UserContent::text(output)], details, ..AgentToolResult::default() })
}

/// The streaming pass over `bytes` through a buffer of `capacity` bytes, as `read_regular_file` runs it.
fn streamed(
    bytes: &[u8],
    capacity: usize,
    offset: Option<f64>,
    limit: Option<f64>,
) -> Result<AgentToolResult, ToolError> {
    let start = match offset {
        Some(o) if o.is_finite() && o.trunc() >= 1.0 => (o.trunc() as usize).saturating_sub(1),
        _ => 0,
    };
    let end = limit.map(|l| start.saturating_add(if l.is_finite() && l > 0.0 { l.trunc() as usize } else { 0 }));
    let mut reader = BufReader::with_capacity(capacity, bytes);
    let window = scan_window(&mut reader, start, end, TruncationOptions::default(), &|| false).unwrap();
    text_result(&window, "f.txt", offset, limit, start)
}

fn assert_same(bytes: &[u8], offset: Option<f64>, limit: Option<f64>, capacities: &[usize]) {
    let expected = reference(&String::from_utf8_lossy(bytes), "f.txt", offset, limit);
    for &capacity in capacities {
        let actual = streamed(bytes, capacity, offset, limit);
        assert!(
            actual == expected,
            "{} bytes, offset {offset:?}, limit {limit:?}, buffer {capacity}:\nstreamed {:.300}\nexpected {:.300}",
            bytes.len(),
            format!("{actual:?}"),
            format!("{expected:?}")
        );
    }
}

/// xorshift64*: reproducible inputs without a dependency.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound.max(1) as u64) as usize
    }
}

/// Pieces lines are made of: ASCII, multi-byte characters, invalid and cut sequences, a CR.
const PIECES: [&[u8]; 10] = [
    b"abc",
    b"x",
    "é".as_bytes(),
    "\u{20ac}".as_bytes(),
    "\u{1F600}".as_bytes(),
    b"\xff",
    b"\xe2\x82",
    b"\xf0\x9f\x98",
    b"\r",
    b"\xc3",
];

fn generated_file(random: &mut Random) -> Vec<u8> {
    let lines = match random.below(4) {
        0 => random.below(5),
        1 => random.below(60),
        2 => 1990 + random.below(30),
        _ => random.below(3000),
    };
    let mut bytes = Vec::new();
    for index in 0..lines {
        if index > 0 {
            bytes.push(b'\n');
        }
        let length = match random.below(40) {
            0 => 0,
            // A few lines around the byte limit, at most about three per file.
            1 if bytes.len() < 2 * DEFAULT_MAX_BYTES => DEFAULT_MAX_BYTES - 40 + random.below(80),
            2 => random.below(3000),
            _ => random.below(40),
        };
        let start = bytes.len();
        while bytes.len() - start < length {
            bytes.extend_from_slice(PIECES[random.below(PIECES.len())]);
        }
    }
    if random.below(2) == 0 {
        bytes.push(b'\n');
    }
    bytes
}

fn offsets_and_limits(random: &mut Random, lines: usize) -> Vec<(Option<f64>, Option<f64>)> {
    let line = |random: &mut Random| Some((random.below(lines + 3)) as f64);
    vec![
        (None, None),
        (Some(0.0), None),
        (Some(1.0), Some(1.0)),
        (line(random), None),
        (line(random), line(random)),
        (None, Some(0.0)),
        (Some(lines as f64), None),
        (Some(lines as f64 + 1.0), None),
        (Some(2.7), Some(-3.0)),
        (Some(f64::NAN), Some(f64::INFINITY)),
        (Some(-5.0), Some(2000.0)),
        (line(random), Some(1e300)),
    ]
}

#[test]
fn generated_files_read_the_same_as_with_the_whole_text_in_memory() {
    let mut random = Random(0x9E37_79B9_7F4A_7C15);
    for _ in 0..30 {
        let bytes = generated_file(&mut random);
        let lines = bytes.iter().filter(|byte| **byte == b'\n').count() + 1;
        let capacities: &[usize] = if bytes.len() < 4000 { &[1, 2, 3, 5, 64] } else { &[4093, 65536] };
        for (offset, limit) in offsets_and_limits(&mut random, lines) {
            assert_same(&bytes, offset, limit, capacities);
        }
    }
}

#[test]
fn edge_cases_read_the_same_as_with_the_whole_text_in_memory() {
    let long = "q".repeat(DEFAULT_MAX_BYTES + 1);
    let just_fits = "w".repeat(DEFAULT_MAX_BYTES);
    let cases: Vec<Vec<u8>> = vec![
        Vec::new(),
        b"\n".to_vec(),
        b"\n\n\n".to_vec(),
        b"no newline at the end".to_vec(),
        b"crlf\r\nlines\r\n".to_vec(),
        b"cut \xe2\x82\nafter".to_vec(),
        b"\xe2\x82".to_vec(),
        long.clone().into_bytes(),
        format!("short\n{long}\nafter").into_bytes(),
        just_fits.clone().into_bytes(),
        format!("{just_fits}\n").into_bytes(),
        format!("a\n{just_fits}").into_bytes(),
        // Invalid bytes grow by the lossy decoding: 20,000 bytes become 60,000.
        vec![0xFF; 20_000],
        [b"ok\n".as_slice(), &[0xFF; 20_000]].concat(),
        (1..=2001).map(|i| format!("{i}")).collect::<Vec<_>>().join("\n").into_bytes(),
        (1..=2000).map(|i| format!("{i}")).collect::<Vec<_>>().join("\n").into_bytes(),
        vec![b'\n'; 2000],
        vec![b'\n'; 2001],
    ];
    for bytes in &cases {
        let lines = bytes.iter().filter(|byte| **byte == b'\n').count() + 1;
        for offset in [None, Some(1.0), Some(2.0), Some(lines as f64), Some(lines as f64 + 1.0)] {
            for limit in [None, Some(0.0), Some(1.0), Some(2000.0), Some(2001.0)] {
                let capacities: &[usize] = if bytes.len() < 4096 { &[1, 3, 4096] } else { &[3, 65536] };
                assert_same(bytes, offset, limit, capacities);
            }
        }
    }
}

#[test]
fn a_cancelled_pass_stops_with_interrupted() {
    let bytes = vec![b'a'; 10_000];
    let mut reader = BufReader::with_capacity(16, bytes.as_slice());
    let error = scan_window(&mut reader, 0, None, TruncationOptions::default(), &|| true).unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::Interrupted);
}
