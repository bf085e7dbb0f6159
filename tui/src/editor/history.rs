//! Prompt history for Up/Down: submitted texts, newest first, and where browsing is (with the draft that
//! was in the editor when browsing began, restored when browsing comes back past the newest entry).

/// How many entries the history keeps.
const HISTORY_CAPACITY: usize = 100;

/// Entries newest first, and the entry being shown while browsing.
#[derive(Debug, Clone, Default)]
pub(crate) struct History {
    entries: Vec<String>,
    browsing: Option<usize>,
    draft: String,
}

impl History {
    /// Adds an entry, trimmed; empty texts and a repeat of the newest entry are skipped.
    pub(crate) fn add(&mut self, text: &str) {
        let text = text.trim();
        if text.is_empty() || self.entries.first().is_some_and(|newest| newest == text) {
            return;
        }
        self.entries.insert(0, text.to_owned());
        self.entries.truncate(HISTORY_CAPACITY);
    }

    pub(crate) fn is_browsing(&self) -> bool {
        self.browsing.is_some()
    }

    /// Leaves browsing (after an edit): the shown entry becomes the draft.
    pub(crate) fn stop_browsing(&mut self) {
        self.browsing = None;
        self.draft.clear();
    }

    /// The next older entry; `current` is kept as the draft when browsing begins. `None` at the oldest.
    pub(crate) fn older(&mut self, current: &str) -> Option<String> {
        let next = self.browsing.map_or(0, |index| index + 1);
        let entry = self.entries.get(next)?.clone();
        if self.browsing.is_none() {
            self.draft = current.to_owned();
        }
        self.browsing = Some(next);
        Some(entry)
    }

    /// The next newer entry, or the draft after the newest; `None` when not browsing.
    pub(crate) fn newer(&mut self) -> Option<String> {
        match self.browsing? {
            0 => {
                self.browsing = None;
                Some(std::mem::take(&mut self.draft))
            }
            index => {
                self.browsing = Some(index - 1);
                self.entries.get(index - 1).cloned()
            }
        }
    }
}
