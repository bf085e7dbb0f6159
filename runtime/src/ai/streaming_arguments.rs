//! Tool-call arguments read while they stream, without re-reading the whole text at every piece. A long
//! argument (a file's content for `write`) arrives as hundreds of pieces that only continue one string; each
//! such piece is decoded and appended in place, so a call costs time in proportion to its length instead of
//! its length squared. Anything else is read from the start by [`parse_streaming_json`], and the result is
//! always exactly what that reading of the whole text would give.

use serde_json::Value;

use super::partial_json::parse_streaming_json;

/// The text of a tool call's arguments so far and its reading.
#[derive(Debug, Clone, Default)]
pub struct StreamingArguments {
    text: String,
    value: Option<Value>,
    /// The text ends inside a string value, with no escape cut in half, and `value` holds that string as
    /// its last value at every level: a piece without quotes or unusual escapes only extends it.
    open_string: bool,
}

impl StreamingArguments {
    pub fn new() -> Self {
        Self::default()
    }

    /// The text received so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Adds a piece and returns the arguments as they now read.
    pub fn push(&mut self, piece: &str) -> &Value {
        if self.open_string
            && let Some(value) = self.value.as_mut()
            && let Some(open) = last_string(value)
            && decode_continuation(piece, open)
        {
            self.text.push_str(piece);
        } else {
            self.text.push_str(piece);
            let value = parse_streaming_json(&self.text);
            self.open_string = ends_in_last_string(&self.text, &value);
            self.value = Some(value);
        }
        self.value.get_or_insert_with(|| parse_streaming_json(""))
    }

    /// The arguments as they read now (`{}` before any text).
    pub fn value(&mut self) -> &Value {
        let text = &self.text;
        self.value.get_or_insert_with(|| parse_streaming_json(text))
    }
}

impl From<&str> for StreamingArguments {
    /// Arguments that arrived whole.
    fn from(text: &str) -> Self {
        let mut arguments = Self::new();
        arguments.push(text);
        arguments
    }
}

/// The string reached by following the last entry of every object and array.
fn last_string(value: &mut Value) -> Option<&mut String> {
    match value {
        Value::String(text) => Some(text),
        Value::Object(map) => map.values_mut().next_back().and_then(last_string),
        Value::Array(items) => items.last_mut().and_then(last_string),
        _ => None,
    }
}

/// Appends `piece`, which continues an open string literal, decoded to `out`; `false` (and `out` untouched)
/// when the piece ends the string or holds an escape this fast path does not take (`\u`, or one cut off).
fn decode_continuation(piece: &str, out: &mut String) -> bool {
    let special = |text: &str| memchr::memchr2(b'"', b'\\', text.as_bytes());
    let Some(mut next) = special(piece) else {
        out.push_str(piece);
        return true;
    };
    let mut decoded = String::with_capacity(piece.len());
    let mut rest = piece;
    loop {
        decoded.push_str(&rest[..next]);
        rest = &rest[next..];
        if rest.is_empty() {
            break;
        }
        // A bare quote ends the string.
        let Some(escaped) = rest.strip_prefix('\\') else { return false };
        let c = match escaped.as_bytes().first() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            _ => return false,
        };
        decoded.push(c);
        rest = &escaped[1..];
        next = special(rest).unwrap_or(rest.len());
    }
    out.push_str(&decoded);
    true
}

/// Whether `text` ends inside a string value (not a key, no escape cut in half) that `value` holds as the
/// last entry of every enclosing object and array (each of which then has as many entries as the text
/// began, so no duplicate key moved it).
fn ends_in_last_string(text: &str, value: &Value) -> bool {
    let Some(open) = scan(text) else { return false };
    if !open.in_value_string || open.containers.is_empty() {
        return false;
    }
    let mut current = value;
    for container in &open.containers {
        current = match (container.is_object, current) {
            (true, Value::Object(map)) if map.len() == container.members => match map.values().next_back() {
                Some(last) => last,
                None => return false,
            },
            (false, Value::Array(items)) if items.len() == container.members => match items.last() {
                Some(last) => last,
                None => return false,
            },
            _ => return false,
        };
    }
    matches!(current, Value::String(_))
}

struct OpenContainer {
    is_object: bool,
    /// Keys (objects) or values (arrays) begun so far.
    members: usize,
    /// In an object: the next string is a key.
    expects_key: bool,
}

/// Where a JSON text ends: its open containers, outermost first, and whether it ends inside a string value
/// with no escape cut in half. `None` for text that cannot be JSON (a closing bracket with nothing open).
struct Ending {
    containers: Vec<OpenContainer>,
    in_value_string: bool,
}

fn scan(text: &str) -> Option<Ending> {
    let mut containers: Vec<OpenContainer> = Vec::new();
    let mut bytes = text.bytes();
    let mut in_value_string = false;
    // In an array, after `[` or `,`: the next value begins a member.
    let mut array_value_due = false;
    while let Some(byte) = bytes.next() {
        if byte.is_ascii_whitespace() {
            continue;
        }
        if array_value_due && byte != b']' {
            if let Some(array) = containers.last_mut() {
                array.members += 1;
            }
            array_value_due = false;
        }
        match byte {
            b'{' => containers.push(OpenContainer { is_object: true, members: 0, expects_key: true }),
            b'[' => {
                containers.push(OpenContainer { is_object: false, members: 0, expects_key: false });
                array_value_due = true;
            }
            b'}' | b']' => {
                containers.pop()?;
                array_value_due = false;
            }
            b',' => match containers.last_mut() {
                Some(object) if object.is_object => object.expects_key = true,
                Some(_) => array_value_due = true,
                None => return None,
            },
            b'"' => {
                let is_key = match containers.last_mut() {
                    Some(object) if object.is_object && object.expects_key => {
                        object.members += 1;
                        object.expects_key = false;
                        true
                    }
                    _ => false,
                };
                match skip_string(&mut bytes) {
                    StringEnd::Closed => {}
                    StringEnd::Open => {
                        in_value_string = !is_key;
                        break;
                    }
                    StringEnd::CutEscape => break,
                }
            }
            _ => {}
        }
    }
    Some(Ending { containers, in_value_string })
}

enum StringEnd {
    Closed,
    /// The text ended inside the string.
    Open,
    /// The text ended inside an escape sequence.
    CutEscape,
}

/// Skips the rest of a string literal after its opening quote.
fn skip_string(bytes: &mut std::str::Bytes<'_>) -> StringEnd {
    loop {
        match bytes.next() {
            None => return StringEnd::Open,
            Some(b'"') => return StringEnd::Closed,
            Some(b'\\') => match bytes.next() {
                None => return StringEnd::CutEscape,
                Some(b'u') => {
                    let mut code = 0_u32;
                    for _ in 0..4 {
                        let Some(digit) = bytes.next() else { return StringEnd::CutEscape };
                        code = code * 16 + char::from(digit).to_digit(16).unwrap_or(0);
                    }
                    // A high surrogate waits for its low half: what it reads as depends on what follows.
                    if (0xD800..0xDC00).contains(&code) && bytes.clone().next().is_none() {
                        return StringEnd::CutEscape;
                    }
                }
                Some(_) => {}
            },
            Some(_) => {}
        }
    }
}

#[cfg(test)]
#[path = "streaming_arguments_tests.rs"]
mod tests;
