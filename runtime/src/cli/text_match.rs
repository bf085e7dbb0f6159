//! Text ordering and matching as pi's model lists do it: JavaScript's `localeCompare` (ICU root
//! collation, approximated for the characters model ids use) and pi-tui's fuzzy filter.

use std::cmp::Ordering;
use std::sync::OnceLock;

use regex::Regex;

/// ASCII in ICU root collation order; upper and lower case of a letter share a primary weight.
const ICU_ASCII_ORDER: &str =
    " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789aAbBcCdDeEfFgGhHiIjJkKlLmMnNoOpPqQrRsStTuUvVwWxXyYzZ";

fn primary_weights() -> &'static [u16; 128] {
    static WEIGHTS: OnceLock<[u16; 128]> = OnceLock::new();
    WEIGHTS.get_or_init(|| {
        let mut weights = [0u16; 128];
        let mut next = 1u16;
        for byte in ICU_ASCII_ORDER.bytes() {
            let lower = byte.to_ascii_lowercase();
            weights[byte as usize] = if byte.is_ascii_uppercase() { weights[lower as usize] } else { next };
            if !byte.is_ascii_uppercase() {
                next += 1;
            }
        }
        weights
    })
}

/// The primary weight of `c`: ICU's order for ASCII, code point order after it for the rest.
fn primary(c: char) -> u32 {
    match u8::try_from(c) {
        Ok(byte) if byte < 128 && primary_weights()[byte as usize] > 0 => u32::from(primary_weights()[byte as usize]),
        Ok(byte) if byte < 128 => u32::from(byte),
        _ => 0x1000 + c as u32,
    }
}

/// Like JavaScript's `a.localeCompare(b)` in the root locale: letters before case, punctuation
/// before digits before letters, lower case before upper case when nothing else differs.
pub fn locale_compare(a: &str, b: &str) -> Ordering {
    a.chars()
        .map(primary)
        .cmp(b.chars().map(primary))
        .then_with(|| a.chars().map(|c| c.is_uppercase()).cmp(b.chars().map(|c| c.is_uppercase())))
        .then_with(|| a.cmp(b))
}

/// pi-tui's `fuzzyMatch`: the score of `query`'s characters appearing in order in `text` (lower is
/// better), or `None`. A letters+digits query also matches with the two parts swapped.
pub fn fuzzy_match(query: &str, text: &str) -> Option<f64> {
    static LETTERS_DIGITS: OnceLock<Option<(Regex, Regex)>> = OnceLock::new();
    let query = query.to_lowercase();
    let text: Vec<char> = text.to_lowercase().chars().collect();
    if let Some(score) = fuzzy_score(&query.chars().collect::<Vec<_>>(), &text) {
        return Some(score);
    }
    let patterns = LETTERS_DIGITS
        .get_or_init(|| Some((Regex::new("^([a-z]+)([0-9]+)$").ok()?, Regex::new("^([0-9]+)([a-z]+)$").ok()?)));
    let (letters_digits, digits_letters) = patterns.as_ref()?;
    let captures = letters_digits.captures(&query).or_else(|| digits_letters.captures(&query))?;
    let swapped = format!("{}{}", &captures[2], &captures[1]);
    fuzzy_score(&swapped.chars().collect::<Vec<_>>(), &text).map(|score| score + 5.0)
}

fn fuzzy_score(query: &[char], text: &[char]) -> Option<f64> {
    if query.is_empty() {
        return Some(0.0);
    }
    if query.len() > text.len() {
        return None;
    }
    let mut matched = 0;
    let mut score = 0.0;
    // As in pi, "no match yet" is -1, so a match at index 0 counts as consecutive.
    let mut last: isize = -1;
    let mut consecutive = 0.0;
    for (index, c) in text.iter().enumerate() {
        if matched == query.len() {
            break;
        }
        if *c != query[matched] {
            continue;
        }
        let position = index as isize;
        let at_boundary =
            index == 0 || matches!(text[index - 1], ' ' | '\t' | '\n' | '\r' | '-' | '_' | '.' | '/' | ':');
        if last == position - 1 {
            consecutive += 1.0;
            score -= consecutive * 5.0;
        } else {
            consecutive = 0.0;
            if last >= 0 {
                score += (position - last - 1) as f64 * 2.0;
            }
        }
        if at_boundary {
            score -= 10.0;
        }
        score += index as f64 * 0.1;
        last = position;
        matched += 1;
    }
    if matched < query.len() {
        return None;
    }
    if query == text {
        score -= 100.0;
    }
    Some(score)
}

/// pi-tui's `fuzzyFilter`: the items whose text matches every whitespace-separated token of
/// `query`, best total score first (stable for ties). An empty query keeps everything.
pub fn fuzzy_filter<T>(items: Vec<T>, query: &str, text: impl Fn(&T) -> String) -> Vec<T> {
    let tokens: Vec<&str> = query.split_whitespace().collect();
    if tokens.is_empty() {
        return items;
    }
    let mut scored: Vec<(f64, T)> = items
        .into_iter()
        .filter_map(|item| {
            let haystack = text(&item);
            let total = tokens.iter().map(|token| fuzzy_match(token, &haystack)).sum::<Option<f64>>()?;
            Some((total, item))
        })
        .collect();
    scored.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(Ordering::Equal));
    scored.into_iter().map(|(_, item)| item).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locale_order_matches_javascript() {
        // Sorted by node's localeCompare.
        let expected = ["a b", "a_b", "a-b", "a:b", "a.b", "a/b", "a1", "ab", "aB", "Ab"];
        let mut items = expected.to_vec();
        items.reverse();
        items.sort_by(|a, b| locale_compare(a, b));
        assert_eq!(items, expected);
        assert_eq!(locale_compare("MiniMax-M2", "mistral"), Ordering::Less);
        assert_eq!(locale_compare("gpt-4o", "gpt-4.1"), Ordering::Greater);
        assert_eq!(locale_compare("ab", "a-c"), Ordering::Greater);
        assert_eq!(locale_compare("claude-3-5", "claude-35"), Ordering::Less);
        assert_eq!(locale_compare("x", "x"), Ordering::Equal);
    }

    #[test]
    fn fuzzy_matches_in_order_with_pi_scores() {
        assert_eq!(fuzzy_match("", "anything"), Some(0.0));
        assert_eq!(fuzzy_match("xyz", "ab"), None);
        assert_eq!(fuzzy_match("zx", "xz"), None);
        // Values computed with pi-tui's fuzzyMatch.
        let exact = fuzzy_match("ab", "ab").expect("match");
        assert!((exact - -124.9).abs() < 1e-9, "{exact}");
        let gap = fuzzy_match("ac", "abc").expect("match");
        assert!((gap - -12.8).abs() < 1e-9, "{gap}");
        assert!(fuzzy_match("GPT", "openai gpt-5").is_some(), "case-insensitive");
    }

    #[test]
    fn swapped_letters_and_digits_also_match() {
        assert_eq!(fuzzy_match("4o", "o4"), fuzzy_match("o4", "o4").map(|s| s + 5.0));
        assert!(fuzzy_match("gpt5", "5 gpt").is_some());
        assert!(fuzzy_match("a1b", "b1a").is_none());
    }

    #[test]
    fn filter_needs_every_token_and_sorts_by_score() {
        let items = vec!["openai gpt-4o", "anthropic claude-sonnet-4-5", "openrouter anthropic/claude-sonnet-4.5"];
        let found = fuzzy_filter(items.clone(), "sonnet anthropic", |s| (*s).to_owned());
        assert_eq!(found.len(), 2);
        assert_eq!(found[0], "anthropic claude-sonnet-4-5");
        assert_eq!(fuzzy_filter(items.clone(), "  ", |s| (*s).to_owned()), items);
        assert!(fuzzy_filter(items, "qqq", |s| (*s).to_owned()).is_empty());
    }
}
