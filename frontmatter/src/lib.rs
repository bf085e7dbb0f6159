//! A small YAML-frontmatter reader for skills and prompt templates: the `---` block at the top of a
//! markdown file, read as a flat mapping of scalars (plain, quoted, block `|`/`>`), nested values kept
//! opaque. It follows the `yaml` package pi uses closely enough that the same files load the same way.

use thiserror::Error;

mod scalars;
mod yaml;

#[cfg(test)]
mod tests;

use scalars::number_is_zero_or_nan;
use yaml::MappingParser;

/// A scalar (or opaque) value of one frontmatter key.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FrontmatterValue {
    /// An empty value, `~` or `null`.
    Null,
    Bool(bool),
    /// An integer or float, kept as written.
    Number(String),
    String(String),
    /// A nested mapping, a sequence or a flow collection; its content is not interpreted.
    Nested,
}

impl FrontmatterValue {
    /// The value as text when it is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::String(text) => Some(text),
            _ => None,
        }
    }

    /// JavaScript truthiness, which decides whether pi falls back to a default.
    pub fn is_truthy(&self) -> bool {
        match self {
            Self::Null | Self::Bool(false) => false,
            Self::Bool(true) | Self::Nested => true,
            Self::Number(text) => !number_is_zero_or_nan(text),
            Self::String(text) => !text.is_empty(),
        }
    }
}

/// The parsed frontmatter (key order kept) and the markdown body after it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Frontmatter {
    pub fields: Vec<(String, FrontmatterValue)>,
    /// The body: trimmed when a frontmatter block was present, otherwise the whole (LF-normalised) text.
    pub body: String,
}

impl Frontmatter {
    pub fn get(&self, key: &str) -> Option<&FrontmatterValue> {
        self.fields.iter().find(|(name, _)| name == key).map(|(_, value)| value)
    }

    /// A string field's text.
    pub fn text(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(FrontmatterValue::as_str)
    }

    /// True only for a YAML boolean `true` (pi compares with `=== true`).
    pub fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some(FrontmatterValue::Bool(true)))
    }
}

/// The frontmatter block is not YAML this reader accepts.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("invalid frontmatter at line {line}, column {column}: {reason}")]
pub struct FrontmatterError {
    /// 1-based line in the file (the opening `---` is line 1).
    pub line: usize,
    /// 1-based column (in characters) on that line.
    pub column: usize,
    pub reason: String,
}

/// Splits `content` into the raw YAML text (when a non-empty `---` block opens the file) and the body,
/// with pi's rules: CRLF/CR become LF, the block ends at the first line starting with `---`, and the
/// body after a block (even an empty one) is trimmed.
pub fn split_frontmatter(content: &str) -> (Option<String>, String) {
    let normalized = content.replace("\r\n", "\n").replace('\r', "\n");
    if !normalized.starts_with("---") {
        return (None, normalized);
    }
    let Some(end) = normalized.get(3..).and_then(|rest| rest.find("\n---")).map(|offset| offset + 3) else {
        return (None, normalized);
    };
    let yaml = normalized.get(4..end).unwrap_or_default();
    let body = js_trim(normalized.get(end + 4..).unwrap_or_default()).to_owned();
    if yaml.is_empty() {
        return (None, body);
    }
    (Some(yaml.to_owned()), body)
}

/// Parses the frontmatter of a markdown file. A file without a block has no fields and its whole text
/// as body.
pub fn parse_frontmatter(content: &str) -> Result<Frontmatter, FrontmatterError> {
    let (yaml, body) = split_frontmatter(content);
    let fields = match yaml {
        Some(yaml) => MappingParser::new(&yaml).parse()?,
        None => Vec::new(),
    };
    Ok(Frontmatter { fields, body })
}

/// The body without its frontmatter block (the block must still be valid).
pub fn strip_frontmatter(content: &str) -> Result<String, FrontmatterError> {
    parse_frontmatter(content).map(|frontmatter| frontmatter.body)
}

/// JavaScript's `String.prototype.trim`: Unicode white space and line terminators, plus the BOM.
pub fn js_trim(text: &str) -> &str {
    text.trim_matches(is_js_whitespace)
}

fn is_js_whitespace(c: char) -> bool {
    (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}'
}
