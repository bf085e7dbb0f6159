//! The `grep` tool: searches file contents like pi's `rg --json --hidden` call (ignore files respected), stops
//! at the match limit and prints `path:N: line` rows, with `path-N- line` rows around them for context.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::grep_search::{FileMatches, LineMatch, build_matcher, search_tree};
use super::listing::{Listing, js_json_number};
use super::path::resolve_to_cwd;
use super::truncate::{DEFAULT_MAX_BYTES, GREP_MAX_LINE_LENGTH, truncate_line};
use super::walk::{StopFlag, WalkFlavor, build_walker, run_cancellable};
use super::{
    AgentTool, ToolContext, ToolEnvironment, ToolError, ToolFuture, aborted_error, arg_bool, arg_number, arg_opt_str,
    arg_str, js_number,
};
use crate::protocol::{AgentToolResult, UserContent};

/// Matches returned when the model gives no limit.
pub const DEFAULT_GREP_LIMIT: f64 = 100.0;

/// Searches file contents for the model.
pub struct GrepTool {
    env: ToolEnvironment,
    description: String,
    parameters: Value,
}

impl GrepTool {
    pub fn new(env: ToolEnvironment) -> Self {
        let description = format!(
            "Search the contents of files for a regular expression (or, with literal, a plain string) and list \
             each matching line with its file path and line number. Files excluded by .gitignore are skipped. \
             At most {} matches or {}KB of output are returned, whichever comes first, and lines longer than \
             {GREP_MAX_LINE_LENGTH} characters are shortened.",
            DEFAULT_GREP_LIMIT,
            DEFAULT_MAX_BYTES / 1024
        );
        let parameters = json!({
            "type": "object",
            "required": ["pattern"],
            "properties": {
                "pattern": {"type": "string", "description": "Regular expression to look for, or plain text when literal is true"},
                "path": {"type": "string", "description": "File or directory to search; the working directory when omitted"},
                "glob": {"type": "string", "description": "Only search files matching this glob, such as '*.rs' or 'src/**/*.test.ts'"},
                "ignoreCase": {"type": "boolean", "description": "Match without regard to letter case (off by default)"},
                "literal": {"type": "boolean", "description": "Take the pattern as plain text rather than a regular expression (off by default)"},
                "context": {"type": "number", "description": "Lines to show before and after each match (0 by default)"},
                "limit": {"type": "number", "description": "Most matches to return (100 by default)"}
            }
        });
        Self { env, description, parameters }
    }
}

impl AgentTool for GrepTool {
    fn name(&self) -> &str {
        "grep"
    }
    fn label(&self) -> &str {
        "grep"
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn parameters(&self) -> &Value {
        &self.parameters
    }
    fn prompt_snippet(&self) -> Option<&str> {
        Some("Search inside files for a regex or literal text (respects .gitignore)")
    }
    fn execute(&self, args: Value, ctx: ToolContext) -> ToolFuture<'_> {
        Box::pin(async move {
            let request = GrepRequest {
                pattern: arg_str(&args, "pattern")?.to_owned(),
                root: resolve_to_cwd(arg_opt_str(&args, "path")?.unwrap_or("."), &self.env.cwd),
                glob: arg_opt_str(&args, "glob")?.map(str::to_owned),
                ignore_case: arg_bool(&args, "ignoreCase")?,
                literal: arg_bool(&args, "literal")?,
                context: arg_number(&args, "context")?.filter(|c| *c > 0.0).map_or(0, |c| c.trunc() as u64),
                limit: arg_number(&args, "limit")?.unwrap_or(DEFAULT_GREP_LIMIT).max(1.0),
                cwd: self.env.cwd.clone(),
            };
            run_cancellable(&ctx.cancel, move |stop| grep(&request, &stop)).await
        })
    }
}

/// A validated grep call.
#[derive(Debug, Clone)]
pub(crate) struct GrepRequest {
    pub pattern: String,
    /// Absolute file or directory to search.
    pub root: PathBuf,
    pub glob: Option<String>,
    pub ignore_case: bool,
    pub literal: bool,
    /// Lines of context around each match.
    pub context: u64,
    /// Match limit, at least 1 (fractions are kept, as pi prints them).
    pub limit: f64,
    /// The directory `glob` is relative to.
    pub cwd: PathBuf,
}

/// Runs the search and formats pi's result (blocking; call it off the async runtime).
pub(crate) fn grep(request: &GrepRequest, stop: &StopFlag) -> Result<AgentToolResult, ToolError> {
    let root = &request.root;
    let is_dir = std::fs::metadata(root)
        .map_err(|_| ToolError::new(format!("Cannot search {}: no such file or directory", root.display())))?
        .is_dir();
    let matcher = build_matcher(&request.pattern, request.ignore_case, request.literal)?;
    let walker = build_walker(root, WalkFlavor::Ripgrep, request.glob.as_deref(), &request.cwd)?;
    // The limit may be fractional; pi stops at the first count that reaches it.
    let max_matches = request.limit.ceil().min(usize::MAX as f64) as usize;
    let outcome = search_tree(walker, &matcher, max_matches, stop);
    if stop.is_stopped() && outcome.total < max_matches {
        return Err(aborted_error());
    }
    let limit_reached = outcome.total >= max_matches;
    if !limit_reached && !outcome.errors.is_empty() {
        return Err(ToolError::new(outcome.errors.join("\n")));
    }
    if outcome.total == 0 {
        return Ok(AgentToolResult {
            content: vec![UserContent::text("No matches found")],
            details: None,
            ..AgentToolResult::default()
        });
    }
    let mut formatter =
        MatchFormatter { root, is_dir, context: request.context, file_lines: HashMap::new(), lines_truncated: false };
    let rows: Vec<String> = outcome.files.iter().flat_map(|file| formatter.file_rows(file)).collect();
    Ok(finish(&rows.join("\n"), limit_reached.then_some(request.limit), formatter.lines_truncated))
}

/// Adds pi's notices and details to the formatted rows.
fn finish(raw: &str, limit_reached: Option<f64>, lines_truncated: bool) -> AgentToolResult {
    let mut listing = Listing::new(raw);
    if let Some(limit) = limit_reached {
        let text = format!(
            "{} matches limit reached. Use limit={} for more, or refine pattern",
            js_number(limit),
            js_number(limit * 2.0)
        );
        listing.notice(text, "matchLimitReached", js_json_number(limit));
    }
    listing.byte_limit_notice();
    if lines_truncated {
        let text = format!("Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines");
        listing.notice(text, "linesTruncated", Value::Bool(true));
    }
    listing.finish()
}

/// Turns matches into pi's output rows, reading files for context lines.
struct MatchFormatter<'a> {
    root: &'a Path,
    is_dir: bool,
    context: u64,
    /// Files read for context, split into lines (`None` when unreadable).
    file_lines: HashMap<PathBuf, Option<Vec<String>>>,
    lines_truncated: bool,
}

impl MatchFormatter<'_> {
    fn file_rows(&mut self, file: &FileMatches) -> Vec<String> {
        let shown = self.display_path(&file.path);
        let mut rows = Vec::new();
        for found in &file.matches {
            match (&found.text, self.context) {
                (Some(text), 0) => {
                    let clean = text.replace('\r', "");
                    let line = clean.strip_suffix('\n').unwrap_or(&clean);
                    let line = cut(line, &mut self.lines_truncated);
                    rows.push(format!("{shown}:{}: {line}", found.line_number));
                }
                _ => self.block_rows(&file.path, &shown, found, &mut rows),
            }
        }
        rows
    }

    /// The match line with `context` lines either side, taken from the file itself as pi does.
    fn block_rows(&mut self, path: &Path, shown: &str, found: &LineMatch, rows: &mut Vec<String>) {
        let number = found.line_number;
        let lines = self.file_lines.entry(path.to_path_buf()).or_insert_with(|| read_lines(path));
        let Some(lines) = lines.as_ref().filter(|lines| !lines.is_empty()) else {
            rows.push(format!("{shown}:{number}: (unable to read file)"));
            return;
        };
        let (start, end) = if self.context > 0 {
            (number.saturating_sub(self.context).max(1), number.saturating_add(self.context).min(lines.len() as u64))
        } else {
            (number, number)
        };
        for current in start..=end {
            let text =
                usize::try_from(current.saturating_sub(1)).ok().and_then(|i| lines.get(i)).map_or("", String::as_str);
            let text = cut(text, &mut self.lines_truncated);
            if current == number {
                rows.push(format!("{shown}:{current}: {text}"));
            } else {
                rows.push(format!("{shown}-{current}- {text}"));
            }
        }
    }

    /// The path relative to the searched directory (with `/`), or the file name when a file was searched or
    /// the relative form would start with `..`.
    fn display_path(&self, path: &Path) -> String {
        if self.is_dir
            && let Ok(relative) = path.strip_prefix(self.root)
        {
            let relative = relative.to_string_lossy().replace('\\', "/");
            if !relative.is_empty() && !relative.starts_with("..") {
                return relative;
            }
        }
        path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default()
    }
}

/// Cuts a line to pi's grep width, noting whether anything was cut.
fn cut(line: &str, any_cut: &mut bool) -> String {
    let (text, was_cut) = truncate_line(line, GREP_MAX_LINE_LENGTH);
    *any_cut |= was_cut;
    text
}

/// A file's lines as pi reads them for context: UTF-8 (invalid bytes replaced), split at `\r\n`, `\r` or `\n`.
fn read_lines(path: &Path) -> Option<Vec<String>> {
    let bytes = std::fs::read(path).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    Some(text.split("\r\n").flat_map(|part| part.split(['\r', '\n'])).map(str::to_owned).collect())
}
