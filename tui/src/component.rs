//! The one trait every piece of the screen implements: draw yourself as lines of a given width.

/// Something that draws itself as styled lines.
pub trait Component {
    /// The lines at `width` columns; none wider than `width` (escapes do not count).
    fn render(&mut self, width: usize) -> Vec<String>;
}

/// A fixed list of lines (already styled), cut to the width when drawn.
#[derive(Debug, Clone, Default)]
pub struct Lines(pub Vec<String>);

impl Component for Lines {
    fn render(&mut self, width: usize) -> Vec<String> {
        self.0.iter().map(|line| crate::text::truncate_to_width(line, width, "")).collect()
    }
}
