//! `SystemPromptSections`: pi 1.5's system prompt as ordered, named sections (`preamble` as written, every
//! other section wrapped in `<name>` tags), their joined text and their JSON object.

use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// The key of the first section: the identity line or the custom prompt, never wrapped in tags.
pub const PREAMBLE_SECTION: &str = "preamble";

/// A section name an extension may not use: empty, not `[a-z][a-z0-9_-]*`, or `preamble`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid system prompt section name: {0}")]
pub struct InvalidSectionName(pub String);

/// The sections of a pi 1.5 system prompt, in prompt order. Each entry holds the section's full text as
/// pi reports it in the `sections` object of its `role: "system"` message: `preamble` as written, every
/// other section as `<name>\ncontent\n</name>`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SystemPromptSections {
    entries: Vec<(String, String)>,
}

impl SystemPromptSections {
    /// No sections.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets section `key` to `text` (already wrapped): a section already present is replaced where it
    /// stands, a new one goes last (a JavaScript object's key order).
    pub fn set(&mut self, key: impl Into<String>, text: impl Into<String>) {
        let (key, text) = (key.into(), text.into());
        match self.entries.iter_mut().find(|(existing, _)| *existing == key) {
            Some(entry) => entry.1 = text,
            None => self.entries.push((key, text)),
        }
    }

    /// Sets section `name` to `content` wrapped in `<name>` tags (see [`wrap_section`]).
    pub fn set_wrapped(&mut self, name: &str, content: &str) {
        self.set(name, wrap_section(name, content));
    }

    /// Adds or replaces a section the way pi 1.5 applies an extension's `sections`: the name must be
    /// `[a-z][a-z0-9_-]*` and not `preamble`; empty content is ignored; the content is wrapped in tags.
    pub fn set_custom(&mut self, name: &str, content: &str) -> Result<(), InvalidSectionName> {
        if !is_valid_section_name(name) || name == PREAMBLE_SECTION {
            return Err(InvalidSectionName(name.to_owned()));
        }
        if !content.is_empty() {
            self.set_wrapped(name, content);
        }
        Ok(())
    }

    /// Drops section `key`; returns its text.
    pub fn remove(&mut self, key: &str) -> Option<String> {
        let index = self.entries.iter().position(|(existing, _)| existing == key)?;
        Some(self.entries.remove(index).1)
    }

    /// The text of section `key`, tags included.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries.iter().find(|(existing, _)| existing == key).map(|(_, text)| text.as_str())
    }

    /// The section keys in prompt order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(key, _)| key.as_str())
    }

    /// `(key, text)` pairs in prompt order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().map(|(key, text)| (key.as_str(), text.as_str()))
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The prompt text the model receives: the non-empty sections joined with a blank line.
    pub fn text(&self) -> String {
        let parts: Vec<&str> = self.entries.iter().map(|(_, text)| text.as_str()).filter(|t| !t.is_empty()).collect();
        parts.join("\n\n")
    }

    /// The `sections` JSON object, keys in prompt order.
    pub fn to_json_map(&self) -> Map<String, Value> {
        self.entries.iter().map(|(key, text)| (key.clone(), Value::String(text.clone()))).collect()
    }

    /// [`to_json_map`](Self::to_json_map) as a JSON value.
    pub fn to_json(&self) -> Value {
        Value::Object(self.to_json_map())
    }
}

impl<K: Into<String>, T: Into<String>> FromIterator<(K, T)> for SystemPromptSections {
    fn from_iter<I: IntoIterator<Item = (K, T)>>(iter: I) -> Self {
        let mut sections = Self::new();
        for (key, text) in iter {
            sections.set(key, text);
        }
        sections
    }
}

impl From<&SystemPromptSections> for Value {
    fn from(sections: &SystemPromptSections) -> Self {
        sections.to_json()
    }
}

/// `<name>\ncontent\n</name>`: how pi 1.5 frames every section but the preamble.
pub fn wrap_section(name: &str, content: &str) -> String {
    format!("<{name}>\n{content}\n</{name}>")
}

fn is_valid_section_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|first| first.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

impl Serialize for SystemPromptSections {
    /// A JSON object, keys in prompt order.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.entries.len()))?;
        for (key, text) in &self.entries {
            map.serialize_entry(key, text)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for SystemPromptSections {
    /// A JSON object of strings, in its order (a key given twice keeps its first place and last text).
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SectionsVisitor;

        impl<'de> Visitor<'de> for SectionsVisitor {
            type Value = SystemPromptSections;

            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("an object of system prompt sections")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                let mut sections = SystemPromptSections::new();
                while let Some((key, text)) = access.next_entry::<String, String>()? {
                    sections.set(key, text);
                }
                Ok(sections)
            }
        }

        deserializer.deserialize_map(SectionsVisitor)
    }
}
