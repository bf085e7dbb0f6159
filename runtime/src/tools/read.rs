//! The `read` tool: a text file's lines (head-truncated, paged with offset/limit) or an image attachment.

use std::path::Path;

use serde_json::{Value, json};

use super::path::{node_style_error, resolve_read_path};
use super::truncate::{DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncationOptions, format_size, truncate_head};
use super::{AgentTool, ToolContext, ToolEnvironment, ToolError, ToolFuture, aborted_error, arg_number, arg_str};
use crate::protocol::{AgentToolResult, ImageContent, UserContent};

/// Reads files for the model.
pub struct ReadTool {
    env: ToolEnvironment,
    description: String,
    parameters: Value,
}

impl ReadTool {
    pub fn new(env: ToolEnvironment) -> Self {
        let description = format!(
            "Read a file. Text files and images (jpg, png, gif, webp) are supported; images are returned as \
             attachments. Text output stops at {DEFAULT_MAX_LINES} lines or {}KB, whichever comes first. Page \
             through long files with offset and limit, continuing from the offset the output suggests until you \
             have read what you need.",
            DEFAULT_MAX_BYTES / 1024
        );
        let parameters = json!({
            "type": "object",
            "required": ["path"],
            "properties": {
                "path": {"type": "string", "description": "File to read, absolute or relative to the working directory"},
                "offset": {"type": "number", "description": "First line to return, counting from 1"},
                "limit": {"type": "number", "description": "How many lines to return at most"}
            }
        });
        Self { env, description, parameters }
    }
}

impl AgentTool for ReadTool {
    fn name(&self) -> &str {
        "read"
    }
    fn label(&self) -> &str {
        "read"
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn parameters(&self) -> &Value {
        &self.parameters
    }
    fn prompt_snippet(&self) -> Option<&str> {
        Some("Read file contents")
    }
    fn execute(&self, args: Value, ctx: ToolContext) -> ToolFuture<'_> {
        Box::pin(async move {
            let path = arg_str(&args, "path")?.to_owned();
            let offset = arg_number(&args, "offset")?;
            let limit = arg_number(&args, "limit")?;
            let cancel = ctx.cancel.clone();
            tokio::select! {
                biased;
                _ = cancel.cancelled() => Err(aborted_error()),
                result = read_file(&self.env.cwd, &path, offset, limit) => result,
            }
        })
    }
}

/// Reads `path` (as the model wrote it) relative to `cwd`.
pub async fn read_file(
    cwd: &Path,
    path: &str,
    offset: Option<f64>,
    limit: Option<f64>,
) -> Result<AgentToolResult, ToolError> {
    let absolute = resolve_read_path(path, cwd);
    let bytes = match tokio::fs::metadata(&absolute).await {
        Err(err) => return Err(ToolError::new(node_style_error(&err, "access", Some(&absolute)))),
        Ok(meta) if meta.is_dir() => {
            return Err(ToolError::new("EISDIR: illegal operation on a directory, read"));
        }
        // A FIFO would block forever and a device may never end (/dev/zero): only files are read.
        Ok(meta) if !meta.is_file() => {
            return Err(ToolError::new(format!(
                "Cannot read {path}: it is {}, not a regular file; read only reads files (use bash for others)",
                special_file_kind(&meta.file_type())
            )));
        }
        Ok(_) => tokio::fs::read(&absolute)
            .await
            .map_err(|err| ToolError::new(node_style_error(&err, "open", Some(&absolute))))?,
    };
    if let Some(mime) = detect_image_mime(&bytes) {
        return Ok(AgentToolResult {
            content: vec![
                UserContent::text(format!("Read image file [{mime}]")),
                UserContent::Image(ImageContent { data: base64_encode(&bytes), mime_type: mime.to_owned() }),
            ],
            details: None,
        });
    }
    let text = String::from_utf8_lossy(&bytes);
    read_text(&text, path, offset, limit)
}

/// What a file that is not a regular file or directory is, for errors.
fn special_file_kind(kind: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt as _;
    if kind.is_fifo() {
        "a named pipe (FIFO)"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "a special file"
    }
}

/// Selects and truncates lines of a text file, adding pi's continuation notices.
fn read_text(text: &str, path: &str, offset: Option<f64>, limit: Option<f64>) -> Result<AgentToolResult, ToolError> {
    let lines: Vec<&str> = text.split('\n').collect();
    let total = lines.len();
    // Like pi, an offset of 0 (or none) means the start; fractions are cut toward zero.
    let start = match offset {
        Some(o) if o.is_finite() && o.trunc() >= 1.0 => (o.trunc() as usize).saturating_sub(1),
        _ => 0,
    };
    if start >= total {
        let shown = offset.map(super::js_number).unwrap_or_default();
        return Err(ToolError::new(format!("Offset {shown} is beyond end of file ({total} lines total)")));
    }
    let end = match limit {
        Some(l) => start.saturating_add(if l.is_finite() && l > 0.0 { l.trunc() as usize } else { 0 }).min(total),
        None => total,
    };
    let selected = lines[start..end].join("\n");
    let truncation = truncate_head(&selected, TruncationOptions::default());
    let first = start + 1;
    let mut details = None;
    let output = if truncation.first_line_exceeds_limit {
        let size = format_size(lines[start].len());
        let limit_size = format_size(DEFAULT_MAX_BYTES);
        details = Some(json!({ "truncation": truncation }));
        format!(
            "[Line {first} is {size}, exceeds {limit_size} limit. Use bash: sed -n '{first}p' {path} | head -c {DEFAULT_MAX_BYTES}]"
        )
    } else if truncation.truncated {
        let last = first + truncation.output_lines - 1;
        let next = last + 1;
        let notice = match truncation.truncated_by {
            Some(super::truncate::TruncatedBy::Bytes) => format!(
                "[Showing lines {first}-{last} of {total} ({} limit). Use offset={next} to continue.]",
                format_size(DEFAULT_MAX_BYTES)
            ),
            _ => format!("[Showing lines {first}-{last} of {total}. Use offset={next} to continue.]"),
        };
        let body = format!("{}\n\n{notice}", truncation.content);
        details = Some(json!({ "truncation": truncation }));
        body
    } else if limit.is_some() && end < total {
        let remaining = total - end;
        format!("{}\n\n[{remaining} more lines in file. Use offset={} to continue.]", truncation.content, end + 1)
    } else {
        truncation.content
    };
    Ok(AgentToolResult { content: vec![UserContent::text(output)], details })
}

/// The MIME type of a supported image (png, jpeg, gif, webp), recognised by its magic bytes.
pub fn detect_image_mime(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(&[0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A]) {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && &bytes[0..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// Standard base64 with padding.
pub fn base64_encode(data: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let sextet = |shift: u32| char::from(ALPHABET[((n >> shift) & 0x3F) as usize]);
        out.push(sextet(18));
        out.push(sextet(12));
        out.push(if chunk.len() > 1 { sextet(6) } else { '=' });
        out.push(if chunk.len() > 2 { sextet(0) } else { '=' });
    }
    out
}
