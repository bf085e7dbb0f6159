//! An MCP `tools/call` answer as the agent's tool result: text and images pass through, audio, resources and
//! links are described in text, structured content is shown as JSON when nothing else says it, and
//! `isError` makes the call fail with the server's text. Text over 20 KB is cut in the middle, as pi cuts it,
//! and the whole text is kept in a temporary file the model can read.

use serde_json::{Value, json};

use crate::protocol::{AgentToolResult, ImageContent, UserContent};

/// The tool result for `answer` (a `CallToolResult` as JSON); `Err` with the text for an `isError` answer.
pub(super) fn tool_result(server: &str, tool: &str, answer: &Value) -> Result<AgentToolResult, String> {
    let mut content: Vec<UserContent> = Vec::new();
    for block in answer.get("content").and_then(Value::as_array).into_iter().flatten() {
        if let Some(converted) = convert_block(block) {
            content.push(converted);
        }
    }
    let structured = answer.get("structuredContent").filter(|value| !value.is_null());
    if let Some(structured) = structured
        && !content.iter().any(|block| matches!(block, UserContent::Text(_)))
    {
        let text = serde_json::to_string_pretty(structured).unwrap_or_else(|_| structured.to_string());
        content.push(UserContent::text(text));
    }
    if answer.get("isError").and_then(Value::as_bool) == Some(true) {
        let text = texts(&content);
        return Err(if text.is_empty() { format!("MCP tool \"{tool}\" of server \"{server}\" failed") } else { text });
    }
    if content.is_empty() {
        content.push(UserContent::text("(no output)"));
    }
    let mut details = json!({ "server": server, "tool": tool });
    if let Some((cut, path)) = cut_long_text(&content) {
        content.retain(|block| !matches!(block, UserContent::Text(_)));
        content.insert(0, UserContent::text(cut));
        if let Some(path) = path {
            details["fullOutputPath"] = Value::String(path.display().to_string());
        }
    }
    if let Some(structured) = structured {
        details["structuredContent"] = structured.clone();
    }
    Ok(AgentToolResult { content, details: Some(details), ..AgentToolResult::default() })
}

/// Text answers longer than this many bytes are cut.
const MAX_TEXT_BYTES: usize = 20 * 1024;
/// How much of the start and of the end of a cut text is kept.
const KEPT_BYTES: usize = 10 * 1024;

/// The text blocks joined, cut to their first and last 10 KB when longer than 20 KB, with the whole text
/// saved to `$TMPDIR/pi-mcp-<16 hex>.txt` (the path is `None` if it could not be written).
fn cut_long_text(content: &[UserContent]) -> Option<(String, Option<std::path::PathBuf>)> {
    let text = texts(content);
    if text.len() <= MAX_TEXT_BYTES {
        return None;
    }
    let head_end = floor_boundary(&text, KEPT_BYTES);
    let tail_start = ceil_boundary(&text, text.len() - KEPT_BYTES);
    let left_out = text[head_end..tail_start].chars().count();
    let id = uuid::Uuid::new_v4().simple().to_string();
    let path = std::env::temp_dir().join(format!("pi-mcp-{}.txt", &id[..16]));
    let saved = std::fs::write(&path, &text).is_ok().then_some(path);
    let mut cut = format!(
        "Warning: the output was cut (about {} tokens, {} lines)\n\n{}\n[... {left_out} characters left out ...]\n{}",
        text.len().div_ceil(4),
        text.lines().count(),
        &text[..head_end],
        &text[tail_start..]
    );
    if let Some(path) = &saved {
        cut.push_str(&format!("\n\n[The whole output: {} (read it in parts with offset and limit)]", path.display()));
    }
    Some((cut, saved))
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

fn texts(content: &[UserContent]) -> String {
    let parts: Vec<&str> = content
        .iter()
        .filter_map(|block| match block {
            UserContent::Text(text) => Some(text.text.as_ref()),
            _ => None,
        })
        .collect();
    parts.join("\n")
}

fn convert_block(block: &Value) -> Option<UserContent> {
    let text_of = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or_default();
    match text_of("type") {
        "text" => Some(UserContent::text(text_of("text").to_owned())),
        "image" => Some(UserContent::Image(ImageContent {
            data: text_of("data").to_owned(),
            mime_type: text_of("mimeType").to_owned(),
        })),
        "audio" => Some(UserContent::text(format!("[audio: {}]", text_of("mimeType")))),
        "resource" => {
            let resource = block.get("resource")?;
            let field = |key: &str| resource.get(key).and_then(Value::as_str);
            let uri = field("uri").unwrap_or_default();
            Some(UserContent::text(match (field("text"), field("mimeType")) {
                (Some(text), _) => format!("[resource: {uri}]\n{text}"),
                (None, Some(mime)) => format!("[resource: {uri} ({mime}), binary content not shown]"),
                (None, None) => format!("[resource: {uri}, binary content not shown]"),
            }))
        }
        "resource_link" => {
            let name = text_of("name");
            let uri = text_of("uri");
            Some(UserContent::text(if name.is_empty() {
                format!("[resource link: {uri}]")
            } else {
                format!("[resource link: {name} ({uri})]")
            }))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(result: &AgentToolResult) -> Vec<String> {
        result
            .content
            .iter()
            .map(|block| match block {
                UserContent::Text(text) => text.text.to_string(),
                UserContent::Image(image) => format!("image {}", image.mime_type),
            })
            .collect()
    }

    #[test]
    fn text_images_and_structured_content() {
        let answer = json!({
            "content": [{"type": "text", "text": "3"}, {"type": "image", "data": "aGk=", "mimeType": "image/png"}],
            "structuredContent": {"sum": 3}
        });
        let result = tool_result("calc", "add", &answer).unwrap();
        assert_eq!(text_of(&result), ["3", "image image/png"]);
        assert_eq!(result.details.unwrap(), json!({"server": "calc", "tool": "add", "structuredContent": {"sum": 3}}));

        let only_structured = tool_result("calc", "add", &json!({"content": [], "structuredContent": {"sum": 3}}));
        assert_eq!(text_of(&only_structured.unwrap()), ["{\n  \"sum\": 3\n}"]);
    }

    #[test]
    fn long_text_is_cut_in_the_middle_and_kept_whole_in_a_file() {
        let long = format!("{}{}{}", "a".repeat(15_000), "é".repeat(5_000), "z".repeat(15_000));
        let answer = json!({"content": [{"type": "text", "text": long}, {"type": "image", "data": "aGk=", "mimeType": "image/png"}]});
        let result = tool_result("s", "t", &answer).unwrap();
        let shown = text_of(&result);
        assert_eq!(shown.len(), 2, "the cut text, then the image");
        assert!(shown[0].starts_with("Warning: the output was cut") && shown[0].contains(&"a".repeat(10_000)));
        assert!(shown[0].contains(&"z".repeat(10_000)) && !shown[0].contains("é"), "the middle is left out");
        assert!(shown[0].contains("[... 14520 characters left out ...]"), "{}", &shown[0][..200]);
        let path = result.details.unwrap()["fullOutputPath"].as_str().unwrap().to_owned();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), long);
        std::fs::remove_file(path).unwrap();
        assert!(shown[1].starts_with("image"));
    }

    #[test]
    fn errors_resources_and_empty_answers() {
        let error = tool_result("s", "t", &json!({"content": [{"type": "text", "text": "boom"}], "isError": true}));
        assert_eq!(error.unwrap_err(), "boom");
        let bare = tool_result("s", "t", &json!({"content": [], "isError": true})).unwrap_err();
        assert!(bare.contains("\"t\"") && bare.contains("\"s\""), "{bare}");

        let resource = json!({"content": [
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "hello"}},
            {"type": "resource_link", "uri": "file:///b", "name": "b"},
            {"type": "audio", "data": "", "mimeType": "audio/wav"}
        ]});
        let result = tool_result("s", "t", &resource).unwrap();
        assert_eq!(
            text_of(&result),
            ["[resource: file:///a.txt]\nhello", "[resource link: b (file:///b)]", "[audio: audio/wav]"]
        );
        assert_eq!(text_of(&tool_result("s", "t", &json!({"content": []})).unwrap()), ["(no output)"]);
    }
}
