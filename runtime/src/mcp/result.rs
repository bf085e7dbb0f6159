//! An MCP `tools/call` answer as the agent's tool result: text and images pass through, audio, resources and
//! links are described in text, structured content is shown as JSON when nothing else says it, and
//! `isError` makes the call fail with the server's text.

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
    if let Some(structured) = structured {
        details["structuredContent"] = structured.clone();
    }
    Ok(AgentToolResult { content, details: Some(details) })
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
