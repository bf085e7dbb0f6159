//! Ignore-rule and settings-glob matcher tests. Every expected value was produced by the npm `ignore`
//! package (gitignore rules) and `minimatch` (settings globs) that pi uses, run under node.

use std::path::Path;

use super::ignore_rules::{GlobPattern, IgnoreRules};

/// `path` ending in `/` is a directory, as pi passes it to `ignore`.
fn ignored(rules: &[&str], path: &str) -> bool {
    let mut matcher = IgnoreRules::new();
    for rule in rules {
        matcher.add_line(rule, "");
    }
    match path.strip_suffix('/') {
        Some(dir) => matcher.is_ignored(dir, true),
        None => matcher.is_ignored(path, false),
    }
}

/// Rules, then paths with whether they are ignored.
type IgnoreCase = (&'static [&'static str], &'static [(&'static str, bool)]);

#[test]
fn gitignore_rules_match_the_ignore_package() {
    let cases: &[IgnoreCase] = &[
        (&["*.md"], &[("a.md", true), ("x/a.md", true), ("a.mdx", false), ("md/", false)]),
        (
            &["build/"],
            &[("build", false), ("build/", true), ("x/build/", true), ("build/x.md", true), ("x/build", false)],
        ),
        (
            &["sub/foo"],
            &[("sub/foo", true), ("x/sub/foo", false), ("sub/foo/", true), ("sub/foo/bar.md", true), ("foo", false)],
        ),
        (&["doc/**/*.md"], &[("doc/a.md", true), ("doc/x/y/a.md", true), ("a.md", false)]),
        (&["**/tmp"], &[("tmp", true), ("a/tmp", true), ("a/b/tmp/", true), ("tmpx", false)]),
        (&["a/**"], &[("a", false), ("a/", false), ("a/b", true), ("a/b/c.md", true)]),
        (&["*.md", "!keep.md"], &[("keep.md", false), ("x/keep.md", false), ("drop.md", true)]),
        (&["dir/", "!dir/keep.md"], &[("dir/keep.md", true), ("dir/", true), ("dir/x.md", true)]),
        (
            &["f?o.md", "[ab].md", "[!c]x.md"],
            &[
                ("foo.md", true),
                ("fao.md", true),
                ("f/o.md", false),
                ("a.md", true),
                ("c.md", false),
                ("dx.md", true),
                ("cx.md", false),
            ],
        ),
        (&["trailing.md   ", "esc\\ "], &[("trailing.md", true), ("esc ", true), ("esc", false)]),
        (&["\\#hash.md"], &[("#hash.md", true)]),
        (&["sub/*.tmp"], &[("sub/a.tmp", true), ("sub/x/a.tmp", false)]),
    ];
    for (rules, paths) in cases {
        for (path, expected) in *paths {
            assert_eq!(ignored(rules, path), *expected, "rules {rules:?} on {path:?}");
        }
    }
}

#[test]
fn comments_and_blank_lines_add_no_rules() {
    assert!(!ignored(&["# *.md", "   ", ""], "a.md"));
    assert!(!ignored(&["  # indented comment"], "#"));
}

#[test]
fn nested_ignore_file_rules_are_prefixed_with_their_directory() {
    let root = tempfile::tempdir().expect("tempdir");
    let sub = root.path().join("sub");
    std::fs::create_dir_all(&sub).expect("mkdir");
    std::fs::write(sub.join(".gitignore"), "*.tmp\n/anchored\n!keep.tmp\r\n").expect("write");
    std::fs::write(sub.join(".fdignore"), "fd-only\n").expect("write");
    let mut rules = IgnoreRules::new();
    rules.add_ignore_files(&sub, root.path());
    assert!(rules.is_ignored("sub/a.tmp", false));
    assert!(!rules.is_ignored("sub/keep.tmp", false), "negation (with a CRLF line end) re-includes");
    // pi prefixes `*.tmp` to `sub/*.tmp`, which no longer matches deeper levels.
    assert!(!rules.is_ignored("sub/deeper/a.tmp", false));
    assert!(!rules.is_ignored("a.tmp", false), "rules stay inside their directory");
    assert!(rules.is_ignored("sub/anchored", true));
    assert!(rules.is_ignored("sub/fd-only", true), ".fdignore is read too");
}

#[test]
fn escaped_bang_at_the_root_turns_into_a_negation_as_in_pi() {
    // pi strips the backslash of `\!` before handing the line to `ignore`, so at the root the line
    // becomes a negation; under a prefix it stays a literal `!`.
    assert!(!ignored(&["*.md", "\\!x.md"], "x.md"));
    let mut prefixed = IgnoreRules::new();
    prefixed.add_line("\\!x.md", "sub/");
    assert!(prefixed.is_ignored("sub/!x.md", false));
}

#[test]
fn settings_globs_match_minimatch() {
    let cases = [
        ("a/**", "a", false),
        ("a/**", "a/b/c", true),
        ("a/**", "a/.b/c", false),
        ("*", ".x", false),
        ("a/**/b", "a/b", true),
        ("**/b", "x/a/b", true),
        ("/abs/**", "/abs/x/SKILL.md", true),
        ("{foo,bar}", "bar", true),
        ("skills/*", "skills/foo", true),
        ("skills/*", "skills/foo/", true),
        ("*", "../x", false),
        ("../**", "../a/b", true),
        ("**", "a/.b", false),
        (".hidden/*", ".hidden/x", true),
        ("*.md", "x.md", true),
        ("*.md", "a/x.md", false),
        ("s?ills/[a-c]*", "skills/beta", true),
        ("x/{a,b{c,d}}/y", "x/bd/y", true),
    ];
    for (glob, path, expected) in cases {
        assert_eq!(GlobPattern::new(glob).is_match(path), expected, "glob {glob:?} on {path:?}");
    }
}

#[test]
fn to_posix_keeps_forward_slashes() {
    assert_eq!(super::ignore_rules::to_posix(Path::new("a/b/c.md")), "a/b/c.md");
}
