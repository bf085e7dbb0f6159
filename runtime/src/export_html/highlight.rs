//! Code highlighted at export time: syntect's grammars (with two-face's extras) turn code into `<span>`s whose
//! `hl-` classes the page's own light and dark palettes color, so the page needs no script for it.

use std::sync::OnceLock;

use syntect::html::{ClassStyle, ClassedHTMLGenerator};
use syntect::parsing::{SyntaxReference, SyntaxSet};
use syntect::util::LinesWithEndings;

use crate::prompt::escape_xml as escape;

/// Texts above this size are shown plain: highlighting is linear but not cheap (a few MB/s).
const MAX_HIGHLIGHTED_BYTES: usize = 256 * 1024;

/// The class prefix of highlighted spans (`hl-keyword`, `hl-string`, …).
const CLASS_STYLE: ClassStyle = ClassStyle::SpacedPrefixed { prefix: "hl-" };

/// The grammars, loaded on the first highlighted block of an export (a few ms), never at start-up.
fn syntaxes() -> &'static SyntaxSet {
    static SYNTAXES: OnceLock<SyntaxSet> = OnceLock::new();
    SYNTAXES.get_or_init(two_face::syntax::extra_newlines)
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
/// known grammar, escaped text otherwise.
pub fn highlight(text: &str, language: &str) -> String {
    if text.len() > MAX_HIGHLIGHTED_BYTES {
        return escape(text);
    }
    match syntax_for_language(language) {
        Some(syntax) => highlight_with(syntaxes(), syntax, text).unwrap_or_else(|| escape(text)),
        None => escape(text),
    }
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

fn highlight_with(set: &SyntaxSet, syntax: &SyntaxReference, text: &str) -> Option<String> {
    let mut generator = ClassedHTMLGenerator::new_with_class_style(syntax, set, CLASS_STYLE);
    for line in LinesWithEndings::from(text) {
        generator.parse_html_for_line_which_includes_newline(line).ok()?;
    }
    Some(generator.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_languages_get_classed_spans_and_unknown_ones_stay_escaped_text() {
        let rust = highlight("fn main() { let s = \"<b>\"; }\n", "rust");
        assert!(rust.contains("class=\"hl-storage hl-type hl-function hl-rust\""), "{rust}");
        assert!(rust.contains("&lt;b&gt;"), "{rust}");
        assert!(!rust.contains("<b>"));
        let typescript = highlight("const x: number = 1;\n", "ts");
        assert!(
            typescript.contains("hl-support hl-type hl-primitive hl-ts"),
            "two-face's grammars are in: {typescript}"
        );
        assert_eq!(highlight("a < b\n", "no-such-language"), "a &lt; b\n");
        assert_eq!(highlight("a < b\n", ""), "a &lt; b\n");
    }

    #[test]
    fn files_are_known_by_extension_name_or_shebang() {
        assert_eq!(language_of_path("src/main.rs", ""), "rs");
        assert_eq!(language_of_path("Dockerfile", "FROM debian"), "Dockerfile");
        assert_eq!(language_of_path("scripts/run", "#!/usr/bin/env python3"), "python");
        assert_eq!(language_of_path("notes", "just words"), "");
    }
}
