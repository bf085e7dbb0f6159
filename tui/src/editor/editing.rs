//! The editing commands: typing (grouped into one undo step), line breaks and submitting, deleting, the
//! kills and yanks of the kill ring, and undo.

use super::buffer::Position;
use super::{Editor, EditorOutcome, LastAction};

impl Editor {
    /// Inserts a typed character; a run of typing is one undo step.
    pub(crate) fn type_char(&mut self, c: char, previous: LastAction) {
        if previous != LastAction::Typing {
            self.undo.push(self.buffer.snapshot());
        }
        let mut utf8 = [0; 4];
        self.buffer.insert(c.encode_utf8(&mut utf8));
        self.last_action = LastAction::Typing;
    }

    /// Splits the line at the cursor.
    pub(crate) fn break_line(&mut self) {
        self.undo.push(self.buffer.snapshot());
        self.buffer.insert("\n");
    }

    /// Enter: a `\` just before the cursor becomes a line break (for terminals without Shift+Enter);
    /// otherwise the text is submitted.
    pub(crate) fn submit_or_break_line(&mut self) -> EditorOutcome {
        let cursor = self.buffer.cursor();
        if let Some(before) = self.buffer.position_before(cursor)
            && before.row == cursor.row
            && self.buffer.text_between(before, cursor) == "\\"
        {
            self.undo.push(self.buffer.snapshot());
            self.buffer.remove(before, cursor);
            self.buffer.insert("\n");
            return EditorOutcome::Handled;
        }
        self.submit()
    }

    /// Hands out the whole text (markers expanded) and empties the editor.
    pub(crate) fn submit(&mut self) -> EditorOutcome {
        let text = self.text();
        self.clear();
        EditorOutcome::Submit(text)
    }

    /// Deletes from the cursor to `target` (Backspace, Delete); nothing when there is nowhere to go.
    pub(crate) fn delete_to(&mut self, target: Option<Position>) {
        let cursor = self.buffer.cursor();
        let Some(target) = target.filter(|&target| target != cursor) else { return };
        self.undo.push(self.buffer.snapshot());
        self.buffer.remove(cursor, target);
    }

    /// Deletes from the cursor to `target` into the kill ring; right after another kill the text joins that
    /// kill's entry (before it when killing backward).
    pub(crate) fn kill_to(&mut self, target: Option<Position>, previous: LastAction) {
        let cursor = self.buffer.cursor();
        let Some(target) = target.filter(|&target| target != cursor) else {
            // Nothing to kill: the next kill still joins the one before.
            self.last_action = previous;
            return;
        };
        self.undo.push(self.buffer.snapshot());
        let killed = self.buffer.remove(cursor, target);
        self.kill_ring.push(killed, target < cursor, previous == LastAction::Kill);
        self.last_action = LastAction::Kill;
    }

    /// Ctrl+Y: inserts the newest kill.
    pub(crate) fn yank(&mut self) {
        let Some(text) = self.kill_ring.newest().map(str::to_owned) else { return };
        self.undo.push(self.buffer.snapshot());
        self.yank_start = Some(self.buffer.cursor());
        self.buffer.insert(&text);
        self.last_action = LastAction::Yank;
    }

    /// Alt+Y right after a yank: replaces the yanked text by the kill before it, cycling through the ring.
    pub(crate) fn yank_pop(&mut self, previous: LastAction) {
        let start = self.yank_start.filter(|_| previous == LastAction::Yank);
        let Some(start) = start.filter(|_| self.kill_ring.len() > 1) else {
            self.last_action = previous;
            return;
        };
        self.undo.push(self.buffer.snapshot());
        self.buffer.remove(start, self.buffer.cursor());
        self.kill_ring.rotate();
        let text = self.kill_ring.newest().unwrap_or_default().to_owned();
        self.yank_start = Some(self.buffer.cursor());
        self.buffer.insert(&text);
        self.last_action = LastAction::Yank;
    }

    /// Ctrl+-: back to the state before the last edit.
    pub(crate) fn undo_last(&mut self) {
        if let Some(snapshot) = self.undo.pop() {
            self.buffer.restore(snapshot);
        }
    }
}
