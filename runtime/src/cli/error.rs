//! Errors the CLI reports on stderr before exiting with code 1.

use std::path::PathBuf;

/// Anything that stops a run before or after the agent works.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    #[error("{0}")]
    Usage(String),
    #[error("{}: {message}", path.display())]
    ModelsJson { path: PathBuf, message: String },
    #[error("no models are configured; add a provider with models to {}", path.display())]
    NoModels { path: PathBuf },
    #[error("model \"{pattern}\" not found{}; available: {available}", provider.as_deref().map(|p| format!(" for provider \"{p}\"")).unwrap_or_default())]
    ModelNotFound { pattern: String, provider: Option<String>, available: String },
    #[error("provider \"{0}\" has no models; check the provider name or {1}")]
    ProviderNotFound(String, String),
    #[error("no API key for provider \"{0}\"; pass --api-key or set \"apiKey\" in models.json")]
    NoApiKey(String),
    #[error("interactive mode is not available yet; pass -p (print) or --mode json")]
    InteractiveUnavailable,
    #[error("--mode rpc is not available yet; use -p or --mode json")]
    RpcUnavailable,
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{0}")]
    Agent(String),
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
}
