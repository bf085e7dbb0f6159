//! The line-based parser behind `parse_frontmatter`: a flat block mapping whose values are plain,
//! quoted or block scalars, with nested blocks and flow collections skipped as opaque values.

use crate::scalars::{Chomp, decode_double_quoted, find_closing_quote, fold_block, fold_quoted, resolve_plain};
use crate::{FrontmatterError, FrontmatterValue};

/// Line-based parser for a flat block mapping.
pub(super) struct MappingParser<'a> {
    lines: Vec<&'a str>,
    /// Indentation of the mapping's keys.
    base: usize,
}

impl<'a> MappingParser<'a> {
    pub(super) fn new(yaml: &'a str) -> Self {
        Self { lines: yaml.split('\n').collect(), base: 0 }
    }

    /// The 1-based file line of a YAML line index (the opening `---` is line 1).
    fn file_line(index: usize) -> usize {
        index + 2
    }

    /// An error at the first non-blank character of line `index`.
    fn error(&self, index: usize, reason: &str) -> FrontmatterError {
        let line = self.lines.get(index).copied().unwrap_or_default();
        let column = line.len() - line.trim_start().len() + 1;
        FrontmatterError { line: Self::file_line(index), column, reason: reason.to_owned() }
    }

    /// An error where `part` (a slice of line `index`) starts; at the line's first character otherwise.
    fn error_at(&self, index: usize, part: &str, reason: &str) -> FrontmatterError {
        let line = self.lines.get(index).copied().unwrap_or_default();
        let offset =
            (part.as_ptr() as usize).checked_sub(line.as_ptr() as usize).filter(|offset| *offset <= line.len());
        match offset.and_then(|offset| line.get(..offset)) {
            Some(before) => FrontmatterError {
                line: Self::file_line(index),
                column: before.chars().count() + 1,
                reason: reason.to_owned(),
            },
            None => self.error(index, reason),
        }
    }

    pub(super) fn parse(mut self) -> Result<Vec<(String, FrontmatterValue)>, FrontmatterError> {
        let mut fields: Vec<(String, FrontmatterValue)> = Vec::new();
        let Some(first) = (0..self.lines.len()).find(|&index| !is_blank_or_comment(self.lines[index])) else {
            return Ok(fields);
        };
        self.base = indent_of(self.lines[first]);
        let mut index = first;
        while index < self.lines.len() {
            let line = self.lines[index];
            if is_blank_or_comment(line) {
                index += 1;
                continue;
            }
            if line.starts_with('\t') || line.get(indent_of(line)..).is_some_and(|rest| rest.starts_with('\t')) {
                let tab = &line[indent_of(line)..];
                return Err(self.error_at(index, tab, "tabs cannot indent YAML; indent with spaces"));
            }
            let indent = indent_of(line);
            if indent != self.base {
                return Err(self.error(index, "unexpected indentation"));
            }
            let content = &line[indent..];
            let Some((key, rest)) = split_key(content) else {
                if index == first && content.starts_with('-') && (content.len() == 1 || content[1..].starts_with(' ')) {
                    // A sequence document: not a mapping, so no fields.
                    return Ok(Vec::new());
                }
                if index == first && self.only_content_line(index) {
                    // A scalar document: not a mapping, so no fields.
                    return Ok(Vec::new());
                }
                return Err(self.error(index, "expected a `key: value` line"));
            };
            if fields.iter().any(|(existing, _)| *existing == key) {
                return Err(self.error(index, "duplicate key"));
            }
            let (value, next) = self.parse_value(index, rest)?;
            fields.push((key, value));
            index = next;
        }
        Ok(fields)
    }

    fn only_content_line(&self, index: usize) -> bool {
        self.lines.iter().enumerate().all(|(other, line)| other == index || is_blank_or_comment(line))
    }

    /// Parses the value that starts after `key:` on line `index`; returns it and the next line to read.
    fn parse_value(&self, index: usize, rest: &str) -> Result<(FrontmatterValue, usize), FrontmatterError> {
        let mut rest = rest.trim_start_matches([' ', '\t']);
        let mut forced_string = false;
        while let Some(prop) = rest.strip_prefix(['!', '&']) {
            let token_end = prop.find([' ', '\t']).unwrap_or(prop.len());
            forced_string |= rest.starts_with("!!str");
            rest = prop[token_end..].trim_start_matches([' ', '\t']);
        }
        let first = rest.chars().next();
        match first {
            None | Some('#') => Ok(self.nested_block(index)),
            Some('|') | Some('>') => self.block_scalar(index, rest),
            Some('"') | Some('\'') => self.quoted(index, rest),
            Some('[') | Some('{') => self.flow_collection(index, rest),
            Some('*') => Err(self.error_at(index, rest, "aliases are not supported")),
            Some('@') | Some('`') | Some('%') => {
                Err(self.error_at(index, rest, "a plain value cannot start with this character; quote the value"))
            }
            Some('-') if rest.len() == 1 || rest[1..].starts_with(' ') => {
                Err(self.error_at(index, rest, "a sequence cannot start on the key's line"))
            }
            Some(_) => self.plain(index, rest, forced_string),
        }
    }

    /// Lines after `index` that belong to the current value: more indented than the keys, blank, or
    /// (for a sequence value) `- ` items at the key indentation.
    fn continuation_end(&self, index: usize, allow_sequence: bool) -> usize {
        let mut end = index + 1;
        let mut last_content = index + 1;
        while end < self.lines.len() {
            let line = self.lines[end];
            if line.trim().is_empty() {
                end += 1;
                continue;
            }
            let indent = indent_of(line);
            let item = allow_sequence && indent == self.base && line[indent..].starts_with('-');
            if indent <= self.base && !item {
                break;
            }
            end += 1;
            last_content = end;
        }
        last_content
    }

    fn nested_block(&self, index: usize) -> (FrontmatterValue, usize) {
        let end = self.continuation_end(index, true);
        let has_content = self.lines[index + 1..end].iter().any(|line| !is_blank_or_comment(line));
        let value = if has_content { FrontmatterValue::Nested } else { FrontmatterValue::Null };
        (value, end)
    }

    fn flow_collection(&self, index: usize, rest: &str) -> Result<(FrontmatterValue, usize), FrontmatterError> {
        let mut depth = 0usize;
        let mut quote: Option<char> = None;
        let mut line_index = index;
        let mut text = rest;
        loop {
            for (offset, c) in text.char_indices() {
                match (quote, c) {
                    (Some(open), _) if c == open => quote = None,
                    (Some(_), _) => {}
                    (None, '"' | '\'') => quote = Some(c),
                    (None, '[' | '{') => depth += 1,
                    (None, ']' | '}') => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            let tail = text[offset + 1..].trim();
                            if !tail.is_empty() && !tail.starts_with('#') {
                                return Err(self.error_at(line_index, tail, "unexpected text after a flow collection"));
                            }
                            return Ok((FrontmatterValue::Nested, line_index + 1));
                        }
                    }
                    _ => {}
                }
            }
            line_index += 1;
            match self.lines.get(line_index) {
                Some(next) => text = next,
                None => return Err(self.error_at(index, rest, "unterminated flow collection")),
            }
        }
    }

    fn block_scalar(&self, index: usize, header: &str) -> Result<(FrontmatterValue, usize), FrontmatterError> {
        let literal = header.starts_with('|');
        let mut chomp = Chomp::Clip;
        let mut explicit_indent: Option<usize> = None;
        let mut chars = header[1..].char_indices();
        let mut header_end = header.len();
        for (offset, c) in chars.by_ref() {
            match c {
                '-' => chomp = Chomp::Strip,
                '+' => chomp = Chomp::Keep,
                '1'..='9' => explicit_indent = c.to_digit(10).map(|digit| digit as usize),
                _ => {
                    header_end = offset + 1;
                    break;
                }
            }
        }
        let after = header[header_end..].trim();
        if !after.is_empty() && !after.starts_with('#') {
            return Err(self.error_at(index, after, "unexpected text after a block scalar indicator"));
        }
        let end = self.block_end(index);
        let body_lines = &self.lines[index + 1..end];
        let content_indent = match explicit_indent {
            Some(extra) => self.base + extra,
            None => body_lines.iter().find(|line| !line.trim().is_empty()).map(|line| indent_of(line)).unwrap_or(0),
        };
        let mut lines: Vec<&str> = Vec::with_capacity(body_lines.len());
        for (offset, line) in body_lines.iter().enumerate() {
            if line.trim().is_empty() {
                lines.push(line.get(content_indent..).unwrap_or(""));
            } else if indent_of(line) < content_indent {
                return Err(self.error(index + 1 + offset, "a block scalar line is indented too little"));
            } else {
                lines.push(&line[content_indent..]);
            }
        }
        Ok((FrontmatterValue::String(fold_block(&lines, literal, chomp)), end))
    }

    /// End of a block scalar: every following line that is blank or more indented than the keys.
    fn block_end(&self, index: usize) -> usize {
        let mut end = index + 1;
        while end < self.lines.len() {
            let line = self.lines[end];
            if !line.trim().is_empty() && indent_of(line) <= self.base {
                break;
            }
            end += 1;
        }
        end
    }

    fn quoted(&self, index: usize, rest: &str) -> Result<(FrontmatterValue, usize), FrontmatterError> {
        let quote = rest.chars().next().unwrap_or('"');
        let mut raw_lines: Vec<&str> = Vec::new();
        let mut line_index = index;
        let mut text = &rest[1..];
        loop {
            if let Some(close) = find_closing_quote(text, quote) {
                raw_lines.push(&text[..close]);
                let tail = text[close + 1..].trim();
                if !tail.is_empty() && !tail.starts_with('#') {
                    return Err(self.error_at(line_index, tail, "unexpected text after a quoted value"));
                }
                let value = fold_quoted(&raw_lines, quote);
                return value
                    .map(|text| (FrontmatterValue::String(text), line_index + 1))
                    .map_err(|reason| self.error_at(index, rest, reason));
            }
            raw_lines.push(text);
            line_index += 1;
            match self.lines.get(line_index) {
                Some(next) if next.trim().is_empty() || indent_of(next) > self.base => text = next,
                _ => return Err(self.error_at(index, rest, "unterminated quoted value")),
            }
        }
    }

    fn plain(
        &self,
        index: usize,
        rest: &str,
        forced_string: bool,
    ) -> Result<(FrontmatterValue, usize), FrontmatterError> {
        let first = strip_comment(rest).trim_end();
        if let Some(colon) = mapping_indicator(first) {
            return Err(self.error_at(index, &first[colon..], PLAIN_COLON));
        }
        let mut text = first.to_owned();
        let mut end = index + 1;
        let mut pending_breaks = 0usize;
        if !ends_with_comment(rest) {
            while end < self.lines.len() {
                let line = self.lines[end];
                if line.trim().is_empty() {
                    pending_breaks += 1;
                    end += 1;
                    continue;
                }
                if indent_of(line) <= self.base || line.trim_start().starts_with('#') {
                    break;
                }
                let piece = strip_comment(line.trim_start()).trim_end();
                if let Some(colon) = mapping_indicator(piece) {
                    return Err(self.error_at(end, &piece[colon..], PLAIN_COLON));
                }
                if pending_breaks == 0 {
                    text.push(' ');
                } else {
                    text.push_str(&"\n".repeat(pending_breaks));
                }
                text.push_str(piece);
                pending_breaks = 0;
                end += 1;
                if ends_with_comment(line) {
                    break;
                }
            }
        }
        // Trailing blank lines belong to whatever follows.
        while end > index + 1 && self.lines[end - 1].trim().is_empty() {
            end -= 1;
        }
        let value = if forced_string { FrontmatterValue::String(text) } else { resolve_plain(text) };
        Ok((value, end))
    }
}

/// Splits `key: rest` (plain or quoted key); `None` when the line is not a mapping entry.
fn split_key(content: &str) -> Option<(String, &str)> {
    if let Some(quote) = content.chars().next().filter(|c| *c == '"' || *c == '\'') {
        let close = find_closing_quote(&content[1..], quote)? + 1;
        let inner = &content[1..close];
        let after = content[close + 1..].trim_start_matches([' ', '\t']);
        let rest = after.strip_prefix(':')?;
        if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
            return None;
        }
        let key = if quote == '\'' { inner.replace("''", "'") } else { decode_double_quoted(inner, false).ok()?.0 };
        return Some((key, rest));
    }
    let bytes = content.as_bytes();
    for (index, byte) in bytes.iter().enumerate() {
        if *byte == b'#' && index > 0 && matches!(bytes[index - 1], b' ' | b'\t') {
            return None;
        }
        if *byte == b':' && matches!(bytes.get(index + 1), None | Some(b' ') | Some(b'\t')) {
            let key = content[..index].trim_end();
            if key.is_empty() {
                return None;
            }
            return Some((key.to_owned(), &content[index + 1..]));
        }
    }
    None
}

/// The text before a ` #` comment.
fn strip_comment(text: &str) -> &str {
    let bytes = text.as_bytes();
    for index in 1..bytes.len() {
        if bytes[index] == b'#' && matches!(bytes[index - 1], b' ' | b'\t') {
            return &text[..index];
        }
    }
    text
}

fn ends_with_comment(text: &str) -> bool {
    strip_comment(text).len() != text.len()
}

/// Where a `: ` (or a trailing `:`) inside a plain scalar would start a nested mapping, which YAML rejects.
fn mapping_indicator(text: &str) -> Option<usize> {
    let inside = [text.find(": "), text.find(":\t")].into_iter().flatten().min();
    inside.or_else(|| text.ends_with(':').then(|| text.len() - 1))
}

/// Why a plain value holding `: ` is refused, and the fix.
const PLAIN_COLON: &str = "a plain value cannot contain `: `; quote the value";

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn is_blank_or_comment(line: &str) -> bool {
    let trimmed = line.trim();
    trimmed.is_empty() || trimmed.starts_with('#')
}
