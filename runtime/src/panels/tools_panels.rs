//! The tools that open and close panels: `open` (a file, or a skill's file, as a panel), `close` (any panel
//! by id), `watch` (a command such as `git log` or `gh pr list` whose output is a panel refreshed every
//! `git_refresh_secs`) and `console` (a background process, e.g. a dev server, whose live output is a panel).

use serde_json::{Value, json};

use super::BuiltinPanel;
use super::engine::PanelsCore;
use super::live_sources::ConsoleSlot;
use super::render::LibraryKind;
use super::sources::ConsoleProcess;
use super::state::{OpenFile, WatchedCommand};
use super::tools::{PanelToolSpec, ids_field, text_field};
use crate::tools::ToolError;

/// `open {path}`: `Opened '<path>' as P<n>`.
fn open_action(core: &mut PanelsCore, args: &Value, now: i64) -> Result<String, ToolError> {
    let path = text_field(args, "path").map(str::trim).filter(|path| !path.is_empty());
    let path = path.ok_or_else(|| ToolError::new("open needs a path"))?;
    if let Some(id) = core.sources.file_panel_for(&core.state, path) {
        return Ok(format!("'{path}' is already open as {id}"));
    }
    let skill = core
        .library
        .iter()
        .find(|entry| entry.kind == LibraryKind::Skill && entry.path.as_deref() == Some(path))
        .map(|entry| entry.name.clone());
    let id = core.state.allocate_panel();
    if let Err(error) = core.sources.open(&id, path) {
        core.state.next_panel -= 1;
        return Err(ToolError::new(error));
    }
    core.state.open_files.push(OpenFile { panel_id: id.clone(), path: path.to_owned(), skill });
    core.logs.log(now, format!("Opened {path} as {id}."));
    core.dirty = true;
    Ok(format!("Opened '{path}' as {id}"))
}

/// `close {ids}`: any panel; a console's process is stopped, a closed history chunk is no longer sent.
fn close_action(core: &mut PanelsCore, args: &Value, now: i64) -> Result<String, ToolError> {
    let ids = ids_field(args, "ids", "P");
    if ids.is_empty() {
        return Err(ToolError::new("close needs the ids of the panels to close, e.g. [\"P11\"]"));
    }
    let command_ids = core.command_panel_ids();
    let state = &core.state;
    let closable = |id: &String| {
        state.open_files.iter().any(|file| &file.panel_id == id)
            || state.watched.iter().any(|watch| &watch.panel_id == id)
            || state.detached.iter().any(|chunk| &chunk.panel_id == id)
            || core.sources.consoles.iter().any(|console| &console.panel_id == id)
            || BuiltinPanel::ALL.iter().any(|panel| panel.id() == id)
            || command_ids.contains(id)
    };
    let unknown: Vec<String> = ids.iter().filter(|id| !closable(id)).cloned().collect();
    if !unknown.is_empty() {
        return Err(ToolError::new(format!("no open panel {}; nothing was closed", unknown.join(", "))));
    }
    for id in &ids {
        let state = &mut core.state;
        let before = state.open_files.len() + state.watched.len();
        state.open_files.retain(|file| &file.panel_id != id);
        state.watched.retain(|watch| &watch.panel_id != id);
        let stopped = core.sources.stop_console(id);
        if before == state.open_files.len() + state.watched.len() && !stopped && !state.closed.contains(id) {
            state.closed.push(id.clone());
        }
        core.logs.log(now, format!("Closed {id}."));
    }
    core.dirty = true;
    Ok(format!("Closed {}.", ids.join(", ")))
}

/// `watch {command, refresh_secs?}`: the command's output as a panel.
fn watch_action(core: &mut PanelsCore, args: &Value, now: i64) -> Result<String, ToolError> {
    let command = text_field(args, "command").map(str::trim).filter(|command| !command.is_empty());
    let command = command.ok_or_else(|| ToolError::new("watch needs a command"))?;
    let refresh_secs = args
        .get("refresh_secs")
        .and_then(Value::as_u64)
        .filter(|secs| *secs > 0)
        .unwrap_or(core.definition.git_refresh_secs);
    let id = core.state.allocate_panel();
    core.state.watched.push(WatchedCommand { panel_id: id.clone(), command: command.to_owned(), refresh_secs });
    core.logs.log(now, format!("Watching `{command}` as {id}."));
    core.dirty = true;
    Ok(format!(
        "Watching `{command}` as {id}, refreshed every {refresh_secs} s; its output appears from the next request"
    ))
}

/// `console {action: start, command, name?}` or `{action: stop, id}`.
fn console_action(core: &mut PanelsCore, args: &Value, now: i64) -> Result<String, ToolError> {
    match text_field(args, "action") {
        Some("start") => {
            let command = text_field(args, "command").map(str::trim).filter(|command| !command.is_empty());
            let command = command.ok_or_else(|| ToolError::new("console start needs a command"))?;
            let name = text_field(args, "name").map(str::trim).filter(|name| !name.is_empty()).unwrap_or(command);
            let process = ConsoleProcess::start(name, command, &core.sources.env)
                .map_err(|error| ToolError::new(error.to_string()))?;
            let id = core.state.allocate_panel();
            core.logs.log(now, format!("Started console {name} as {id}."));
            let pid = process.pid();
            core.sources.consoles.push(ConsoleSlot {
                panel_id: id.clone(),
                name: name.to_owned(),
                command: command.to_owned(),
                process,
                exit_noted: false,
                exit_watched: false,
            });
            Ok(format!(
                "Started '{name}' as {id} (pid {pid}); its output is in the panel, and the Spine tells when it exits"
            ))
        }
        Some("stop") => {
            let id = text_field(args, "id").ok_or_else(|| ToolError::new("console stop needs the panel id"))?;
            if !core.sources.stop_console(id) {
                return Err(ToolError::new(format!("no console {id}")));
            }
            // The model stopped it itself: a log line, not a notification (and other pending ones stay new).
            core.logs.log(now, format!("Stopped console {id}."));
            Ok(format!("Stopped {id}."))
        }
        _ => Err(ToolError::new("console needs an action: start or stop")),
    }
}

pub(super) fn open_tool() -> PanelToolSpec {
    PanelToolSpec {
        name: "open",
        label: "Open",
        description: "Open a file as a panel: its current content is shown in every request until it is closed, \
                      and follows changes on disk. Open a skill's file (listed in the Library panel) to read the \
                      skill.",
        snippet: "Open a file as a panel that stays up to date",
        parameters: json!({
            "type": "object",
            "properties": { "path": { "type": "string", "description": "Path of the file (relative or absolute)" } },
            "required": ["path"]
        }),
        action: open_action,
    }
}

pub(super) fn close_tool() -> PanelToolSpec {
    PanelToolSpec {
        name: "close",
        label: "Close",
        description: "Close panels by id (files, watched commands, consoles (their process is stopped), history \
                      chunks and built-in panels) to free context.",
        snippet: "Close panels by id",
        parameters: json!({
            "type": "object",
            "properties": { "ids": { "type": "array", "items": { "type": "string" }, "description": "e.g. [\"P11\"]" } },
            "required": ["ids"]
        }),
        action: close_action,
    }
}

pub(super) fn watch_tool() -> PanelToolSpec {
    PanelToolSpec {
        name: "watch",
        label: "Watch",
        description: "Show a read-only command's output as a panel, run again when it is older than refresh_secs \
                      (default: every 120 s), e.g. `git log --oneline -10` or `gh pr list`. Close it when done.",
        snippet: "Show a command's output (git, gh, ...) as a refreshed panel",
        parameters: json!({
            "type": "object",
            "properties": {
                "command": { "type": "string" },
                "refresh_secs": { "type": "integer", "minimum": 1 }
            },
            "required": ["command"]
        }),
        action: watch_action,
    }
}

pub(super) fn console_tool() -> PanelToolSpec {
    PanelToolSpec {
        name: "console",
        label: "Console",
        description: "Start a background process (a dev server, a watcher, a long build) whose live output is shown \
                      as a panel, or stop one. The Spine panel notes when a process exits, and the agent is woken \
                      for it.",
        snippet: "Start or stop a background process shown as a panel",
        parameters: json!({
            "type": "object",
            "properties": {
                "action": { "type": "string", "enum": ["start", "stop"] },
                "command": { "type": "string", "description": "For start: the shell command" },
                "name": { "type": "string", "description": "For start: a short name" },
                "id": { "type": "string", "description": "For stop: the console's panel id" }
            },
            "required": ["action"]
        }),
        action: console_action,
    }
}
