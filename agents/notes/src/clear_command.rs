//! `/clear-notes`: removes every note after the person confirms it in a dialog (a command of a Rust
//! extension; without a person to ask, as in print mode, nothing is removed).

use pi_runtime::extension::{Extension, ExtensionContext, ExtensionError, ExtensionRegistrar, NotifyLevel};

use crate::store::NoteFile;

/// The extension that registers the command.
pub struct ClearNotes {
    file: NoteFile,
}

impl ClearNotes {
    pub fn new(file: NoteFile) -> Self {
        Self { file }
    }
}

impl Extension for ClearNotes {
    fn name(&self) -> &str {
        "notes/clear-notes"
    }

    fn register(&self, registrar: &mut ExtensionRegistrar) {
        let file = self.file.clone();
        registrar.command("clear-notes", "Remove every note (asks first)", move |_args, ctx| {
            let file = file.clone();
            async move { clear(&file, &ctx).await }
        });
    }
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
    Ok(())
}
