//! The common Anthropic event, a `content_block_delta`, read without building a JSON tree: first as the
//! exact bytes the API writes (then only the piece of text is parsed), else as JSON of the usual shape in any
//! layout. Anything else (a field of another type, a duplicate key) reads as `None` and goes the general way.

use std::borrow::Cow;

use serde::Deserialize;

/// The delta kinds of `content_block_delta` and the field that carries each one's piece.
pub(super) const DELTA_FIELDS: [(&str, &str); 4] = [
    ("text_delta", "text"),
    ("thinking_delta", "thinking"),
    ("input_json_delta", "partial_json"),
    ("signature_delta", "signature"),
];

/// What the API writes before the block's index.
const CANONICAL_START: &str = r#"{"type":"content_block_delta","index":"#;

/// A `content_block_delta`: the block's stream index, the delta kind and the piece it carries (empty when the
/// kind is unknown or its field is missing).
pub(super) struct TypicalDelta<'a> {
    pub index: u64,
    pub kind: Cow<'a, str>,
    pub piece: Cow<'a, str>,
}

/// `data` as a `content_block_delta`, or `None` when it is not one in the usual shape.
pub(super) fn read_typical_delta(data: &str) -> Option<TypicalDelta<'_>> {
    read_canonical(data).or_else(|| read_any_layout(data))
}

/// `{"type":"content_block_delta","index":N,"delta":{"type":"KIND","FIELD":"…"}}`, byte for byte.
fn read_canonical(data: &str) -> Option<TypicalDelta<'_>> {
    let rest = data.strip_prefix(CANONICAL_START)?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 1 && rest.starts_with('0') {
        return None; // not JSON
    }
    let index = rest[..digits].parse().ok()?;
    let rest = rest[digits..].strip_prefix(r#","delta":{"type":""#)?;
    let (kind, field) = DELTA_FIELDS.iter().find(|(kind, _)| rest.starts_with(kind))?;
    let rest = rest[kind.len()..].strip_prefix(r#"",""#)?.strip_prefix(field)?.strip_prefix(r#"":"#)?;
    let mut values = serde_json::Deserializer::from_str(rest).into_iter::<Piece>();
    let Some(Ok(Piece(piece))) = values.next() else { return None };
    (&rest[values.byte_offset()..] == "}}").then_some(TypicalDelta { index, kind: Cow::Borrowed(kind), piece })
}

/// A JSON string, borrowed from the text when it has no escapes.
#[derive(Deserialize)]
struct Piece<'a>(#[serde(borrow)] Cow<'a, str>);

/// The event as JSON of the usual shape, fields in any order.
fn read_any_layout(data: &str) -> Option<TypicalDelta<'_>> {
    let event = serde_json::from_str::<Event>(data).ok().filter(|event| event.kind == "content_block_delta")?;
    let Body { kind, text, thinking, partial_json, signature } = event.delta;
    let piece = match kind.as_ref() {
        "text_delta" => text,
        "thinking_delta" => thinking,
        "input_json_delta" => partial_json,
        "signature_delta" => signature,
        _ => None,
    };
    Some(TypicalDelta { index: event.index, kind, piece: piece.unwrap_or_default() })
}

#[derive(Deserialize)]
struct Event<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    index: u64,
    #[serde(borrow)]
    delta: Body<'a>,
}

#[derive(Deserialize)]
struct Body<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    thinking: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    partial_json: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    signature: Option<Cow<'a, str>>,
}

#[cfg(test)]
mod tests {
    use super::{TypicalDelta, read_any_layout, read_canonical};

    fn parts(delta: Option<TypicalDelta<'_>>) -> Option<(u64, String, String)> {
        delta.map(|delta| (delta.index, delta.kind.into_owned(), delta.piece.into_owned()))
    }

    #[test]
    fn the_api_layout_and_any_other_layout_read_the_same() {
        let cases = [
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Lisons é"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"a\n\"b\" \u00e9"}}"#,
            r#"{"type":"content_block_delta","index":13,"delta":{"type":"input_json_delta","partial_json":"{\"pa"}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"signature_delta","signature":"EqQB"}}"#,
        ];
        for case in cases {
            let canonical = parts(read_canonical(case));
            assert!(canonical.is_some(), "{case}");
            assert_eq!(canonical, parts(read_any_layout(case)), "{case}");
        }
        let spaced = r#"{"index": 2, "delta": {"text": "x", "type": "text_delta"}, "type": "content_block_delta"}"#;
        assert!(read_canonical(spaced).is_none());
        assert_eq!(parts(read_any_layout(spaced)), Some((2, "text_delta".into(), "x".into())));
    }

    #[test]
    fn anything_else_is_left_to_the_general_way() {
        for case in [
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"x"}}  "#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"x"},"extra":1}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":5}}"#,
            r#"{"type":"content_block_delta","index":-1,"delta":{"type":"text_delta","text":"x"}}"#,
            r#"{"type":"content_block_delta","index":02,"delta":{"type":"text_delta","text":"x"}}"#,
            r#"{"type":"content_block_delta","index":,"delta":{"type":"text_delta","text":"x"}}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"text_delta_v2","text":"x"}}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"x"#,
            r#"{"type":"content_block_delta","index":99999999999999999999,"delta":{"type":"text_delta","text":"x"}}"#,
        ] {
            assert!(read_canonical(case).is_none(), "{case}");
        }
        assert!(read_any_layout(r#"{"type":"content_block_stop","index":2}"#).is_none());
    }
}
