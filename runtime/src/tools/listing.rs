//! Output shaping shared by `grep`, `find` and `ls`: the listing is cut to 50 KB (whole lines, no line limit)
//! and closed by one `[...]` line of notices joined by ". ", with the matching `details` keys.

use serde_json::{Map, Value, json};

use super::truncate::{DEFAULT_MAX_BYTES, TruncationOptions, TruncationResult, format_size, truncate_head};
use crate::protocol::{AgentToolResult, UserContent};

/// JavaScript's `Number.MAX_SAFE_INTEGER`: pi's "no line limit", visible in `details.truncation.maxLines`.
const JS_MAX_SAFE_INTEGER: usize = 9_007_199_254_740_991;

/// A listing being turned into a tool result: the cut text plus notices and details, in the order added.
#[derive(Debug)]
pub(crate) struct Listing {
    truncation: TruncationResult,
    notices: Vec<String>,
    details: Map<String, Value>,
}

impl Listing {
    /// Cuts `raw` to 50 KB of whole lines.
    pub(crate) fn new(raw: &str) -> Self {
        let truncation =
            truncate_head(raw, TruncationOptions { max_lines: JS_MAX_SAFE_INTEGER, max_bytes: DEFAULT_MAX_BYTES });
        Self { truncation, notices: Vec::new(), details: Map::new() }
    }

    /// Adds a notice and its `details` entry.
    pub(crate) fn notice(&mut self, text: String, key: &str, value: Value) {
        self.notices.push(text);
        self.details.insert(key.to_owned(), value);
    }

    /// Adds the 50 KB notice (and `details.truncation`) if the listing was cut.
    pub(crate) fn byte_limit_notice(&mut self) {
        if self.truncation.truncated {
            let text = format!("{} limit reached", format_size(DEFAULT_MAX_BYTES));
            let value = json!(self.truncation);
            self.notice(text, "truncation", value);
        }
    }

    /// The tool result: the kept text, then `\n\n[notice. notice]` if there are notices.
    pub(crate) fn finish(self) -> AgentToolResult {
        let mut output = self.truncation.content;
        if !self.notices.is_empty() {
            output.push_str(&format!("\n\n[{}]", self.notices.join(". ")));
        }
        AgentToolResult {
            content: vec![UserContent::text(output)],
            details: (!self.details.is_empty()).then_some(Value::Object(self.details)),
            ..AgentToolResult::default()
        }
    }
}

/// A number as JavaScript would put it into JSON: `500`, not `500.0`.
pub(crate) fn js_json_number(n: f64) -> Value {
    if n.is_finite() && n.fract() == 0.0 && n.abs() < 9.0e15 { json!(n as i64) } else { json!(n) }
}
