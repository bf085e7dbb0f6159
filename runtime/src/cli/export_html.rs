//! A session as one self-contained HTML page (RPC `export_html`, `--export FILE [OUT]`): the conversation of
//! the current branch, rendered on the server side, with no script and nothing fetched from elsewhere, so it
//! opens anywhere.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

// `& < > " '` escaped the XML way is safe in HTML text and quoted attributes as well.
use crate::prompt::escape_xml as escape;
use crate::protocol::{AgentMessage, AssistantContent, MessageContent, UserContent};
use crate::session::{SessionHeader, SessionTree, load_session_file};
use crate::tools::write::write_atomic_blocking;

/// What the page shows besides the messages.
pub struct ExportInfo<'a> {
    /// The agent's name, for the title.
    pub agent: &'a str,
    pub header: &'a SessionHeader,
    pub session_name: Option<&'a str>,
    /// `provider/id` of the model in use.
    pub model: Option<String>,
}

/// The page for `messages`.
pub fn session_html(info: &ExportInfo<'_>, messages: &[AgentMessage]) -> String {
    let title = info.session_name.map_or_else(|| format!("{} session {}", info.agent, info.header.id), str::to_owned);
    let mut page = String::with_capacity(16 * 1024);
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>{STYLE}</style>\n\
         </head>\n<body>\n<header>\n<h1>{}</h1>\n<dl>",
        escape(&title),
        escape(&title)
    );
    let mut facts = vec![("Session", info.header.id.clone()), ("Started", info.header.timestamp.clone())];
    facts.push(("Directory", info.header.cwd.clone()));
    if let Some(model) = &info.model {
        facts.push(("Model", model.clone()));
    }
    if let Some(parent) = &info.header.parent_session {
        facts.push(("Forked from", parent.clone()));
    }
    for (name, value) in facts {
        let _ = write!(page, "<dt>{name}</dt><dd>{}</dd>", escape(&value));
    }
    page.push_str("</dl>\n</header>\n<main>\n");
    for message in messages {
        render_message(&mut page, message);
    }
    page.push_str("</main>\n</body>\n</html>\n");
    page
}

/// `--export FILE [OUT]`: the session file's current branch as a page; returns where it was written.
pub fn export_session_file(agent: &str, input: &Path, output: Option<&str>) -> Result<String, String> {
    let loaded = load_session_file(input).map_err(|error| error.to_string())?;
    let tree = SessionTree::from_entries(loaded.entries);
    let context = tree.context();
    let model = context.model.map(|(provider, id)| format!("{provider}/{id}"));
    let info = ExportInfo { agent, header: &loaded.header, session_name: tree.session_name(), model };
    let stem = input.file_stem().map_or_else(|| loaded.header.id.clone(), |stem| stem.to_string_lossy().into_owned());
    write_session_page(&info, &context.messages, output, &stem)
}

/// Writes the page to `output` (as given, `~` expanded) or to `<agent>-session-<stem>.html` in the working
/// directory; returns the path as the user should see it.
pub fn write_session_page(
    info: &ExportInfo<'_>,
    messages: &[AgentMessage],
    output: Option<&str>,
    stem: &str,
) -> Result<String, String> {
    let (shown, target) = match output {
        Some(path) => (path.to_owned(), super::expand_home(Path::new(path))),
        None => {
            let name = format!("{}-session-{stem}.html", info.agent);
            (name.clone(), PathBuf::from(name))
        }
    };
    write_atomic_blocking(&target, session_html(info, messages).as_bytes())
        .map_err(|error| format!("cannot write {}: {error}", target.display()))?;
    Ok(shown)
}

fn render_message(page: &mut String, message: &AgentMessage) {
    match message {
        // The system prompt record (pi 1.5) is not part of the conversation shown.
        AgentMessage::System(_) => {}
        AgentMessage::User(user) => section(page, "user", "You", &content_html(&user.content)),
        AgentMessage::Assistant(answer) => {
            let mut body = String::new();
            for block in &answer.content {
                match block {
                    AssistantContent::Text(text) => body.push_str(&text_html(&text.text)),
                    AssistantContent::Thinking(thinking) => {
                        body.push_str(&details("thinking", "Thinking", &text_html(&thinking.thinking)));
                    }
                    AssistantContent::ToolCall(call) => {
                        let summary = format!("{} {}", escape(&call.name), escape(&argument_preview(&call.arguments)));
                        let args = serde_json::to_string_pretty(&call.arguments).unwrap_or_default();
                        body.push_str(&details("tool-call", &summary, &format!("<pre>{}</pre>", escape(&args))));
                    }
                }
            }
            if let Some(error) = &answer.error_message {
                let _ = write!(body, "<p class=\"error\">{}</p>", escape(error));
            }
            section(page, "assistant", &format!("{} · {}", answer.provider, answer.model), &body);
        }
        AgentMessage::ToolResult(result) => {
            let label = if result.is_error { "error" } else { "result" };
            let summary = format!("{} {label}", escape(&result.tool_name));
            let body = details("tool-result", &summary, &blocks_html(&result.content));
            let class = if result.is_error { "tool error" } else { "tool" };
            let _ = writeln!(page, "<section class=\"{class}\">{body}</section>");
        }
        AgentMessage::BashExecution(run) => {
            let status = match (run.cancelled, run.exit_code) {
                (true, _) => "cancelled".to_owned(),
                (false, Some(code)) => format!("exit {code}"),
                (false, None) => "ended".to_owned(),
            };
            let body =
                format!("<pre class=\"command\">$ {}</pre><pre>{}</pre>", escape(&run.command), escape(&run.output));
            section(page, "bash", &format!("Your command · {status}"), &body);
        }
        AgentMessage::Custom(custom) => {
            section(page, "custom", &format!("Extension · {}", custom.custom_type), &content_html(&custom.content));
        }
        AgentMessage::CompactionSummary(summary) => {
            let body = details("summary", "Summary of the earlier conversation", &text_html(&summary.summary));
            section(page, "compaction", "Compacted", &body);
        }
        AgentMessage::BranchSummary(summary) => {
            let body = details("summary", "Summary of another branch", &text_html(&summary.summary));
            section(page, "compaction", "Branch summary", &body);
        }
    }
}

fn section(page: &mut String, class: &str, heading: &str, body: &str) {
    let _ = writeln!(page, "<section class=\"{class}\"><h2>{}</h2>{body}</section>", escape(heading));
}

fn details(class: &str, summary_html: &str, body_html: &str) -> String {
    format!("<details class=\"{class}\"><summary>{summary_html}</summary>{body_html}</details>")
}

fn content_html(content: &MessageContent) -> String {
    match content {
        MessageContent::Text(text) => text_html(text),
        MessageContent::Blocks(blocks) => blocks_html(blocks),
    }
}

fn blocks_html(blocks: &[UserContent]) -> String {
    let mut html = String::new();
    for block in blocks {
        match block {
            UserContent::Text(text) => html.push_str(&text_html(&text.text)),
            UserContent::Image(image) => {
                let _ = write!(
                    html,
                    "<img alt=\"attached image\" src=\"data:{};base64,{}\">",
                    escape(&image.mime_type),
                    escape(&image.data)
                );
            }
        }
    }
    html
}

fn text_html(text: &str) -> String {
    format!("<div class=\"text\">{}</div>", escape(text))
}

/// The first argument values, shortened, to tell tool calls apart without opening them.
fn argument_preview(arguments: &Value) -> String {
    let Some(map) = arguments.as_object() else { return String::new() };
    let mut preview: String = map
        .values()
        .map(|value| match value {
            Value::String(text) => text.lines().next().unwrap_or_default().to_owned(),
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ");
    if preview.chars().count() > 80 {
        preview = preview.chars().take(79).collect::<String>() + "…";
    }
    preview
}

const STYLE: &str = "body{font:15px/1.5 system-ui,sans-serif;max-width:56rem;margin:2rem auto;padding:0 1rem;\
color:#1d232a;background:#fbfbfa}header dl{display:grid;grid-template-columns:max-content 1fr;gap:.1rem 1rem;\
color:#5b6570;font-size:.9em}dd{margin:0;word-break:break-all}h1{font-size:1.3rem}h2{font-size:.8rem;\
text-transform:uppercase;letter-spacing:.05em;color:#5b6570;margin:0 0 .3rem}section{border-left:3px solid #d0d5da;\
padding:.4rem .9rem;margin:.8rem 0;background:#fff}section.user{border-color:#3b82c4}section.assistant{border-color:\
#3f9b6b}section.bash{border-color:#a07a2c}section.compaction{border-color:#8a6fb5}section.tool{margin-left:1.5rem}\
section.error{border-color:#c44b3b}.error{color:#b03a2e}.text{white-space:pre-wrap}pre{white-space:pre-wrap;\
word-break:break-word;background:#f3f4f5;padding:.5rem;margin:.3rem 0;font-size:.85em}summary{cursor:pointer;\
color:#39424b}img{max-width:100%}@media (prefers-color-scheme:dark){body{color:#e3e6e8;background:#16191c}\
section{background:#1e2226}pre{background:#262b30}summary,h2,header dl{color:#a3acb5}}";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{AssistantMessage, UserMessage};

    #[test]
    fn the_page_escapes_what_it_shows_and_keeps_every_message() {
        let header = SessionHeader::new("0194-abc", "2026-11-24T08:00:00.000Z", "/work");
        let info = ExportInfo { agent: "pi", header: &header, session_name: None, model: Some("mock/m".into()) };
        let answer = AssistantMessage {
            content: vec![AssistantContent::text("Use <b>bold</b> & \"quotes\"")],
            provider: "mock".into(),
            model: "m".into(),
            ..AssistantMessage::default()
        };
        let messages =
            vec![AgentMessage::User(UserMessage::text("<script>alert(1)</script>")), AgentMessage::Assistant(answer)];
        let page = session_html(&info, &messages);
        assert!(page.starts_with("<!DOCTYPE html>"));
        assert!(!page.contains("<script>"), "user text is escaped");
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(page.contains("Use &lt;b&gt;bold&lt;/b&gt; &amp; &quot;quotes&quot;"));
        assert!(page.contains("<dd>mock/m</dd>"));
        assert_eq!(page.matches("<section").count(), 2);
    }
}
