//! Output truncation shared by the tools: keep the head (read) or the tail (bash) within a line and byte budget.
//!
//! Lines are what `str::split('\n')` yields, so a trailing newline counts as one more (empty) line, and each
//! newline between kept lines counts as one byte, as in pi.

use serde::Serialize;

/// Most lines a tool returns.
pub const DEFAULT_MAX_LINES: usize = 2000;
/// Most bytes a tool returns (50 KB).
pub const DEFAULT_MAX_BYTES: usize = 50 * 1024;
/// Longest grep match line, in characters.
pub const GREP_MAX_LINE_LENGTH: usize = 500;

/// Which limit cut the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TruncatedBy {
    Lines,
    Bytes,
}

/// Limits for one truncation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TruncationOptions {
    pub max_lines: usize,
    pub max_bytes: usize,
}

impl Default for TruncationOptions {
    fn default() -> Self {
        Self { max_lines: DEFAULT_MAX_LINES, max_bytes: DEFAULT_MAX_BYTES }
    }
}

/// The kept text plus what was cut; serialized with pi's field names for tool `details`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TruncationResult {
    pub content: String,
    pub truncated: bool,
    pub truncated_by: Option<TruncatedBy>,
    pub total_lines: usize,
    pub total_bytes: usize,
    pub output_lines: usize,
    pub output_bytes: usize,
    /// Tail truncation kept only the end of an over-long last line.
    pub last_line_partial: bool,
    /// Head truncation found the first line alone over the byte limit and kept nothing.
    pub first_line_exceeds_limit: bool,
    pub max_lines: usize,
    pub max_bytes: usize,
}

impl TruncationResult {
    fn untouched(content: &str, total_lines: usize, opts: TruncationOptions) -> Self {
        Self {
            content: content.to_owned(),
            truncated: false,
            truncated_by: None,
            total_lines,
            total_bytes: content.len(),
            output_lines: total_lines,
            output_bytes: content.len(),
            last_line_partial: false,
            first_line_exceeds_limit: false,
            max_lines: opts.max_lines,
            max_bytes: opts.max_bytes,
        }
    }
}

/// Formats a byte count as pi does: `512B`, `50.0KB`, `1.5MB`.
pub fn format_size(bytes: usize) -> String {
    const KB: f64 = 1024.0;
    if bytes < 1024 {
        format!("{bytes}B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1}KB", bytes as f64 / KB)
    } else {
        format!("{:.1}MB", bytes as f64 / (KB * KB))
    }
}

/// Keeps whole lines from the start. If the first line alone is over the byte limit, keeps nothing and sets
/// `first_line_exceeds_limit`.
pub fn truncate_head(content: &str, opts: TruncationOptions) -> TruncationResult {
    let lines: Vec<&str> = content.split('\n').collect();
    let total_lines = lines.len();
    if total_lines <= opts.max_lines && content.len() <= opts.max_bytes {
        return TruncationResult::untouched(content, total_lines, opts);
    }
    let mut result = TruncationResult::untouched("", total_lines, opts);
    result.total_bytes = content.len();
    result.truncated = true;
    result.output_lines = 0;
    result.output_bytes = 0;
    if lines[0].len() > opts.max_bytes {
        result.truncated_by = Some(TruncatedBy::Bytes);
        result.first_line_exceeds_limit = true;
        return result;
    }
    let mut kept = 0usize;
    let mut bytes = 0usize;
    let mut by = TruncatedBy::Lines;
    for (i, line) in lines.iter().enumerate().take(opts.max_lines) {
        let cost = line.len() + usize::from(i > 0);
        if bytes + cost > opts.max_bytes {
            by = TruncatedBy::Bytes;
            break;
        }
        kept += 1;
        bytes += cost;
    }
    if kept >= opts.max_lines && bytes <= opts.max_bytes {
        by = TruncatedBy::Lines;
    }
    result.content = lines[..kept].join("\n");
    result.truncated_by = Some(by);
    result.output_lines = kept;
    result.output_bytes = result.content.len();
    result
}

/// Keeps whole lines from the end. If the last line alone is over the byte limit, keeps its tail (cut on a
/// character boundary) and sets `last_line_partial`.
pub fn truncate_tail(content: &str, opts: TruncationOptions) -> TruncationResult {
    let lines: Vec<&str> = content.split('\n').collect();
    let total_lines = lines.len();
    if total_lines <= opts.max_lines && content.len() <= opts.max_bytes {
        return TruncationResult::untouched(content, total_lines, opts);
    }
    let mut result = TruncationResult::untouched("", total_lines, opts);
    result.total_bytes = content.len();
    result.truncated = true;
    let mut first_kept = lines.len();
    let mut bytes = 0usize;
    let mut by = TruncatedBy::Lines;
    let mut partial: Option<&str> = None;
    while first_kept > 0 && lines.len() - first_kept < opts.max_lines {
        let line = lines[first_kept - 1];
        let kept_so_far = lines.len() - first_kept;
        let cost = line.len() + usize::from(kept_so_far > 0);
        if bytes + cost > opts.max_bytes {
            by = TruncatedBy::Bytes;
            if kept_so_far == 0 {
                partial = Some(tail_within_bytes(line, opts.max_bytes));
            }
            break;
        }
        first_kept -= 1;
        bytes += cost;
    }
    let kept = lines.len() - first_kept;
    if kept >= opts.max_lines && bytes <= opts.max_bytes {
        by = TruncatedBy::Lines;
    }
    if let Some(tail) = partial {
        result.content = tail.to_owned();
        result.output_lines = 1;
        result.last_line_partial = true;
    } else {
        result.content = lines[first_kept..].join("\n");
        result.output_lines = kept;
    }
    result.truncated_by = Some(by);
    result.output_bytes = result.content.len();
    result
}

/// The longest suffix of `s` that fits in `max_bytes`, starting on a character boundary.
fn tail_within_bytes(s: &str, max_bytes: usize) -> &str {
    if s.len() <= max_bytes {
        return s;
    }
    let mut start = s.len() - max_bytes;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

/// Cuts a line to `max_chars` characters, adding `... [truncated]`; returns whether it was cut.
pub fn truncate_line(line: &str, max_chars: usize) -> (String, bool) {
    match line.char_indices().nth(max_chars) {
        Some((at, _)) => (format!("{}... [truncated]", &line[..at]), true),
        None => (line.to_owned(), false),
    }
}
