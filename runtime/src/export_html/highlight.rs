//! Code highlighted at export time: syntect's grammars (with two-face's extras) parse the code, and each
//! token becomes a `<span>` with one short class (`hl-k` keyword, `hl-s` string, …) that the page's own light
//! and dark palettes color, so the page needs no script for it. A budget bounds the work per page.

use std::cell::Cell;
use std::fmt::Write as _;
use std::sync::OnceLock;

use syntect::parsing::{ParseState, Scope, ScopeStack, SyntaxReference, SyntaxSet};
use syntect::util::LinesWithEndings;

use crate::prompt::escape_xml as escape;

/// A block above this size is shown plain.
const MAX_BLOCK_BYTES: usize = 64 * 1024;

/// How many lines one page highlights at most: parsing runs at roughly 15,000 lines a second (rendering the
/// rest of a 200-turn page takes 30 ms), so the longest session's page stays about half a second's work; later
/// blocks are shown plain.
pub const PAGE_LINE_BUDGET: usize = 8_000;

/// The lines a page may still highlight.
pub struct HighlightBudget {
    lines: Cell<usize>,
}

impl HighlightBudget {
    pub fn new(lines: usize) -> Self {
        Self { lines: Cell::new(lines) }
    }

    /// Takes `lines` from the budget if it holds them.
    fn take(&self, lines: usize) -> bool {
        let left = self.lines.get();
        if lines > left {
            return false;
        }
        self.lines.set(left - lines);
        true
    }
}

/// The grammars, loaded on the first highlighted block of an export (a few ms), never at start-up.
fn syntaxes() -> &'static SyntaxSet {
    static SYNTAXES: OnceLock<SyntaxSet> = OnceLock::new();
    SYNTAXES.get_or_init(two_face::syntax::extra_newlines)
}

/// Scope prefixes and the class their tokens get; the innermost scope of a token that has an entry decides.
/// An empty class stops the search (operators stay plain inside a keyword-colored parent).
fn scope_classes() -> &'static [(Scope, &'static str)] {
    static CLASSES: OnceLock<Vec<(Scope, &'static str)>> = OnceLock::new();
    CLASSES.get_or_init(|| {
        [
            ("comment", "c"),
            ("string", "s"),
            ("constant.character", "s"),
            ("constant.numeric", "n"),
            ("constant.language", "n"),
            ("keyword.operator", ""),
            ("keyword", "k"),
            ("storage", "k"),
            ("entity.name.function", "f"),
            ("support.function", "f"),
            ("variable.function", "f"),
            ("support.macro", "f"),
            ("entity.name.macro", "f"),
            ("entity.name.type", "t"),
            ("entity.name.class", "t"),
            ("entity.name.struct", "t"),
            ("entity.name.enum", "t"),
            ("entity.other.inherited-class", "t"),
            ("support.type", "t"),
            ("support.class", "t"),
            ("entity.name.tag", "g"),
            ("entity.other.attribute-name", "a"),
            ("markup.inserted", "add"),
            ("markup.deleted", "del"),
            ("markup.heading", "h"),
            ("markup.bold", "b"),
            ("markup.italic", "i"),
        ]
        .into_iter()
        .filter_map(|(scope, class)| Scope::new(scope).ok().map(|scope| (scope, class)))
        .collect()
    })
}

fn class_of(stack: &ScopeStack) -> &'static str {
    let classes = scope_classes();
    for scope in stack.as_slice().iter().rev() {
        if let Some((_, class)) = classes.iter().find(|(prefix, _)| prefix.is_prefix_of(*scope)) {
            return class;
        }
    }
    ""
}

/// Common names for a language that the grammars don't list as a token.
fn canonical_token(language: &str) -> &str {
    match language {
        "shell" | "console" | "zsh" => "bash",
        "jsonc" | "json5" => "json",
        "py" | "python3" => "python",
        "rs" => "rust",
        "golang" => "go",
        "yml" => "yaml",
        "c++" => "cpp",
        "patch" => "diff",
        other => other,
    }
}

fn syntax_for_language(language: &str) -> Option<&'static SyntaxReference> {
    let token = language.trim().to_ascii_lowercase();
    let token = canonical_token(token.split([' ', ',', '{']).next().unwrap_or_default());
    if token.is_empty() || matches!(token, "text" | "txt" | "plain" | "plaintext") {
        return None;
    }
    syntaxes().find_syntax_by_token(token)
}

/// `text` as HTML: highlighted spans when `language` (a fence's info string or a file extension) names a
/// known grammar and the budget allows, escaped text otherwise.
pub fn highlight(text: &str, language: &str, budget: &HighlightBudget) -> String {
    if text.len() > MAX_BLOCK_BYTES || language.is_empty() {
        return escape(text);
    }
    let Some(syntax) = syntax_for_language(language) else { return escape(text) };
    if !budget.take(text.lines().count()) {
        return escape(text);
    }
    highlight_with(syntax, text).unwrap_or_else(|| escape(text))
}

/// The language of a file by its name: the extension, or a shebang on the first line.
pub fn language_of_path(path: &str, first_line: &str) -> String {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let set = syntaxes();
    if let Some((_, extension)) = name.rsplit_once('.')
        && set.find_syntax_by_extension(extension).is_some()
    {
        return extension.to_owned();
    }
    if set.find_syntax_by_extension(name).is_some() {
        // Whole-name grammars: Makefile, Dockerfile, …
        return name.to_owned();
    }
    set.find_syntax_by_first_line(first_line).map(|syntax| syntax.name.to_ascii_lowercase()).unwrap_or_default()
}

fn highlight_with(syntax: &SyntaxReference, text: &str) -> Option<String> {
    let set = syntaxes();
    let mut state = ParseState::new(syntax);
    let mut stack = ScopeStack::new();
    let mut out = HighlightedText::with_capacity(text.len() * 2);
    for line in LinesWithEndings::from(text) {
        let ops = state.parse_line(line, set).ok()?;
        let mut position = 0;
        for (offset, op) in ops {
            let offset = offset.min(line.len());
            if offset > position {
                out.push(&line[position..offset], class_of(&stack));
                position = offset;
            }
            stack.apply(&op).ok()?;
        }
        out.push(&line[position..], class_of(&stack));
    }
    Some(out.finish())
}

/// Tokens joined into spans, neighbours of the same class in one span; whitespace between two spans of
/// different classes stays outside both.
struct HighlightedText {
    html: String,
    open: &'static str,
    pending: String,
    whitespace: String,
}

impl HighlightedText {
    fn with_capacity(capacity: usize) -> Self {
        Self { html: String::with_capacity(capacity), open: "", pending: String::new(), whitespace: String::new() }
    }

    fn push(&mut self, token: &str, class: &'static str) {
        if token.trim().is_empty() {
            self.whitespace.push_str(token);
            return;
        }
        if class != self.open {
            self.flush();
            self.html.push_str(&escape(&self.whitespace));
            self.whitespace.clear();
            self.open = class;
        }
        self.pending.push_str(&self.whitespace);
        self.whitespace.clear();
        self.pending.push_str(token);
    }

    fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let text = escape(&self.pending);
        if self.open.is_empty() {
            self.html.push_str(&text);
        } else {
            let _ = write!(self.html, "<span class=\"hl-{}\">{text}</span>", self.open);
        }
        self.pending.clear();
    }

    fn finish(mut self) -> String {
        self.flush();
        self.html.push_str(&escape(&self.whitespace));
        self.html
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unlimited() -> HighlightBudget {
        HighlightBudget::new(usize::MAX)
    }

    #[test]
    fn known_languages_get_classed_spans_and_unknown_ones_stay_escaped_text() {
        let rust = highlight("fn main() { let s = \"<b>\"; } // done\n", "rust", &unlimited());
        assert_eq!(
            rust,
            "<span class=\"hl-k\">fn</span> <span class=\"hl-f\">main</span>() { <span class=\"hl-k\">let</span> s = \
             <span class=\"hl-s\">&quot;&lt;b&gt;&quot;</span>; } <span class=\"hl-c\">// done\n</span>"
        );
        let typescript = highlight("const x: number = 1;\n", "ts", &unlimited());
        assert!(typescript.contains("<span class=\"hl-t\">number</span>"), "two-face's grammars are in: {typescript}");
        assert_eq!(highlight("a < b\n", "no-such-language", &unlimited()), "a &lt; b\n");
        assert_eq!(highlight("a < b\n", "", &unlimited()), "a &lt; b\n");
    }

    #[test]
    fn the_budget_bounds_the_lines_a_page_highlights() {
        let budget = HighlightBudget::new(3);
        assert!(highlight("let a = 1;\nlet b = 2;\n", "rust", &budget).contains("hl-k"));
        // One line left: a two-line block is shown plain, a one-line block still fits.
        assert_eq!(highlight("let c = 3;\nlet d = 4;\n", "rust", &budget), "let c = 3;\nlet d = 4;\n");
        assert!(highlight("let e = 5;\n", "rust", &budget).contains("hl-k"));
        assert!(!highlight("let f = 6;\n", "rust", &budget).contains("hl-k"));
    }

    #[test]
    fn files_are_known_by_extension_name_or_shebang() {
        assert_eq!(language_of_path("src/main.rs", ""), "rs");
        assert_eq!(language_of_path("Dockerfile", "FROM debian"), "Dockerfile");
        assert_eq!(language_of_path("scripts/run", "#!/usr/bin/env python3"), "python");
        assert_eq!(language_of_path("notes", "just words"), "");
    }
}
