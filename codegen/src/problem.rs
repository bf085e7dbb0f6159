//! A problem found in an agent file, addressed by its YAML path (`tools.custom[1].name`) until
//! [`crate::yaml`] turns the path into a line and column.

use std::fmt;

/// One step of a YAML path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Segment {
    Key(String),
    Index(usize),
}

/// Where in the document a problem is.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct YamlPath(pub Vec<Segment>);

impl YamlPath {
    pub fn root() -> Self {
        Self(Vec::new())
    }

    /// This path extended by a key.
    pub fn key(&self, key: impl Into<String>) -> Self {
        let mut segments = self.0.clone();
        segments.push(Segment::Key(key.into()));
        Self(segments)
    }

    /// This path extended by a list index.
    pub fn index(&self, index: usize) -> Self {
        let mut segments = self.0.clone();
        segments.push(Segment::Index(index));
        Self(segments)
    }

    /// A path from a JSON pointer (`/tools/custom/1/name`) into `document`: a numeric segment is a list
    /// index where the document has a list there, and a key where it has a mapping (`providers: {"1": ..}`).
    pub fn from_pointer(pointer: &str, document: &serde_json::Value) -> Self {
        let mut node = Some(document);
        let mut segments = Vec::new();
        for raw in pointer.split('/').skip(1) {
            let segment = raw.replace("~1", "/").replace("~0", "~");
            match (node, segment.parse::<usize>()) {
                (Some(serde_json::Value::Array(items)), Ok(index)) => {
                    node = items.get(index);
                    segments.push(Segment::Index(index));
                }
                (current, _) => {
                    node = current.and_then(|value| value.get(segment.as_str()));
                    segments.push(Segment::Key(segment));
                }
            }
        }
        Self(segments)
    }

    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Display for YamlPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("(top level)");
        }
        for (position, segment) in self.0.iter().enumerate() {
            match segment {
                Segment::Key(key) if position == 0 => write!(f, "{key}")?,
                Segment::Key(key) => write!(f, ".{key}")?,
                Segment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// Whether a problem points at a mapping key itself or at the value under it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target {
    Key,
    Value,
}

/// A problem before it is located.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Problem {
    pub path: YamlPath,
    pub target: Target,
    pub message: String,
    /// The value this one repeats (a duplicate's first definition): its position is added to the message
    /// as `; first defined at line:column`.
    pub first: Option<YamlPath>,
}

impl Problem {
    /// A problem with the value at `path`.
    pub fn value(path: YamlPath, message: impl Into<String>) -> Self {
        Self { path, target: Target::Value, message: message.into(), first: None }
    }

    /// A problem with the key that ends `path`.
    pub fn key(path: YamlPath, message: impl Into<String>) -> Self {
        Self { path, target: Target::Key, message: message.into(), first: None }
    }

    /// This problem, repeating the value at `first`.
    pub fn first_defined_at(mut self, first: YamlPath) -> Self {
        self.first = Some(first);
        self
    }
}

/// The closest candidate to `word` by edit distance, if it is close enough to be a likely typo.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|candidate| (edit_distance(&word.to_lowercase(), &candidate.to_lowercase()), candidate))
        .filter(|(distance, _)| *distance <= limit)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// Levenshtein distance with adjacent transpositions counted as one edit.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut rows = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[i - 1][j] + 1).min(rows[i][j - 1] + 1).min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_read_like_yaml() {
        let path = YamlPath::root().key("tools").key("custom").index(1).key("name");
        assert_eq!(path.to_string(), "tools.custom[1].name");
        let document = serde_json::json!({"tools": {"custom": [{}, {"name": 1}]}, "providers": {"7": {}}});
        assert_eq!(YamlPath::from_pointer("/tools/custom/1/name", &document), path);
        assert_eq!(YamlPath::from_pointer("/providers/a~1b", &document).to_string(), "providers.a/b");
        assert_eq!(YamlPath::from_pointer("/providers/7", &document), YamlPath::root().key("providers").key("7"));
        assert_eq!(YamlPath::root().to_string(), "(top level)");
    }

    #[test]
    fn suggestions_catch_typos_but_not_strangers() {
        let keys = ["model", "name", "tools", "system_prompt"];
        assert_eq!(did_you_mean("modle", keys), Some("model"));
        assert_eq!(did_you_mean("tool", keys), Some("tools"));
        assert_eq!(did_you_mean("sytem_prompt", keys), Some("system_prompt"));
        assert_eq!(did_you_mean("banana", keys), None);
    }
}
