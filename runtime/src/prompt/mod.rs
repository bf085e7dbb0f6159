//! The system prompt: identity, tools, guidelines, context, date and working directory.

mod context_files;
mod system_prompt;

pub use context_files::{CONTEXT_FILE_NAMES, load_context_files};

pub use system_prompt::{ContextFile, PromptTool, SystemPromptOptions, build_system_prompt};

/// The identity line of the default system prompt (our wording; agents override it in YAML).
pub const DEFAULT_IDENTITY: &str = "You are an expert coding assistant working inside pi, a coding agent harness. You help users by reading files, running commands, editing code, and writing new files.";
