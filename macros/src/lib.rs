//! pi-macros: `#[agent("agent.yaml")]` on a struct turns an agent YAML file into the struct's
//! `definition()` and `run()`, a typed argument struct per `handler: rust` tool, and the trait
//! `<Struct>Tools` (one async method per such tool) the struct must implement.
//!
//! ```ignore
//! use pi_macros::agent;
//! use pi_runtime::protocol::AgentToolResult;
//! use pi_runtime::tools::{ToolContext, ToolError};
//!
//! #[agent("notes.yaml")]
//! struct Notes;
//!
//! impl NotesTools for Notes {
//!     async fn add_note(&self, args: AddNoteArgs, _ctx: ToolContext) -> Result<AgentToolResult, ToolError> {
//!         Ok(AgentToolResult::text(format!("noted: {}", args.text)))
//!     }
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     Notes.run()
//! }
//! ```
//!
//! The path is relative to the crate's `Cargo.toml` directory. The YAML and every file it references are
//! included with `include_bytes!`, so editing them rebuilds the crate. The runtime is found under whatever
//! name the crate's `Cargo.toml` gives `pi-runtime`. This crate is a thin layer over pi-codegen: file
//! I/O, spans and crate lookup live here; everything generated comes from `pi_codegen::lower`.

mod expand;

use proc_macro::TokenStream;

/// Generates an agent from YAML on a struct; see the crate documentation.
#[proc_macro_attribute]
pub fn agent(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand::expand(attr.into(), item.into()).into()
}
