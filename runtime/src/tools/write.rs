//! The `write` tool: creates or replaces a file (parent directories included), writing it atomically.

use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::path::{lock_file, node_style_error, resolve_to_cwd};
use super::{AgentTool, ToolContext, ToolEnvironment, ToolError, ToolFuture, aborted_error, arg_str};
use crate::protocol::AgentToolResult;

/// Writes whole files for the model.
pub struct WriteTool {
    env: ToolEnvironment,
    parameters: Value,
}

impl WriteTool {
    pub fn new(env: ToolEnvironment) -> Self {
        let parameters = json!({
            "type": "object",
            "required": ["path", "content"],
            "properties": {
                "path": {"type": "string", "description": "File to write, absolute or relative to the working directory"},
                "content": {"type": "string", "description": "The complete new content of the file"}
            }
        });
        Self { env, parameters }
    }
}

impl AgentTool for WriteTool {
    fn name(&self) -> &str {
        "write"
    }
    fn label(&self) -> &str {
        "write"
    }
    fn description(&self) -> &str {
        "Write content to a file, creating it when it does not exist and replacing it when it does. Missing \
         parent directories are created. Meant for new files and complete rewrites."
    }
    fn parameters(&self) -> &Value {
        &self.parameters
    }
    fn prompt_snippet(&self) -> Option<&str> {
        Some("Create or overwrite files")
    }
    fn execute(&self, args: Value, ctx: ToolContext) -> ToolFuture<'_> {
        Box::pin(async move {
            let path = arg_str(&args, "path")?.to_owned();
            let content = arg_str(&args, "content")?.to_owned();
            if ctx.cancel.is_cancelled() {
                return Err(aborted_error());
            }
            let absolute = resolve_to_cwd(&path, &self.env.cwd);
            let _guard = lock_file(&absolute).await;
            if ctx.cancel.is_cancelled() {
                return Err(aborted_error());
            }
            if let Some(parent) = absolute.parent() {
                tokio::fs::create_dir_all(parent)
                    .await
                    .map_err(|e| ToolError::new(node_style_error(&e, "mkdir", Some(parent))))?;
            }
            write_atomic(&absolute, content.as_bytes().to_vec())
                .await
                .map_err(|e| ToolError::new(node_style_error(&e, "open", Some(&absolute))))?;
            // pi reports JavaScript's `content.length`: UTF-16 code units, not bytes.
            if self.env.pi_compat.is_v1_5() {
                return Ok(AgentToolResult::text(format!("Successfully wrote to {path}")));
            }
            let length = content.encode_utf16().count();
            Ok(AgentToolResult::text(format!("Successfully wrote {length} bytes to {path}")))
        })
    }
}

/// Writes `data` to `path` atomically: into a temporary file in the same directory, then renamed over the
/// target. A symlink is followed (its target is replaced), and an existing file keeps its permissions.
pub async fn write_atomic(path: &Path, data: Vec<u8>) -> io::Result<()> {
    let path = path.to_path_buf();
    tokio::task::spawn_blocking(move || write_atomic_blocking(&path, &data))
        .await
        .map_err(|e| io::Error::other(format!("write task failed: {e}")))?
}

/// [`write_atomic`] on the calling thread.
pub(crate) fn write_atomic_blocking(path: &Path, data: &[u8]) -> io::Result<()> {
    let target: PathBuf = match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
        _ => path.to_path_buf(),
    };
    let existing = std::fs::metadata(&target).ok();
    if existing.as_ref().is_some_and(|m| m.is_dir()) {
        return Err(io::Error::from_raw_os_error(libc::EISDIR));
    }
    let dir = target.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let id = uuid::Uuid::new_v4().simple().to_string();
    let temp = dir.join(format!(".{name}.{}.tmp", &id[..12]));
    let result = (|| {
        let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(&temp)?;
        file.write_all(data)?;
        if let Some(meta) = &existing {
            file.set_permissions(meta.permissions())?;
        }
        file.sync_all()?;
        drop(file);
        std::fs::rename(&temp, &target)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}
