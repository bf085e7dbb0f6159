//! A property-style test: thousands of random keys, pastes and widths (from a fixed-seed generator) must
//! never panic, must keep the cursor inside the text, must never draw a line wider than the width, and must
//! always draw the cursor cell whole.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use unicode_segmentation::UnicodeSegmentation;

use super::tests_support::{StubProvider, alt, ctrl, key, new_editor, with};
use super::{AutocompleteItem, AutocompleteProvider, CompletionTrigger, Editor, Suggestions};
use crate::text::{grapheme_width, visible_width};

/// xorshift64*: small, deterministic, good enough to pick keys.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound.max(1) as u64) as usize
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

/// A provider answering with ranges that are often wrong (past the end, reversed, inside characters).
struct Careless(Random);

impl AutocompleteProvider for Careless {
    fn suggest(&mut self, line: &str, cursor: usize, _trigger: CompletionTrigger) -> Suggestions {
        let count = self.0.below(4);
        let items = (0..count).map(|n| AutocompleteItem::new(format!("v{n}日")).with_description("d".repeat(n * 30)));
        let start = self.0.below(line.len() + 3);
        let end = if self.0.below(2) == 0 { cursor } else { self.0.below(line.len() + 3) };
        Suggestions { items: items.collect(), replace: start..end }
    }
}

const CHARACTERS: &[char] = &[
    'a',
    'b',
    ' ',
    ' ',
    '/',
    '@',
    '\\',
    '-',
    '.',
    '[',
    ']',
    '#',
    '日',
    '本',
    '👍',
    '\u{1F3FD}',
    '\u{301}',
    'é',
    '\u{200B}',
];

fn random_key(random: &mut Random) -> KeyEvent {
    let plain = [
        KeyCode::Enter,
        KeyCode::Left,
        KeyCode::Right,
        KeyCode::Up,
        KeyCode::Down,
        KeyCode::Home,
        KeyCode::End,
        KeyCode::Backspace,
        KeyCode::Delete,
        KeyCode::Tab,
        KeyCode::Esc,
        KeyCode::PageUp,
    ];
    match random.below(10) {
        0..=4 => key(KeyCode::Char(random.pick(CHARACTERS))),
        5 | 6 => key(random.pick(&plain)),
        7 => ctrl(random.pick(&['a', 'e', 'b', 'f', 'j', 'w', 'u', 'k', 'y', ']', '5', '-', '_', '7', 'c'])),
        8 => alt(random.pick(&['b', 'f', 'd', 'y'])),
        _ => {
            let modifiers = random.pick(&[KeyModifiers::SHIFT, KeyModifiers::ALT, KeyModifiers::CONTROL]);
            with(
                random.pick(&[KeyCode::Enter, KeyCode::Left, KeyCode::Right, KeyCode::Backspace, KeyCode::Delete]),
                modifiers,
            )
        }
    }
}

fn random_paste(random: &mut Random) -> String {
    let lines = random.pick(&[1, 2, 5, 12]);
    let length = random.pick(&[0, 3, 40, 700]);
    let mut text = String::new();
    for line in 0..lines {
        if line > 0 {
            text.push(random.pick(&['\n', '\r']));
        }
        text.extend((0..length).map(|_| random.pick(CHARACTERS)));
        text.push('\t');
    }
    text
}

fn check(editor: &mut Editor, width: usize, step: usize) {
    let lines = editor.render(width);
    for line in &lines {
        assert!(visible_width(line) <= width, "step {step}: {line:?} wider than {width}");
    }
    // From 3 columns on, the cursor cell is never cut off: one row holds it, and a character follows it.
    // (Random text can make graphemes wider than that, such as a letter with two skin-tone modifiers.)
    let text = editor.display_text();
    if width >= 3 && text.graphemes(true).all(|grapheme| grapheme_width(grapheme) <= 2) {
        let cursor_cells: Vec<&str> =
            lines.iter().filter_map(|line| line.split_once("\x1b[7m")).map(|(_, rest)| rest).collect();
        assert_eq!(cursor_cells.len(), 1, "step {step}: {lines:?}");
        assert!(cursor_cells.iter().all(|rest| !rest.starts_with('\x1b')), "step {step}: {lines:?}");
    }
    let (row, col) = editor.cursor();
    let line = text.split('\n').nth(row);
    assert!(
        line.is_some_and(|line| col <= line.len() && line.is_char_boundary(col)),
        "step {step}: cursor {row},{col}"
    );
    let _ = editor.text();
}

/// What a run went through, to show the test reaches the interesting states.
#[derive(Default)]
struct Coverage {
    list_open: usize,
    markers: usize,
    multi_line: usize,
}

fn run(seed: u64, steps: usize, careless: bool, coverage: &mut Coverage) {
    let mut random = Random(seed);
    let mut editor = new_editor();
    if careless {
        editor.set_autocomplete(Box::new(Careless(Random(seed ^ 0x9E37_79B9))));
    } else {
        editor.set_autocomplete(Box::new(StubProvider::standard()));
    }
    for step in 0..steps {
        match random.below(60) {
            0 => editor.handle_paste(&random_paste(&mut random)),
            1 => editor.add_to_history(random_paste(&mut random)),
            2 => editor.set_max_rows(random.below(6)),
            3 => editor.insert_text("x\ty"),
            _ => {
                editor.handle_key(&random_key(&mut random));
            }
        }
        let width = random.pick(&[1, 2, 3, 5, 10, 17, 40, 80]);
        check(&mut editor, width, step);
        let text = editor.display_text();
        coverage.list_open += usize::from(editor.is_autocomplete_open());
        coverage.markers += usize::from(text.contains("[paste #"));
        coverage.multi_line += usize::from(text.contains('\n'));
    }
}

#[test]
fn random_keys_never_panic_or_overflow() {
    let mut coverage = Coverage::default();
    for seed in 1..=12 {
        run(seed * 7919, 3000, seed % 2 == 0, &mut coverage);
    }
    assert!(coverage.list_open > 100 && coverage.markers > 100 && coverage.multi_line > 100);
}
