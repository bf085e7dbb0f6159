//! The command line of an agent built with `--features temporal`: the subcommands scale-out adds
//! (`store`, `worker`, `submit`, `history`), in front of the agent's usual command line, which gets every other invocation unchanged.

mod history_command;
mod store_command;
mod submit_command;

use std::process::ExitCode;
use std::sync::Arc;

use pi_runtime::AgentDefinition;
use pi_runtime::extension::Extensions;
use pi_runtime::tools::AgentTool;

/// Runs the agent's command line with the process arguments; returns the exit code.
pub fn run(definition: AgentDefinition) -> ExitCode {
    run_with_extensions(definition, Vec::new(), Extensions::new())
}

/// [`run`] for an agent with tools and extensions written in Rust (see
/// [`pi_runtime::cli::run_with_extensions`]).
pub fn run_with_extensions(
    definition: AgentDefinition,
    rust_tools: Vec<Arc<dyn AgentTool>>,
    extensions: Extensions,
) -> ExitCode {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    match raw.first().map(String::as_str) {
        Some("store") => store_command::run_store_command(&definition, &raw[1..]),
        Some("history") => history_command::run_history_command(&raw[1..]),
        Some("submit") => submit_command::run_submit_command(&raw[1..]),
        Some("worker") => crate::worker::run_worker_command(definition, rust_tools, extensions, &raw[1..]),
        _ => pi_runtime::cli::run_with_extensions(definition, rust_tools, extensions),
    }
}
