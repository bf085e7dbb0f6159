//! NOTES.md as a list of notes: one `- text #tag` line per note. Other lines (a heading, prose the user
//! wrote) are kept as they are.

use std::path::{Path, PathBuf};

/// The heading a new NOTES.md starts with.
const HEADING: &str = "# Notes\n\n";

/// One note: its text and its tags (without `#`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub text: String,
    pub tags: Vec<String>,
}

impl Note {
    /// A note from the model's arguments: the text on one line, tags without `#` or spaces, empty ones dropped.
    pub fn new(text: &str, tags: &[String]) -> Option<Self> {
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if text.is_empty() {
            return None;
        }
        let tags = tags
            .iter()
            .map(|tag| tag.trim().trim_start_matches('#').split_whitespace().collect::<Vec<_>>().join("-"))
            .filter(|tag| !tag.is_empty())
            .collect();
        Some(Self { text, tags })
    }

    /// A `- ` line of NOTES.md, if `line` is one.
    fn parse(line: &str) -> Option<Self> {
        let body = line.strip_prefix("- ")?;
        let mut words: Vec<&str> = body.split_whitespace().collect();
        let mut tags = Vec::new();
        while let Some(tag) = words.last().and_then(|word| word.strip_prefix('#')).filter(|tag| !tag.is_empty()) {
            tags.insert(0, tag.to_owned());
            words.pop();
        }
        Some(Self { text: words.join(" "), tags })
    }

    /// The note as its NOTES.md line shows it, without the `- `.
    pub fn display(&self) -> String {
        let mut line = self.text.clone();
        for tag in &self.tags {
            line.push_str(" #");
            line.push_str(tag);
        }
        line
    }

    /// Whether the note has `tag` (any case, with or without `#`) and contains `word` (any case).
    pub fn matches(&self, tag: Option<&str>, word: Option<&str>) -> bool {
        let tag_ok = tag
            .map(|tag| tag.trim_start_matches('#'))
            .is_none_or(|wanted| wanted.is_empty() || self.tags.iter().any(|tag| tag.eq_ignore_ascii_case(wanted)));
        let word_ok = word.is_none_or(|word| self.display().to_lowercase().contains(&word.to_lowercase()));
        tag_ok && word_ok
    }
}

/// The notes file of a directory.
#[derive(Debug, Clone)]
pub struct NoteFile {
    path: PathBuf,
}

impl NoteFile {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every note, in file order; no file means no notes.
    pub fn notes(&self) -> std::io::Result<Vec<Note>> {
        Ok(self.read()?.lines().filter_map(Note::parse).collect())
    }

    /// Appends `note`; returns its number.
    pub fn add(&self, note: &Note) -> std::io::Result<usize> {
        let mut text = self.read()?;
        if text.is_empty() {
            text.push_str(HEADING);
        } else if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("- ");
        text.push_str(&note.display());
        text.push('\n');
        std::fs::write(&self.path, &text)?;
        Ok(text.lines().filter_map(Note::parse).count())
    }

    /// Removes note `number` (1-based); `None` when there is no such note.
    pub fn remove(&self, number: usize) -> std::io::Result<Option<Note>> {
        let text = self.read()?;
        let mut seen = 0;
        let mut removed = None;
        let mut kept = String::with_capacity(text.len());
        for line in text.split_inclusive('\n') {
            if let Some(note) = Note::parse(line.trim_end_matches('\n')) {
                seen += 1;
                if seen == number {
                    removed = Some(note);
                    continue;
                }
            }
            kept.push_str(line);
        }
        if removed.is_some() {
            std::fs::write(&self.path, kept)?;
        }
        Ok(removed)
    }

    /// Removes every note (other lines of the file stay); returns how many there were.
    pub fn clear(&self) -> std::io::Result<usize> {
        let text = self.read()?;
        let mut removed = 0;
        let kept: String = text
            .split_inclusive('\n')
            .filter(|line| {
                let is_note = Note::parse(line.trim_end_matches('\n')).is_some();
                removed += usize::from(is_note);
                !is_note
            })
            .collect();
        if removed > 0 {
            std::fs::write(&self.path, kept)?;
        }
        Ok(removed)
    }

    fn read(&self) -> std::io::Result<String> {
        match std::fs::read_to_string(&self.path) {
            Ok(text) => Ok(text),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
            Err(error) => Err(error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(list: &[&str]) -> Vec<String> {
        list.iter().map(|tag| (*tag).to_owned()).collect()
    }

    #[test]
    fn notes_are_one_line_with_clean_tags() {
        let note = Note::new("  ship v2\n on Friday ", &tags(&["#release", " to do ", ""])).expect("note");
        assert_eq!(note.display(), "ship v2 on Friday #release #to-do");
        assert_eq!(Note::new(" \n", &[]), None);
    }

    #[test]
    fn lines_round_trip_and_other_lines_are_not_notes() {
        let note = Note::parse("- call Bob about #42 issue #work #urgent").expect("a note");
        assert_eq!(note.text, "call Bob about #42 issue");
        assert_eq!(note.tags, tags(&["work", "urgent"]));
        assert_eq!(Note::parse("# Notes"), None);
        assert_eq!(Note::parse("prose"), None);
    }

    #[test]
    fn filters_by_tag_and_word() {
        let note = Note::new("Ship v2", &tags(&["Release"])).expect("note");
        assert!(note.matches(None, None));
        assert!(note.matches(Some("#release"), Some("SHIP")));
        assert!(!note.matches(Some("work"), None));
        assert!(!note.matches(None, Some("v3")));
    }

    #[test]
    fn add_list_and_remove_keep_the_rest_of_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = NoteFile::new(dir.path().join("NOTES.md"));
        assert_eq!(file.notes().expect("no file is no notes"), []);
        assert_eq!(file.add(&Note::new("first", &[]).expect("note")).expect("add"), 1);
        std::fs::write(file.path(), std::fs::read_to_string(file.path()).expect("read") + "Some prose.").expect("w");
        assert_eq!(file.add(&Note::new("second", &tags(&["b"])).expect("note")).expect("add"), 2);
        let text = std::fs::read_to_string(file.path()).expect("read");
        assert_eq!(text, "# Notes\n\n- first\nSome prose.\n- second #b\n");
        assert_eq!(file.remove(3).expect("remove"), None);
        assert_eq!(file.remove(1).expect("remove").map(|note| note.text), Some("first".to_owned()));
        assert_eq!(std::fs::read_to_string(file.path()).expect("read"), "# Notes\n\nSome prose.\n- second #b\n");
    }
}
