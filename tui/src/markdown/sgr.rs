//! The SGR attributes in force at a point of a styled line, kept compact: replaying them at the start of a
//! wrapped line costs a few escapes however many styles came and went before.

use std::fmt::Write;

/// Text attributes set by SGR escapes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct SgrState {
    /// The parameters that set the colours (`38;2;r;g;b`, `31`), `None` for the default.
    foreground: Option<String>,
    background: Option<String>,
    bold: bool,
    dim: bool,
    italic: bool,
    underline: bool,
    blink: bool,
    inverse: bool,
    hidden: bool,
    strikethrough: bool,
    /// Escapes with parameters not understood here, replayed as they came.
    other: String,
}

impl SgrState {
    /// Follows one escape sequence; anything but an SGR one (`ESC [ ... m`) changes nothing.
    pub(super) fn apply(&mut self, escape: &str) {
        let Some(params) = escape.strip_prefix("\x1b[").and_then(|rest| rest.strip_suffix('m')) else { return };
        if params.bytes().any(|byte| !byte.is_ascii_digit() && byte != b';') {
            self.other.push_str(escape);
            return;
        }
        let codes: Vec<&str> = params.split(';').collect();
        let mut index = 0;
        while index < codes.len() {
            let code = codes[index].parse::<u16>().unwrap_or(0);
            index += 1;
            match code {
                0 => *self = Self::default(),
                1 => self.bold = true,
                2 => self.dim = true,
                3 => self.italic = true,
                4 | 21 => self.underline = true,
                5 | 6 => self.blink = true,
                7 => self.inverse = true,
                8 => self.hidden = true,
                9 => self.strikethrough = true,
                22 => (self.bold, self.dim) = (false, false),
                23 => self.italic = false,
                24 => self.underline = false,
                25 => self.blink = false,
                27 => self.inverse = false,
                28 => self.hidden = false,
                29 => self.strikethrough = false,
                30..=37 | 90..=97 => self.foreground = Some(code.to_string()),
                39 => self.foreground = None,
                40..=47 | 100..=107 => self.background = Some(code.to_string()),
                49 => self.background = None,
                38 | 48 => {
                    // 38;5;n or 38;2;r;g;b (and the same with 48 for the background).
                    let length = match codes.get(index).copied() {
                        Some("5") => 2,
                        Some("2") => 4,
                        _ => 0,
                    };
                    let end = (index + length).min(codes.len());
                    let mut color = code.to_string();
                    for part in &codes[index..end] {
                        color.push(';');
                        color.push_str(part);
                    }
                    index = end;
                    if code == 38 { self.foreground = Some(color) } else { self.background = Some(color) }
                }
                _ => {
                    let _ = write!(self.other, "\x1b[{code}m");
                }
            }
        }
    }

    /// Whether any attribute is set.
    pub(super) fn is_active(&self) -> bool {
        *self != Self::default()
    }

    /// The escapes that set these attributes from none.
    pub(super) fn replay(&self) -> String {
        let mut codes: Vec<&str> = Vec::new();
        let flags = [
            (self.bold, "1"),
            (self.dim, "2"),
            (self.italic, "3"),
            (self.underline, "4"),
            (self.blink, "5"),
            (self.inverse, "7"),
            (self.hidden, "8"),
            (self.strikethrough, "9"),
        ];
        codes.extend(flags.iter().filter(|(on, _)| *on).map(|(_, code)| *code));
        codes.extend(self.foreground.as_deref());
        codes.extend(self.background.as_deref());
        let mut out = String::new();
        if !codes.is_empty() {
            out = format!("\x1b[{}m", codes.join(";"));
        }
        out.push_str(&self.other);
        out
    }
}
