//! The generated binary's command line: pi's flags, print and json modes, models.json, exit codes.
//! Generated `main` functions call [`run`] with their [`AgentDefinition`].

mod args;
mod error;
mod model_select;
mod models_json;
mod modes;
mod paths;
mod setup;

use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;

pub use args::{CliArgs, OutputMode, parse_args};
pub use error::CliError;
pub use model_select::{ModelChoice, select_model};
pub use models_json::{CustomModels, load_models_json, parse_models_json, resolve_config_value};
pub use paths::{agent_dir, expand_home, project_dir};

use crate::AgentDefinition;

/// Runs the agent's command line with the process arguments; returns the exit code.
pub fn run(definition: AgentDefinition) -> ExitCode {
    let args = match parse_args(&definition, std::env::args().skip(1)) {
        Ok(args) => args,
        Err(error) => {
            let _ = error.print();
            return ExitCode::from(if error.use_stderr() { 1 } else { 0 });
        }
    };
    if args.version {
        return print_stdout(&format!("{}\n", definition.version));
    }
    if args.help {
        return print_stdout(&args::help_text(&definition));
    }
    match run_agent(&definition, args) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("Error: {error}");
            ExitCode::from(1)
        }
    }
}

fn print_stdout(text: &str) -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::from(1),
    }
}

fn run_agent(definition: &AgentDefinition, mut args: CliArgs) -> Result<ExitCode, CliError> {
    if let Some(piped) = read_piped_stdin()? {
        args.print = true;
        args.messages.insert(0, piped);
    }
    let mode = match args.mode {
        Some(OutputMode::Json) => OutputMode::Json,
        Some(OutputMode::Rpc) => return Err(CliError::RpcUnavailable),
        Some(OutputMode::Text) | None if args.print => OutputMode::Text,
        _ => return Err(CliError::InteractiveUnavailable),
    };
    if args.messages.is_empty() {
        return Err(CliError::NoPrompt);
    }
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(CliError::Runtime)?;
    runtime.block_on(async {
        let prepared = setup::prepare(definition, &args)?;
        modes::run_mode(mode, prepared, args.messages).await
    })
}

/// Piped stdin (not a terminal) becomes the first message when it holds any text.
fn read_piped_stdin() -> Result<Option<String>, CliError> {
    let mut stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Ok(None);
    }
    let mut text = String::new();
    stdin.read_to_string(&mut text).map_err(|source| CliError::Read { path: "<stdin>".into(), source })?;
    Ok((!text.trim().is_empty()).then_some(text))
}
