//! The system prompt: identity, tools, guidelines, context, date and working directory.

/// The identity line of pi's default system prompt (our wording).
pub const DEFAULT_IDENTITY: &str = "You are an expert coding assistant working inside pi, a coding agent harness. You help users by reading files, running commands, editing code, and writing new files.";
