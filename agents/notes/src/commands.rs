//! The notes agent's commands, from a Rust extension: `/clear-notes` removes every note after the person
//! confirms it in a dialog (without a person to ask, as in print mode, nothing is removed) and says so in the
//! footer's status; `/review-notes`
//! starts a new session whose first prompt asks the model to review the notes.

use pi_runtime::extension::{Extension, ExtensionContext, ExtensionError, ExtensionRegistrar, NotifyLevel};

use crate::store::NoteFile;

/// The extension that registers the command.
pub struct NotesCommands {
    file: NoteFile,
}

impl NotesCommands {
    pub fn new(file: NoteFile) -> Self {
        Self { file }
    }
}

impl Extension for NotesCommands {
    fn name(&self) -> &str {
        "notes/commands"
    }

    fn register(&self, registrar: &mut ExtensionRegistrar) {
        let file = self.file.clone();
        registrar.command("clear-notes", "Remove every note (asks first)", move |_args, ctx| {
            let file = file.clone();
            async move { clear(&file, &ctx).await }
        });
        let file = self.file.clone();
        registrar.command("review-notes", "Start a new session that reviews the notes", move |_args, ctx| {
            let file = file.clone();
            async move { review(&file, &ctx).await }
        });
    }
}

async fn review(file: &NoteFile, ctx: &ExtensionContext) -> Result<(), ExtensionError> {
    let notes = file.notes().map_err(|error| ExtensionError::new(error.to_string()))?;
    if notes.is_empty() {
        ctx.notify("There are no notes to review.", NotifyLevel::Info);
        return Ok(());
    }
    if !ctx.new_session().await.map_err(ExtensionError::new)? {
        return Ok(());
    }
    let list: Vec<String> =
        notes.iter().enumerate().map(|(index, note)| format!("{}. {}", index + 1, note.display())).collect();
    let prompt = format!(
        "Review my notes: which belong together, which are stale, and what should I do first?\n\n{}",
        list.join("\n")
    );
    ctx.send_user_message(prompt, None);
    Ok(())
}

async fn clear(file: &NoteFile, ctx: &ExtensionContext) -> Result<(), ExtensionError> {
    let count = file.notes().map_err(|error| ExtensionError::new(error.to_string()))?.len();
    if count == 0 {
        ctx.notify("There are no notes to remove.", NotifyLevel::Info);
        return Ok(());
    }
    let question = format!("Remove all {count} notes from {}?", file.path().display());
    if !ctx.confirm("Clear notes", &question).await {
        ctx.notify("The notes were kept.", NotifyLevel::Info);
        return Ok(());
    }
    let removed = file.clear().map_err(|error| ExtensionError::new(error.to_string()))?;
    ctx.notify(&format!("Removed {removed} notes."), NotifyLevel::Warning);
    ctx.set_status("notes", Some("notes: none"));
    Ok(())
}
