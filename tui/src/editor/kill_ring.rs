//! The kill ring: text removed by the kill commands, newest last, for yanking back (Ctrl+Y) and cycling
//! through older kills (Alt+Y), as in Emacs.

/// How many kills the ring keeps.
const KILL_RING_CAPACITY: usize = 60;

/// Killed texts, the most recent last.
#[derive(Debug, Clone, Default)]
pub(crate) struct KillRing {
    entries: Vec<String>,
}

impl KillRing {
    /// Records a kill. With `accumulate` (the previous command was a kill too) the text joins the newest
    /// entry: before it for a backward kill (`prepend`), after it otherwise.
    pub(crate) fn push(&mut self, text: String, prepend: bool, accumulate: bool) {
        if text.is_empty() {
            return;
        }
        if accumulate && let Some(newest) = self.entries.last_mut() {
            if prepend {
                newest.insert_str(0, &text);
            } else {
                newest.push_str(&text);
            }
            return;
        }
        self.entries.push(text);
        if self.entries.len() > KILL_RING_CAPACITY {
            self.entries.remove(0);
        }
    }

    /// The most recent kill.
    pub(crate) fn newest(&self) -> Option<&str> {
        self.entries.last().map(String::as_str)
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Moves the newest entry to the far end, so the one before it becomes the newest.
    pub(crate) fn rotate(&mut self) {
        if let Some(newest) = self.entries.pop() {
            self.entries.insert(0, newest);
        }
    }
}
