//! The `read` tool: a text file's lines (head-truncated, paged with offset/limit) or an image attachment. Text is
//! streamed (see [`super::read_scan`]): only the lines returned are kept in memory, however large the file.

use std::io::{BufReader, Read as _};
use std::path::Path;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::path::{node_style_error, resolve_read_path};
use super::read_scan::{Window, scan_window};
use super::truncate::{
    DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncatedBy, TruncationOptions, TruncationResult, format_size,
};
use super::{AgentTool, ToolContext, ToolEnvironment, ToolError, ToolFuture, aborted_error, arg_number, arg_str};
use crate::protocol::{AgentToolResult, ImageContent, UserContent};

/// Bytes read from the file at a time.
const READ_BUFFER_BYTES: usize = 64 * 1024;
/// Bytes enough to recognise every supported image format.
const IMAGE_MAGIC_BYTES: usize = 12;

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
                result = read_file_until_cancelled(&self.env.cwd, &path, offset, limit, cancel.clone()) => {
                    // Only pi 1.5 has the record (for an image, a second copy of its data).
                    if self.env.pi_compat.is_v1_5() { result.map(with_structured_output) } else { result }
                }
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
    read_file_until_cancelled(cwd, path, offset, limit, CancellationToken::new()).await
}

/// [`read_file`] that stops reading once `cancel` fires.
async fn read_file_until_cancelled(
    cwd: &Path,
    path: &str,
    offset: Option<f64>,
    limit: Option<f64>,
    cancel: CancellationToken,
) -> Result<AgentToolResult, ToolError> {
    let absolute = resolve_read_path(path, cwd);
    match tokio::fs::metadata(&absolute).await {
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
        Ok(_) => {}
    }
    let shown = path.to_owned();
    tokio::task::spawn_blocking(move || read_regular_file(&absolute, &shown, offset, limit, &cancel))
        .await
        .map_err(|error| ToolError::new(format!("Failed to read {path}: {error}")))?
}

/// Reads the regular file at `absolute` in one streaming pass: an image whole, text only as far as the
/// output needs it (the rest is counted, not kept).
fn read_regular_file(
    absolute: &Path,
    path: &str,
    offset: Option<f64>,
    limit: Option<f64>,
    cancel: &CancellationToken,
) -> Result<AgentToolResult, ToolError> {
    let io_error = |syscall: &str, err: std::io::Error| ToolError::new(node_style_error(&err, syscall, Some(absolute)));
    let mut file = std::fs::File::open(absolute).map_err(|err| io_error("open", err))?;
    let mut head = Vec::with_capacity(IMAGE_MAGIC_BYTES);
    (&mut file).take(IMAGE_MAGIC_BYTES as u64).read_to_end(&mut head).map_err(|err| io_error("read", err))?;
    if let Some(mime) = detect_image_mime(&head) {
        let mut bytes = head;
        file.read_to_end(&mut bytes).map_err(|err| io_error("read", err))?;
        return Ok(AgentToolResult {
            content: vec![
                UserContent::text(format!("Read image file [{mime}]")),
                UserContent::Image(ImageContent { data: base64_encode(&bytes), mime_type: mime.to_owned() }),
            ],
            details: None,
            ..AgentToolResult::default()
        });
    }
    // Like pi, an offset of 0 (or none) means the start; fractions are cut toward zero.
    let start = match offset {
        Some(o) if o.is_finite() && o.trunc() >= 1.0 => (o.trunc() as usize).saturating_sub(1),
        _ => 0,
    };
    let end = limit.map(|l| start.saturating_add(if l.is_finite() && l > 0.0 { l.trunc() as usize } else { 0 }));
    let mut reader = BufReader::with_capacity(READ_BUFFER_BYTES, std::io::Cursor::new(head).chain(file));
    let window = scan_window(&mut reader, start, end, TruncationOptions::default(), &|| cancel.is_cancelled())
        .map_err(|err| match err.kind() {
            std::io::ErrorKind::Interrupted => aborted_error(),
            _ => io_error("read", err),
        })?;
    text_result(&window, path, offset, limit, start)
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

/// The selected lines of a text file, truncated, with pi's continuation notices.
pub(super) fn text_result(
    window: &Window,
    path: &str,
    offset: Option<f64>,
    limit: Option<f64>,
    start: usize,
) -> Result<AgentToolResult, ToolError> {
    let total = window.total_lines;
    if start >= total {
        let shown = offset.map(super::js_number).unwrap_or_default();
        return Err(ToolError::new(format!("Offset {shown} is beyond end of file ({total} lines total)")));
    }
    let end = start + window.selected_lines;
    let truncation = window_truncation(window, TruncationOptions::default());
    let first = start + 1;
    let mut details = None;
    let output = if truncation.first_line_exceeds_limit {
        let size = format_size(window.first_line_bytes.unwrap_or_default());
        let limit_size = format_size(DEFAULT_MAX_BYTES);
        details = Some(json!({ "truncation": truncation }));
        format!(
            "[Line {first} is {size}, exceeds {limit_size} limit. Use bash: sed -n '{first}p' {path} | head -c {DEFAULT_MAX_BYTES}]"
        )
    } else if truncation.truncated {
        let last = first + truncation.output_lines - 1;
        let next = last + 1;
        let notice = match truncation.truncated_by {
            Some(TruncatedBy::Bytes) => format!(
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
    Ok(AgentToolResult { content: vec![UserContent::text(output)], details, ..AgentToolResult::default() })
}

/// What `truncate_head` gives for the selected text, built from the pass's counts and kept lines.
fn window_truncation(window: &Window, limits: TruncationOptions) -> TruncationResult {
    // The selected text split at newlines: an empty selection is one empty line.
    let total_lines = window.selected_lines.max(1);
    let total_bytes = window.selected_bytes();
    let mut result = TruncationResult {
        content: String::new(),
        truncated: false,
        truncated_by: None,
        total_lines,
        total_bytes,
        output_lines: total_lines,
        output_bytes: total_bytes,
        last_line_partial: false,
        first_line_exceeds_limit: false,
        max_lines: limits.max_lines,
        max_bytes: limits.max_bytes,
    };
    if total_lines <= limits.max_lines && total_bytes <= limits.max_bytes {
        // Everything fits, so every selected line was kept.
        result.content = window.kept.join("\n");
        return result;
    }
    result.truncated = true;
    if window.first_line_bytes.unwrap_or_default() > limits.max_bytes {
        result.truncated_by = Some(TruncatedBy::Bytes);
        result.first_line_exceeds_limit = true;
        result.output_lines = 0;
        result.output_bytes = 0;
        return result;
    }
    result.content = window.kept.join("\n");
    result.truncated_by = Some(if window.stopped_by_bytes { TruncatedBy::Bytes } else { TruncatedBy::Lines });
    result.output_lines = window.kept.len();
    result.output_bytes = result.content.len();
    result
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

/// pi 1.5's `structuredContent` of a read: the text, or for an image its data with the text as a note.
fn with_structured_output(mut result: AgentToolResult) -> AgentToolResult {
    let text = result.content.iter().find_map(|block| match block {
        UserContent::Text(text) => Some(text.text.as_str()),
        _ => None,
    });
    let image = result.content.iter().find_map(|block| match block {
        UserContent::Image(image) => Some(image),
        _ => None,
    });
    let output = match image {
        Some(image) => serde_json::json!({
            "type": "image",
            "data": image.data,
            "mimeType": image.mime_type,
            "note": text.unwrap_or_default(),
        }),
        None => Value::String(text.unwrap_or_default().to_owned()),
    };
    result.structured_content = Some(output);
    result
}
