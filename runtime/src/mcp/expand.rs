//! Environment references in server settings, as pi reads them: `${NAME}` and `$NAME` in `env` and `headers`
//! values (`$$` is a literal `$`), expanded when the server starts, so no secret has to be written into the
//! YAML or `mcp.json`; and `~/` in a stdio server's command, arguments and working directory.

use std::path::{Path, PathBuf};

/// `value` with its environment references replaced. Every variable it names must be set and non-empty;
/// otherwise the error lists the missing ones.
pub fn expand_vars(value: &str) -> Result<String, Vec<String>> {
    expand_vars_with(value, |name| std::env::var(name).ok())
}

pub(super) fn expand_vars_with(value: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<String, Vec<String>> {
    let mut out = String::with_capacity(value.len());
    let mut missing: Vec<String> = Vec::new();
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, consumed) = if let Some(braced) = after.strip_prefix('{') {
            match braced.find('}') {
                Some(end) if is_name(&braced[..end]) => (Some(&braced[..end]), end + 2),
                _ => (None, 0),
            }
        } else {
            let end = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
            if is_name(&after[..end]) { (Some(&after[..end]), end) } else { (None, 0) }
        };
        match name {
            Some(name) => {
                match lookup(name).filter(|value| !value.is_empty()) {
                    Some(value) => out.push_str(&value),
                    None if !missing.iter().any(|seen| seen == name) => missing.push(name.to_owned()),
                    None => {}
                }
                rest = &after[consumed..];
            }
            // `$$` and `$!` stand for the character itself; any other `$` is kept as written.
            None if after.starts_with('$') || after.starts_with('!') => {
                out.push_str(&after[..1]);
                rest = &after[1..];
            }
            None => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    if missing.is_empty() { Ok(out) } else { Err(missing) }
}

fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `~` and `~/…` against the home directory.
pub fn expand_home(value: &str) -> PathBuf {
    crate::cli::paths::expand_home(Path::new(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("s3cret".into()),
            "HOME_DIR" => Some("/home/u".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn both_reference_forms_are_replaced() {
        assert_eq!(expand_vars_with("Bearer ${TOKEN}", lookup).unwrap(), "Bearer s3cret");
        assert_eq!(expand_vars_with("$HOME_DIR/x", lookup).unwrap(), "/home/u/x");
        assert_eq!(expand_vars_with("pre-${TOKEN}-post", lookup).unwrap(), "pre-s3cret-post");
        assert_eq!(expand_vars_with("$$lit and $!bang", lookup).unwrap(), "$lit and !bang");
        assert_eq!(expand_vars_with("cost: 5$ ${", lookup).unwrap(), "cost: 5$ ${");
        assert_eq!(expand_vars_with("${NOPE:-dflt}", lookup).unwrap(), "${NOPE:-dflt}");
        assert_eq!(expand_vars_with("~/t", lookup).unwrap(), "~/t");
    }

    #[test]
    fn unset_and_empty_variables_are_errors() {
        assert_eq!(expand_vars_with("${MISSING}", lookup).unwrap_err(), ["MISSING"]);
        assert_eq!(expand_vars_with("$EMPTY", lookup).unwrap_err(), ["EMPTY"]);
        assert_eq!(expand_vars_with("$A ${B} $A", lookup).unwrap_err(), ["A", "B"]);
    }
}
