//! A line cut into the units the cursor steps over (grapheme clusters, and each paste marker as one unit),
//! what kind of text each unit is, and the word motions built on those kinds.

use unicode_segmentation::UnicodeSegmentation;

use super::paste::PasteStore;

/// What a unit is, for word motions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UnitClass {
    Space,
    Punctuation,
    Word,
    /// A paste marker: a word of its own.
    Marker,
}

/// One step of the cursor: the bytes `start..end` of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unit {
    pub start: usize,
    pub end: usize,
    pub class: UnitClass,
}

/// The units of `line`, in order, covering it completely.
pub(crate) fn line_units(line: &str, pastes: &PasteStore) -> Vec<Unit> {
    let mut units = Vec::new();
    let mut plain_start = 0;
    if !pastes.is_empty() {
        let mut search = 0;
        while let Some(found) = line.get(search..).and_then(|rest| rest.find('[')) {
            let at = search + found;
            match line.get(at..).and_then(|rest| pastes.marker_len_at(rest)) {
                Some(len) => {
                    push_graphemes(&mut units, line, plain_start, at);
                    units.push(Unit { start: at, end: at + len, class: UnitClass::Marker });
                    plain_start = at + len;
                    search = plain_start;
                }
                None => search = at + 1,
            }
        }
    }
    push_graphemes(&mut units, line, plain_start, line.len());
    units
}

fn push_graphemes(units: &mut Vec<Unit>, line: &str, from: usize, to: usize) {
    let Some(text) = line.get(from..to) else { return };
    units.extend(text.grapheme_indices(true).map(|(at, grapheme)| Unit {
        start: from + at,
        end: from + at + grapheme.len(),
        class: class_of(grapheme),
    }));
}

/// The kind of a grapheme cluster, by its first character.
fn class_of(grapheme: &str) -> UnitClass {
    match grapheme.chars().next() {
        Some(c) if c.is_whitespace() => UnitClass::Space,
        Some(c) if is_punctuation(c) => UnitClass::Punctuation,
        _ => UnitClass::Word,
    }
}

/// ASCII punctuation, general punctuation, CJK punctuation and the full-width forms of ASCII punctuation.
fn is_punctuation(c: char) -> bool {
    const GENERAL: [(char, char); 2] = [('\u{2010}', '\u{2027}'), ('\u{2030}', '\u{205E}')];
    const CJK: [(char, char); 2] = [('\u{3001}', '\u{3003}'), ('\u{3008}', '\u{3011}')];
    const FULL_WIDTH: [(char, char); 4] =
        [('\u{FF01}', '\u{FF0F}'), ('\u{FF1A}', '\u{FF20}'), ('\u{FF3B}', '\u{FF40}'), ('\u{FF5B}', '\u{FF65}')];
    c.is_ascii_punctuation()
        || GENERAL.iter().chain(&CJK).chain(&FULL_WIDTH).any(|&(first, last)| (first..=last).contains(&c))
        || matches!(c, '«' | '»' | '¡' | '¿' | '§' | '¶')
}

/// Every position the cursor may take in a line of `len` bytes cut into `units`: each unit's start and the end.
pub(crate) fn boundaries(units: &[Unit], len: usize) -> Vec<usize> {
    units.iter().map(|unit| unit.start).chain(std::iter::once(len)).collect()
}

/// Where a backward word motion from `col` lands: over spaces, then over one run of word or punctuation
/// units (a marker is a run of its own).
pub(crate) fn word_start_before(units: &[Unit], col: usize) -> usize {
    let mut index = units.iter().take_while(|unit| unit.end <= col).count();
    while index > 0 && units.get(index - 1).is_some_and(|unit| unit.class == UnitClass::Space) {
        index -= 1;
    }
    if let Some(class) = index.checked_sub(1).and_then(|last| units.get(last)).map(|unit| unit.class) {
        if class == UnitClass::Marker {
            index -= 1;
        } else {
            while index > 0 && units.get(index - 1).is_some_and(|unit| unit.class == class) {
                index -= 1;
            }
        }
    }
    units.get(index).map_or(0, |unit| unit.start.min(col))
}

/// Where a forward word motion from `col` lands: over spaces, then to the end of one run of word or
/// punctuation units (a marker is a run of its own).
pub(crate) fn word_end_after(units: &[Unit], col: usize, len: usize) -> usize {
    let mut index = units.iter().take_while(|unit| unit.start < col).count();
    while units.get(index).is_some_and(|unit| unit.class == UnitClass::Space) {
        index += 1;
    }
    if let Some(class) = units.get(index).map(|unit| unit.class) {
        index += 1;
        if class != UnitClass::Marker {
            while units.get(index).is_some_and(|unit| unit.class == class) {
                index += 1;
            }
        }
    }
    index.checked_sub(1).and_then(|last| units.get(last)).map_or(len, |unit| unit.end.max(col))
}
