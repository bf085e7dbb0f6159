//! A session as one self-contained HTML page (`--export FILE [OUT]`, RPC `export_html`, `/export`): every
//! entry of every branch rendered here in Rust (markdown, highlighted code, tool calls with their results),
//! with the branch the session is on shown and the others a click away in a searchable tree. A small inline
//! script drives the tree, filters and toggles; a Content-Security-Policy lets nothing else run and nothing
//! load, so the page works offline, from `file://`, and tells no server that it was opened.

mod entries;
mod highlight;
mod index;
mod markdown;
mod stats;
mod tools;

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use sha2::Digest as _;

use self::entries::EntryContext;
pub use self::markdown::markdown_html;
pub use self::stats::SessionFigures;
use crate::prompt::escape_xml as escape;
use crate::session::{SessionHeader, SessionTree, load_session_file, parse_session_text};
use crate::tools::write::write_atomic_blocking;

const STYLE: &str = include_str!("page.css");
const SCRIPT: &str = include_str!("page.js");

/// Everything a page shows.
pub struct ExportInfo<'a> {
    /// The agent's name, for the title and the default file name.
    pub agent: &'a str,
    pub header: &'a SessionHeader,
    /// All entries of the file, every branch.
    pub entries: &'a [crate::session::SessionEntry],
    /// The entry the session is on: its branch is the one shown first.
    pub leaf_id: Option<&'a str>,
    pub session_name: Option<&'a str>,
    /// The session file's lines, offered for download.
    pub jsonl: &'a [u8],
    /// The download's file name.
    pub jsonl_name: String,
    /// The system prompt in use, when the page is written from a running session.
    pub system_prompt: Option<&'a str>,
    /// `(name, description)` of the tools in use, likewise.
    pub tools: Vec<(String, String)>,
}

/// The page.
pub fn session_html(info: &ExportInfo<'_>) -> String {
    let title = info.session_name.map_or_else(|| format!("Session {}", info.header.id), str::to_owned);
    let context = EntryContext::new(info.entries);
    let shown: HashSet<&str> = branch_ids(info.entries, info.leaf_id);
    let mut page = String::with_capacity(32 * 1024 + info.jsonl.len() * 3);
    let script_hash = base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(SCRIPT.as_bytes()));
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data: blob:; \
         style-src 'unsafe-inline'; script-src 'sha256-{script_hash}'; base-uri 'none'; form-action 'none'\">\n\
         <meta name=\"referrer\" content=\"no-referrer\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"{agent} (pi-gen)\">\n<link rel=\"icon\" href=\"data:,\">\n\
         <title>{title} · {agent}</title>\n<style>{STYLE}</style>\n\
         </head>\n<body class=\"no-script\">\n<div class=\"layout\">\n",
        agent = escape(info.agent),
        title = escape(&title),
    );
    page.push_str(TREE_PANEL);
    page.push_str("<main id=\"conversation\">\n");
    header_html(&mut page, info, &title);
    page.push_str("<div id=\"entries\">\n");
    for entry in info.entries {
        context.render(&mut page, entry, shown.contains(entry.id.as_str()));
    }
    page.push_str("</div>\n</main>\n</div>\n");
    let _ = write!(
        page,
        "<script type=\"application/json\" id=\"tree-index\">{}</script>\n\
         <script type=\"application/octet-stream\" id=\"session-jsonl\" data-name=\"{}\">{}</script>\n\
         <script>{SCRIPT}</script>\n</body>\n</html>\n",
        index::tree_index_json(info.entries, info.leaf_id, &context),
        escape(&info.jsonl_name),
        index::jsonl_base64(info.jsonl),
    );
    page
}

const TREE_PANEL: &str = "<aside id=\"tree-panel\" class=\"needs-script\" aria-label=\"Session tree\">\n\
<input id=\"tree-search\" type=\"search\" placeholder=\"Search entries\" aria-label=\"Search entries\">\n\
<div class=\"filters\" role=\"group\" aria-label=\"Which entries the tree shows\">\
<button type=\"button\" data-filter=\"default\" title=\"The conversation without settings changes and tool results\">Default</button>\
<button type=\"button\" data-filter=\"no-tools\" title=\"Also without tool calls\">No tools</button>\
<button type=\"button\" data-filter=\"user\" title=\"Only your messages\">User</button>\
<button type=\"button\" data-filter=\"labeled\" title=\"Only labeled entries\">Labeled</button>\
<button type=\"button\" data-filter=\"all\" title=\"Every entry\">All</button></div>\n\
<ol id=\"tree\"></ol>\n<div id=\"tree-count\"></div>\n</aside>\n";

fn header_html(page: &mut String, info: &ExportInfo<'_>, title: &str) {
    let figures = SessionFigures::count(info.entries);
    let _ = write!(
        page,
        "<header class=\"session\">\n<div class=\"title-row\"><h1>{}</h1>\
         <div class=\"actions needs-script\"><button type=\"button\" id=\"show-tree\">Tree</button>\
         <button type=\"button\" id=\"toggle-thinking\" aria-pressed=\"true\" title=\"Show or hide thinking (t)\">Thinking</button>\
         <button type=\"button\" id=\"toggle-tools\" aria-pressed=\"true\" title=\"Show or hide tool output (o)\">Tool output</button>\
         <button type=\"button\" id=\"download-jsonl\" title=\"The session file, to open with --session\">↓ JSONL</button></div></div>\n<dl class=\"figures\">",
        escape(title)
    );
    let mut facts: Vec<(&str, String)> = Vec::new();
    let header = info.header;
    if info.session_name.is_some() {
        facts.push(("Session", escape(&header.id)));
    }
    facts.push(("Date", format!("<time datetime=\"{0}\" data-style=\"date\">{0}</time>", escape(&header.timestamp))));
    facts.push(("Directory", escape(&header.cwd)));
    if !figures.models.is_empty() {
        facts.push(("Models", escape(&figures.models.join(", "))));
    }
    facts.push(("Messages", figures.messages_line()));
    facts.push(("Tool calls", figures.tool_calls.to_string()));
    facts.push(("Tokens", figures.tokens_line()));
    facts.push(("Cost", figures.cost_line()));
    if figures.leaves > 1 {
        facts.push(("Branches", figures.leaves.to_string()));
    }
    if let Some(parent) = &header.parent_session {
        facts.push(("Forked from", escape(parent)));
    }
    for (name, value) in facts {
        let _ = write!(page, "<dt>{name}</dt><dd>{value}</dd>");
    }
    page.push_str("</dl>\n");
    if let Some(prompt) = info.system_prompt {
        let _ = writeln!(
            page,
            "<details class=\"system-prompt\"><summary>System prompt ({})</summary><pre class=\"plain\">{}</pre></details>",
            match prompt.lines().count() {
                1 => "1 line".to_owned(),
                lines => format!("{lines} lines"),
            },
            escape(prompt)
        );
    }
    if !info.tools.is_empty() {
        let _ = write!(page, "<details class=\"tool-list\"><summary>Tools ({})</summary><dl>", info.tools.len());
        for (name, description) in &info.tools {
            let _ = write!(page, "<dt>{}</dt><dd>{}</dd>", escape(name), escape(description));
        }
        page.push_str("</dl></details>\n");
    }
    page.push_str("</header>\n");
}

/// The ids on the path from the root to `leaf`.
fn branch_ids<'a>(entries: &'a [crate::session::SessionEntry], leaf: Option<&str>) -> HashSet<&'a str> {
    let by_id: std::collections::HashMap<&str, &crate::session::SessionEntry> =
        entries.iter().map(|entry| (entry.id.as_str(), entry)).collect();
    let mut shown = HashSet::new();
    let mut current = leaf.and_then(|id| by_id.get(id)).copied();
    while let Some(entry) = current {
        if !shown.insert(entry.id.as_str()) {
            break;
        }
        current = entry.parent_id.as_deref().and_then(|id| by_id.get(id)).copied();
    }
    shown
}

/// `--export FILE [OUT]`: the session file as a page; returns where it was written.
pub fn export_session_file(agent: &str, input: &Path, output: Option<&str>) -> Result<String, String> {
    let loaded = load_session_file(input).map_err(|error| error.to_string())?;
    let jsonl = std::fs::read(input).map_err(|error| format!("cannot read {}: {error}", input.display()))?;
    let tree = SessionTree::from_entries(loaded.entries);
    let stem = input.file_stem().map_or_else(|| loaded.header.id.clone(), |stem| stem.to_string_lossy().into_owned());
    write_session_page(&stored_page_info(agent, &loaded.header, &tree, &jsonl, &stem), output, &stem)
}

/// A session file's lines as a page, written nowhere (`serve --engine temporal` renders its store's copy);
/// `stem` names the page's download of the lines.
pub fn session_file_page(agent: &str, jsonl: &[u8], stem: &str) -> Result<String, String> {
    let text = String::from_utf8_lossy(jsonl);
    let loaded = parse_session_text(&text).ok_or("not a session file: its first line is not a session header")?;
    let tree = SessionTree::from_entries(loaded.entries);
    Ok(session_html(&stored_page_info(agent, &loaded.header, &tree, jsonl, stem)))
}

/// What a page of a stored file shows (no system prompt or tools: no session runs).
fn stored_page_info<'a>(
    agent: &'a str,
    header: &'a SessionHeader,
    tree: &'a SessionTree,
    jsonl: &'a [u8],
    stem: &str,
) -> ExportInfo<'a> {
    ExportInfo {
        agent,
        header,
        entries: tree.entries(),
        leaf_id: tree.leaf_id(),
        session_name: tree.session_name(),
        jsonl,
        jsonl_name: format!("{stem}.jsonl"),
        system_prompt: None,
        tools: Vec::new(),
    }
}

/// Writes the page to `output` (as given, `~` expanded) or to `<agent>-session-<stem>.html` in the working
/// directory; returns the path as the user should see it.
pub fn write_session_page(info: &ExportInfo<'_>, output: Option<&str>, stem: &str) -> Result<String, String> {
    let (shown, target) = match output {
        Some(path) => (path.to_owned(), crate::cli::expand_home(Path::new(path))),
        None => {
            let name = format!("{}-session-{stem}.html", info.agent);
            (name.clone(), PathBuf::from(name))
        }
    };
    write_atomic_blocking(&target, session_html(info).as_bytes())
        .map_err(|error| format!("cannot write {}: {error}", target.display()))?;
    Ok(shown)
}

#[cfg(test)]
mod tests;
