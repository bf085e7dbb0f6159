//! Key bindings written as text (`ctrl+c`, `shift+enter`, `alt+up`, `ctrl+shift+p`) and matched against
//! crossterm's key events, so a program names its keys the way its help screen shows them.

pub use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

/// One key with its modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyBinding {
    pub code: KeyCode,
    pub modifiers: KeyModifiers,
}

impl KeyBinding {
    /// Parses `ctrl+alt+x` style text; `None` when a part is not a key or modifier.
    pub fn parse(text: &str) -> Option<Self> {
        let mut modifiers = KeyModifiers::NONE;
        let parts: Vec<&str> = text.split('+').collect();
        let (key, mods) = match parts.split_last() {
            // `ctrl++` or a plain `+`.
            Some((last, rest)) if last.is_empty() && !rest.is_empty() => ("+", &rest[..rest.len() - 1]),
            Some((last, rest)) => (*last, rest),
            None => return None,
        };
        for part in mods {
            modifiers |= match part.to_ascii_lowercase().as_str() {
                "ctrl" => KeyModifiers::CONTROL,
                "alt" => KeyModifiers::ALT,
                "shift" => KeyModifiers::SHIFT,
                "super" => KeyModifiers::SUPER,
                _ => return None,
            };
        }
        let code = match key.to_ascii_lowercase().as_str() {
            "enter" | "return" => KeyCode::Enter,
            "escape" | "esc" => KeyCode::Esc,
            "tab" => KeyCode::Tab,
            "backspace" => KeyCode::Backspace,
            "delete" => KeyCode::Delete,
            "up" => KeyCode::Up,
            "down" => KeyCode::Down,
            "left" => KeyCode::Left,
            "right" => KeyCode::Right,
            "home" => KeyCode::Home,
            "end" => KeyCode::End,
            "pageup" => KeyCode::PageUp,
            "pagedown" => KeyCode::PageDown,
            "space" => KeyCode::Char(' '),
            other => {
                let mut chars = other.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => KeyCode::Char(c),
                    _ => return None,
                }
            }
        };
        Some(Self { code, modifiers })
    }

    /// Whether `event` (a press or repeat) is this key. Letters match in either case; Shift+Tab also
    /// arrives as BackTab, and Ctrl+- as Ctrl+_ on terminals without the kitty protocol.
    pub fn matches(&self, event: &KeyEvent) -> bool {
        if event.kind == KeyEventKind::Release {
            return false;
        }
        let (code, modifiers) = normalize(event.code, event.modifiers);
        let (want_code, want_modifiers) = normalize(self.code, self.modifiers);
        code == want_code && modifiers == want_modifiers
    }
}

/// One spelling per key: lowercase letters (with Shift when it was upper case), BackTab as Shift+Tab,
/// Ctrl+_ as Ctrl+-, and no Shift on characters that Shift produced (`?`, `!`).
fn normalize(code: KeyCode, modifiers: KeyModifiers) -> (KeyCode, KeyModifiers) {
    let modifiers = modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT | KeyModifiers::SUPER);
    match code {
        KeyCode::BackTab => (KeyCode::Tab, modifiers | KeyModifiers::SHIFT),
        KeyCode::Char('_') if modifiers.contains(KeyModifiers::CONTROL) => (KeyCode::Char('-'), modifiers),
        KeyCode::Char(c) if c.is_ascii_uppercase() => {
            (KeyCode::Char(c.to_ascii_lowercase()), modifiers | KeyModifiers::SHIFT)
        }
        KeyCode::Char(c) if c.is_ascii_lowercase() || c.is_ascii_digit() => (code, modifiers),
        KeyCode::Char(_) => (code, modifiers - KeyModifiers::SHIFT),
        _ => (code, modifiers),
    }
}

/// Whether `event` is the binding written as `text` (an unparsable text matches nothing).
pub fn is_key(event: &KeyEvent, text: &str) -> bool {
    KeyBinding::parse(text).is_some_and(|binding| binding.matches(event))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, modifiers)
    }

    #[test]
    fn bindings_match_their_keys() {
        assert!(is_key(&key(KeyCode::Char('c'), KeyModifiers::CONTROL), "ctrl+c"));
        assert!(!is_key(&key(KeyCode::Char('c'), KeyModifiers::NONE), "ctrl+c"));
        assert!(is_key(&key(KeyCode::Enter, KeyModifiers::ALT), "alt+enter"));
        assert!(is_key(&key(KeyCode::BackTab, KeyModifiers::SHIFT), "shift+tab"));
        assert!(is_key(&key(KeyCode::BackTab, KeyModifiers::NONE), "shift+tab"));
        assert!(is_key(&key(KeyCode::Char('P'), KeyModifiers::CONTROL | KeyModifiers::SHIFT), "ctrl+shift+p"));
        assert!(is_key(&key(KeyCode::Char('_'), KeyModifiers::CONTROL), "ctrl+-"));
        assert!(is_key(&key(KeyCode::Char('?'), KeyModifiers::SHIFT), "?"));
        assert!(is_key(&key(KeyCode::Char('+'), KeyModifiers::CONTROL), "ctrl++"));
        assert!(KeyBinding::parse("hyper+x").is_none());
    }
}
