//! notes: an agent that keeps a project's notes in NOTES.md. The YAML (notes.yaml) describes the agent and
//! its tools; the tools themselves are the methods below, and `#[agent]` makes leaving one out a compile
//! error.

mod commands;
mod store;

use std::process::ExitCode;
use std::sync::Mutex;

use pi_macros::agent;
use pi_runtime::extension::Extensions;
use pi_runtime::protocol::AgentToolResult;
use pi_runtime::tools::{ToolContext, ToolError};

use store::{Note, NoteFile};

/// The agent: the notes file of the directory it was started in.
#[agent("notes.yaml")]
struct Notes {
    /// Tool calls may run concurrently; the lock keeps each read-modify-write of the file whole.
    file: Mutex<NoteFile>,
}

impl Notes {
    fn with_file<T>(&self, work: impl FnOnce(&NoteFile) -> std::io::Result<T>) -> Result<T, ToolError> {
        let file = self.file.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        work(&file).map_err(|error| ToolError::new(format!("cannot use {}: {error}", file.path().display())))
    }
}

impl NotesTools for Notes {
    async fn add_note(&self, args: AddNoteArgs, _ctx: ToolContext) -> Result<AgentToolResult, ToolError> {
        let tags = args.tags.unwrap_or_default();
        let note =
            Note::new(&args.text, &tags).ok_or_else(|| ToolError::new("the note is empty; give it some text"))?;
        let number = self.with_file(|file| file.add(&note))?;
        Ok(AgentToolResult::text(format!("Saved note {number}: {}", note.display())))
    }

    async fn list_notes(&self, args: ListNotesArgs, _ctx: ToolContext) -> Result<AgentToolResult, ToolError> {
        let notes = self.with_file(NoteFile::notes)?;
        if notes.is_empty() {
            return Ok(AgentToolResult::text("No notes yet."));
        }
        let lines: Vec<String> = notes
            .iter()
            .enumerate()
            .filter(|(_, note)| note.matches(args.tag.as_deref(), args.contains.as_deref()))
            .map(|(index, note)| format!("{}. {}", index + 1, note.display()))
            .collect();
        if lines.is_empty() {
            return Ok(AgentToolResult::text(format!("None of the {} notes match.", notes.len())));
        }
        Ok(AgentToolResult::text(lines.join("\n")))
    }

    async fn remove_note(&self, args: RemoveNoteArgs, _ctx: ToolContext) -> Result<AgentToolResult, ToolError> {
        let number = usize::try_from(args.number).unwrap_or(0);
        match self.with_file(|file| file.remove(number))? {
            Some(note) => Ok(AgentToolResult::text(format!("Removed note {number}: {}", note.display()))),
            None => Err(ToolError::new(format!("there is no note {}; list_notes shows the numbers", args.number))),
        }
    }
}

fn main() -> ExitCode {
    match std::env::current_dir() {
        Ok(cwd) => {
            let path = cwd.join("NOTES.md");
            let extensions = Extensions::new().with(commands::NotesCommands::new(NoteFile::new(&path)));
            Notes { file: Mutex::new(NoteFile::new(path)) }.run_with_extensions(extensions)
        }
        Err(error) => {
            eprintln!("Error: cannot read the current directory: {error}");
            ExitCode::from(1)
        }
    }
}
