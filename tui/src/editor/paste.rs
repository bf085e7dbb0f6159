//! Large pastes folded into markers (`[paste #N +L lines]`, `[paste #N C chars]`): the store of their
//! contents, recognising a marker in a line, expanding markers back to their text, and the cleaning every
//! text gets before it enters the editor.

use std::collections::BTreeMap;

/// A paste of more lines than this becomes a marker.
pub(crate) const MARKER_LINES: usize = 10;
/// A paste of more characters than this becomes a marker.
pub(crate) const MARKER_CHARS: usize = 1000;
/// What a tab becomes: the editor holds no tabs, so widths and the cursor stay simple.
const TAB_AS_SPACES: &str = "    ";
/// How every marker starts.
const MARKER_PREFIX: &str = "[paste #";

/// One folded paste: the marker shown in the editor and the text it stands for.
#[derive(Debug, Clone)]
struct FoldedPaste {
    marker: String,
    content: String,
}

/// The pastes shown as markers, by number; numbers count from 1 until [`PasteStore::clear`].
#[derive(Debug, Clone, Default)]
pub(crate) struct PasteStore {
    pastes: BTreeMap<usize, FoldedPaste>,
    last_number: usize,
}

impl PasteStore {
    /// Whether a (cleaned) paste is large enough to be folded into a marker.
    pub(crate) fn is_large(text: &str) -> bool {
        text.split('\n').count() > MARKER_LINES || text.chars().count() > MARKER_CHARS
    }

    /// Keeps `content` under the next number and returns the marker that stands for it.
    pub(crate) fn fold(&mut self, content: String) -> String {
        self.last_number += 1;
        let number = self.last_number;
        let lines = content.split('\n').count();
        let marker = if lines > MARKER_LINES {
            format!("{MARKER_PREFIX}{number} +{lines} lines]")
        } else {
            format!("{MARKER_PREFIX}{number} {} chars]", content.chars().count())
        };
        self.pastes.insert(number, FoldedPaste { marker: marker.clone(), content });
        marker
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.pastes.is_empty()
    }

    /// Forgets every paste; numbering starts again at 1.
    pub(crate) fn clear(&mut self) {
        self.pastes.clear();
        self.last_number = 0;
    }

    /// The byte length of the marker `text` starts with, when it is the marker of a stored paste.
    pub(crate) fn marker_len_at(&self, text: &str) -> Option<usize> {
        let (number, _) = marker_number(text)?;
        let paste = self.pastes.get(&number)?;
        text.starts_with(&paste.marker).then_some(paste.marker.len())
    }

    /// `text` with every marker of a stored paste replaced by the paste's content.
    pub(crate) fn expand(&self, text: &str) -> String {
        if self.pastes.is_empty() {
            return text.to_owned();
        }
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(found) = rest.find(MARKER_PREFIX) {
            out.push_str(&rest[..found]);
            let candidate = &rest[found..];
            let folded = marker_number(candidate)
                .and_then(|(number, _)| self.pastes.get(&number))
                .filter(|paste| candidate.starts_with(&paste.marker));
            match folded {
                Some(paste) => {
                    out.push_str(&paste.content);
                    rest = &candidate[paste.marker.len()..];
                }
                None => {
                    out.push('[');
                    rest = &candidate[1..];
                }
            }
        }
        out.push_str(rest);
        out
    }
}

/// The paste number of a text starting `[paste #N`, and the byte length of that start.
fn marker_number(text: &str) -> Option<(usize, usize)> {
    let rest = text.strip_prefix(MARKER_PREFIX)?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let number = rest.get(..digits)?.parse().ok()?;
    Some((number, MARKER_PREFIX.len() + digits))
}

/// Text made fit for the editor: CRLF and CR become LF, a tab becomes four spaces, and other control
/// characters (escapes included) are dropped.
pub(crate) fn clean_input(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                out.push('\n');
            }
            '\n' => out.push('\n'),
            '\t' => out.push_str(TAB_AS_SPACES),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}
