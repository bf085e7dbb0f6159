//! The `find` tool: lists files and directories whose name (or, for patterns with a `/`, whose path) matches
//! a glob, walking like pi's `fd --glob --hidden --no-require-git` call, with paths relative to the search
//! directory and directories marked by a trailing `/`.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use globset::{GlobBuilder, GlobMatcher};
use ignore::WalkState;
use serde_json::{Value, json};

use super::find_glob::glob_has_uppercase;
use super::listing::Listing;
use super::path::resolve_to_cwd;
use super::truncate::DEFAULT_MAX_BYTES;
use super::walk::{StopFlag, WalkFlavor, build_walker, run_cancellable};
use super::{
    AgentTool, ToolContext, ToolEnvironment, ToolError, ToolFuture, aborted_error, arg_number, arg_opt_str, arg_str,
    js_number,
};
use crate::protocol::{AgentToolResult, UserContent};

/// Results returned when the model gives no limit.
pub const DEFAULT_FIND_LIMIT: usize = 1000;

/// Finds files by glob for the model.
pub struct FindTool {
    env: ToolEnvironment,
    description: String,
    parameters: Value,
}

impl FindTool {
    pub fn new(env: ToolEnvironment) -> Self {
        let description = format!(
            "Find files and directories by glob pattern and list their paths relative to the searched directory \
             (directories end with '/'). Files excluded by .gitignore are skipped. At most {DEFAULT_FIND_LIMIT} \
             results or {}KB of output are returned, whichever comes first.",
            DEFAULT_MAX_BYTES / 1024
        );
        let parameters = json!({
            "type": "object",
            "required": ["pattern"],
            "properties": {
                "pattern": {"type": "string", "description": "Glob to match, such as '*.rs', '**/*.json' or 'src/**/*.test.ts'"},
                "path": {"type": "string", "description": "Directory to search; the working directory when omitted"},
                "limit": {"type": "number", "description": "Most results to return (1000 by default)"}
            }
        });
        Self { env, description, parameters }
    }
}

impl AgentTool for FindTool {
    fn name(&self) -> &str {
        "find"
    }
    fn label(&self) -> &str {
        "find"
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn parameters(&self) -> &Value {
        &self.parameters
    }
    fn prompt_snippet(&self) -> Option<&str> {
        Some("Locate files whose names match a glob (respects .gitignore)")
    }
    fn execute(&self, args: Value, ctx: ToolContext) -> ToolFuture<'_> {
        Box::pin(async move {
            let limit = match arg_number(&args, "limit")? {
                None => DEFAULT_FIND_LIMIT,
                Some(n) if n >= 0.0 && n.fract() == 0.0 && n <= usize::MAX as f64 => n as usize,
                Some(_) => return Err(ToolError::new("Invalid arguments: \"limit\" must be a whole number")),
            };
            let request = FindRequest {
                pattern: arg_str(&args, "pattern")?.to_owned(),
                root: resolve_to_cwd(arg_opt_str(&args, "path")?.unwrap_or("."), &self.env.cwd),
                limit,
                cwd: self.env.cwd.clone(),
            };
            run_cancellable(&ctx.cancel, move |stop| find(&request, &stop)).await
        })
    }
}

/// A validated find call.
#[derive(Debug, Clone)]
pub(crate) struct FindRequest {
    pub pattern: String,
    /// Absolute directory to search.
    pub root: PathBuf,
    /// Most results; 0 means no limit (fd ignores `--max-results 0`), though pi still adds the notice.
    pub limit: usize,
    pub cwd: PathBuf,
}

/// How an entry is tested against the pattern.
enum NameMatcher {
    /// An empty pattern matches everything.
    All,
    /// The glob is tested against the file name.
    Name(GlobMatcher),
    /// The glob is tested against the whole absolute path (patterns containing `/`).
    FullPath(GlobMatcher),
}

impl NameMatcher {
    /// pi's use of fd: a pattern with a `/` is matched against the full path with `**/` put in front (unless it
    /// is absolute or already starts with `**/`); fd's smart case makes the match case-insensitive unless the
    /// glob contains an uppercase letter.
    fn new(pattern: &str) -> Result<Self, ToolError> {
        if pattern.is_empty() {
            return Ok(Self::All);
        }
        let full_path = pattern.contains('/');
        let glob = if full_path && !pattern.starts_with('/') && !pattern.starts_with("**/") && pattern != "**" {
            format!("**/{pattern}")
        } else {
            pattern.to_owned()
        };
        let matcher = GlobBuilder::new(&glob)
            .literal_separator(true)
            .case_insensitive(!glob_has_uppercase(&glob))
            .build()
            .map_err(|err| ToolError::new(err.to_string()))?
            .compile_matcher();
        Ok(if full_path { Self::FullPath(matcher) } else { Self::Name(matcher) })
    }

    fn is_match(&self, path: &Path) -> bool {
        match self {
            Self::All => true,
            Self::Name(glob) => path.file_name().is_some_and(|name| glob.is_match(name)),
            Self::FullPath(glob) => glob.is_match(path),
        }
    }
}

/// Walks and formats pi's result (blocking; call it off the async runtime).
pub(crate) fn find(request: &FindRequest, stop: &StopFlag) -> Result<AgentToolResult, ToolError> {
    let root = &request.root;
    if !root.is_dir() {
        let problem = if root.exists() { "is not a directory" } else { "does not exist" };
        return Err(ToolError::new(format!("Cannot search {}: the path {problem}", root.display())));
    }
    let matcher = NameMatcher::new(&request.pattern)?;
    let walker = build_walker(root, WalkFlavor::Fd, None, &request.cwd)?;
    let limit = if request.limit == 0 { usize::MAX } else { request.limit };
    let count = AtomicUsize::new(0);
    let shared: Mutex<Vec<String>> = Mutex::new(Vec::new());
    walker.run(|| {
        let mut local = LocalResults { lines: Vec::new(), shared: &shared };
        let (matcher, count) = (&matcher, &count);
        Box::new(move |entry| {
            if stop.is_stopped() {
                return WalkState::Quit;
            }
            // Unreadable entries are skipped silently, as fd does without --show-errors.
            let Ok(entry) = entry else { return WalkState::Continue };
            if entry.depth() == 0 || !matcher.is_match(entry.path()) {
                return WalkState::Continue;
            }
            if count.fetch_add(1, Ordering::Relaxed) >= limit {
                stop.stop();
                return WalkState::Quit;
            }
            let is_dir = entry.file_type().is_some_and(|kind| kind.is_dir());
            if let Some(line) = output_line(root, entry.path(), is_dir) {
                local.lines.push(line);
            }
            if count.load(Ordering::Relaxed) >= limit {
                stop.stop();
            }
            stop.walk_state()
        })
    });
    let mut lines = shared.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner());
    if stop.is_stopped() && count.load(Ordering::Relaxed) < limit {
        return Err(aborted_error());
    }
    // fd sorts by path, comparing component by component, which is plain byte order once every `/` is the
    // lowest byte: the lines carry NUL for `/` until they are printed.
    lines.sort_unstable();
    Ok(format_results(&lines, request.limit))
}

/// The line pi prints for a result, in sortable form (`/` as NUL): the path relative to the search root, `/`
/// after a directory. pi trims each line fd prints, so a file name loses trailing whitespace (a directory's
/// `/` protects it).
fn output_line(root: &Path, path: &Path, is_dir: bool) -> Option<String> {
    let relative = path.strip_prefix(root).unwrap_or(path).to_string_lossy();
    let mut line = if is_dir { relative.into_owned() } else { relative.trim_end().to_owned() };
    if line.is_empty() {
        return None;
    }
    if is_dir {
        line.push('/');
    }
    Some(line.replace('/', "\0"))
}

/// Gathers one walker thread's results and hands them over when the thread is done.
struct LocalResults<'a> {
    lines: Vec<String>,
    shared: &'a Mutex<Vec<String>>,
}

impl Drop for LocalResults<'_> {
    fn drop(&mut self) {
        let mut shared = self.shared.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        shared.append(&mut self.lines);
    }
}

/// pi's output: the sorted lines (`/` restored), the limit notice, the 50 KB cut.
fn format_results(lines: &[String], limit: usize) -> AgentToolResult {
    if lines.is_empty() {
        return AgentToolResult {
            content: vec![UserContent::text("No files found matching pattern")],
            details: None,
            ..AgentToolResult::default()
        };
    }
    let mut listing = Listing::new(&lines.join("\n").replace('\0', "/"));
    if lines.len() >= limit {
        let text = format!(
            "{} results limit reached. Use limit={} for more, or refine pattern",
            js_number(limit as f64),
            js_number(limit as f64 * 2.0)
        );
        listing.notice(text, "resultLimitReached", json!(limit));
    }
    listing.byte_limit_notice();
    listing.finish()
}
