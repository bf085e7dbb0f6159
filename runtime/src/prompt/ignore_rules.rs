//! Pattern matching for resource discovery: gitignore-style rules from `.gitignore`, `.ignore` and
//! `.fdignore` (scoped to the directory that holds them, as pi scopes them), and minimatch-style globs
//! for the `skills`/`prompts` settings entries. Both compile to `regex`.

use std::path::Path;

use regex::Regex;

/// The ignore files pi reads in every scanned directory.
pub(crate) const IGNORE_FILE_NAMES: [&str; 3] = [".gitignore", ".ignore", ".fdignore"];

/// One compiled gitignore line.
#[derive(Debug)]
struct IgnoreRule {
    regex: Regex,
    negated: bool,
    dir_only: bool,
}

/// Accumulated ignore rules of one scan, matched against paths relative to the scan root.
#[derive(Debug, Default)]
pub(crate) struct IgnoreRules {
    rules: Vec<IgnoreRule>,
}

impl IgnoreRules {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Reads the ignore files of `dir` and adds their lines, prefixed with `dir`'s path relative to
    /// `root` (pi rewrites nested rules this way instead of scoping them).
    pub(crate) fn add_ignore_files(&mut self, dir: &Path, root: &Path) {
        let prefix = match dir.strip_prefix(root) {
            Ok(relative) if !relative.as_os_str().is_empty() => format!("{}/", to_posix(relative)),
            _ => String::new(),
        };
        for file_name in IGNORE_FILE_NAMES {
            let Ok(content) = std::fs::read_to_string(dir.join(file_name)) else {
                continue;
            };
            for line in content.split('\n') {
                let line = line.strip_suffix('\r').unwrap_or(line);
                self.add_line(line, &prefix);
            }
        }
    }

    /// Adds one ignore-file line: comments and blank lines are skipped, a leading `/` is dropped, the
    /// prefix is put in front and `!` kept in front of it.
    pub(crate) fn add_line(&mut self, line: &str, prefix: &str) {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            return;
        }
        let (mut negated, pattern) = if let Some(rest) = line.strip_prefix('!') {
            (true, rest)
        } else if line.starts_with("\\!") {
            (false, &line[1..])
        } else {
            (false, line)
        };
        let pattern = pattern.strip_prefix('/').unwrap_or(pattern);
        let mut full = format!("{prefix}{pattern}");
        if !negated && let Some(rest) = full.strip_prefix('!') {
            // pi drops the backslash of `\!`; with no prefix the line then reads as a negation.
            negated = true;
            full = rest.to_owned();
        }
        if let Some((regex, dir_only)) = gitignore_regex(&full) {
            self.rules.push(IgnoreRule { regex, negated, dir_only });
        }
    }

    /// Whether `relative` (slash-separated, relative to the scan root) is ignored. A path inside an
    /// ignored directory is ignored too; otherwise the last matching rule decides.
    pub(crate) fn is_ignored(&self, relative: &str, is_dir: bool) -> bool {
        if self.rules.is_empty() {
            return false;
        }
        let segments: Vec<&str> = relative.split('/').filter(|segment| !segment.is_empty()).collect();
        for depth in 1..segments.len() {
            if self.test_one(&segments[..depth].join("/"), true) {
                return true;
            }
        }
        self.test_one(&segments.join("/"), is_dir)
    }

    fn test_one(&self, path: &str, is_dir: bool) -> bool {
        let mut ignored = false;
        for rule in &self.rules {
            if rule.negated != ignored {
                continue;
            }
            if rule.dir_only && !is_dir {
                continue;
            }
            if rule.regex.is_match(path) {
                ignored = !rule.negated;
            }
        }
        ignored
    }
}

/// Compiles a gitignore pattern (without its `!`); returns the regex and whether it only matches
/// directories.
fn gitignore_regex(pattern: &str) -> Option<(Regex, bool)> {
    let pattern = trim_unescaped_trailing_spaces(pattern);
    let (pattern, dir_only) = match pattern.strip_suffix('/') {
        Some(rest) => (rest, true),
        None => (pattern, false),
    };
    if pattern.is_empty() {
        return None;
    }
    let anchored = pattern.contains('/');
    let segments: Vec<&str> = pattern.split('/').collect();
    let mut body = String::new();
    let last = segments.len() - 1;
    for (index, segment) in segments.iter().enumerate() {
        if *segment == "**" {
            body.push_str(match (index == last, index == 0) {
                // `**` alone matches everything.
                (true, true) => ".*",
                // `dir/**`: everything inside, not the directory itself.
                (true, false) => ".+",
                // `**/` and `/**/`: zero or more directories.
                (false, _) => "(?:.*/)?",
            });
            continue;
        }
        body.push_str(&segment_regex(segment));
        if index != last {
            body.push('/');
        }
    }
    let source = if anchored { format!("^{body}$") } else { format!("^(?:.*/)?{body}$") };
    Regex::new(&source).ok().map(|regex| (regex, dir_only))
}

/// Drops trailing spaces that are not escaped with a backslash.
fn trim_unescaped_trailing_spaces(pattern: &str) -> &str {
    let mut end = pattern.len();
    while end > 0 && pattern.as_bytes()[end - 1] == b' ' {
        if end >= 2 && pattern.as_bytes()[end - 2] == b'\\' {
            break;
        }
        end -= 1;
    }
    &pattern[..end]
}

/// Translates one path segment of a wildcard pattern (`*`, `?`, `[...]`, `\\x`) to regex source.
fn segment_regex(segment: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = segment.chars().collect();
    let mut index = 0;
    while index < chars.len() {
        let c = chars[index];
        match c {
            '\\' if index + 1 < chars.len() => {
                out.push_str(&regex::escape(&chars[index + 1].to_string()));
                index += 2;
                continue;
            }
            '*' => {
                while index + 1 < chars.len() && chars[index + 1] == '*' {
                    index += 1;
                }
                out.push_str("[^/]*");
            }
            '?' => out.push_str("[^/]"),
            '[' => match class_regex(&chars[index..]) {
                Some((class, consumed)) => {
                    out.push_str(&class);
                    index += consumed;
                    continue;
                }
                None => out.push_str(r"\["),
            },
            _ => out.push_str(&regex::escape(&c.to_string())),
        }
        index += 1;
    }
    out
}

/// A `[...]` character class starting at `chars[0]`; returns the regex and the characters consumed.
fn class_regex(chars: &[char]) -> Option<(String, usize)> {
    let mut index = 1;
    let mut out = String::from("[");
    if matches!(chars.get(index), Some('!') | Some('^')) {
        out.push('^');
        index += 1;
    }
    let mut first = true;
    while index < chars.len() {
        let c = chars[index];
        if c == ']' && !first {
            out.push(']');
            return Some((out, index + 1));
        }
        match c {
            '\\' if index + 1 < chars.len() => {
                out.push_str(&regex::escape(&chars[index + 1].to_string()));
                index += 1;
            }
            '-' => out.push('-'),
            '[' | ']' | '^' | '&' | '~' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push_str(&regex::escape(&c.to_string())),
        }
        first = false;
        index += 1;
    }
    None
}

/// One segment of a glob: `**` or a wildcard segment.
enum GlobSegment {
    AnyDepth,
    Part {
        regex: Regex,
        /// The pattern segment starts with a literal `.`, so it may match dot names.
        literal_dot: bool,
    },
}

/// A minimatch-style glob (`*`, `?`, `[...]`, `**` segments, `{a,b}` alternatives; wildcards do not
/// match names that start with a dot) matched against whole slash-separated paths.
pub(crate) struct GlobPattern {
    alternatives: Vec<Vec<GlobSegment>>,
}

impl GlobPattern {
    pub(crate) fn new(pattern: &str) -> Self {
        let alternatives = expand_braces(pattern).iter().filter_map(|expanded| compile_glob(expanded)).collect();
        Self { alternatives }
    }

    pub(crate) fn is_match(&self, path: &str) -> bool {
        let path = path.strip_suffix('/').unwrap_or(path);
        let segments: Vec<&str> = path.split('/').collect();
        self.alternatives.iter().any(|glob| glob_matches(glob, &segments, true))
    }
}

fn compile_glob(pattern: &str) -> Option<Vec<GlobSegment>> {
    let pattern = pattern.strip_suffix('/').unwrap_or(pattern);
    pattern
        .split('/')
        .map(|segment| {
            if segment == "**" {
                return Some(GlobSegment::AnyDepth);
            }
            let regex = Regex::new(&format!("^{}$", segment_regex(segment))).ok()?;
            Some(GlobSegment::Part { regex, literal_dot: segment.starts_with('.') })
        })
        .collect()
}

fn glob_matches(glob: &[GlobSegment], path: &[&str], at_start: bool) -> bool {
    match glob.split_first() {
        None => path.is_empty(),
        Some((GlobSegment::AnyDepth, rest)) => {
            // A trailing `**` after other segments needs at least one name.
            let minimum = usize::from(rest.is_empty() && !at_start);
            for skip in 0..=path.len() {
                if skip > 0 && path[skip - 1].starts_with('.') {
                    return false;
                }
                if skip >= minimum && glob_matches(rest, &path[skip..], false) {
                    return true;
                }
            }
            false
        }
        Some((GlobSegment::Part { regex, literal_dot }, rest)) => match path.split_first() {
            Some((name, tail)) => {
                (*literal_dot || !name.starts_with('.')) && regex.is_match(name) && glob_matches(rest, tail, false)
            }
            None => false,
        },
    }
}

/// Expands `{a,b}` groups (nested groups included) into separate patterns.
fn expand_braces(pattern: &str) -> Vec<String> {
    let bytes = pattern.as_bytes();
    let Some(open) = bytes.iter().position(|byte| *byte == b'{') else {
        return vec![pattern.to_owned()];
    };
    let mut depth = 0;
    let mut commas = Vec::new();
    let mut close = None;
    for (index, byte) in bytes.iter().enumerate().skip(open) {
        match byte {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(index);
                    break;
                }
            }
            b',' if depth == 1 => commas.push(index),
            _ => {}
        }
    }
    let Some(close) = close.filter(|_| !commas.is_empty()) else {
        return vec![pattern.to_owned()];
    };
    let mut bounds = vec![open];
    bounds.extend(commas);
    bounds.push(close);
    let prefix = &pattern[..open];
    let suffix = &pattern[close + 1..];
    bounds
        .windows(2)
        .flat_map(|window| expand_braces(&format!("{prefix}{}{suffix}", &pattern[window[0] + 1..window[1]])))
        .collect()
}

/// A path with `/` separators.
pub(crate) fn to_posix(path: &Path) -> String {
    let text = path.to_string_lossy();
    if std::path::MAIN_SEPARATOR == '/' { text.into_owned() } else { text.replace(std::path::MAIN_SEPARATOR, "/") }
}
