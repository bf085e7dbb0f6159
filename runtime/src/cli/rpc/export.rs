//! RPC `export_html` and `/export`: the running session written as an HTML page, by default
//! `<agent>-session-<file name>.html` in the working directory (pi's `pi-session-….html` for the pi agent),
//! with every branch of its tree, the system prompt and the tools in use.

use std::path::Path;

use crate::agent_session::AgentSession;
use crate::export_html::{ExportInfo, write_session_page};
use crate::protocol::AgentMessage;
use crate::session::session_text;

/// Writes the page; returns the path as the client should see it (the default name relative to the
/// working directory, a given path as given).
pub fn export_session(session: &AgentSession, agent_name: &str, output_path: Option<&str>) -> Result<String, String> {
    let messages = session.agent().messages();
    if !messages.iter().any(|message| matches!(message, AgentMessage::User(_) | AgentMessage::Assistant(_))) {
        return Err("nothing to export yet: the session has no messages".to_owned());
    }
    let state = session.agent().state();
    let tools: Vec<(String, String)> =
        state.tools.iter().map(|tool| (tool.name().to_owned(), tool.description().to_owned())).collect();
    let name = session.session_name();
    let manager = session.manager();
    let stem = manager
        .path()
        .and_then(Path::file_stem)
        .map_or_else(|| manager.session_id().to_owned(), |stem| stem.to_string_lossy().into_owned());
    // The file as it is on disk; a session not saved (or not yet written) as the lines it would have.
    let jsonl = manager
        .path()
        .and_then(|path| std::fs::read(path).ok())
        .unwrap_or_else(|| session_text(manager.header(), manager.entries()).unwrap_or_default().into_bytes());
    let info = ExportInfo {
        agent: agent_name,
        header: manager.header(),
        entries: manager.entries(),
        leaf_id: manager.tree().leaf_id(),
        session_name: name.as_deref(),
        jsonl: &jsonl,
        jsonl_name: format!("{stem}.jsonl"),
        system_prompt: Some(&state.system_prompt).filter(|prompt| !prompt.is_empty()).map(String::as_str),
        tools,
    };
    write_session_page(&info, output_path, &stem)
}
