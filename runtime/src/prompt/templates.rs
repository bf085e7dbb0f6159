//! Prompt templates: `*.md` files whose name becomes a `/name` command. Loading (project and agent
//! `prompts/` directories, settings entries, CLI paths; first of each name wins), pi's argument
//! parsing (`parseCommandArgs`) and placeholder substitution (`substituteArgs`), and `/name args`
//! expansion.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::frontmatter::{FrontmatterValue, parse_frontmatter};
use super::ignore_rules::IgnoreRules;
use super::resources::{
    ConfiguredPath, DiagnosticKind, ResourceDiagnostic, ResourceLocations, ResourceSource, canonical, configured_paths,
    normalize, read_dir_sorted, relative_path,
};

/// How many UTF-16 units of the first body line become the description when none is given.
const DESCRIPTION_FALLBACK_LENGTH: usize = 60;

/// A prompt template (`/name` expands to its content with the arguments substituted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptTemplate {
    /// The file name without `.md`.
    pub name: String,
    /// The frontmatter `description`, else the first non-empty body line (cut at 60, plus "...").
    pub description: String,
    /// The frontmatter `argument-hint`, when set.
    pub argument_hint: Option<String>,
    /// The body after the frontmatter.
    pub content: String,
    pub file_path: PathBuf,
    pub source: ResourceSource,
}

/// Loaded templates (first of each name) and diagnostics (missing CLI paths, collisions).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptTemplateLoad {
    pub templates: Vec<PromptTemplate>,
    pub diagnostics: Vec<ResourceDiagnostic>,
}

/// Loads templates from `<cwd>/<config dir>/prompts`, `<agent dir>/prompts` (both non-recursive),
/// settings entries (directories searched recursively) and CLI paths (directories non-recursive), in
/// that precedence. Unreadable or malformed files are skipped silently, as pi does.
pub fn load_prompt_templates(locations: &ResourceLocations) -> PromptTemplateLoad {
    let (auto_project, auto_user) = if locations.include_defaults {
        let project_dir = normalize(&locations.cwd.join(&locations.config_dir_name).join("prompts"));
        let user_dir = normalize(&locations.agent_dir.join("prompts"));
        (scan_markdown_files(&project_dir, false), scan_markdown_files(&user_dir, false))
    } else {
        (Vec::new(), Vec::new())
    };
    let collect_dir = |dir: &Path| scan_markdown_files(dir, true);
    let configured = configured_paths(locations, "prompts", &collect_dir, &auto_project, &auto_user);
    let mut load = PromptTemplateLoad::default();
    let mut missing = Vec::new();
    for ConfiguredPath { path, source, explicit } in configured {
        let found = match std::fs::metadata(&path) {
            Ok(metadata) if metadata.is_dir() => load_prompt_templates_from_dir(&path, source),
            Ok(metadata) if metadata.is_file() && path.to_string_lossy().ends_with(".md") => {
                load_prompt_template_file(&path, source).into_iter().collect()
            }
            Ok(_) => Vec::new(),
            Err(_) => {
                if explicit {
                    missing.push(ResourceDiagnostic::new(DiagnosticKind::PathMissing, &path));
                }
                Vec::new()
            }
        };
        for template in found {
            match load.templates.iter().find(|existing| existing.name == template.name) {
                Some(winner) => {
                    let kind = DiagnosticKind::Collision {
                        name: format!("/{}", template.name),
                        winner: winner.file_path.clone(),
                    };
                    load.diagnostics.push(ResourceDiagnostic::new(kind, &template.file_path));
                }
                None => load.templates.push(template),
            }
        }
    }
    // pi reports collisions first, then CLI paths that do not exist.
    load.diagnostics.extend(missing);
    load
}

/// The `*.md` files directly in `dir` (dot files included, no ignore rules), loaded as templates.
pub fn load_prompt_templates_from_dir(dir: &Path, source: ResourceSource) -> Vec<PromptTemplate> {
    read_dir_sorted(dir)
        .into_iter()
        .filter(|entry| entry.is_file && entry.name.ends_with(".md"))
        .filter_map(|entry| load_prompt_template_file(&entry.path, source))
        .collect()
}

/// Reads one template file; `None` when it cannot be read or its frontmatter is invalid.
pub fn load_prompt_template_file(path: &Path, source: ResourceSource) -> Option<PromptTemplate> {
    let bytes = std::fs::read(path).ok()?;
    let frontmatter = parse_frontmatter(&String::from_utf8_lossy(&bytes)).ok()?;
    let file_name = path.file_name()?.to_string_lossy();
    let name = file_name.strip_suffix(".md").unwrap_or(&file_name).to_owned();
    let description = match frontmatter.get("description").filter(|value| value.is_truthy()) {
        Some(value) => value_text(value),
        None => first_line_summary(&frontmatter.body),
    };
    let argument_hint = frontmatter.get("argument-hint").filter(|value| value.is_truthy()).map(value_text);
    Some(PromptTemplate {
        name,
        description,
        argument_hint,
        content: frontmatter.body,
        file_path: path.to_path_buf(),
        source,
    })
}

fn value_text(value: &FrontmatterValue) -> String {
    match value {
        FrontmatterValue::String(text) | FrontmatterValue::Number(text) => text.clone(),
        FrontmatterValue::Bool(flag) => flag.to_string(),
        _ => String::new(),
    }
}

/// The first line with non-blank content, cut to 60 UTF-16 units with "..." when longer.
fn first_line_summary(body: &str) -> String {
    let Some(line) = body.split('\n').find(|line| !super::frontmatter::js_trim(line).is_empty()) else {
        return String::new();
    };
    let mut summary = String::new();
    let mut units = 0;
    for c in line.chars() {
        units += c.len_utf16();
        if units > DESCRIPTION_FALLBACK_LENGTH {
            summary.push_str("...");
            return summary;
        }
        summary.push(c);
    }
    summary
}

/// `*.md` files under `dir`, skipping dot entries, `node_modules` and ignored paths; `recursive`
/// descends into subdirectories (settings entries), otherwise only `dir` itself is listed.
fn scan_markdown_files(dir: &Path, recursive: bool) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut rules = IgnoreRules::new();
    let mut visited = HashSet::new();
    scan_markdown_dir(dir, dir, recursive, &mut rules, &mut visited, &mut files);
    files
}

fn scan_markdown_dir(
    dir: &Path,
    root: &Path,
    recursive: bool,
    rules: &mut IgnoreRules,
    visited: &mut HashSet<PathBuf>,
    files: &mut Vec<PathBuf>,
) {
    if !dir.is_dir() || !visited.insert(canonical(dir)) {
        return;
    }
    rules.add_ignore_files(dir, root);
    for entry in read_dir_sorted(dir) {
        if entry.name.starts_with('.') || entry.name == "node_modules" {
            continue;
        }
        if rules.is_ignored(&relative_path(root, &entry.path), entry.is_dir) {
            continue;
        }
        if entry.is_dir && recursive {
            scan_markdown_dir(&entry.path, root, recursive, rules, visited, files);
        } else if entry.is_file && entry.name.ends_with(".md") {
            files.push(entry.path);
        }
    }
}

/// Splits command arguments like pi: spaces and tabs separate, `'...'` and `"..."` group (no escapes,
/// quotes may sit inside a word), and empty arguments are dropped.
pub fn parse_command_args(input: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    for c in input.chars() {
        match quote {
            Some(open) if c == open => quote = None,
            Some(_) => current.push(c),
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == ' ' || c == '\t' => {
                if !current.is_empty() {
                    args.push(std::mem::take(&mut current));
                }
            }
            None => current.push(c),
        }
    }
    if !current.is_empty() {
        args.push(current);
    }
    args
}

static POSITIONAL: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"\$([0-9]+)").ok());
static SLICE: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"\$\{@:([0-9]+)(?::([0-9]+))?\}").ok());

/// Substitutes placeholders in pi's order: `$N` (1-based, missing → ""), then `${@:N}` / `${@:N:L}`
/// (bash-style slices, 0 counts as 1), then `$ARGUMENTS`, then `$@` (all arguments joined by spaces).
/// Each pass runs over the previous pass's output, exactly as pi's chained `replace` calls do.
pub fn substitute_args(content: &str, args: &[String]) -> String {
    let mut result = content.to_owned();
    if let Some(positional) = POSITIONAL.as_ref() {
        result = positional
            .replace_all(&result, |captures: &Captures| {
                let index = captures[1].parse::<usize>().ok().and_then(|number| number.checked_sub(1));
                index.and_then(|index| args.get(index)).cloned().unwrap_or_default()
            })
            .into_owned();
    }
    if let Some(slice) = SLICE.as_ref() {
        result = slice
            .replace_all(&result, |captures: &Captures| {
                let start = captures[1].parse::<usize>().unwrap_or(usize::MAX).saturating_sub(1);
                let end = match captures.get(2) {
                    Some(length) => start.saturating_add(length.as_str().parse::<usize>().unwrap_or(usize::MAX)),
                    None => usize::MAX,
                };
                let end = end.min(args.len());
                if start >= end { String::new() } else { args[start..end].join(" ") }
            })
            .into_owned();
    }
    let all = args.join(" ");
    result = js_replace_all(&result, "$ARGUMENTS", &all);
    js_replace_all(&result, "$@", &all)
}

/// JavaScript's `text.replace(/needle/g, replacement)` for a literal needle and a string
/// replacement, including the `$$`, `$&`, `` $` `` and `$'` replacement patterns.
fn js_replace_all(text: &str, needle: &str, replacement: &str) -> String {
    if !text.contains(needle) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (start, matched) in text.match_indices(needle) {
        out.push_str(&text[last..start]);
        let end = start + matched.len();
        let mut chars = replacement.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '$' {
                out.push(c);
                continue;
            }
            match chars.peek() {
                Some('$') => out.push('$'),
                Some('&') => out.push_str(matched),
                Some('`') => out.push_str(&text[..start]),
                Some('\'') => out.push_str(&text[end..]),
                _ => {
                    out.push('$');
                    continue;
                }
            }
            chars.next();
        }
        last = end;
    }
    out.push_str(&text[last..]);
    out
}

/// Expands `/name args` when `name` is a template; `None` otherwise (the text is sent as typed).
pub fn expand_prompt_template(text: &str, templates: &[PromptTemplate]) -> Option<String> {
    let command = text.strip_prefix('/')?;
    let (name, args) = command.split_once(' ').unwrap_or((command, ""));
    let template = templates.iter().find(|template| template.name == name)?;
    Some(substitute_args(&template.content, &parse_command_args(args)))
}
