//! Key dispatch: a pending jump takes its character first, then the open suggestions take their keys, then
//! the editor's commands run; after a command, edits end history browsing and refresh the suggestions, and
//! motions close them.

use crossterm::event::{KeyEvent, KeyEventKind};

use super::keymap::{self, Command};
use super::{Editor, EditorOutcome, JumpDirection, LastAction};

impl Editor {
    /// Handles one key (presses and repeats; releases are ignored) and says whether it was the editor's.
    /// See the [module documentation](super) for the keys; any other key is [`EditorOutcome::Ignored`].
    pub fn handle_key(&mut self, key: &KeyEvent) -> EditorOutcome {
        if key.kind == KeyEventKind::Release {
            return EditorOutcome::Ignored;
        }
        let command = keymap::command_for(key);
        if let Some(direction) = self.pending_jump.take() {
            match command {
                Some(Command::Insert(target)) => {
                    self.jump_to(target, direction);
                    self.last_action = LastAction::Other;
                    self.preferred_column = None;
                    self.completion = None;
                    return EditorOutcome::Handled;
                }
                // The jump key again cancels the jump.
                Some(Command::JumpForward | Command::JumpBackward) => return EditorOutcome::Handled,
                _ => {}
            }
        }
        let Some(command) = command else { return EditorOutcome::Ignored };
        if self.completion.is_some()
            && let Some(outcome) = self.handle_completion_key(command)
        {
            return outcome;
        }
        if command == Command::Escape || (command == Command::Tab && self.provider.is_none()) {
            return EditorOutcome::Ignored;
        }
        let version = self.buffer.version();
        let previous = std::mem::replace(&mut self.last_action, LastAction::Other);
        if !matches!(command, Command::Up | Command::Down) {
            self.preferred_column = None;
        }
        let outcome = self.run(command, previous);
        let changed = self.buffer.version() != version;
        if changed && !matches!(command, Command::Up | Command::Down) {
            self.history.stop_browsing();
        }
        if command.is_motion() || matches!(command, Command::Submit) {
            self.completion = None;
        } else if changed && command != Command::Tab {
            self.refresh_completion();
        }
        outcome
    }

    /// The keys of the open suggestions: Up/Down select, Tab accepts, Enter accepts (and submits when the
    /// item asks to), Escape closes. `None` for keys that go on to the editor.
    fn handle_completion_key(&mut self, command: Command) -> Option<EditorOutcome> {
        let list = self.completion.as_mut()?;
        match command {
            Command::Up => list.select_previous(),
            Command::Down => list.select_next(),
            Command::Tab => {
                self.accept_completion();
            }
            Command::Submit => {
                if self.accept_completion() {
                    return Some(self.submit());
                }
            }
            Command::Escape => self.completion = None,
            _ => return None,
        }
        Some(EditorOutcome::Handled)
    }

    /// Runs one command; `previous` is the command before it (for undo grouping, kills and yanks).
    fn run(&mut self, command: Command, previous: LastAction) -> EditorOutcome {
        let cursor = self.buffer.cursor();
        let line_len = self.buffer.line(cursor.row).len();
        match command {
            Command::Insert(c) => self.type_char(c, previous),
            Command::Submit => return self.submit_or_break_line(),
            Command::NewLine => self.break_line(),
            Command::Left => self.move_to(self.buffer.position_before(cursor)),
            Command::Right => self.move_to(self.buffer.position_after(cursor)),
            Command::Up => self.move_up(),
            Command::Down => self.move_down(),
            Command::WordLeft => self.move_to(self.buffer.word_start_before(cursor)),
            Command::WordRight => self.move_to(self.buffer.word_end_after(cursor)),
            Command::LineStart => self.move_to(Some(cursor.with_col(0))),
            Command::LineEnd => self.move_to(Some(cursor.with_col(line_len))),
            Command::JumpForward => self.pending_jump = Some(JumpDirection::Forward),
            Command::JumpBackward => self.pending_jump = Some(JumpDirection::Backward),
            Command::Backspace => self.delete_to(self.buffer.position_before(cursor)),
            Command::Delete => self.delete_to(self.buffer.position_after(cursor)),
            Command::KillWordBackward => self.kill_to(self.buffer.word_start_before(cursor), previous),
            Command::KillWordForward => self.kill_to(self.buffer.word_end_after(cursor), previous),
            Command::KillToLineStart => {
                let target =
                    if cursor.col > 0 { Some(cursor.with_col(0)) } else { self.buffer.position_before(cursor) };
                self.kill_to(target, previous);
            }
            Command::KillToLineEnd => {
                let target = if cursor.col < line_len {
                    Some(cursor.with_col(line_len))
                } else {
                    self.buffer.position_after(cursor)
                };
                self.kill_to(target, previous);
            }
            Command::Yank => self.yank(),
            Command::YankPop => self.yank_pop(previous),
            Command::Undo => self.undo_last(),
            Command::Tab => return self.complete_with_tab(),
            Command::Escape => return EditorOutcome::Ignored,
        }
        EditorOutcome::Handled
    }
}
