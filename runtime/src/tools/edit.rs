//! The `edit` tool: exact-text replacements (`edits[]`, pi 0.73) in one file, with a numbered diff in `details`.

use serde_json::{Map, Value, json};

use super::edit_diff::{Edit, apply_edits, generate_diff, normalize_to_lf, restore_line_endings, strip_bom, uses_crlf};
use super::edit_patch::PATCH_CONTEXT_LINES;
use super::path::{lock_file, node_style_error, resolve_to_cwd};
use super::write::write_atomic;
use super::{AgentTool, ToolContext, ToolEnvironment, ToolError, ToolFuture, aborted_error, arg_str};
use crate::protocol::{AgentToolResult, UserContent};

/// Lines of unchanged context shown around each change in the diff.
const DIFF_CONTEXT_LINES: usize = 4;

/// Edits files for the model.
pub struct EditTool {
    env: ToolEnvironment,
    parameters: Value,
    guidelines: Vec<String>,
}

/// What the system prompt tells the model about `edits[]`.
const EDIT_GUIDELINES: [&str; 3] = [
    "To change several places in one file, send one edit call with several entries in edits[], not several calls",
    "Every edits[].oldText is matched against the file as it was before the call; edits must not overlap, so merge changes to neighbouring lines into one entry",
    "Keep each edits[].oldText short, but long enough to occur only once in the file",
];

impl EditTool {
    pub fn new(env: ToolEnvironment) -> Self {
        let parameters = json!({
            "type": "object",
            "required": ["path", "edits"],
            "properties": {
                "path": {"type": "string", "description": "File to edit, absolute or relative to the working directory"},
                "edits": {
                    "type": "array",
                    "description": "The replacements to make. Each one is matched against the file as it is now, not after the other edits; they must not overlap, so combine changes to the same or neighbouring lines into one edit.",
                    "items": {
                        "type": "object",
                        "required": ["oldText", "newText"],
                        "properties": {
                            "oldText": {"type": "string", "description": "Text to replace; it must occur exactly once in the file and not overlap another edit's oldText"},
                            "newText": {"type": "string", "description": "Text to put in its place"}
                        },
                        "additionalProperties": false
                    }
                }
            },
            "additionalProperties": false
        });
        Self { env, parameters, guidelines: EDIT_GUIDELINES.iter().map(|line| (*line).to_owned()).collect() }
    }
}

/// Normalizes edit arguments the way pi 0.73 does before validation: an `edits` value sent as a JSON string is
/// parsed, and the legacy top-level `oldText`/`newText` pair becomes one more entry of `edits`.
pub fn prepare_edit_arguments(args: Value) -> Value {
    let Value::Object(mut map) = args else {
        return args;
    };
    if let Some(Value::String(raw)) = map.get("edits")
        && let Ok(parsed @ Value::Array(_)) = serde_json::from_str::<Value>(raw)
    {
        map.insert("edits".into(), parsed);
    }
    let legacy = matches!((map.get("oldText"), map.get("newText")), (Some(Value::String(_)), Some(Value::String(_))));
    if legacy {
        let mut edits = match map.remove("edits") {
            Some(Value::Array(list)) => list,
            _ => Vec::new(),
        };
        let mut entry = Map::new();
        for key in ["oldText", "newText"] {
            if let Some(value) = map.remove(key) {
                entry.insert(key.into(), value);
            }
        }
        edits.push(Value::Object(entry));
        map.insert("edits".into(), Value::Array(edits));
    }
    Value::Object(map)
}

/// The validated `edits` list.
fn parse_edits(args: &Value) -> Result<Vec<Edit>, ToolError> {
    let invalid = || ToolError::new("Edit tool input is invalid. edits must contain at least one replacement.");
    let list = args.get("edits").and_then(Value::as_array).filter(|l| !l.is_empty()).ok_or_else(invalid)?;
    list.iter()
        .enumerate()
        .map(|(i, item)| {
            let field = |key: &str| {
                item.get(key).and_then(Value::as_str).map(str::to_owned).ok_or_else(|| {
                    ToolError::new(format!("Edit tool input is invalid. edits[{i}].{key} must be a string."))
                })
            };
            Ok(Edit { old_text: field("oldText")?, new_text: field("newText")? })
        })
        .collect()
}

impl AgentTool for EditTool {
    fn name(&self) -> &str {
        "edit"
    }
    fn label(&self) -> &str {
        "edit"
    }
    fn description(&self) -> &str {
        "Change one file by replacing exact text. Every edits[].oldText has to match one unique place in the \
         current file, character for character including whitespace, and no two edits may overlap. Put changes \
         that touch the same or nearby lines into a single edit, and keep each oldText as short as uniqueness \
         allows."
    }
    fn parameters(&self) -> &Value {
        &self.parameters
    }
    fn prompt_snippet(&self) -> Option<&str> {
        Some("Make surgical edits to files (find exact text and replace)")
    }
    fn prompt_guidelines(&self) -> &[String] {
        &self.guidelines
    }
    fn prepare_arguments(&self, args: Value) -> Value {
        prepare_edit_arguments(args)
    }
    fn execute(&self, args: Value, ctx: ToolContext) -> ToolFuture<'_> {
        Box::pin(async move {
            let args = prepare_edit_arguments(args);
            let path = arg_str(&args, "path")?.to_owned();
            let edits = parse_edits(&args)?;
            if ctx.cancel.is_cancelled() {
                return Err(aborted_error());
            }
            let absolute = resolve_to_cwd(&path, &self.env.cwd);
            let _guard = lock_file(&absolute).await;
            if ctx.cancel.is_cancelled() {
                return Err(aborted_error());
            }
            if !tokio::fs::metadata(&absolute).await.is_ok_and(|m| m.is_file()) {
                return Err(ToolError::new(format!("File not found: {path}")));
            }
            let bytes = tokio::fs::read(&absolute)
                .await
                .map_err(|e| ToolError::new(node_style_error(&e, "read", Some(&absolute))))?;
            if ctx.cancel.is_cancelled() {
                return Err(aborted_error());
            }
            // Rewriting a file that is not UTF-8 would replace every invalid byte in it: refuse instead.
            let raw = std::str::from_utf8(&bytes).map_err(|error| {
                ToolError::new(format!(
                    "Cannot edit {path}: it is not UTF-8 text (the first invalid byte is at offset {}). The edit tool \
                     only rewrites UTF-8 files, so nothing was changed; use bash (e.g. sed) or convert the file first.",
                    error.valid_up_to()
                ))
            })?;
            let (bom, text) = strip_bom(raw);
            let crlf = uses_crlf(text);
            let normalized = normalize_to_lf(text);
            let (base, updated) = apply_edits(&normalized, &edits, &path).map_err(ToolError::new)?;
            let mut output = String::with_capacity(updated.len() + 3);
            if bom {
                output.push('\u{FEFF}');
            }
            output.push_str(&restore_line_endings(&updated, crlf));
            write_atomic(&absolute, output.into_bytes())
                .await
                .map_err(|e| ToolError::new(node_style_error(&e, "open", Some(&absolute))))?;
            let (diff, first_changed_line) = generate_diff(&base, &updated, DIFF_CONTEXT_LINES);
            let mut details = json!({ "diff": diff });
            if let Some(map) = details.as_object_mut() {
                if self.env.pi_compat.is_v1_5() {
                    let patch = super::edit_patch::unified_patch(&path, &base, &updated, PATCH_CONTEXT_LINES);
                    map.insert("patch".into(), Value::String(patch));
                }
                if let Some(line) = first_changed_line {
                    map.insert("firstChangedLine".into(), json!(line));
                }
            }
            Ok(AgentToolResult {
                content: vec![UserContent::text(format!("Successfully replaced {} block(s) in {path}.", edits.len()))],
                details: Some(details),
                ..AgentToolResult::default()
            })
        })
    }
}
