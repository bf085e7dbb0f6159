//! Scalar rules of the frontmatter reader: block-scalar folding and chomping, quoted-scalar folding
//! and escapes, and YAML 1.2 core-schema resolution of plain values.

use crate::FrontmatterValue;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Chomp {
    Clip,
    Strip,
    Keep,
}

/// Joins block-scalar lines (already de-indented) as YAML does for `|` (literal) or `>` (folded).
pub(super) fn fold_block(lines: &[&str], literal: bool, chomp: Chomp) -> String {
    let last_content = lines.iter().rposition(|line| !line.is_empty());
    let Some(last_content) = last_content else {
        return match chomp {
            Chomp::Keep => "\n".repeat(lines.len()),
            _ => String::new(),
        };
    };
    let mut out = String::new();
    let mut previous_normal: Option<bool> = None;
    let mut blank_run = 0usize;
    for line in &lines[..=last_content] {
        if line.is_empty() {
            blank_run += 1;
            continue;
        }
        let normal = !line.starts_with([' ', '\t']);
        match previous_normal {
            None => out.push_str(&"\n".repeat(blank_run)),
            Some(_) if literal => out.push_str(&"\n".repeat(blank_run + 1)),
            Some(true) if normal => {
                if blank_run == 0 {
                    out.push(' ');
                } else {
                    out.push_str(&"\n".repeat(blank_run));
                }
            }
            Some(_) => out.push_str(&"\n".repeat(blank_run + 1)),
        }
        out.push_str(line);
        previous_normal = Some(normal);
        blank_run = 0;
    }
    let trailing = lines.len() - 1 - last_content;
    match chomp {
        Chomp::Strip => {}
        Chomp::Clip => out.push('\n'),
        Chomp::Keep => out.push_str(&"\n".repeat(trailing + 1)),
    }
    out
}

/// Folds the raw lines of a quoted scalar: line breaks become spaces, blank lines become newlines,
/// and (for double quotes) escapes are decoded.
pub(super) fn fold_quoted(raw_lines: &[&str], quote: char) -> Result<String, &'static str> {
    let mut out = String::new();
    let mut blank_run = 0usize;
    let last = raw_lines.len().saturating_sub(1);
    let mut joined_by_escape = false;
    for (position, raw) in raw_lines.iter().enumerate() {
        let mut piece: &str = raw;
        if position > 0 {
            piece = piece.trim_start_matches([' ', '\t']);
        }
        if position < last {
            piece = piece.trim_end_matches([' ', '\t']);
        }
        if position > 0 && position < last && piece.is_empty() {
            blank_run += 1;
            continue;
        }
        if position > 0 && !joined_by_escape {
            if blank_run == 0 {
                out.push(' ');
            } else {
                out.push_str(&"\n".repeat(blank_run));
            }
        }
        blank_run = 0;
        joined_by_escape = false;
        if quote == '\'' {
            out.push_str(&piece.replace("''", "'"));
            continue;
        }
        let (decoded, escaped_break) = decode_double_quoted(piece, position < last)?;
        out.push_str(&decoded);
        joined_by_escape = escaped_break;
    }
    Ok(out)
}

/// Decodes the escapes of one double-quoted line; reports whether it ended with an escaped line break.
pub(super) fn decode_double_quoted(piece: &str, continues: bool) -> Result<(String, bool), &'static str> {
    let mut out = String::with_capacity(piece.len());
    let mut chars = piece.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(escape) = chars.next() else {
            if continues {
                return Ok((out, true));
            }
            return Err("a trailing backslash in a quoted value");
        };
        let simple = match escape {
            '0' => Some('\0'),
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            't' | '\t' => Some('\t'),
            'n' => Some('\n'),
            'v' => Some('\u{b}'),
            'f' => Some('\u{c}'),
            'r' => Some('\r'),
            'e' => Some('\u{1b}'),
            ' ' => Some(' '),
            '"' => Some('"'),
            '/' => Some('/'),
            '\\' => Some('\\'),
            'N' => Some('\u{85}'),
            '_' => Some('\u{a0}'),
            'L' => Some('\u{2028}'),
            'P' => Some('\u{2029}'),
            _ => None,
        };
        if let Some(decoded) = simple {
            out.push(decoded);
            continue;
        }
        let digits = match escape {
            'x' => 2,
            'u' => 4,
            'U' => 8,
            _ => return Err("an unknown escape in a quoted value"),
        };
        let hex: String = chars.by_ref().take(digits).collect();
        let code = u32::from_str_radix(&hex, 16).ok().filter(|_| hex.len() == digits);
        match code.and_then(char::from_u32) {
            Some(decoded) => out.push(decoded),
            None => return Err("an invalid escape in a quoted value"),
        }
    }
    Ok((out, false))
}

/// Byte offset of the quote that closes a quoted scalar on this line, if any.
pub(super) fn find_closing_quote(text: &str, quote: char) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut index = 0;
    while index < bytes.len() {
        let byte = bytes[index];
        if quote == '"' && byte == b'\\' {
            index += 2;
            continue;
        }
        if byte == quote as u8 {
            if quote == '\'' && bytes.get(index + 1) == Some(&b'\'') {
                index += 2;
                continue;
            }
            return Some(index);
        }
        index += 1;
    }
    None
}

/// YAML 1.2 core schema resolution of a plain scalar.
pub(super) fn resolve_plain(text: String) -> FrontmatterValue {
    match text.as_str() {
        "" | "~" | "null" | "Null" | "NULL" => return FrontmatterValue::Null,
        "true" | "True" | "TRUE" => return FrontmatterValue::Bool(true),
        "false" | "False" | "FALSE" => return FrontmatterValue::Bool(false),
        _ => {}
    }
    if is_yaml_number(&text) { FrontmatterValue::Number(text) } else { FrontmatterValue::String(text) }
}

fn is_yaml_number(text: &str) -> bool {
    let lowered = text.to_ascii_lowercase();
    if matches!(lowered.as_str(), ".inf" | "+.inf" | "-.inf" | ".nan") {
        return true;
    }
    if let Some(hex) = text.strip_prefix("0x") {
        return !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit());
    }
    if let Some(octal) = text.strip_prefix("0o") {
        return !octal.is_empty() && octal.chars().all(|c| ('0'..='7').contains(&c));
    }
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(split) => (&unsigned[..split], Some(&unsigned[split + 1..])),
        None => (unsigned, None),
    };
    let (whole, fraction) = match mantissa.split_once('.') {
        Some((whole, fraction)) => (whole, Some(fraction)),
        None => (mantissa, None),
    };
    let digits = |part: &str| part.chars().all(|c| c.is_ascii_digit());
    let mantissa_ok = match fraction {
        Some(fraction) => digits(whole) && digits(fraction) && !(whole.is_empty() && fraction.is_empty()),
        None => !whole.is_empty() && digits(whole),
    };
    let exponent_ok = exponent.is_none_or(|exponent| {
        let exponent = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
        !exponent.is_empty() && digits(exponent)
    });
    mantissa_ok && exponent_ok
}

/// Whether a YAML number literal is 0 or NaN (the falsy numbers in JavaScript).
pub(super) fn number_is_zero_or_nan(text: &str) -> bool {
    let lowered = text.to_ascii_lowercase();
    if lowered == ".nan" {
        return true;
    }
    let radix_value = |digits: &str, radix: u32| u128::from_str_radix(digits, radix).map(|value| value == 0);
    if let Some(hex) = lowered.strip_prefix("0x") {
        return radix_value(hex, 16).unwrap_or(false);
    }
    if let Some(octal) = lowered.strip_prefix("0o") {
        return radix_value(octal, 8).unwrap_or(false);
    }
    text.parse::<f64>().map(|number| number == 0.0).unwrap_or(false)
}
