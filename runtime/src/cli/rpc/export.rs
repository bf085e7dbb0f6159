//! RPC `export_html`: the session written as an HTML page, by default `<agent>-session-<file name>.html` in
//! the working directory (pi's `pi-session-….html` for the pi agent).

use std::path::Path;

use crate::agent_session::AgentSession;
use crate::cli::export_html::{ExportInfo, write_session_page};
use crate::protocol::AgentMessage;

/// Writes the page; returns the path as the client should see it (the default name relative to the
/// working directory, a given path as given).
pub fn export_session(session: &AgentSession, agent_name: &str, output_path: Option<&str>) -> Result<String, String> {
    let messages = session.agent().messages();
    if !messages.iter().any(|message| matches!(message, AgentMessage::User(_) | AgentMessage::Assistant(_))) {
        return Err("nothing to export yet: the session has no messages".to_owned());
    }
    let (header, file_stem) = {
        let manager = session.manager();
        let stem = manager
            .path()
            .and_then(Path::file_stem)
            .map_or_else(|| manager.session_id().to_owned(), |stem| stem.to_string_lossy().into_owned());
        (manager.header().clone(), stem)
    };
    let name = session.session_name();
    let model = session.agent().state().model.map(|model| format!("{}/{}", model.provider, model.id));
    let info = ExportInfo { agent: agent_name, header: &header, session_name: name.as_deref(), model };
    write_session_page(&info, &messages, output_path, &file_stem)
}
