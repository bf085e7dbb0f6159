//! Edit matching (exact, then whitespace/quote/dash-tolerant) and the numbered line diff shown in `details`.

/// One requested replacement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub old_text: String,
    pub new_text: String,
}

/// Strips a leading UTF-8 byte order mark; returns whether there was one.
pub fn strip_bom(text: &str) -> (bool, &str) {
    match text.strip_prefix('\u{FEFF}') {
        Some(rest) => (true, rest),
        None => (false, text),
    }
}

/// Whether the text uses CRLF: its first `\r\n` comes before its first bare `\n`.
pub fn uses_crlf(text: &str) -> bool {
    match (text.find("\r\n"), text.find('\n')) {
        (Some(crlf), Some(lf)) => crlf < lf,
        _ => false,
    }
}

/// Converts CRLF and lone CR line endings to LF.
pub fn normalize_to_lf(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

/// Converts LF back to CRLF when the file used CRLF.
pub fn restore_line_endings(text: &str, crlf: bool) -> String {
    if crlf { text.replace('\n', "\r\n") } else { text.to_owned() }
}

/// The tolerant form used for fuzzy matching: trailing whitespace removed from every line, typographic quotes,
/// dashes and Unicode spaces replaced by their ASCII counterparts. (pi also applies NFKC first; not done here.)
pub fn normalize_for_fuzzy_match(text: &str) -> String {
    let trimmed: Vec<&str> = text.split('\n').map(str::trim_end).collect();
    trimmed
        .join("\n")
        .chars()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
            '\u{201C}'..='\u{201F}' => '"',
            '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
            '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
            other => other,
        })
        .collect()
}

/// Where one edit matched in the base content.
struct Match {
    edit_index: usize,
    at: usize,
    len: usize,
    new_text: String,
}

/// Finds `needle` exactly, else in the fuzzy forms; returns (index, length, used fuzzy). Fuzzy indices refer
/// to the fuzzy form of `content`.
fn find_text(content: &str, needle: &str) -> Option<(usize, usize, bool)> {
    if let Some(at) = content.find(needle) {
        return Some((at, needle.len(), false));
    }
    let fuzzy_needle = normalize_for_fuzzy_match(needle);
    normalize_for_fuzzy_match(content).find(&fuzzy_needle).map(|at| (at, fuzzy_needle.len(), true))
}

/// Applies all edits to LF-normalized content. Every edit is matched against the original content (not after
/// the earlier edits), must be unique and must not overlap another. If any edit needs the fuzzy match, the
/// whole file is taken in its fuzzy form. Returns `(base, new)`, the content the edits applied to and the result.
pub fn apply_edits(content: &str, edits: &[Edit], path: &str) -> Result<(String, String), String> {
    let many = edits.len() > 1;
    let edits: Vec<Edit> = edits
        .iter()
        .map(|e| Edit { old_text: normalize_to_lf(&e.old_text), new_text: normalize_to_lf(&e.new_text) })
        .collect();
    for (i, edit) in edits.iter().enumerate() {
        if edit.old_text.is_empty() {
            return Err(if many {
                format!("edits[{i}].oldText must not be empty in {path}.")
            } else {
                format!("oldText must not be empty in {path}.")
            });
        }
    }
    let needs_fuzzy = edits.iter().any(|e| matches!(find_text(content, &e.old_text), Some((_, _, true))));
    let base = if needs_fuzzy { normalize_for_fuzzy_match(content) } else { content.to_owned() };
    let fuzzy_base = normalize_for_fuzzy_match(&base);

    let mut matches = Vec::with_capacity(edits.len());
    for (i, edit) in edits.iter().enumerate() {
        let Some((at, len, _)) = find_text(&base, &edit.old_text) else {
            return Err(if many {
                format!(
                    "Could not find edits[{i}] in {path}. The oldText must match exactly including all whitespace and newlines."
                )
            } else {
                format!(
                    "Could not find the exact text in {path}. The old text must match exactly including all whitespace and newlines."
                )
            });
        };
        let occurrences = fuzzy_base.matches(&normalize_for_fuzzy_match(&edit.old_text)).count();
        if occurrences > 1 {
            return Err(if many {
                format!(
                    "Found {occurrences} occurrences of edits[{i}] in {path}. Each oldText must be unique. Please provide more context to make it unique."
                )
            } else {
                format!(
                    "Found {occurrences} occurrences of the text in {path}. The text must be unique. Please provide more context to make it unique."
                )
            });
        }
        matches.push(Match { edit_index: i, at, len, new_text: edit.new_text.clone() });
    }
    matches.sort_by_key(|m| m.at);
    for pair in matches.windows(2) {
        if pair[0].at + pair[0].len > pair[1].at {
            return Err(format!(
                "edits[{}] and edits[{}] overlap in {path}. Merge them into one edit or target disjoint regions.",
                pair[0].edit_index, pair[1].edit_index
            ));
        }
    }
    let mut result = base.clone();
    for m in matches.iter().rev() {
        if !result.is_char_boundary(m.at) || !result.is_char_boundary(m.at + m.len) {
            return Err(format!(
                "Could not apply the edit to {path}: the match does not fall on character boundaries."
            ));
        }
        result.replace_range(m.at..m.at + m.len, &m.new_text);
    }
    if result == base {
        return Err(if many {
            format!("No changes made to {path}. The replacements produced identical content.")
        } else {
            format!(
                "No changes made to {path}. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected."
            )
        });
    }
    Ok((base, result))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Equal,
    Delete,
    Insert,
}

/// Most edit steps the Myers search explores before giving up on a minimal diff.
const MAX_EDIT_STEPS: usize = 1000;

/// A minimal line diff (Myers), or `None` when it would take more than [`MAX_EDIT_STEPS`] steps.
fn myers(a: &[&str], b: &[&str]) -> Option<Vec<Op>> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    let max = (n + m) as usize;
    let offset = max as isize + 1;
    let mut v = vec![0isize; 2 * max + 3];
    let mut trace: Vec<Vec<isize>> = Vec::new();
    let idx = |k: isize| (k + offset) as usize;
    for d in 0..=max.min(MAX_EDIT_STEPS) as isize {
        trace.push(v[idx(-d)..=idx(d)].to_vec());
        let mut k = -d;
        while k <= d {
            let mut x =
                if k == -d || (k != d && v[idx(k - 1)] < v[idx(k + 1)]) { v[idx(k + 1)] } else { v[idx(k - 1)] + 1 };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[idx(k)] = x;
            if x >= n && y >= m {
                return Some(backtrack(&trace, n, m));
            }
            k += 2;
        }
    }
    None
}

fn backtrack(trace: &[Vec<isize>], n: isize, m: isize) -> Vec<Op> {
    let mut ops = Vec::new();
    let (mut x, mut y) = (n, m);
    for (d, v) in trace.iter().enumerate().rev() {
        let d = d as isize;
        let at = |k: isize| v.get((k + d) as usize).copied().unwrap_or(0);
        let k = x - y;
        let prev_k = if k == -d || (k != d && at(k - 1) < at(k + 1)) { k + 1 } else { k - 1 };
        let prev_x = at(prev_k);
        let prev_y = prev_x - prev_k;
        while x > prev_x && y > prev_y {
            ops.push(Op::Equal);
            x -= 1;
            y -= 1;
        }
        if d > 0 {
            if x == prev_x {
                ops.push(Op::Insert);
                y -= 1;
            } else {
                ops.push(Op::Delete);
                x -= 1;
            }
        }
    }
    ops.reverse();
    ops
}

/// A run of lines in the diff: unchanged, removed or added.
struct Part<'a> {
    op: Op,
    lines: Vec<&'a str>,
}

/// Line diff as parts; within each changed region all removed lines come before the added ones.
fn diff_parts<'a>(old: &'a str, new: &'a str) -> Vec<Part<'a>> {
    let mut parts = diff_parts_with_newlines(old, new);
    for part in &mut parts {
        for line in &mut part.lines {
            *line = line.strip_suffix('\n').unwrap_or(line);
        }
    }
    parts
}

/// The line diff as `(op, line)` pairs, each line with its `\n` when it has one: `' '` unchanged, `'-'`
/// removed, `'+'` added.
pub(crate) fn diff_lines<'a>(old: &'a str, new: &'a str) -> Vec<(char, &'a str)> {
    let mut lines = Vec::new();
    for part in diff_parts_with_newlines(old, new) {
        let sign = match part.op {
            Op::Equal => ' ',
            Op::Delete => '-',
            Op::Insert => '+',
        };
        lines.extend(part.lines.into_iter().map(|line| (sign, line)));
    }
    lines
}

/// [`diff_parts`] with the lines' `\n` kept.
fn diff_parts_with_newlines<'a>(old: &'a str, new: &'a str) -> Vec<Part<'a>> {
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..].iter().rev().zip(b[prefix..].iter().rev()).take_while(|(x, y)| x == y).count();
    let (mid_a, mid_b) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mid_ops = myers(mid_a, mid_b).unwrap_or_else(|| {
        let mut ops = vec![Op::Delete; mid_a.len()];
        ops.extend(std::iter::repeat_n(Op::Insert, mid_b.len()));
        ops
    });
    let mut parts: Vec<Part<'a>> = Vec::new();
    let mut push = |op: Op, line: &'a str| match parts.last_mut() {
        Some(last) if last.op == op => last.lines.push(line),
        _ => parts.push(Part { op, lines: vec![line] }),
    };
    a[..prefix].iter().for_each(|l| push(Op::Equal, l));
    let (mut i, mut j) = (0, 0);
    let mut pending_inserts: Vec<&'a str> = Vec::new();
    for op in mid_ops {
        match op {
            Op::Equal => {
                pending_inserts.drain(..).for_each(|l| push(Op::Insert, l));
                push(Op::Equal, mid_a[i]);
                i += 1;
                j += 1;
            }
            Op::Delete => {
                push(Op::Delete, mid_a[i]);
                i += 1;
            }
            Op::Insert => {
                pending_inserts.push(mid_b[j]);
                j += 1;
            }
        }
    }
    pending_inserts.drain(..).for_each(|l| push(Op::Insert, l));
    a[a.len() - suffix..].iter().for_each(|l| push(Op::Equal, l));
    parts
}

/// pi's display diff: changed lines as `-N text` / `+N text`, up to `context` unchanged lines around them as
/// ` N text`, skipped stretches as ` ...`; line numbers padded to one width. Also returns the first changed
/// line number in the new content.
pub fn generate_diff(old: &str, new: &str, context: usize) -> (String, Option<usize>) {
    let parts = diff_parts(old, new);
    let width = old.split('\n').count().max(new.split('\n').count()).to_string().len();
    let mut out: Vec<String> = Vec::new();
    let (mut old_no, mut new_no) = (1usize, 1usize);
    let mut first_changed = None;
    let mut last_was_change = false;
    let ellipsis = format!(" {} ...", " ".repeat(width));
    for (i, part) in parts.iter().enumerate() {
        if part.op != Op::Equal {
            first_changed.get_or_insert(new_no);
            for line in &part.lines {
                if part.op == Op::Insert {
                    out.push(format!("+{new_no:>width$} {line}"));
                    new_no += 1;
                } else {
                    out.push(format!("-{old_no:>width$} {line}"));
                    old_no += 1;
                }
            }
            last_was_change = true;
            continue;
        }
        let next_is_change = parts.get(i + 1).is_some_and(|p| p.op != Op::Equal);
        let lines = &part.lines;
        let show = |out: &mut Vec<String>, lines: &[&str], old_no: &mut usize, new_no: &mut usize| {
            for line in lines {
                out.push(format!(" {old_no:>width$} {line}"));
                *old_no += 1;
                *new_no += 1;
            }
        };
        if last_was_change && next_is_change && lines.len() > 2 * context {
            show(&mut out, &lines[..context], &mut old_no, &mut new_no);
            let skipped = lines.len() - 2 * context;
            out.push(ellipsis.clone());
            old_no += skipped;
            new_no += skipped;
            show(&mut out, &lines[lines.len() - context..], &mut old_no, &mut new_no);
        } else if last_was_change && next_is_change {
            show(&mut out, lines, &mut old_no, &mut new_no);
        } else if last_was_change {
            show(&mut out, &lines[..lines.len().min(context)], &mut old_no, &mut new_no);
            if lines.len() > context {
                out.push(ellipsis.clone());
                old_no += lines.len() - context;
                new_no += lines.len() - context;
            }
        } else if next_is_change {
            let skipped = lines.len().saturating_sub(context);
            if skipped > 0 {
                out.push(ellipsis.clone());
                old_no += skipped;
                new_no += skipped;
            }
            show(&mut out, &lines[skipped..], &mut old_no, &mut new_no);
        } else {
            old_no += lines.len();
            new_no += lines.len();
        }
        last_was_change = false;
    }
    (out.join("\n"), first_changed)
}
