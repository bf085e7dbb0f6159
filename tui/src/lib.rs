//! pi-tui: a terminal UI library for programs that draw themselves as lines. Components render to styled
//! lines at a given width; the differential renderer writes only what changed, either inline (the output
//! joins the terminal's scrollback) or fullscreen (the alternate screen). It knows nothing of agents.

pub mod component;
pub mod editor;
pub mod keys;
pub mod markdown;
pub mod renderer;
pub mod select_list;
pub mod terminal;
pub mod text;
pub mod theme;

pub use component::Component;
pub use keys::KeyBinding;
pub use theme::{Background, ColorDepth, Role, Theme};
