//! fd's "smart case" for glob patterns: the search is case-sensitive only when the glob's regex contains an
//! uppercase letter, either as literal text or at the boundary of a character class range.

/// Whether fd would search case-sensitively for this glob (globset syntax, `\` escapes).
pub(crate) fn glob_has_uppercase(glob: &str) -> bool {
    let mut chars = glob.chars().peekable();
    while let Some(c) = chars.next() {
        let uppercase = match c {
            '\\' => chars.next().is_some_and(char::is_uppercase),
            '[' => class_has_uppercase(&mut chars),
            // Glob syntax (`*`, `?`, `{`, `,`, `}`) is never uppercase, so everything else can be tested as is.
            other => other.is_uppercase(),
        };
        if uppercase {
            return true;
        }
    }
    false
}

/// Reads a character class after its `[` and tells whether one of its (merged, possibly complemented) range
/// boundaries is uppercase, which is what fd inspects in the compiled regex.
fn class_has_uppercase(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> bool {
    let negated = chars.next_if(|c| *c == '!' || *c == '^').is_some();
    let mut members: Vec<char> = Vec::new();
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    let mut first = true;
    while let Some(c) = chars.next() {
        if c == ']' && !first {
            break;
        }
        first = false;
        if c == '-' && !members.is_empty() && chars.peek().is_some_and(|next| *next != ']') {
            let (Some(start), Some(end)) = (members.pop(), chars.next()) else { break };
            ranges.push((u32::from(start), u32::from(end)));
        } else {
            members.push(c);
        }
    }
    ranges.extend(members.iter().map(|c| (u32::from(*c), u32::from(*c))));
    let mut ranges = merge(ranges);
    if negated {
        let top = if ranges.iter().all(|(_, end)| *end <= 0xFF) { 0xFF } else { 0x10_FFFF };
        ranges = complement(&ranges, top);
    }
    let upper = |point: u32| char::from_u32(point).is_some_and(char::is_uppercase);
    ranges.iter().any(|(start, end)| upper(*start) || upper(*end))
}

/// Sorts ranges and joins the ones that overlap or touch, as the regex parser canonicalises a class.
fn merge(mut ranges: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
    ranges.retain(|(start, end)| start <= end);
    ranges.sort_unstable();
    let mut merged: Vec<(u32, u32)> = Vec::with_capacity(ranges.len());
    for (start, end) in ranges {
        match merged.last_mut() {
            Some(last) if start <= last.1.saturating_add(1) => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

/// The ranges of `0..=top` not covered by the (merged) `ranges`.
fn complement(ranges: &[(u32, u32)], top: u32) -> Vec<(u32, u32)> {
    let mut gaps = Vec::new();
    let mut next = 0u32;
    for (start, end) in ranges {
        if *start > next {
            gaps.push((next, start - 1));
        }
        next = end.saturating_add(1);
    }
    if next <= top {
        gaps.push((next, top));
    }
    gaps
}

#[cfg(test)]
mod tests {
    use super::glob_has_uppercase;

    #[test]
    fn literal_uppercase_makes_the_glob_case_sensitive() {
        assert!(!glob_has_uppercase("*.txt"));
        assert!(glob_has_uppercase("*.TXT"));
        assert!(glob_has_uppercase("**/src/Main.java"));
        assert!(glob_has_uppercase("\\A*"));
        assert!(glob_has_uppercase("{readme,LICENSE}"));
        assert!(glob_has_uppercase("école-É*"));
    }

    #[test]
    fn class_boundaries_decide_for_classes() {
        assert!(!glob_has_uppercase("[a-z]*"));
        assert!(glob_has_uppercase("[A-Z]*"));
        assert!(glob_has_uppercase("[a-zA-Z]"));
        // The complement of a-z in bytes is \0-` and {-\xFF: no uppercase boundary.
        assert!(!glob_has_uppercase("[!a-z]"));
        // The complement of 0-9 starts again at ':' and the uppercase letters are inside, not at a boundary.
        assert!(!glob_has_uppercase("[^0-9]x"));
        // The complement of A-Z ends at '@' and restarts at '['.
        assert!(!glob_has_uppercase("[!A-Z]"));
        assert!(glob_has_uppercase("[]A]"));
    }
}
