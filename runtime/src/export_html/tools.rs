//! A tool call as the page shows it: a head line that says what was done (`$ command`, `read path`), what it
//! wrote or changed (content highlighted by the file's language, the edit as a diff), and the result below.

use std::fmt::Write as _;

use serde_json::Value;

use super::entries::{blocks_output_html, output_html};
use super::highlight::{HighlightBudget, highlight, language_of_path};
use crate::prompt::escape_xml as escape;
use crate::protocol::{ToolCall, ToolResultMessage, UserContent};

/// The call with its result (or a note that none was recorded).
pub fn tool_call_html(call: &ToolCall, result: Option<&ToolResultMessage>, budget: &HighlightBudget) -> String {
    let args = &call.arguments;
    let text_arg = |name: &str| args.get(name).and_then(Value::as_str).unwrap_or_default();
    let path = text_arg("path");
    let language = if matches!(call.name.as_str(), "read" | "write") {
        let first_line = result
            .and_then(|result| result.content.iter().find_map(UserContent::as_text))
            .or_else(|| args.get("content").and_then(Value::as_str))
            .and_then(|text| text.lines().next())
            .unwrap_or_default();
        language_of_path(path, first_line)
    } else {
        String::new()
    };
    let failed = result.is_some_and(|result| result.is_error);
    let mut html = format!(
        "<div class=\"tool tool-{}{}\"><div class=\"tool-head\">",
        css_name(&call.name),
        if failed { " error" } else { "" }
    );
    let mut shown_arguments = String::new();
    match call.name.as_str() {
        "bash" => {
            let _ = write!(
                html,
                "<span class=\"prompt\">$</span> <code>{}</code>",
                highlight(text_arg("command"), "bash", budget)
            );
            if let Some(timeout) = args.get("timeout").and_then(Value::as_u64) {
                let _ = write!(html, " <span class=\"tool-extra\">timeout {timeout}s</span>");
            }
        }
        "read" => {
            let _ = write!(html, "<span class=\"tool-name\">read</span> <span class=\"path\">{}</span>", escape(path));
            let offset = args.get("offset").and_then(Value::as_u64);
            let limit = args.get("limit").and_then(Value::as_u64);
            if offset.is_some() || limit.is_some() {
                let from = offset.unwrap_or(1);
                let to = limit.map(|limit| (from + limit).saturating_sub(1).to_string()).unwrap_or_default();
                let _ = write!(html, "<span class=\"tool-extra\">:{from}-{to}</span>");
            }
        }
        "write" => {
            let _ = write!(html, "<span class=\"tool-name\">write</span> <span class=\"path\">{}</span>", escape(path));
            let content = text_arg("content");
            shown_arguments = output_html(&highlight(content, &language, budget), content.lines().count(), &language);
        }
        "edit" => {
            let _ = write!(html, "<span class=\"tool-name\">edit</span> <span class=\"path\">{}</span>", escape(path));
            let diff = result
                .and_then(|result| result.details.as_ref())
                .and_then(|details| details.get("diff"))
                .and_then(Value::as_str);
            shown_arguments = match diff {
                Some(diff) => output_html(&diff_html(diff), diff.lines().count(), "diff"),
                None => arguments_html(args, budget),
            };
        }
        "grep" | "find" | "ls" => {
            let pattern = text_arg("pattern");
            let _ = write!(html, "<span class=\"tool-name\">{}</span>", escape(&call.name));
            if !pattern.is_empty() {
                let _ = write!(html, " <code>{}</code>", escape(pattern));
            }
            let _ = write!(html, " <span class=\"path\">{}</span>", escape(if path.is_empty() { "." } else { path }));
        }
        name => {
            let _ = write!(html, "<span class=\"tool-name\">{}</span>", escape(name));
            if args.as_object().is_some_and(|map| !map.is_empty()) {
                shown_arguments = arguments_html(args, budget);
            }
        }
    }
    html.push_str("</div>");
    html.push_str(&shown_arguments);
    match result {
        Some(result) => {
            let output_language = if call.name == "read" { language.as_str() } else { "" };
            // An edit's success line says nothing the diff doesn't; its failure says why.
            if call.name != "edit" || result.is_error {
                let _ = write!(
                    html,
                    "<div class=\"result\">{}</div>",
                    blocks_output_html(&result.content, output_language, budget)
                );
            }
        }
        None => html.push_str("<p class=\"pending\">No result was recorded for this call.</p>"),
    }
    html.push_str("</div>");
    html
}

/// The arguments as highlighted JSON.
fn arguments_html(arguments: &Value, budget: &HighlightBudget) -> String {
    let pretty = serde_json::to_string_pretty(arguments).unwrap_or_default();
    format!("<div class=\"arguments\"><pre>{}</pre></div>", highlight(&pretty, "json", budget))
}

/// pi's edit diff (` 1 kept`, `-2 removed`, `+2 added`, `  …`) with each line marked.
fn diff_html(diff: &str) -> String {
    let mut html = String::with_capacity(diff.len() * 2);
    for line in diff.lines() {
        let class = match line.as_bytes().first() {
            Some(b'+') => "added",
            Some(b'-') => "removed",
            _ => "kept",
        };
        let _ = writeln!(html, "<span class=\"diff-{class}\">{}</span>", escape(line));
    }
    html
}

/// A tool name as a class: letters, digits and dashes only.
fn css_name(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect()
}
