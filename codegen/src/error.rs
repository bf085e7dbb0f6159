//! Errors of the generator, each located as `file:line:column: message`.

use std::fmt;
use std::path::{Path, PathBuf};

/// One problem at one place in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    pub path: PathBuf,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl Located {
    pub fn new(path: &Path, line: usize, column: usize, message: impl Into<String>) -> Self {
        Self { path: path.to_path_buf(), line, column, message: message.into() }
    }
}

impl fmt::Display for Located {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: {}", self.path.display(), self.line, self.column, self.message)
    }
}

/// Why a spec could not be loaded or an agent not built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpecError {
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{}", join_lines(.0))]
    Invalid(Vec<Located>),
    #[error("cannot write {}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    #[error("generated code does not parse: {0}")]
    Generated(String),
    #[error("template {name}: {message}")]
    Template { name: String, message: String },
    #[error(
        "implemented in Rust (`handler: rust`): {tools}; pi-gen build cannot supply that code: build this agent \
         as a crate with #[agent(\"...\")] from pi-macros (see agents/notes), or give the tools a `command`"
    )]
    NeedsMacro { tools: String },
    #[error("{0}")]
    Scaffold(String),
    #[error("cannot run cargo: {0}")]
    CargoSpawn(std::io::Error),
    #[error("cargo build failed ({status}); see cargo's messages above")]
    CargoFailed { status: String },
}

fn join_lines(errors: &[Located]) -> String {
    errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")
}
