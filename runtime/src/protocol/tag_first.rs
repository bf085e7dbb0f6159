//! Reading internally tagged JSON objects (`{"role": "user", ...}`, `{"type": "text", ...}`) in one pass.
//! serde's derived reading of such enums first copies every object into a generic tree to find the tag,
//! which made loading a long session several times slower than parsing it. pi and pi-gen write the tag
//! first, so it is read first and the rest of the object goes straight into the variant's type; an object
//! whose tag comes later is gathered into a JSON tree first (correct, only slower).

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserializer, Error, IntoDeserializer, MapAccess, Visitor};
use serde::{Deserialize, de};
use serde_json::{Map, Value};

/// An enum read by its tag field.
pub(crate) trait TaggedEnum: Sized {
    /// The tag's field name (`role`, `type`).
    const TAG: &'static str;
    /// What the enum is, for error messages ("a message").
    const EXPECTING: &'static str;
    /// The variants' tags, for the unknown-variant error.
    const VARIANTS: &'static [&'static str];

    /// The variant named `tag`, read from the object's other fields (`None` for an unknown tag).
    fn variant<'de, D: Deserializer<'de>>(tag: &str, fields: D) -> Option<Result<Self, D::Error>>;
}

/// Reads `T` from `deserializer` (for `T`'s `Deserialize` impl).
pub(crate) fn deserialize<'de, D: Deserializer<'de>, T: TaggedEnum>(deserializer: D) -> Result<T, D::Error> {
    deserializer.deserialize_map(TagFirst(PhantomData))
}

struct TagFirst<T>(PhantomData<T>);

impl<'de, T: TaggedEnum> Visitor<'de> for TagFirst<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (an object with a \"{}\" field)", T::EXPECTING, T::TAG)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let Some(Key(first)) = map.next_key::<Key>()? else { return Err(A::Error::missing_field(T::TAG)) };
        if first == T::TAG {
            let Key(tag) = map.next_value::<Key>()?;
            return T::variant(&tag, MapAccessDeserializer::new(map))
                .unwrap_or_else(|| Err(A::Error::unknown_variant(&tag, T::VARIANTS)));
        }
        // The tag comes later: gather the object, then read the variant from the tree.
        let mut object = Map::new();
        object.insert(first.into_owned(), map.next_value::<Value>()?);
        while let Some((key, value)) = map.next_entry::<String, Value>()? {
            object.insert(key, value);
        }
        let tag = match object.get(T::TAG) {
            Some(Value::String(tag)) => tag.clone(),
            Some(other) => {
                return Err(A::Error::invalid_type(unexpected(other), &"a string tag"));
            }
            None => return Err(A::Error::missing_field(T::TAG)),
        };
        let fields = Value::Object(object).into_deserializer();
        match T::variant(&tag, fields) {
            Some(result) => result.map_err(A::Error::custom),
            None => Err(A::Error::unknown_variant(&tag, T::VARIANTS)),
        }
    }
}

fn unexpected(value: &Value) -> de::Unexpected<'_> {
    match value {
        Value::Null => de::Unexpected::Unit,
        Value::Bool(b) => de::Unexpected::Bool(*b),
        Value::Number(_) => de::Unexpected::Other("a number"),
        Value::String(s) => de::Unexpected::Str(s),
        Value::Array(_) => de::Unexpected::Seq,
        Value::Object(_) => de::Unexpected::Map,
    }
}

/// A key or tag string, borrowed from the input when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_borrowed_str<E: Error>(self, text: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(text)))
            }

            fn visit_str<E: Error>(self, text: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(text.to_owned())))
            }

            fn visit_string<E: Error>(self, text: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(text)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// Implements `Deserialize` for an internally tagged enum of newtype variants through [`TaggedEnum`].
macro_rules! deserialize_tag_first {
    ($enum:ident, $tag:literal, $expecting:literal, { $($name:literal => $variant:ident($inner:ty)),+ $(,)? }) => {
        impl $crate::protocol::tag_first::TaggedEnum for $enum {
            const TAG: &'static str = $tag;
            const EXPECTING: &'static str = $expecting;
            const VARIANTS: &'static [&'static str] = &[$($name),+];

            fn variant<'de, D: serde::Deserializer<'de>>(tag: &str, fields: D) -> Option<Result<Self, D::Error>> {
                Some(match tag {
                    $($name => <$inner as serde::Deserialize>::deserialize(fields).map(Self::$variant),)+
                    _ => return None,
                })
            }
        }

        impl<'de> serde::Deserialize<'de> for $enum {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                $crate::protocol::tag_first::deserialize(deserializer)
            }
        }
    };
}

pub(crate) use deserialize_tag_first;

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Circle {
        radius: f64,
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Square {
        side: f64,
        #[serde(default)]
        label: Option<String>,
    }

    #[derive(Debug, PartialEq, Serialize)]
    #[serde(tag = "kind")]
    enum Shape {
        #[serde(rename = "circle")]
        Circle(Circle),
        #[serde(rename = "square")]
        Square(Square),
    }

    deserialize_tag_first!(Shape, "kind", "a shape", { "circle" => Circle(Circle), "square" => Square(Square) });

    #[test]
    fn the_tag_may_come_first_or_later() {
        let first: Shape = serde_json::from_str(r#"{"kind":"square","side":2,"label":"a"}"#).unwrap();
        let later: Shape = serde_json::from_str(r#"{"side":2,"label":"a","kind":"square"}"#).unwrap();
        let escaped: Shape = serde_json::from_str(r#"{"\u006bind":"squ\u0061re","side":2,"label":"a"}"#).unwrap();
        let expected = Shape::Square(Square { side: 2.0, label: Some("a".into()) });
        assert_eq!((&first, &later, &escaped), (&expected, &expected, &expected));
        let round_trip: Shape = serde_json::from_str(&serde_json::to_string(&first).unwrap()).unwrap();
        assert_eq!(round_trip, expected);
    }

    #[test]
    fn bad_objects_are_errors_that_say_what_is_wrong() {
        let error = |json: &str| serde_json::from_str::<Shape>(json).unwrap_err().to_string();
        assert!(error(r#"{"kind":"triangle","side":2}"#).contains("unknown variant `triangle`"));
        assert!(error(r#"{"side":2,"kind":"triangle"}"#).contains("unknown variant `triangle`"));
        assert!(error(r#"{"side":2}"#).contains("missing field `kind`"));
        assert!(error(r#"{}"#).contains("missing field `kind`"));
        assert!(error(r#"{"kind":"circle"}"#).contains("missing field `radius`"));
        assert!(error(r#"{"radius":1,"kind":5}"#).contains("invalid type"));
        assert!(error(r#"{"kind":5,"radius":1}"#).contains("invalid type"));
        assert!(error(r#"[1]"#).contains("a shape"));
    }
}
