//! The `ls` tool: one directory's entries (dotfiles included), sorted like pi sorts them (lower-cased, then
//! JavaScript's `localeCompare`), directories marked with a trailing `/`.

use std::path::Path;

use serde_json::{Value, json};

use super::listing::{Listing, js_json_number};
use super::ls_order::locale_order;
use super::path::resolve_to_cwd;
use super::truncate::DEFAULT_MAX_BYTES;
use super::walk::run_cancellable;
use super::{AgentTool, ToolContext, ToolEnvironment, ToolError, ToolFuture, arg_number, arg_opt_str, js_number};
use crate::protocol::{AgentToolResult, UserContent};

/// Entries returned when the model gives no limit.
pub const DEFAULT_LS_LIMIT: f64 = 500.0;

/// Lists directories for the model.
pub struct LsTool {
    env: ToolEnvironment,
    description: String,
    parameters: Value,
}

impl LsTool {
    pub fn new(env: ToolEnvironment) -> Self {
        let description = format!(
            "List what a directory contains, hidden entries included, in alphabetical order; directory names \
             end with '/'. At most {DEFAULT_LS_LIMIT} entries or {}KB of output are returned, whichever comes \
             first.",
            DEFAULT_MAX_BYTES / 1024
        );
        let parameters = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Directory to list; the working directory when omitted"},
                "limit": {"type": "number", "description": "Most entries to return (500 by default)"}
            }
        });
        Self { env, description, parameters }
    }
}

impl AgentTool for LsTool {
    fn name(&self) -> &str {
        "ls"
    }
    fn label(&self) -> &str {
        "ls"
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn parameters(&self) -> &Value {
        &self.parameters
    }
    fn prompt_snippet(&self) -> Option<&str> {
        Some("Show the entries of a directory")
    }
    fn execute(&self, args: Value, ctx: ToolContext) -> ToolFuture<'_> {
        Box::pin(async move {
            let dir = resolve_to_cwd(arg_opt_str(&args, "path")?.unwrap_or("."), &self.env.cwd);
            let limit = arg_number(&args, "limit")?.unwrap_or(DEFAULT_LS_LIMIT);
            run_cancellable(&ctx.cancel, move |_stop| list_directory(&dir, limit)).await
        })
    }
}

/// Lists `dir` as pi does (blocking; call it off the async runtime). `limit` may be fractional, as in pi.
pub(crate) fn list_directory(dir: &Path, limit: f64) -> Result<AgentToolResult, ToolError> {
    let metadata = std::fs::metadata(dir)
        .map_err(|_| ToolError::new(format!("Cannot list {}: no such file or directory", dir.display())))?;
    if !metadata.is_dir() {
        return Err(ToolError::new(format!("Cannot list {}: it is a file, not a directory", dir.display())));
    }
    let read_error = |err: std::io::Error| ToolError::new(format!("Failed to read directory {}: {err}", dir.display()));
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(read_error)? {
        names.push(entry.map_err(read_error)?.file_name().to_string_lossy().into_owned());
    }
    // Node's readdir returns names in byte order; pi's sort is stable, so that order breaks ties.
    names.sort_unstable();
    let keys: Vec<String> = names.iter().map(|name| name.to_lowercase()).collect();
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by(|a, b| locale_order(&keys[*a], &keys[*b]));

    let mut rows: Vec<String> = Vec::new();
    let mut limit_reached = false;
    for index in order {
        if rows.len() as f64 >= limit {
            limit_reached = true;
            break;
        }
        let name = &names[index];
        // Entries that cannot be stat'ed (broken symlinks) are left out, as pi does.
        let Ok(entry) = std::fs::metadata(dir.join(name)) else { continue };
        rows.push(if entry.is_dir() { format!("{name}/") } else { name.clone() });
    }
    if rows.is_empty() {
        return Ok(AgentToolResult {
            content: vec![UserContent::text("(empty directory)")],
            details: None,
            ..AgentToolResult::default()
        });
    }
    let mut listing = Listing::new(&rows.join("\n"));
    if limit_reached {
        let text = format!("{} entries limit reached. Use limit={} for more", js_number(limit), js_number(limit * 2.0));
        listing.notice(text, "entryLimitReached", js_json_number(limit));
    }
    listing.byte_limit_notice();
    Ok(listing.finish())
}
