//! Finding the line and column of a YAML path. serde_norway keeps no spans, but it stamps an error with
//! the position of the node being read: a seed walks down the path and fails on purpose at the target,
//! and the error's location is the answer.

use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::problem::{Segment, Target, YamlPath};

const MARKER: &str = "\u{1}pi-gen:located";

/// Line and column (1-based) of the node at `path` in `text` (its key when `target` is [`Target::Key`]).
/// Falls back to the nearest ancestor that exists, then to 1:1.
pub fn locate(text: &str, path: &YamlPath, target: Target) -> (usize, usize) {
    let mut segments = path.0.as_slice();
    let mut target = target;
    loop {
        if let Some(found) = try_locate(text, segments, target) {
            return found;
        }
        match segments.split_last() {
            Some((_, parent)) => {
                segments = parent;
                target = Target::Value;
            }
            None => return (1, 1),
        }
    }
}

fn try_locate(text: &str, segments: &[Segment], target: Target) -> Option<(usize, usize)> {
    let deserializer = serde_yaml::Deserializer::from_str(text);
    let error = Walk { segments, target }.deserialize(deserializer).err()?;
    if !error.to_string().contains(MARKER) {
        return None;
    }
    error.location().map(|location| (location.line(), location.column()))
}

/// Walks down `segments`; fails with [`MARKER`] at the target node.
struct Walk<'a> {
    segments: &'a [Segment],
    target: Target,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML node")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Some((Segment::Key(wanted), rest)) = self.segments.split_first() else {
            return Err(de::Error::custom(MARKER));
        };
        let fail_on_key = rest.is_empty() && self.target == Target::Key;
        while let Some(matched) = map.next_key_seed(KeyProbe { wanted, fail_on_key })? {
            if matched {
                return map.next_value_seed(Walk { segments: rest, target: self.target });
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Some((Segment::Index(wanted), rest)) = self.segments.split_first() else {
            return Err(de::Error::custom(MARKER));
        };
        let mut index = 0;
        loop {
            if index == *wanted {
                return seq.next_element_seed(Walk { segments: rest, target: self.target }).map(|_| ());
            }
            if seq.next_element::<IgnoredAny>()?.is_none() {
                return Ok(());
            }
            index += 1;
        }
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.scalar()
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.scalar()
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        self.scalar()
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.scalar()
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        self.scalar()
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.scalar()
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.scalar()
    }
    fn visit_some<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
    fn visit_enum<A: de::EnumAccess<'de>>(self, _: A) -> Result<(), A::Error> {
        Err(de::Error::custom(MARKER))
    }
}

impl Walk<'_> {
    /// A scalar is the target when no segments remain; otherwise the path does not exist.
    fn scalar<E: de::Error>(&self) -> Result<(), E> {
        if self.segments.is_empty() { Err(E::custom(MARKER)) } else { Ok(()) }
    }
}

/// Reads one mapping key: true when it is the wanted one (or fails there, to locate the key itself).
struct KeyProbe<'a> {
    wanted: &'a str,
    fail_on_key: bool,
}

impl<'de> DeserializeSeed<'de> for KeyProbe<'_> {
    type Value = bool;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for KeyProbe<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a mapping key")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<bool, E> {
        self.matches(key)
    }
    fn visit_i64<E: de::Error>(self, key: i64) -> Result<bool, E> {
        self.matches(&key.to_string())
    }
    fn visit_u64<E: de::Error>(self, key: u64) -> Result<bool, E> {
        self.matches(&key.to_string())
    }
    fn visit_bool<E: de::Error>(self, key: bool) -> Result<bool, E> {
        self.matches(&key.to_string())
    }
    fn visit_f64<E: de::Error>(self, key: f64) -> Result<bool, E> {
        self.matches(&key.to_string())
    }
    fn visit_unit<E: de::Error>(self) -> Result<bool, E> {
        self.matches("null")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(false)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(false)
    }
}

impl KeyProbe<'_> {
    fn matches<E: de::Error>(&self, key: &str) -> Result<bool, E> {
        let matched = key == self.wanted;
        if matched && self.fail_on_key { Err(E::custom(MARKER)) } else { Ok(matched) }
    }
}
