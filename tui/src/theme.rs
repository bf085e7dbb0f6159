//! Colours by role (dark and light palettes), the terminal's colour depth, and `NO_COLOR`: every style a
//! component applies goes through a [`Theme`], so a theme change or `NO_COLOR` reaches the whole screen.

use crossterm::style::{Color, SetBackgroundColor, SetForegroundColor};

/// What a foreground colour is used for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Role {
    Accent,
    Border,
    BorderAccent,
    BorderMuted,
    Success,
    Error,
    Warning,
    Muted,
    Dim,
    Text,
    ThinkingText,
    ToolTitle,
    ToolOutput,
    MdHeading,
    MdLink,
    MdLinkUrl,
    MdCode,
    MdCodeBlock,
    MdCodeBlockBorder,
    MdQuote,
    MdQuoteBorder,
    MdHr,
    MdListBullet,
    BashMode,
}

/// What a background colour is used for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Background {
    Selected,
    UserMessage,
    CustomMessage,
    ToolPending,
    ToolSuccess,
    ToolError,
}

/// How many colours the terminal shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ColorDepth {
    /// No colours at all (`NO_COLOR`); bold, italic, dim and the like stay.
    None,
    /// The 256-colour palette.
    Ansi256,
    /// 24-bit colour.
    TrueColor,
}

impl ColorDepth {
    /// From the environment: `NO_COLOR` (any non-empty value) turns colours off; `COLORTERM` of
    /// `truecolor` or `24bit` means 24-bit colour; anything else gets the 256-colour palette.
    pub fn detect(var: impl Fn(&str) -> Option<String>) -> Self {
        if var("NO_COLOR").is_some_and(|value| !value.is_empty()) {
            return Self::None;
        }
        match var("COLORTERM").as_deref() {
            Some("truecolor" | "24bit") => Self::TrueColor,
            _ => Self::Ansi256,
        }
    }
}

type Rgb = (u8, u8, u8);

/// A palette and the depth it is shown in.
#[derive(Debug, Clone)]
pub struct Theme {
    name: &'static str,
    depth: ColorDepth,
    foreground: fn(Role) -> Rgb,
    background: fn(Background) -> Rgb,
}

impl Theme {
    /// The palette for dark terminals.
    pub fn dark(depth: ColorDepth) -> Self {
        Self { name: "dark", depth, foreground: dark_foreground, background: dark_background }
    }

    /// The palette for light terminals.
    pub fn light(depth: ColorDepth) -> Self {
        Self { name: "light", depth, foreground: light_foreground, background: light_background }
    }

    /// The theme called `name` (`dark` or `light`).
    pub fn named(name: &str, depth: ColorDepth) -> Option<Self> {
        match name {
            "dark" => Some(Self::dark(depth)),
            "light" => Some(Self::light(depth)),
            _ => None,
        }
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    pub fn depth(&self) -> ColorDepth {
        self.depth
    }

    /// `text` in the colour of `role`.
    pub fn fg(&self, role: Role, text: &str) -> String {
        match self.color((self.foreground)(role)) {
            Some(color) => format!("{}{text}\x1b[39m", SetForegroundColor(color)),
            None => text.to_owned(),
        }
    }

    /// `text` on the background of `background`.
    pub fn bg(&self, background: Background, text: &str) -> String {
        match self.color((self.background)(background)) {
            Some(color) => format!("{}{text}\x1b[49m", SetBackgroundColor(color)),
            None => text.to_owned(),
        }
    }

    /// The escape that starts the background of `background` (empty without colours), for a whole line.
    pub fn bg_start(&self, background: Background) -> String {
        self.color((self.background)(background)).map(|color| SetBackgroundColor(color).to_string()).unwrap_or_default()
    }

    pub fn bold(&self, text: &str) -> String {
        format!("\x1b[1m{text}\x1b[22m")
    }

    pub fn dim(&self, text: &str) -> String {
        format!("\x1b[2m{text}\x1b[22m")
    }

    pub fn italic(&self, text: &str) -> String {
        format!("\x1b[3m{text}\x1b[23m")
    }

    pub fn underline(&self, text: &str) -> String {
        format!("\x1b[4m{text}\x1b[24m")
    }

    pub fn inverse(&self, text: &str) -> String {
        format!("\x1b[7m{text}\x1b[27m")
    }

    pub fn strikethrough(&self, text: &str) -> String {
        format!("\x1b[9m{text}\x1b[29m")
    }

    fn color(&self, (r, g, b): Rgb) -> Option<Color> {
        match self.depth {
            ColorDepth::None => None,
            ColorDepth::TrueColor => Some(Color::Rgb { r, g, b }),
            ColorDepth::Ansi256 => Some(Color::AnsiValue(ansi256(r, g, b))),
        }
    }
}

/// The nearest entry of the 256-colour palette: the 6x6x6 cube or the grey ramp, whichever is closer.
fn ansi256(r: u8, g: u8, b: u8) -> u8 {
    const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];
    let cube_index =
        |value: u8| LEVELS.iter().enumerate().min_by_key(|(_, level)| level.abs_diff(value)).map_or(0, |(i, _)| i);
    let (ri, gi, bi) = (cube_index(r), cube_index(g), cube_index(b));
    let cube = (LEVELS[ri], LEVELS[gi], LEVELS[bi]);
    let average = (u16::from(r) + u16::from(g) + u16::from(b)) / 3;
    let grey_index = (average.saturating_sub(3) / 10).min(23) as u8;
    let grey = 8 + 10 * grey_index;
    let distance = |(cr, cg, cb): Rgb| {
        let d = |a: u8, b: u8| u32::from(a.abs_diff(b)).pow(2);
        d(cr, r) + d(cg, g) + d(cb, b)
    };
    if distance((grey, grey, grey)) < distance(cube) {
        232 + grey_index
    } else {
        16 + 36 * ri as u8 + 6 * gi as u8 + bi as u8
    }
}

fn dark_foreground(role: Role) -> Rgb {
    match role {
        Role::Accent | Role::MdCode | Role::MdListBullet => (0x7f, 0xc8, 0xc0),
        Role::Border => (0x62, 0x8c, 0xf0),
        Role::BorderAccent => (0x3c, 0xc8, 0xf0),
        Role::BorderMuted | Role::MdCodeBlockBorder | Role::MdHr => (0x5a, 0x5a, 0x5a),
        Role::Success => (0xa8, 0xc0, 0x6c),
        Role::Error => (0xd8, 0x6a, 0x6a),
        Role::Warning => (0xe8, 0xc8, 0x4a),
        Role::Muted | Role::ThinkingText | Role::MdQuote | Role::ToolOutput => (0x8c, 0x8c, 0x8c),
        Role::Dim | Role::MdQuoteBorder | Role::MdLinkUrl => (0x68, 0x68, 0x68),
        Role::Text | Role::ToolTitle | Role::MdCodeBlock => (0xdc, 0xdc, 0xdc),
        Role::MdHeading => (0xee, 0xc8, 0x78),
        Role::MdLink => (0x86, 0xa8, 0xd0),
        Role::BashMode => (0xd0, 0x8c, 0xe0),
    }
}

fn dark_background(background: Background) -> Rgb {
    match background {
        Background::Selected => (0x3a, 0x3c, 0x4c),
        Background::UserMessage => (0x33, 0x35, 0x40),
        Background::CustomMessage => (0x2e, 0x2a, 0x3a),
        Background::ToolPending => (0x28, 0x29, 0x33),
        Background::ToolSuccess => (0x27, 0x31, 0x29),
        Background::ToolError => (0x3b, 0x28, 0x29),
    }
}

fn light_foreground(role: Role) -> Rgb {
    match role {
        Role::Accent | Role::MdCode | Role::MdListBullet => (0x1c, 0x7c, 0x74),
        Role::Border => (0x2c, 0x5c, 0xc8),
        Role::BorderAccent => (0x10, 0x88, 0xb8),
        Role::BorderMuted | Role::MdCodeBlockBorder | Role::MdHr => (0xb0, 0xb0, 0xb0),
        Role::Success => (0x3c, 0x7c, 0x2c),
        Role::Error => (0xb8, 0x30, 0x30),
        Role::Warning => (0x9c, 0x70, 0x00),
        Role::Muted | Role::ThinkingText | Role::MdQuote | Role::ToolOutput => (0x6c, 0x6c, 0x6c),
        Role::Dim | Role::MdQuoteBorder | Role::MdLinkUrl => (0x96, 0x96, 0x96),
        Role::Text | Role::ToolTitle | Role::MdCodeBlock => (0x20, 0x20, 0x20),
        Role::MdHeading => (0x9c, 0x5c, 0x00),
        Role::MdLink => (0x20, 0x5c, 0xb0),
        Role::BashMode => (0x8c, 0x38, 0xa8),
    }
}

fn light_background(background: Background) -> Rgb {
    match background {
        Background::Selected => (0xdc, 0xe0, 0xf0),
        Background::UserMessage => (0xec, 0xec, 0xf0),
        Background::CustomMessage => (0xf0, 0xe8, 0xf4),
        Background::ToolPending => (0xf0, 0xf0, 0xf4),
        Background::ToolSuccess => (0xe8, 0xf4, 0xe8),
        Background::ToolError => (0xf8, 0xe4, 0xe4),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_color_keeps_attributes_and_drops_colours() {
        let depth = ColorDepth::detect(|name| (name == "NO_COLOR").then(|| "1".to_owned()));
        assert_eq!(depth, ColorDepth::None);
        let theme = Theme::dark(depth);
        assert_eq!(theme.fg(Role::Accent, "x"), "x");
        assert_eq!(theme.bg(Background::UserMessage, "x"), "x");
        assert_eq!(theme.bold("x"), "\x1b[1mx\x1b[22m");
    }

    #[test]
    fn depth_follows_colorterm() {
        let truecolor = ColorDepth::detect(|name| (name == "COLORTERM").then(|| "truecolor".to_owned()));
        assert_eq!(truecolor, ColorDepth::TrueColor);
        assert_eq!(Theme::dark(truecolor).fg(Role::Error, "e"), "\x1b[38;2;216;106;106me\x1b[39m");
        assert_eq!(ColorDepth::detect(|_| None), ColorDepth::Ansi256);
        assert_eq!(Theme::light(ColorDepth::Ansi256).fg(Role::Text, "t"), "\x1b[38;5;234mt\x1b[39m");
    }

    #[test]
    fn the_256_colour_palette_is_nearest() {
        assert_eq!(ansi256(0, 0, 0), 16);
        assert_eq!(ansi256(255, 0, 0), 196);
        assert_eq!(ansi256(128, 128, 128), 244);
        assert_eq!(ansi256(255, 255, 255), 231);
    }
}
