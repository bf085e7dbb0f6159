//! JavaScript's `localeCompare` (ICU root collation) approximated for file names: punctuation before digits
//! before letters, accented Latin letters next to their base letter, other scripts after Latin.

use std::cmp::Ordering;

/// ASCII in ICU root order (upper case shares its lower-case letter's place).
const ICU_ASCII_ORDER: &[u8] =
    b" _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789aAbBcCdDeEfFgGhHiIjJkKlLmMnNoOpPqQrRsStTuUvVwWxXyYzZ";

/// Base letters of U+00C0..=U+00FF ('.' where the character is not a letter with a base).
const LATIN1_BASES: &[u8; 64] = b"aaaaaaaceeeeiiiidnooooo.ouuuuy.saaaaaaaceeeeiiiidnooooo.ouuuuy.y";

/// Base letters of U+0100..=U+017F (Latin Extended-A).
const LATIN_EXTENDED_A_BASES: &[u8; 128] = b"aaaaaaccccccccddddeeeeeeeeeegggggggghhhhiiiiiiiiiiiijjkkkllllllllllnnnnnnnnnoooooooorrrrrrssssssssttttttuuuuuuuuuuuuwwyyyzzzzzzs";

/// Collation weights of one character: primary (0 = ignorable, like a combining accent) and secondary.
fn weights(c: char) -> (u32, u32) {
    let point = u32::from(c);
    if let Some(rank) = ICU_ASCII_ORDER.iter().position(|b| u32::from(*b) == point) {
        let rank = if c.is_ascii_uppercase() { rank - 1 } else { rank };
        return (rank as u32 + 1, 0);
    }
    let base = match point {
        0xC0..=0xFF => Some(LATIN1_BASES[(point - 0xC0) as usize]),
        0x100..=0x17F => Some(LATIN_EXTENDED_A_BASES[(point - 0x100) as usize]),
        _ => None,
    };
    match base {
        Some(letter) if letter != b'.' => (weights(char::from(letter)).0, point),
        _ if (0x300..=0x36F).contains(&point) => (0, point),
        _ => (0x1_0000 + point, 0),
    }
}

/// Compares two (already lower-cased) names: all primary weights first, then accents; `Equal` when only
/// case or nothing differs, so a stable sort keeps the incoming order.
pub(crate) fn locale_order(a: &str, b: &str) -> Ordering {
    let primary = |s: &str| s.chars().map(weights).filter(|(p, _)| *p != 0).map(|(p, _)| p).collect::<Vec<_>>();
    let secondary = |s: &str| s.chars().map(|c| weights(c).1).collect::<Vec<_>>();
    primary(a).cmp(&primary(b)).then_with(|| secondary(a).cmp(&secondary(b)))
}

#[cfg(test)]
mod tests {
    use super::{LATIN_EXTENDED_A_BASES, locale_order};

    #[test]
    fn sorts_like_node_locale_compare_on_lower_cased_names() {
        // Node: ["_a",".a","A","a","Ä","a_b","a-b","a.b","a1","a10","a2","ab","ab c","ab-c","abc","e","é","f","z"]
        // sorted with a.toLowerCase().localeCompare(b.toLowerCase()).
        let mut names = vec![
            "a-b", "ab", "a_b", "a.b", "A", "a", ".a", "_a", "a1", "a10", "a2", "é", "e", "f", "Ä", "z", "abc", "ab-c",
            "ab c",
        ];
        names.sort_unstable();
        names.sort_by(|a, b| locale_order(&a.to_lowercase(), &b.to_lowercase()));
        let expected = vec![
            "_a", ".a", "A", "a", "Ä", "a_b", "a-b", "a.b", "a1", "a10", "a2", "ab", "ab c", "ab-c", "abc", "e", "é",
            "f", "z",
        ];
        assert_eq!(names, expected);
    }

    #[test]
    fn accents_rank_after_the_plain_letter_but_before_the_next_letter() {
        assert!(locale_order("e", "é").is_lt());
        assert!(locale_order("é", "f").is_lt());
        assert!(locale_order("éa", "eb").is_lt());
        assert!(locale_order("ž", "z").is_gt());
        assert!(locale_order("zz", "α").is_lt());
        assert_eq!(LATIN_EXTENDED_A_BASES[0x141 - 0x100], b'l');
    }
}
