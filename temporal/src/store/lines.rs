//! A session file as the stores keep it: the header line and the entry lines, each kept as the text pi wrote
//! (so an export gives the file back byte for byte), with the entry's id read off the line for idempotent
//! appends. Parsing checks what a store relies on and says which line is wrong.

use pi_runtime::session::SessionHeader;

use super::StoreError;

/// A session's first line, with the fields a store files it under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderLine {
    pub id: String,
    pub cwd: String,
    /// The header's `timestamp` (ISO 8601), which also names the session's file.
    pub timestamp: String,
    /// The line as written, without its newline.
    pub text: String,
}

/// One entry line: its id and the line as written, without its newline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryLine {
    pub id: String,
    pub text: String,
}

impl EntryLine {
    /// Whether the entry is a `message` entry.
    pub fn is_message(&self) -> bool {
        is_message_line(&self.text)
    }

    /// Whether the line is a message of a run: a `message` entry, or a `custom_message` one (a hook's,
    /// which `agent_end` lists among the run's messages).
    pub fn is_run_message(&self) -> bool {
        self.is_message() || entry_type_is(&self.text, "custom_message")
    }
}

/// Whether a session line is a `message` entry.
pub fn is_message_line(line: &str) -> bool {
    entry_type_is(line, "message")
}

/// Whether a session line's entry `type` is `kind`. pi and the runtime write `type` first, which is checked
/// without parsing; a line written otherwise is parsed.
fn entry_type_is(line: &str, kind: &str) -> bool {
    match line.strip_prefix(r#"{"type":""#) {
        Some(rest) => rest.strip_prefix(kind).is_some_and(|after| after.starts_with('"')),
        None => serde_json::from_str::<serde_json::Value>(line).is_ok_and(|entry| entry["type"] == kind),
    }
}

/// A whole session: its header and entry lines in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionLines {
    pub header: HeaderLine,
    pub entries: Vec<EntryLine>,
    /// The text ended in a line a crash cut short (not JSON, no newline), which was left out.
    pub torn_tail: bool,
}

impl HeaderLine {
    /// Reads a header line (`{"type":"session","id":...}`); the id must be usable as part of a file name.
    pub fn parse(text: &str) -> Result<Self, StoreError> {
        let header: SessionHeader = serde_json::from_str(text).map_err(|error| {
            StoreError::invalid(format!(
                "line 1: expected a session header ({{\"type\":\"session\",\"id\":...}}): {error}"
            ))
        })?;
        check_session_id(&header.id)?;
        if !is_plain(&header.timestamp, "-:.TZ+") {
            return Err(StoreError::invalid(format!(
                "line 1: session timestamp {:?}: expected an ISO 8601 time",
                header.timestamp
            )));
        }
        Ok(Self { id: header.id, cwd: header.cwd, timestamp: header.timestamp, text: text.to_owned() })
    }
}

impl EntryLine {
    /// Reads the id off an entry line; `number` (1-based, in the file) is for the error.
    pub fn parse(text: &str, number: usize) -> Result<Self, StoreError> {
        #[derive(serde::Deserialize)]
        struct WithId {
            id: String,
        }
        let entry: WithId = serde_json::from_str(text).map_err(|error| {
            StoreError::invalid(format!("line {number}: expected a session entry with a string \"id\": {error}"))
        })?;
        Ok(Self { id: entry.id, text: text.to_owned() })
    }
}

impl SessionLines {
    /// Splits a session file into its lines. Every non-empty line must be JSON: the first a header, the rest
    /// entries with distinct ids. A last line without its newline counts (it gets one on export).
    pub fn parse(text: &str) -> Result<Self, StoreError> {
        // A last line without its newline that is not JSON was being written when a writer died: pi's
        // loader skips it, and so does this (it says so), rather than refusing the whole file.
        let (text, torn_tail) = match text.rsplit_once('\n') {
            Some((whole, tail)) if !tail.is_empty() && serde_json::from_str::<serde::de::IgnoredAny>(tail).is_err() => {
                (whole, true)
            }
            _ => (text, false),
        };
        let mut lines = text.split('\n').enumerate().filter(|(_, line)| !line.is_empty());
        let Some((_, first)) = lines.next() else {
            return Err(StoreError::invalid("the session file is empty"));
        };
        let header = HeaderLine::parse(first)?;
        let mut seen = std::collections::HashSet::new();
        let mut entries = Vec::new();
        for (index, line) in lines {
            let entry = EntryLine::parse(line, index + 1)?;
            if !seen.insert(entry.id.clone()) {
                return Err(StoreError::invalid(format!(
                    "line {}: entry id {:?} appears twice in the file",
                    index + 1,
                    entry.id
                )));
            }
            entries.push(entry);
        }
        Ok(Self { header, entries, torn_tail })
    }

    /// The session file: the header and every entry, each line ending in a newline, as pi writes it.
    pub fn to_text(&self) -> String {
        let length = self.header.text.len() + self.entries.iter().map(|entry| entry.text.len() + 1).sum::<usize>() + 1;
        let mut text = String::with_capacity(length);
        text.push_str(&self.header.text);
        text.push('\n');
        for entry in &self.entries {
            text.push_str(&entry.text);
            text.push('\n');
        }
        text
    }
}

/// A session id names files and rows: letters, digits, `-`, `_` or `.`, not starting with a dot.
pub fn check_session_id(id: &str) -> Result<(), StoreError> {
    if is_plain(id, "-_.") {
        Ok(())
    } else {
        Err(StoreError::invalid(format!("session id {id:?}: expected letters, digits, `-`, `_` or `.`")))
    }
}

fn is_plain(text: &str, extra: &str) -> bool {
    !text.is_empty() && !text.starts_with('.') && text.chars().all(|c| c.is_ascii_alphanumeric() || extra.contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_lines_are_told_apart_whatever_their_field_order() {
        assert!(is_message_line(r#"{"type":"message","id":"a","message":{"role":"user"}}"#));
        assert!(is_message_line(r#"{"id":"a","type":"message"}"#));
        assert!(!is_message_line(r#"{"type":"model_change","id":"a"}"#));
        assert!(!is_message_line(r#"{"type":"messages","id":"a"}"#));
        assert!(!is_message_line("not json"));
    }

    const HEADER: &str =
        r#"{"type":"session","version":3,"id":"s-1","timestamp":"2026-11-28T10:00:00.000Z","cwd":"/w"}"#;

    #[test]
    fn a_file_round_trips_byte_for_byte_and_entries_keep_their_ids() {
        let text = format!("{HEADER}\n{{\"type\":\"message\",\"id\":\"a1\",\"x\":1}}\n{{\"id\":\"b2\",  \"y\" : 2}}\n");
        let lines = SessionLines::parse(&text).expect("parses");
        assert_eq!(lines.header.id, "s-1");
        assert_eq!(lines.header.cwd, "/w");
        assert_eq!(lines.entries.iter().map(|entry| entry.id.as_str()).collect::<Vec<_>>(), ["a1", "b2"]);
        assert_eq!(lines.to_text(), text);
        // A last line without its newline gets one.
        let lines = SessionLines::parse(text.trim_end()).expect("parses");
        assert_eq!(lines.to_text(), text);
        assert!(!lines.torn_tail);
        // A last line a crash cut short is left out, and said to be.
        let torn = SessionLines::parse(&format!("{text}{{\"type\":\"mess")).expect("parses");
        assert!(torn.torn_tail);
        assert_eq!(torn.to_text(), text);
    }

    #[test]
    fn bad_files_are_refused_with_the_line_that_is_wrong() {
        let message = |text: &str| SessionLines::parse(text).expect_err("refused").to_string();
        assert!(message("").contains("empty"));
        assert!(message("{\"type\":\"message\",\"id\":\"a\"}\n").contains("line 1: expected a session header"));
        assert!(message(&format!("{HEADER}\nnot json\n")).contains("line 2: expected a session entry"));
        assert!(message(&format!("{HEADER}\n{{\"id\":\"a\"}}\n{{\"id\":\"a\"}}\n")).contains("line 3: entry id \"a\""));
        let escaping = HEADER.replace("s-1", "../x");
        assert!(message(&escaping).contains("session id \"../x\""));
        let odd_time = HEADER.replace("2026-11-28T10:00:00.000Z", "now/then");
        assert!(message(&odd_time).contains("expected an ISO 8601 time"));
    }
}
