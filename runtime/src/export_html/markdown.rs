//! Markdown from the conversation as safe HTML: pulldown-cmark's rendering, with the model's raw HTML turned
//! into text, links kept only to web and mail addresses, images only when they are inline data (nothing is
//! fetched when the page opens), and fenced code highlighted.

use pulldown_cmark::{CodeBlockKind, Event, LinkType, Options, Parser, Tag, TagEnd, html};

use super::highlight::{HighlightBudget, PAGE_LINE_BUDGET, highlight};
use crate::prompt::escape_xml as escape;

/// `markdown` rendered to HTML that neither runs nor loads anything.
pub fn markdown_html(markdown: &str) -> String {
    markdown_within(markdown, &HighlightBudget::new(PAGE_LINE_BUDGET))
}

/// [`markdown_html`], its code highlighted within the page's `budget`.
pub fn markdown_within(markdown: &str, budget: &HighlightBudget) -> String {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_GFM
        | Options::ENABLE_FOOTNOTES;
    let mut events = Vec::new();
    // Open links and images: whether their end closes our own `</a>`, a kept `<img>` or a neutral `</span>`.
    let mut open: Vec<Closing> = Vec::new();
    let mut code: Option<(String, String)> = None;
    for event in Parser::new_ext(markdown, options) {
        if let Some((_, body)) = code.as_mut() {
            match event {
                Event::Text(text) => body.push_str(&text),
                Event::End(TagEnd::CodeBlock) => {
                    let (language, body) = code.take().unwrap_or_default();
                    events.push(Event::Html(code_block_html(&body, &language, budget).into()));
                }
                _ => {}
            }
            continue;
        }
        match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                let language = match kind {
                    CodeBlockKind::Fenced(info) => info.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                code = Some((language, String::new()));
            }
            // The model's HTML is shown as what it wrote.
            Event::Html(raw) | Event::InlineHtml(raw) => events.push(Event::Text(raw)),
            Event::Start(Tag::HtmlBlock) => events.push(Event::Html("<p class=\"raw-html\">".into())),
            Event::End(TagEnd::HtmlBlock) => events.push(Event::Html("</p>".into())),
            Event::Start(Tag::Link { link_type, dest_url, title, .. }) => match safe_link(link_type, &dest_url) {
                Some(href) => {
                    let title = if title.is_empty() { String::new() } else { format!(" title=\"{}\"", escape(&title)) };
                    events.push(Event::Html(
                        format!("<a href=\"{}\"{title} rel=\"noopener noreferrer nofollow\">", escape(&href)).into(),
                    ));
                    open.push(Closing::Link);
                }
                None => {
                    events.push(Event::Html(neutral_span("link", &dest_url).into()));
                    open.push(Closing::Span);
                }
            },
            Event::End(TagEnd::Link) => {
                let closing = open.pop().unwrap_or(Closing::Span);
                events.push(Event::Html(if closing == Closing::Link { "</a>" } else { "</span>" }.into()));
            }
            Event::Start(Tag::Image { link_type, dest_url, title, id }) => {
                if is_inline_image(&dest_url) {
                    events.push(Event::Start(Tag::Image { link_type, dest_url, title, id }));
                    open.push(Closing::Image);
                } else {
                    events.push(Event::Html(neutral_span("image", &dest_url).into()));
                    open.push(Closing::Span);
                }
            }
            Event::End(TagEnd::Image) => match open.pop() {
                Some(Closing::Image) => events.push(Event::End(TagEnd::Image)),
                _ => events.push(Event::Html("</span>".into())),
            },
            other => events.push(other),
        }
    }
    // A fence left open at the end of the text still shows its code.
    if let Some((language, body)) = code.take() {
        events.push(Event::Html(code_block_html(&body, &language, budget).into()));
    }
    let mut out = String::with_capacity(markdown.len() * 3 / 2 + 64);
    html::push_html(&mut out, events.into_iter());
    out
}

/// A block of code: highlighted by `language` when it names a grammar, with the language shown.
pub fn code_block_html(code: &str, language: &str, budget: &HighlightBudget) -> String {
    let language = language.split_whitespace().next().unwrap_or_default();
    let label = if language.is_empty() { String::new() } else { format!(" data-language=\"{}\"", escape(language)) };
    format!("<pre class=\"code\"{label}><code>{}</code></pre>", highlight(code, language, budget))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Closing {
    Link,
    Image,
    Span,
}

/// Where a link may go: the web and mail. Anything else (scripts, files, relative paths that would resolve
/// against wherever the page is opened) stays text, its target in the tooltip.
fn safe_link(link_type: LinkType, destination: &str) -> Option<String> {
    if link_type == LinkType::Email {
        return Some(format!("mailto:{destination}"));
    }
    let lower = destination.trim_start().to_ascii_lowercase();
    ["https://", "http://", "mailto:"]
        .iter()
        .any(|scheme| lower.starts_with(scheme))
        .then(|| destination.trim().to_owned())
}

/// Images the page already holds; a remote one would be fetched (and tell its server who reads the page).
fn is_inline_image(destination: &str) -> bool {
    let lower = destination.trim_start().to_ascii_lowercase();
    ["data:image/png", "data:image/jpeg", "data:image/gif", "data:image/webp"]
        .iter()
        .any(|kind| lower.starts_with(kind))
}

fn neutral_span(kind: &str, destination: &str) -> String {
    format!("<span class=\"unlinked-{kind}\" title=\"{}\">", escape(destination))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_is_rendered_and_raw_html_is_shown_as_text() {
        let html = markdown_html(
            "# Title\n\n**bold** and `code`\n\n- one\n- two\n\n<script>alert(1)</script>\n\nInline <img src=x onerror=alert(2)> here\n",
        );
        assert!(html.contains("<h1>Title</h1>"), "{html}");
        assert!(html.contains("<strong>bold</strong>"));
        assert!(html.contains("<code>code</code>"));
        assert!(html.contains("<li>one</li>"));
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{html}");
        assert!(html.contains("&lt;img src=x onerror=alert(2)&gt;"), "{html}");
        assert!(!html.contains("<script") && !html.contains("<img"));
    }

    #[test]
    fn links_and_images_can_neither_run_nor_fetch() {
        let html = markdown_html(
            "[web](https://example.com/a?b=1&c=2) [js](javascript:alert(1)) [rel](/local) <https://auto.example>\n\n\
             ![remote](https://example.com/x.png) ![inline](data:image/png;base64,iVBORw0KGgo=)\n",
        );
        assert!(
            html.contains("<a href=\"https://example.com/a?b=1&amp;c=2\" rel=\"noopener noreferrer nofollow\">web</a>"),
            "{html}"
        );
        assert!(html.contains("<span class=\"unlinked-link\" title=\"javascript:alert(1)\">js</span>"), "{html}");
        assert!(html.contains("<span class=\"unlinked-link\" title=\"/local\">rel</span>"));
        assert!(html.contains("<a href=\"https://auto.example\""));
        assert!(
            html.contains("<span class=\"unlinked-image\" title=\"https://example.com/x.png\">remote</span>"),
            "{html}"
        );
        assert!(html.contains("<img src=\"data:image/png;base64,iVBORw0KGgo=\" alt=\"inline\""), "{html}");
        assert!(!html.contains("href=\"javascript"));
    }

    #[test]
    fn fenced_code_is_highlighted_and_an_unclosed_fence_still_shows() {
        let html = markdown_html("```rust\nlet x = 1;\n```\n\n```\n<b>plain</b>\n");
        assert!(
            html.contains("<pre class=\"code\" data-language=\"rust\"><code><span class=\"hl-k\">let</span>"),
            "{html}"
        );
        assert!(html.contains("<pre class=\"code\"><code>&lt;b&gt;plain&lt;/b&gt;\n</code></pre>"), "{html}");
    }
}
