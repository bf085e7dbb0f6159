//! Errors the CLI reports on stderr before exiting with code 1. None of them ever carries a key.

use std::path::PathBuf;

/// Anything that stops a run before or after the agent works.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    #[error("{0}")]
    Usage(String),
    #[error("{}: {message}", path.display())]
    ModelsJson { path: PathBuf, message: String },
    #[error("the agent's built-in providers (models.json text from its YAML) are invalid: {0}")]
    AgentModelsJson(String),
    #[error("no models are known; define a provider with models in models.json")]
    NoModels,
    #[error("no model has an API key configured; set a provider's key variable (e.g. ANTHROPIC_API_KEY or OPENAI_API_KEY), add a key to {}, pass --model with --api-key, or define a provider in {}", agent_dir.join("auth.json").display(), agent_dir.join("models.json").display())]
    NoModelAvailable { agent_dir: PathBuf },
    #[error("unknown provider \"{0}\"; run with --list-models to see the providers that have a key")]
    UnknownProvider(String),
    #[error("model \"{pattern}\" not found{}; run with --list-models to see the available models", close_matches_text(.close_matches))]
    ModelNotFound { pattern: String, close_matches: Vec<String> },
    #[error("no API key for provider \"{provider}\"; pass --api-key{}, add it to {}, or set \"apiKey\" for the provider in models.json", env_vars_text(.env_vars), auth_path.display())]
    NoApiKey { provider: String, env_vars: Vec<String>, auth_path: PathBuf },
    #[error("provider \"{0}\" sets \"authHeader\" in models.json but no API key is configured for it")]
    AuthHeaderWithoutKey(String),
    #[error("--api-key needs a model: name one with --model (optionally with --provider)")]
    ApiKeyWithoutModel,
    #[error(
        "cannot get the API key for provider \"{provider}\": the command given in {source_name} failed or printed nothing"
    )]
    KeyCommandFailed { provider: String, source_name: String },
    #[error(
        "cannot resolve header \"{header}\" for provider \"{provider}\": its command in models.json failed or printed nothing"
    )]
    HeaderCommandFailed { provider: String, header: String },
    /// A `!command` (`what` names the setting it gives, e.g. `apiKey of provider "x" in models.json`) ran
    /// past its limit; its process group was killed.
    #[error("`!{command}` ({what}) did not finish within {seconds} s; it was stopped")]
    CommandTimedOut { command: String, what: String, seconds: String },
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{0}")]
    Agent(String),
    /// A command of the YAML's `commands:` failed or was invoked without a required argument.
    #[error("{0}")]
    Command(String),
    #[error("{0}")]
    Mcp(String),
    #[error("the agent's hooks cannot start: {0}")]
    Hooks(String),
    #[error("the permissions cannot be applied: {0}")]
    Permissions(String),
    #[error("the output schema is not a usable JSON Schema: {0}")]
    OutputSchema(String),
    /// Print mode's final answer still did not match the output schema after the correction.
    #[error("the final answer does not match the output schema: {0}")]
    OutputMismatch(String),
    #[error("{0}")]
    Session(#[from] crate::session::SessionError),
    #[error("no session found matching '{0}'; sessions of this directory are listed by -r, or pass a file path")]
    SessionNotFound(String),
    #[error("session '{id}' belongs to another directory ({cwd}); run from there, or pass its file path: {}", path.display())]
    SessionInOtherProject { id: String, cwd: String, path: PathBuf },
    #[error("no session chosen")]
    NoSessionChosen,
    #[error("the agent declares the Rust tool \"{0}\" but no implementation of it was given to run_with_tools")]
    RustToolMissing(String),
    #[error(
        "a Rust tool \"{0}\" was given to run_with_tools but the agent's YAML does not declare it under tools.custom"
    )]
    RustToolUndeclared(String),
    #[error("the tool \"{0}\" is defined twice among the agent's custom tools")]
    DuplicateCustomTool(String),
    #[error("cannot set up the agent's custom tools: {message}")]
    CustomTool { name: String, message: String },
    #[error("{0}")]
    Record(#[from] crate::ai::record::RecordError),
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
}

fn close_matches_text(close_matches: &[String]) -> String {
    if close_matches.is_empty() { String::new() } else { format!(" (close matches: {})", close_matches.join(", ")) }
}

fn env_vars_text(env_vars: &[String]) -> String {
    match env_vars {
        [] => String::new(),
        [one] => format!(", set {one}"),
        many => format!(", set one of {}", many.join(", ")),
    }
}
