//! The undo stack: snapshots of the text and cursor taken before each edit.

use super::buffer::Snapshot;

/// How many undo steps are kept.
const UNDO_CAPACITY: usize = 200;

/// Snapshots before edits, the latest last.
#[derive(Debug, Clone, Default)]
pub(crate) struct UndoStack {
    snapshots: Vec<Snapshot>,
}

impl UndoStack {
    /// Records the state before an edit (a state equal to the last one recorded is not recorded twice).
    pub(crate) fn push(&mut self, snapshot: Snapshot) {
        if self.snapshots.last() == Some(&snapshot) {
            return;
        }
        self.snapshots.push(snapshot);
        if self.snapshots.len() > UNDO_CAPACITY {
            self.snapshots.remove(0);
        }
    }

    /// The state before the latest edit.
    pub(crate) fn pop(&mut self) -> Option<Snapshot> {
        self.snapshots.pop()
    }

    pub(crate) fn clear(&mut self) {
        self.snapshots.clear();
    }
}
