//! RPC `export_html`: the session written as an HTML page, by default `<agent>-session-<file name>.html` in
//! the working directory (pi's `pi-session-….html` for the pi agent).

use std::path::{Path, PathBuf};

use crate::agent_session::AgentSession;
use crate::cli::expand_home;
use crate::cli::export_html::{ExportInfo, session_html};
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
    let (shown, target) = match output_path {
        Some(path) => (path.to_owned(), expand_home(Path::new(path))),
        None => {
            let name = format!("{agent_name}-session-{file_stem}.html");
            (name.clone(), PathBuf::from(name))
        }
    };
    let name = session.session_name();
    let model = session.agent().state().model.map(|model| format!("{}/{}", model.provider, model.id));
    let info = ExportInfo { agent: agent_name, header: &header, session_name: name.as_deref(), model };
    write_atomically(&target, session_html(&info, &messages).as_bytes())
        .map_err(|error| format!("cannot write {}: {error}", target.display()))?;
    Ok(shown)
}

/// Writes beside the target and renames into place, so an existing file is never left half-written.
fn write_atomically(target: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let staging = target.with_extension(format!("html.partial-{}", std::process::id()));
    std::fs::write(&staging, bytes)?;
    std::fs::rename(&staging, target).inspect_err(|_| {
        let _ = std::fs::remove_file(&staging);
    })
}
