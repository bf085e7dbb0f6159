//! Rust names for YAML names: tool names become method and type names, argument names become fields.
//! Every function here returns a valid identifier for any input, so odd YAML can never make the macro panic.

use proc_macro2::{Ident, Span};

/// Keywords of every edition (strict, reserved and 2024's `gen`): usable only as raw identifiers.
const KEYWORDS: [&str; 52] = [
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate", "do", "dyn", "else",
    "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "macro", "match", "mod",
    "move", "mut", "override", "priv", "pub", "ref", "return", "self", "Self", "static", "struct", "super", "trait",
    "true", "try", "type", "typeof", "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

/// Keywords that cannot even be raw identifiers; they get a trailing `_` instead.
const NOT_RAW: [&str; 4] = ["self", "Self", "super", "crate"];

/// `addNote`, `add-note` and `add_note` all give `add_note`. Only ASCII letters, digits and `_` remain.
pub fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut previous_lower = false;
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            if previous_lower {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
            previous_lower = false;
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
            previous_lower = true;
        } else {
            out.push('_');
            previous_lower = false;
        }
    }
    out
}

/// `add_note` and `add-note` give `AddNote`.
pub fn camel_case(name: &str) -> String {
    let snake = snake_case(name);
    let mut out: String = snake
        .split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map(|first| first.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
        })
        .collect();
    if !out.starts_with(|c: char| c.is_ascii_alphabetic()) {
        out.insert_str(0, "Tool");
    }
    out
}

/// The snake_case identifier for `name`: a raw identifier for keywords, `field_` in front of names that
/// do not start with a letter or `_`.
pub fn snake_ident(name: &str) -> Ident {
    let mut snake = snake_case(name);
    if !snake.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') || snake.chars().all(|c| c == '_') {
        snake.insert_str(0, "field_");
    }
    ident(&snake)
}

/// An identifier from text that is already a valid identifier or keyword.
fn ident(text: &str) -> Ident {
    if NOT_RAW.contains(&text) {
        Ident::new(&format!("{text}_"), Span::call_site())
    } else if KEYWORDS.contains(&text) {
        Ident::new_raw(text, Span::call_site())
    } else {
        Ident::new(text, Span::call_site())
    }
}

/// The identifier's name as serde sees it (without `r#`).
pub fn unraw(ident: &Ident) -> String {
    let text = ident.to_string();
    text.strip_prefix("r#").map(str::to_owned).unwrap_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_become_rust_names() {
        assert_eq!(camel_case("add_note"), "AddNote");
        assert_eq!(camel_case("add-note"), "AddNote");
        assert_eq!(camel_case("listNotes"), "ListNotes");
        assert_eq!(camel_case("2fa"), "Tool2fa");
        assert_eq!(camel_case("_"), "Tool");
        assert_eq!(snake_ident("listNotes").to_string(), "list_notes");
        assert_eq!(snake_ident("HTTPGet").to_string(), "httpget");
    }

    #[test]
    fn odd_argument_names_still_give_identifiers() {
        assert_eq!(snake_ident("type").to_string(), "r#type");
        assert_eq!(snake_ident("gen").to_string(), "r#gen");
        assert_eq!(snake_ident("self").to_string(), "self_");
        assert_eq!(snake_ident("Self").to_string(), "self_");
        assert_eq!(snake_ident("dueDate").to_string(), "due_date");
        assert_eq!(snake_ident("max-count").to_string(), "max_count");
        assert_eq!(snake_ident("1st").to_string(), "field_1st");
        assert_eq!(snake_ident("").to_string(), "field_");
        assert_eq!(snake_ident("_").to_string(), "field__");
        assert_eq!(snake_ident("_private").to_string(), "_private");
        assert_eq!(snake_ident("größe").to_string(), "gr__e");
        assert_eq!(unraw(&snake_ident("type")), "type");
    }
}
