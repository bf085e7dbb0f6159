//! Which editor command a key is: pi's hotkeys mapped from crossterm key events, including the spellings
//! legacy terminals send (Ctrl+] arrives as Ctrl+5, Ctrl+- as Ctrl+7 or Ctrl+_, Alt+key as ESC key) and
//! the Ctrl+Alt that AltGr characters carry on Windows.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// What a key asks the editor to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Command {
    Insert(char),
    Submit,
    NewLine,
    Left,
    Right,
    Up,
    Down,
    WordLeft,
    WordRight,
    LineStart,
    LineEnd,
    JumpForward,
    JumpBackward,
    Backspace,
    Delete,
    KillWordBackward,
    KillWordForward,
    KillToLineStart,
    KillToLineEnd,
    Yank,
    YankPop,
    Undo,
    Tab,
    Escape,
}

impl Command {
    /// Whether the command only moves the cursor (or starts a jump).
    pub(crate) fn is_motion(self) -> bool {
        matches!(
            self,
            Self::Left
                | Self::Right
                | Self::Up
                | Self::Down
                | Self::WordLeft
                | Self::WordRight
                | Self::LineStart
                | Self::LineEnd
                | Self::JumpForward
                | Self::JumpBackward
        )
    }
}

/// The command for `key`, or `None` when the key is not the editor's.
pub(crate) fn command_for(key: &KeyEvent) -> Option<Command> {
    let modifiers = key.modifiers;
    let none = modifiers.is_empty();
    let shift = modifiers == KeyModifiers::SHIFT;
    let ctrl = modifiers == KeyModifiers::CONTROL;
    let alt = modifiers == KeyModifiers::ALT;
    let ctrl_alt = modifiers == KeyModifiers::CONTROL | KeyModifiers::ALT;
    let command = match key.code {
        KeyCode::Char(c) if (none || shift) && !c.is_control() => Command::Insert(c),
        KeyCode::Char(c) if ctrl => control_command(c)?,
        KeyCode::Char(c) if alt => match c {
            'b' => Command::WordLeft,
            'f' => Command::WordRight,
            'd' => Command::KillWordForward,
            'y' => Command::YankPop,
            _ => return None,
        },
        KeyCode::Char(']' | '5') if ctrl_alt => Command::JumpBackward,
        // AltGr characters (`@`, `{`, `€` on many layouts) arrive as Ctrl+Alt on Windows.
        KeyCode::Char(c) if ctrl_alt && !c.is_ascii_alphanumeric() && !c.is_control() => Command::Insert(c),
        KeyCode::Char('_') if modifiers == KeyModifiers::CONTROL | KeyModifiers::SHIFT => Command::Undo,
        KeyCode::Enter if none => Command::Submit,
        KeyCode::Enter if shift => Command::NewLine,
        KeyCode::Left if none => Command::Left,
        KeyCode::Right if none => Command::Right,
        KeyCode::Left if alt || ctrl => Command::WordLeft,
        KeyCode::Right if alt || ctrl => Command::WordRight,
        KeyCode::Up if none => Command::Up,
        KeyCode::Down if none => Command::Down,
        KeyCode::Home if none => Command::LineStart,
        KeyCode::End if none => Command::LineEnd,
        KeyCode::Backspace if none || shift => Command::Backspace,
        KeyCode::Backspace if alt || ctrl => Command::KillWordBackward,
        KeyCode::Delete if none || shift => Command::Delete,
        KeyCode::Delete if alt || ctrl => Command::KillWordForward,
        KeyCode::Tab if none => Command::Tab,
        KeyCode::Esc if none => Command::Escape,
        _ => return None,
    };
    Some(command)
}

/// The command for Ctrl+`c`.
fn control_command(c: char) -> Option<Command> {
    let command = match c {
        'a' => Command::LineStart,
        'e' => Command::LineEnd,
        'b' => Command::Left,
        'f' => Command::Right,
        'j' => Command::NewLine,
        'w' => Command::KillWordBackward,
        'u' => Command::KillToLineStart,
        'k' => Command::KillToLineEnd,
        'y' => Command::Yank,
        ']' | '5' => Command::JumpForward,
        '-' | '_' | '7' => Command::Undo,
        _ => return None,
    };
    Some(command)
}
