//! Tolerant parsing of tool-call arguments while they stream: a JSON prefix becomes the value it has
//! promised so far (open strings, objects and arrays are closed; a dangling key or literal is dropped).

use serde_json::{Map, Number, Value};

/// Parses streamed tool-call arguments the way pi does: strict JSON first, then a best-effort reading of
/// the prefix, and `{}` when nothing sensible comes out (including for empty input).
pub fn parse_streaming_json(text: &str) -> Value {
    if text.trim().is_empty() {
        return Value::Object(Map::new());
    }
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        return value;
    }
    let mut parser = Prefix { bytes: text.as_bytes(), text, pos: 0, depth: 0 };
    match parser.value() {
        Err(Stop::Eof(Some(value))) => value,
        // A complete value followed by garbage, a syntax error, or nothing at all.
        Ok(_) | Err(Stop::Eof(None)) | Err(Stop::Invalid) => Value::Object(Map::new()),
    }
}

/// Why parsing stopped before a complete value: the input ended (with what was read so far), or it is not JSON.
enum Stop {
    Eof(Option<Value>),
    Invalid,
}

struct Prefix<'a> {
    bytes: &'a [u8],
    text: &'a str,
    pos: usize,
    /// Objects and arrays open around the current position.
    depth: usize,
}

/// Deeper nesting is not arguments but garbage (serde_json refuses it too); reading it would exhaust the stack.
const MAX_DEPTH: usize = 128;

impl Prefix<'_> {
    fn skip_ws(&mut self) {
        while self.bytes.get(self.pos).is_some_and(|b| b.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }

    /// The next non-blank byte, or `Eof` carrying `so_far`.
    fn peek(&mut self, so_far: impl FnOnce() -> Option<Value>) -> Result<u8, Stop> {
        self.skip_ws();
        self.bytes.get(self.pos).copied().ok_or_else(|| Stop::Eof(so_far()))
    }

    fn value(&mut self) -> Result<Value, Stop> {
        match self.peek(|| None)? {
            b'{' | b'[' if self.depth >= MAX_DEPTH => Err(Stop::Invalid),
            b'{' => self.nested(Self::object),
            b'[' => self.nested(Self::array),
            b'"' => self.string().map(Value::String),
            b't' => self.literal("true", Value::Bool(true)),
            b'f' => self.literal("false", Value::Bool(false)),
            b'n' => self.literal("null", Value::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(Stop::Invalid),
        }
    }

    fn nested(&mut self, read: fn(&mut Self) -> Result<Value, Stop>) -> Result<Value, Stop> {
        self.depth += 1;
        let value = read(self);
        self.depth -= 1;
        value
    }

    fn object(&mut self) -> Result<Value, Stop> {
        self.pos += 1;
        let mut map = Map::new();
        if self.peek(|| Some(Value::Object(Map::new())))? == b'}' {
            self.pos += 1;
            return Ok(Value::Object(map));
        }
        loop {
            if self.peek(|| Some(Value::Object(map.clone())))? != b'"' {
                return Err(Stop::Invalid);
            }
            let key = match self.string() {
                Ok(key) => key,
                Err(Stop::Eof(_)) => return Err(Stop::Eof(Some(Value::Object(map)))),
                Err(Stop::Invalid) => return Err(Stop::Invalid),
            };
            if self.peek(|| Some(Value::Object(map.clone())))? != b':' {
                return Err(Stop::Invalid);
            }
            self.pos += 1;
            match self.value() {
                Ok(value) => {
                    map.insert(key, value);
                }
                Err(Stop::Eof(partial)) => {
                    if let Some(value) = partial {
                        map.insert(key, value);
                    }
                    return Err(Stop::Eof(Some(Value::Object(map))));
                }
                Err(Stop::Invalid) => return Err(Stop::Invalid),
            }
            match self.peek(|| Some(Value::Object(map.clone())))? {
                b',' => self.pos += 1,
                b'}' => {
                    self.pos += 1;
                    return Ok(Value::Object(map));
                }
                _ => return Err(Stop::Invalid),
            }
        }
    }

    fn array(&mut self) -> Result<Value, Stop> {
        self.pos += 1;
        let mut items = Vec::new();
        if self.peek(|| Some(Value::Array(Vec::new())))? == b']' {
            self.pos += 1;
            return Ok(Value::Array(items));
        }
        loop {
            match self.value() {
                Ok(value) => items.push(value),
                Err(Stop::Eof(partial)) => {
                    items.extend(partial);
                    return Err(Stop::Eof(Some(Value::Array(items))));
                }
                Err(Stop::Invalid) => return Err(Stop::Invalid),
            }
            match self.peek(|| Some(Value::Array(items.clone())))? {
                b',' => self.pos += 1,
                b']' => {
                    self.pos += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(Stop::Invalid),
            }
        }
    }

    /// A string starting at the opening quote. At the end of input the text read so far is returned
    /// (an escape sequence cut in half is dropped).
    fn string(&mut self) -> Result<String, Stop> {
        self.pos += 1;
        let mut out = String::new();
        loop {
            let Some(&byte) = self.bytes.get(self.pos) else {
                return Err(Stop::Eof(Some(Value::String(out))));
            };
            match byte {
                b'"' => {
                    self.pos += 1;
                    return Ok(out);
                }
                b'\\' => match self.escape()? {
                    Some(c) => out.push(c),
                    None => return Err(Stop::Eof(Some(Value::String(out)))),
                },
                _ => {
                    // Copy the run of plain characters up to the next quote or backslash.
                    let start = self.pos;
                    while self.bytes.get(self.pos).is_some_and(|b| *b != b'"' && *b != b'\\') {
                        self.pos += 1;
                    }
                    out.push_str(self.text.get(start..self.pos).ok_or(Stop::Invalid)?);
                }
            }
        }
    }

    /// One escape sequence after a backslash; `None` when the input ends inside it.
    fn escape(&mut self) -> Result<Option<char>, Stop> {
        let Some(&kind) = self.bytes.get(self.pos + 1) else {
            self.pos = self.bytes.len();
            return Ok(None);
        };
        self.pos += 2;
        let c = match kind {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => return self.unicode_escape(),
            _ => return Err(Stop::Invalid),
        };
        Ok(Some(c))
    }

    fn unicode_escape(&mut self) -> Result<Option<char>, Stop> {
        let Some(high) = self.hex4()? else { return Ok(None) };
        if !(0xD800..0xDC00).contains(&high) {
            return Ok(Some(char::from_u32(high).unwrap_or('\u{FFFD}')));
        }
        // A high surrogate should be followed by `\uXXXX` holding the low half.
        match (self.bytes.get(self.pos), self.bytes.get(self.pos + 1)) {
            (None, _) | (Some(b'\\'), None) => {
                self.pos = self.bytes.len();
                return Ok(None);
            }
            (Some(b'\\'), Some(b'u')) => self.pos += 2,
            _ => return Ok(Some('\u{FFFD}')),
        }
        let Some(low) = self.hex4()? else { return Ok(None) };
        if !(0xDC00..0xE000).contains(&low) {
            // Not a low half: the lone high half is unreadable, and the escape after it is read on its own.
            self.pos -= 6;
            return Ok(Some('\u{FFFD}'));
        }
        let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
        Ok(Some(char::from_u32(code).unwrap_or('\u{FFFD}')))
    }

    fn hex4(&mut self) -> Result<Option<u32>, Stop> {
        let Some(digits) = self.text.get(self.pos..self.pos + 4) else {
            if self.bytes[self.pos.min(self.bytes.len())..].iter().all(u8::is_ascii_hexdigit) {
                self.pos = self.bytes.len();
                return Ok(None);
            }
            return Err(Stop::Invalid);
        };
        let code = u32::from_str_radix(digits, 16).map_err(|_| Stop::Invalid)?;
        self.pos += 4;
        Ok(Some(code))
    }

    fn literal(&mut self, word: &str, value: Value) -> Result<Value, Stop> {
        let rest = &self.bytes[self.pos..];
        if rest.starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else if word.as_bytes().starts_with(rest) {
            self.pos = self.bytes.len();
            Err(Stop::Eof(None))
        } else {
            Err(Stop::Invalid)
        }
    }

    fn number(&mut self) -> Result<Value, Stop> {
        let start = self.pos;
        while self.bytes.get(self.pos).is_some_and(|b| matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')) {
            self.pos += 1;
        }
        let digits = self.text.get(start..self.pos).ok_or(Stop::Invalid)?;
        let at_end = self.pos == self.bytes.len();
        let parsed = serde_json::from_str::<Number>(digits).ok();
        match (parsed, at_end) {
            (Some(n), false) => Ok(Value::Number(n)),
            (None, false) => Err(Stop::Invalid),
            // The number may still be growing: keep what parses once unfinished exponent/fraction marks are cut.
            (_, true) => {
                let trimmed = digits.trim_end_matches(['-', '+', '.', 'e', 'E']);
                Err(Stop::Eof(serde_json::from_str::<Number>(trimmed).ok().map(Value::Number)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_streaming_json;
    use serde_json::json;

    #[test]
    fn complete_json_parses_strictly() {
        assert_eq!(parse_streaming_json(r#"{"path": "a.txt", "n": [1, 2]}"#), json!({"path": "a.txt", "n": [1, 2]}));
    }

    #[test]
    fn empty_and_garbage_give_an_empty_object() {
        assert_eq!(parse_streaming_json(""), json!({}));
        assert_eq!(parse_streaming_json("   "), json!({}));
        assert_eq!(parse_streaming_json("nonsense"), json!({}));
        assert_eq!(parse_streaming_json(r#"{"a": 1} x"#), json!({}));
    }

    #[test]
    fn prefixes_close_what_is_open() {
        let cases = [
            ("{", json!({})),
            (r#"{"pa"#, json!({})),
            (r#"{"path""#, json!({})),
            (r#"{"path":"#, json!({})),
            (r#"{"path": "hel"#, json!({"path": "hel"})),
            (r#"{"path": "a.txt", "#, json!({"path": "a.txt"})),
            (r#"{"a": [1, 2"#, json!({"a": [1, 2]})),
            (r#"{"a": [1, {"b": "x"#, json!({"a": [1, {"b": "x"}]})),
            (r#"{"a": tr"#, json!({})),
            (r#"{"a": true, "b": nu"#, json!({"a": true})),
            (r#"{"n": 12"#, json!({"n": 12})),
            (r#"{"n": 1.5e"#, json!({"n": 1.5})),
            (r#"{"n": -"#, json!({})),
            ("[\"x", json!(["x"])),
        ];
        for (input, expected) in cases {
            assert_eq!(parse_streaming_json(input), expected, "input: {input}");
        }
    }

    #[test]
    fn escapes_cut_in_half_are_dropped() {
        assert_eq!(parse_streaming_json(r#"{"t": "a\"#), json!({"t": "a"}));
        assert_eq!(parse_streaming_json(r#"{"t": "a\n"#), json!({"t": "a\n"}));
        assert_eq!(parse_streaming_json(r#"{"t": "a\u00"#), json!({"t": "a"}));
        assert_eq!(parse_streaming_json(r#"{"t": "\u00e9x"#), json!({"t": "éx"}));
        assert_eq!(parse_streaming_json(r#"{"t": "\ud83d\ude00!"#), json!({"t": "😀!"}));
        assert_eq!(parse_streaming_json(r#"{"t": "\ud83d"#), json!({"t": ""}));
        assert_eq!(parse_streaming_json(r#"{"t": "\ud800\u0041"#), json!({"t": "\u{FFFD}A"}));
        assert_eq!(parse_streaming_json(r#"{"t": "\uD83D\uD83D\uDE00"#), json!({"t": "\u{FFFD}😀"}));
        assert_eq!(parse_streaming_json(r#"{"t": "héllo wör"#), json!({"t": "héllo wör"}));
    }
}
