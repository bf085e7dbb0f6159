//! Each session entry as a block of the page: messages as cards with rendered markdown, tool calls together
//! with their results, and the quieter entries (model and thinking changes, summaries) as notes. Every entry
//! gets an element, so the script can show any branch and scroll to any entry.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::highlight::{HighlightBudget, PAGE_LINE_BUDGET};
use super::markdown::markdown_within;
use super::tools::tool_call_html;
use crate::prompt::escape_xml as escape;
use crate::protocol::{AgentMessage, AssistantContent, MessageContent, StopReason, ToolResultMessage, UserContent};
use crate::session::{EntryKind, SessionEntry};

/// Lines of output shown before "show all".
pub const CLIPPED_LINES: usize = 12;

/// What rendering one entry needs to know about the others.
pub struct EntryContext<'a> {
    /// Tool call id → the result that answered it.
    results: HashMap<&'a str, &'a ToolResultMessage>,
    /// Tool result entry id → the entry holding its call, where the result is shown.
    call_entry_of_result: HashMap<&'a str, &'a str>,
    /// Entry id → its label (the last label entry for it wins; a cleared label removes it).
    labels: HashMap<&'a str, &'a str>,
    /// What is left of the page's highlighting.
    budget: HighlightBudget,
}

impl<'a> EntryContext<'a> {
    pub fn new(entries: &'a [SessionEntry]) -> Self {
        let mut results = HashMap::new();
        let mut result_entries = HashMap::new();
        let mut labels = HashMap::new();
        for entry in entries {
            match &entry.kind {
                EntryKind::Message { message: AgentMessage::ToolResult(result) } => {
                    results.insert(result.tool_call_id.as_str(), result);
                    result_entries.insert(result.tool_call_id.as_str(), entry.id.as_str());
                }
                EntryKind::Label { target_id, label } => match label {
                    Some(label) => {
                        labels.insert(target_id.as_str(), label.as_str());
                    }
                    None => {
                        labels.remove(target_id.as_str());
                    }
                },
                _ => {}
            }
        }
        let mut call_entry_of_result = HashMap::new();
        for entry in entries {
            if let Some(AgentMessage::Assistant(answer)) = entry.message() {
                for block in &answer.content {
                    if let AssistantContent::ToolCall(call) = block
                        && let Some(result_entry) = result_entries.get(call.id.as_str())
                    {
                        call_entry_of_result.insert(*result_entry, entry.id.as_str());
                    }
                }
            }
        }
        Self { results, call_entry_of_result, labels, budget: HighlightBudget::new(PAGE_LINE_BUDGET) }
    }

    pub fn label(&self, id: &str) -> Option<&'a str> {
        self.labels.get(id).copied()
    }

    /// The entry block: shown when `shown` (it is on the branch the page opens on), hidden otherwise.
    pub fn render(&self, page: &mut String, entry: &SessionEntry, shown: bool) {
        let (class, body) = self.body(entry);
        let hidden = if shown { "" } else { " hidden" };
        let parent =
            entry.parent_id.as_deref().map(|id| format!(" data-parent=\"{}\"", escape(id))).unwrap_or_default();
        let call = self
            .call_entry_of_result
            .get(entry.id.as_str())
            .map(|id| format!(" data-shown-in=\"entry-{}\"", escape(id)))
            .unwrap_or_default();
        let id = escape(&entry.id);
        let _ = write!(page, "<div class=\"entry {class}\" id=\"entry-{id}\" data-id=\"{id}\"{parent}{call}{hidden}>");
        if !body.is_empty() {
            let label = self
                .label(&entry.id)
                .map(|label| format!("<span class=\"label\">{}</span>", escape(label)))
                .unwrap_or_default();
            let _ = write!(
                page,
                "<div class=\"meta\"><time datetime=\"{}\">{}</time>{label}\
                 <button class=\"copy-link\" type=\"button\" data-id=\"{id}\" title=\"Copy a link to this entry\">#</button></div>{body}",
                escape(&entry.timestamp),
                clock_time(&entry.timestamp)
            );
        }
        page.push_str("</div>\n");
    }

    /// The entry's class and inner HTML; an empty body for entries the conversation doesn't show.
    fn body(&self, entry: &SessionEntry) -> (&'static str, String) {
        match &entry.kind {
            EntryKind::Message { message } => self.message_body(&entry.id, message),
            EntryKind::ModelChange { provider, model_id } => {
                ("note", format!("<p>Model: <strong>{}/{}</strong></p>", escape(provider), escape(model_id)))
            }
            EntryKind::ThinkingLevelChange { thinking_level } => {
                ("note", format!("<p>Thinking level: <strong>{}</strong></p>", escape(thinking_level)))
            }
            EntryKind::Compaction { summary, tokens_before, .. } => (
                "summary compaction",
                format!(
                    "<details><summary>Earlier conversation compacted ({tokens_before} tokens before)</summary>\
                     <div class=\"md\">{}</div></details>",
                    markdown_within(summary, &self.budget)
                ),
            ),
            EntryKind::BranchSummary { summary, .. } => (
                "summary branch-summary",
                format!(
                    "<h3>Summary of the branch left behind</h3><div class=\"md\">{}</div>",
                    markdown_within(summary, &self.budget)
                ),
            ),
            EntryKind::CustomMessage { custom_type, content, display, .. } if *display => {
                ("custom", format!("<h3>{}</h3>{}", escape(custom_type), content_html(content, &self.budget)))
            }
            EntryKind::SessionInfo { name: Some(name) } => {
                ("note", format!("<p>Session named <strong>{}</strong></p>", escape(name)))
            }
            EntryKind::ContextEdit { replacement, .. } => {
                let what = if replacement.is_some() { "replaced" } else { "removed from the context" };
                ("note", format!("<p>An earlier message was {what}.</p>"))
            }
            _ => ("quiet", String::new()),
        }
    }

    fn message_body(&self, entry_id: &str, message: &AgentMessage) -> (&'static str, String) {
        match message {
            AgentMessage::User(user) => ("user", content_html(&user.content, &self.budget)),
            AgentMessage::Assistant(answer) => {
                let mut body = String::new();
                for block in &answer.content {
                    match block {
                        AssistantContent::Text(text) if !text.text.trim().is_empty() => {
                            let _ =
                                write!(body, "<div class=\"md\">{}</div>", markdown_within(&text.text, &self.budget));
                        }
                        AssistantContent::Text(_) => {}
                        AssistantContent::Thinking(thinking) if !thinking.thinking.trim().is_empty() => {
                            let _ = write!(
                                body,
                                "<div class=\"thinking md\">{}</div>",
                                markdown_within(&thinking.thinking, &self.budget)
                            );
                        }
                        AssistantContent::Thinking(_) => {}
                        AssistantContent::ToolCall(call) => {
                            body.push_str(&tool_call_html(
                                call,
                                self.results.get(call.id.as_str()).copied(),
                                &self.budget,
                            ));
                        }
                    }
                }
                match (&answer.error_message, answer.stop_reason) {
                    (_, StopReason::Aborted) => {
                        body.push_str("<p class=\"stopped\">Stopped before the answer was complete.</p>")
                    }
                    (Some(error), _) => {
                        let _ = write!(body, "<p class=\"error-text\">{}</p>", escape(error));
                    }
                    _ => {}
                }
                let _ = write!(
                    body,
                    "<div class=\"model-line\">{}/{}</div>",
                    escape(&answer.provider),
                    escape(&answer.model)
                );
                ("assistant", body)
            }
            // Shown with its call; a result whose call isn't in the file stands alone.
            AgentMessage::ToolResult(result) => {
                if self.call_entry_of_result.contains_key(entry_id) {
                    ("quiet", String::new())
                } else {
                    let class = if result.is_error { "tool error" } else { "tool" };
                    let body = format!(
                        "<div class=\"{class}\"><div class=\"tool-head\"><span class=\"tool-name\">{}</span> result</div>{}</div>",
                        escape(&result.tool_name),
                        blocks_output_html(&result.content, "", &self.budget)
                    );
                    ("orphan-result", body)
                }
            }
            AgentMessage::BashExecution(run) => {
                let status = match (run.cancelled, run.exit_code) {
                    (true, _) => "cancelled".to_owned(),
                    (false, Some(0)) => String::new(),
                    (false, Some(code)) => format!("exit code {code}"),
                    (false, None) => String::new(),
                };
                let class = if status.is_empty() { "tool" } else { "tool error" };
                let body = format!(
                    "<div class=\"{class}\"><div class=\"tool-head\"><span class=\"prompt\">$</span> <code>{}</code>\
                     <span class=\"by-user\">run by the user{}</span></div>{}</div>",
                    escape(&run.command),
                    if status.is_empty() { String::new() } else { format!(", {status}") },
                    output_html(&escape(&run.output), run.output.lines().count(), "")
                );
                ("bash", body)
            }
            AgentMessage::Custom(custom) if custom.display => (
                "custom",
                format!("<h3>{}</h3>{}", escape(&custom.custom_type), content_html(&custom.content, &self.budget)),
            ),
            AgentMessage::CompactionSummary(summary) => (
                "summary compaction",
                format!(
                    "<h3>Earlier conversation, summarized</h3><div class=\"md\">{}</div>",
                    markdown_within(&summary.summary, &self.budget)
                ),
            ),
            AgentMessage::BranchSummary(summary) => (
                "summary branch-summary",
                format!(
                    "<h3>Summary of the branch left behind</h3><div class=\"md\">{}</div>",
                    markdown_within(&summary.summary, &self.budget)
                ),
            ),
            AgentMessage::System(system) => (
                "note system",
                format!(
                    "<details><summary>System prompt</summary><pre class=\"plain\">{}</pre></details>",
                    escape(&system.content)
                ),
            ),
            _ => ("quiet", String::new()),
        }
    }
}

/// `HH:MM:SS` of an ISO timestamp, as written (UTC); the script shows it in the reader's time zone.
fn clock_time(timestamp: &str) -> String {
    timestamp.split_once('T').map(|(_, time)| time.chars().take(8).collect()).unwrap_or_default()
}

/// User-style content: text as markdown, images inline.
pub fn content_html(content: &MessageContent, budget: &HighlightBudget) -> String {
    match content {
        MessageContent::Text(text) => format!("<div class=\"md\">{}</div>", markdown_within(text, budget)),
        MessageContent::Blocks(blocks) => {
            let mut html = String::new();
            for block in blocks {
                match block {
                    UserContent::Text(text) => {
                        let _ = write!(html, "<div class=\"md\">{}</div>", markdown_within(&text.text, budget));
                    }
                    UserContent::Image(image) => html.push_str(&image_html(&image.mime_type, &image.data)),
                }
            }
            html
        }
    }
}

/// An attached image, inline; a type a browser can't show safely is named instead.
pub fn image_html(mime_type: &str, data: &str) -> String {
    let shown = ["image/png", "image/jpeg", "image/gif", "image/webp"];
    let data_is_base64 =
        data.bytes().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'+' | b'/' | b'=' | b'\n' | b'\r'));
    if shown.contains(&mime_type) && data_is_base64 {
        format!("<img class=\"attached\" alt=\"attached image\" src=\"data:{mime_type};base64,{data}\">")
    } else {
        format!("<p class=\"image-missing\">[an image of type {} is not shown]</p>", escape(mime_type))
    }
}

/// A tool's output blocks: text as escaped (or highlighted, given `language`) lines, clipped; images inline.
pub fn blocks_output_html(blocks: &[UserContent], language: &str, budget: &HighlightBudget) -> String {
    let text = blocks.iter().filter_map(UserContent::as_text).collect::<Vec<_>>().join("\n");
    let mut html = String::new();
    if !text.is_empty() {
        let inner =
            if language.is_empty() { escape(&text) } else { super::highlight::highlight(&text, language, budget) };
        html.push_str(&output_html(&inner, text.lines().count(), language));
    }
    for block in blocks {
        if let UserContent::Image(image) = block {
            html.push_str(&image_html(&image.mime_type, &image.data));
        }
    }
    html
}

/// Output lines (already HTML) in a block that shows the first [`CLIPPED_LINES`] until asked for the rest.
pub fn output_html(inner_html: &str, lines: usize, language: &str) -> String {
    if inner_html.is_empty() {
        return String::new();
    }
    let language = if language.is_empty() { String::new() } else { format!(" data-language=\"{}\"", escape(language)) };
    if lines <= CLIPPED_LINES {
        return format!("<div class=\"output\"><pre{language}>{inner_html}</pre></div>");
    }
    format!(
        "<div class=\"output clip\" data-lines=\"{lines}\"><pre{language}>{inner_html}</pre>\
         <button class=\"more\" type=\"button\">Show all {lines} lines</button></div>"
    )
}
