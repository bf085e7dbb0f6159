//! What extensions register when the runner is built: tools (with their prompt snippet and guidelines)
//! and slash commands.

use std::future::Future;
use std::sync::Arc;

use super::HookResult;
use super::context::{CommandHandler, ExtensionContext};
use crate::tools::AgentTool;

/// A slash command an extension registered.
#[derive(Clone)]
pub struct RegisteredCommand {
    /// Without the slash.
    pub name: String,
    pub description: String,
    pub handler: CommandHandler,
    /// The extension that registered it.
    pub extension: String,
}

impl std::fmt::Debug for RegisteredCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredCommand")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("extension", &self.extension)
            .finish_non_exhaustive()
    }
}

/// Collects one extension's registrations.
#[derive(Default)]
pub struct ExtensionRegistrar {
    pub(crate) extension: String,
    pub(crate) tools: Vec<Arc<dyn AgentTool>>,
    pub(crate) commands: Vec<RegisteredCommand>,
}

impl ExtensionRegistrar {
    pub(crate) fn for_extension(name: &str) -> Self {
        Self { extension: name.to_owned(), ..Self::default() }
    }

    /// A tool the model may call. Its `prompt_snippet` and `prompt_guidelines` reach the system prompt
    /// while it is active.
    pub fn tool(&mut self, tool: Arc<dyn AgentTool>) {
        self.tools.push(tool);
    }

    /// A slash command: `/name args` runs `handler` at once (even while the agent is streaming), and the
    /// text never reaches the model.
    pub fn command<F, Fut>(&mut self, name: &str, description: &str, handler: F)
    where
        F: Fn(String, ExtensionContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = HookResult<()>> + Send + 'static,
    {
        let handler: CommandHandler = Arc::new(move |args, ctx| Box::pin(handler(args, ctx)));
        self.commands.push(RegisteredCommand {
            name: name.trim_start_matches('/').to_owned(),
            description: description.to_owned(),
            handler,
            extension: self.extension.clone(),
        });
    }
}
