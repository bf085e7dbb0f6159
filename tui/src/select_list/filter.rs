//! Fuzzy matching for the select list: every query word must occur in the label, value or description
//! with its characters in order (case-insensitive); closer matches rank first.

use super::SelectItem;

/// How well one word matched one field; lower is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum MatchKind {
    /// The whole field, or its start.
    Prefix,
    Substring,
    Subsequence,
}

/// The indices of the items matching `query`, best first; equal matches keep their order. An empty query
/// keeps every item in order.
pub(super) fn filter_items(items: &[SelectItem], query: &str) -> Vec<usize> {
    let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    if words.is_empty() {
        return (0..items.len()).collect();
    }
    let mut ranked: Vec<((usize, usize), usize)> = items
        .iter()
        .enumerate()
        .filter_map(|(index, item)| item_rank(item, &words).map(|rank| (rank, index)))
        .collect();
    // A stable sort: items of the same rank stay in their original order.
    ranked.sort_by_key(|(rank, _)| *rank);
    ranked.into_iter().map(|(_, index)| index).collect()
}

/// The rank of `item` for lowercase `words`, `None` when a word matches nowhere: the worst word's score
/// first, then the sum of all scores. A word scores its best match kind, doubled, plus one when only the
/// description matched it (a label or value match beats a description match of the same kind).
fn item_rank(item: &SelectItem, words: &[String]) -> Option<(usize, usize)> {
    let label = item.label.to_lowercase();
    let value = item.value_searched.then(|| item.value.to_lowercase());
    let description = item.description.as_deref().map(str::to_lowercase);
    let mut worst = 0;
    let mut total = 0;
    for word in words {
        let value_match = value.as_deref().and_then(|value| match_kind(value, word));
        let named = [match_kind(&label, word), value_match].into_iter().flatten().min();
        let score = match (named, description.as_deref().and_then(|text| match_kind(text, word))) {
            (Some(kind), Some(described)) if described < kind => described as usize * 2 + 1,
            (Some(kind), _) => kind as usize * 2,
            (None, Some(described)) => described as usize * 2 + 1,
            (None, None) => return None,
        };
        worst = worst.max(score);
        total += score;
    }
    Some((worst, total))
}

/// How `word` occurs in `field` (both lowercase), if it does.
fn match_kind(field: &str, word: &str) -> Option<MatchKind> {
    if field.starts_with(word) {
        Some(MatchKind::Prefix)
    } else if field.contains(word) {
        Some(MatchKind::Substring)
    } else if is_subsequence(field, word) {
        Some(MatchKind::Subsequence)
    } else {
        None
    }
}

/// Whether the characters of `word` occur in `field` in order.
fn is_subsequence(field: &str, word: &str) -> bool {
    let mut field_chars = field.chars();
    word.chars().all(|wanted| field_chars.any(|character| character == wanted))
}
