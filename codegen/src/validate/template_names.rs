//! The filters and tests a minijinja template names, found by scanning its tags, and which of them the
//! runtime's environment lacks: minijinja looks filters up only while rendering, so without this a
//! misspelt filter in a command would surface the first time the model calls the tool.

use minijinja::{Environment, ErrorKind};

use crate::problem::did_you_mean;

/// minijinja's built-in filters (the runtime adds none of its own, it only replaces `safe` and `tojson`).
/// Used for suggestions only; whether a name exists is asked of minijinja itself.
const FILTERS: &[&str] = &[
    "safe", "escape", "e", "lower", "upper", "title", "replace", "length", "count", "dictsort", "items", "reverse",
    "trim", "join", "split", "lines", "default", "d", "round", "abs", "int", "float", "attr", "first", "last", "min",
    "max", "sort", "list", "string", "bool", "batch", "slice", "sum", "indent", "select", "reject", "map", "groupby",
    "unique", "chain", "zip", "pprint", "format", "tojson",
];

/// minijinja's built-in tests, for suggestions.
const TESTS: &[&str] = &[
    "undefined",
    "defined",
    "none",
    "safe",
    "escaped",
    "boolean",
    "odd",
    "even",
    "divisibleby",
    "number",
    "integer",
    "int",
    "float",
    "string",
    "sequence",
    "iterable",
    "mapping",
    "startingwith",
    "endingwith",
    "lower",
    "upper",
    "sameas",
    "eq",
    "equalto",
    "ne",
    "lt",
    "lessthan",
    "le",
    "gt",
    "greaterthan",
    "ge",
    "in",
    "true",
    "false",
    "filter",
    "test",
];

/// Whether a name is used as a filter (`x | name`, `{% filter name %}`) or a test (`x is name`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameUse {
    Filter,
    Test,
}

impl NameUse {
    fn noun(self) -> &'static str {
        match self {
            NameUse::Filter => "filter",
            NameUse::Test => "test",
        }
    }
}

/// One message per filter or test `source` uses that a plain minijinja environment does not know.
pub fn unknown_names(source: &str) -> Vec<String> {
    let env = Environment::new();
    let mut messages = Vec::new();
    let mut reported: Vec<(NameUse, String)> = Vec::new();
    for (kind, name) in used_names(source) {
        if reported.contains(&(kind, name.clone())) || exists(&env, kind, &name) {
            continue;
        }
        let known = match kind {
            NameUse::Filter => FILTERS,
            NameUse::Test => TESTS,
        };
        let hint = match did_you_mean(&name, known.iter().copied().filter(|known| exists(&env, kind, known))) {
            Some(suggestion) => format!("; did you mean `{suggestion}`?"),
            None => format!("; see minijinja's built-in {}s", kind.noun()),
        };
        messages.push(format!("the command uses the {} `{name}`, which does not exist{hint}", kind.noun()));
        reported.push((kind, name));
    }
    messages
}

/// Asks minijinja whether `name` resolves, by rendering a template that uses it on `none`.
fn exists(env: &Environment<'_>, kind: NameUse, name: &str) -> bool {
    let probe = match kind {
        NameUse::Filter => format!("{{{{ none | {name} }}}}"),
        NameUse::Test => format!("{{{{ none is {name} }}}}"),
    };
    let missing = match kind {
        NameUse::Filter => ErrorKind::UnknownFilter,
        NameUse::Test => ErrorKind::UnknownTest,
    };
    !matches!(env.render_str(&probe, ()), Err(error) if error.kind() == missing)
}

/// The filter and test names in `source`'s `{{ }}` and `{% %}` tags, in order; comments, raw blocks and
/// string literals are skipped.
pub fn used_names(source: &str) -> Vec<(NameUse, String)> {
    let mut names = Vec::new();
    let mut rest = source;
    while let Some(start) = rest.find('{') {
        let after = &rest[start + 1..];
        rest = match after.chars().next() {
            Some('#') => skip_past(after, "#}"),
            Some(open @ ('{' | '%')) => {
                let close = if open == '{' { "}}" } else { "%}" };
                let (tokens, remainder) = tag_tokens(&after[1..], close);
                if open == '%' && is_raw_start(&tokens) {
                    skip_raw(remainder)
                } else {
                    collect_names(&tokens, open == '%', &mut names);
                    remainder
                }
            }
            _ => after,
        };
    }
    names
}

fn skip_past<'a>(text: &'a str, marker: &str) -> &'a str {
    text.find(marker).map_or("", |at| &text[at + marker.len()..])
}

/// After `{% raw %}`: the text following the matching `{% endraw %}` tag.
fn skip_raw(mut text: &str) -> &str {
    while let Some(at) = text.find("{%") {
        let (tokens, remainder) = tag_tokens(&text[at + 2..], "%}");
        if tokens.first().is_some_and(|token| token == "endraw") {
            return remainder;
        }
        text = &text[at + 2..];
    }
    ""
}

fn is_raw_start(tokens: &[String]) -> bool {
    tokens.first().is_some_and(|token| token == "raw")
}

/// The tokens of one tag up to `close` (outside strings), and the text after it. Identifiers (with dots) and
/// single punctuation characters are tokens; whitespace-control dashes and string literals are dropped.
fn tag_tokens<'a>(text: &'a str, close: &str) -> (Vec<String>, &'a str) {
    let mut tokens = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if text[at..].starts_with(close) {
            return (tokens, &text[at + close.len()..]);
        }
        if c == '"' || c == '\'' {
            while let Some((_, inner)) = chars.next() {
                if inner == '\\' {
                    chars.next();
                } else if inner == c {
                    break;
                }
            }
        } else if c.is_alphabetic() || c == '_' {
            let mut word = String::from(c);
            while let Some(&(_, next)) = chars.peek() {
                if next.is_alphanumeric() || next == '_' || next == '.' {
                    word.push(next);
                    chars.next();
                } else {
                    break;
                }
            }
            tokens.push(word);
        } else if !c.is_whitespace() && c != '-' && c != '+' {
            tokens.push(c.to_string());
        }
    }
    (tokens, "")
}

fn collect_names(tokens: &[String], statement: bool, names: &mut Vec<(NameUse, String)>) {
    if statement && tokens.first().is_some_and(|token| token == "filter") {
        push_name(tokens.get(1), NameUse::Filter, names);
    }
    for (index, token) in tokens.iter().enumerate() {
        match token.as_str() {
            "|" => push_name(tokens.get(index + 1), NameUse::Filter, names),
            "is" => {
                let next = if tokens.get(index + 1).is_some_and(|t| t == "not") { index + 2 } else { index + 1 };
                push_name(tokens.get(next), NameUse::Test, names);
            }
            _ => {}
        }
    }
}

fn push_name(token: Option<&String>, kind: NameUse, names: &mut Vec<(NameUse, String)>) {
    if let Some(name) = token.filter(|token| token.starts_with(|c: char| c.is_alphabetic() || c == '_')) {
        names.push((kind, name.trim_end_matches('.').to_owned()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filters(source: &str) -> Vec<String> {
        used_names(source).into_iter().filter(|(kind, _)| *kind == NameUse::Filter).map(|(_, n)| n).collect()
    }

    fn tests_of(source: &str) -> Vec<String> {
        used_names(source).into_iter().filter(|(kind, _)| *kind == NameUse::Test).map(|(_, n)| n).collect()
    }

    #[test]
    fn filters_are_found_in_expressions_statements_and_filter_blocks() {
        assert_eq!(filters("echo {{ a | upper }} {{- b|join(',') | safe -}}"), ["upper", "join", "safe"]);
        assert_eq!(filters("{% for x in xs | sort %}{{ x }}{% endfor %}"), ["sort"]);
        assert_eq!(filters("{% filter upper %}hi{% endfilter %}"), ["upper"]);
        assert_eq!(filters("{{ a | default(b | lower) }}"), ["default", "lower"]);
    }

    #[test]
    fn tests_are_found_after_is_and_is_not() {
        assert_eq!(tests_of("{% if a is defined and b is not none %}x{% endif %}"), ["defined", "none"]);
        assert_eq!(tests_of("{{ 'yes' if n is divisibleby(3) }}"), ["divisibleby"]);
    }

    #[test]
    fn strings_comments_raw_blocks_and_shell_text_are_not_scanned() {
        assert!(used_names("{{ 'a | b' ~ \"c is d\" }}").is_empty());
        assert!(used_names("{# {{ x | nope }} #} ls | wc -l").is_empty());
        assert!(used_names("{% raw %}{{ x | nope }}{% endraw %}{{ y }}").is_empty());
        assert_eq!(filters("{% raw %}{{ x | nope }}{% endraw %}{{ y | upper }}"), ["upper"]);
        assert!(used_names("echo ${x} | grep '{'").is_empty());
        assert!(used_names("{{ 'it\\'s | x' }}").is_empty());
    }

    #[test]
    fn unknown_filters_and_tests_are_reported_once_with_a_suggestion() {
        let messages =
            unknown_names("{{ a | upperr }} {{ b | upperr }} {% if a is strng %}{{ a | zzzzzz }}{% endif %}");
        assert_eq!(messages.len(), 3, "{messages:?}");
        assert!(
            messages[0].contains("filter `upperr`") && messages[0].contains("did you mean `upper`?"),
            "{messages:?}"
        );
        assert!(messages[1].contains("test `strng`") && messages[1].contains("did you mean `string`?"), "{messages:?}");
        assert!(messages[2].contains("see minijinja's built-in filters"), "{messages:?}");
    }

    #[test]
    fn every_listed_name_exists_and_known_names_pass() {
        let env = Environment::new();
        for name in FILTERS {
            assert!(exists(&env, NameUse::Filter, name), "filter {name}");
        }
        for name in TESTS {
            assert!(exists(&env, NameUse::Test, name), "test {name}");
        }
        assert!(unknown_names("{{ a | tojson }} {{ b | safe }} {% if c is defined %}{% endif %}").is_empty());
    }
}
