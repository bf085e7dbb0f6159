//! The command line of an agent built with `--features temporal`: the subcommands scale-out adds
//! (`store`, `worker`, `submit`, `history`, and `serve --engine temporal`), in front of the agent's usual command line, which gets every
//! other invocation unchanged.

mod history_command;
mod serve_engine;
mod store_command;
mod submit_command;

use std::fmt::Display;
use std::future::Future;
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
        Some("history") => run_subcommand(&definition.name, "history", &raw[1..], history_command::history),
        Some("submit") => {
            let name = definition.name.clone();
            run_subcommand(&definition.name, "submit", &raw[1..], |args| submit_command::submit(name, args))
        }
        Some("serve") if serve_engine::wants_temporal(&raw[1..]) => {
            serve_engine::run_serve(definition, &raw[1..], rust_tools, extensions)
        }
        Some("worker") => {
            let name = definition.name.clone();
            run_subcommand(&name, "worker", &raw[1..], |args| {
                crate::worker::run_worker(definition, rust_tools, extensions, args)
            })
        }
        _ => pi_runtime::cli::run_with_extensions(definition, rust_tools, extensions),
    }
}

/// Parses `raw` (the words after the subcommand `name`) as `A`, named `<agent> <name>` in its messages, and
/// runs `work` with it on a multi-threaded runtime. A flag error prints clap's message (exit 2, or 0 for
/// `--help`); a failure prints `Error: ...` (exit 1).
pub(crate) fn run_subcommand<A, F, E>(agent: &str, name: &str, raw: &[String], work: impl FnOnce(A) -> F) -> ExitCode
where
    A: clap::Parser,
    F: Future<Output = Result<(), E>>,
    E: Display,
{
    let command = A::command().bin_name(format!("{agent} {name}"));
    let parsed = command.try_get_matches_from(raw).and_then(|matches| A::from_arg_matches(&matches));
    let args = match parsed {
        Ok(args) => args,
        Err(error) => {
            let _ = error.print();
            return ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(2));
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("Error: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(work(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("Error: {error}");
            ExitCode::FAILURE
        }
    }
}
