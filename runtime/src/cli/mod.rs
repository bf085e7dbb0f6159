//! The generated binary's command line: pi's flags, print, json and rpc modes, models.json, exit codes.
//! Generated `main` functions call [`run`] with their [`AgentDefinition`] (or [`run_with_tools`] when the
//! agent has tools implemented in Rust).

mod agent_models;
mod args;
mod auth;
mod config_value;
mod custom_tools;
mod embedded;
mod error;
mod fallbacks;
mod file_lock;
mod fork_commands;
mod interactive;
pub(crate) mod list_models;
mod login;
pub mod mcp;
mod model_catalog;
mod model_controls;
mod model_match;
mod model_scope;
mod model_select;
mod models_json;
mod modes;
mod oauth_keys;
pub(crate) mod paths;
mod pending_queue;
mod permissions;
mod project_trust;
mod registry;
mod reload;
mod resolve;
mod resources;
pub mod rpc;
mod run_defaults;
pub mod serve;
mod session_select;
mod settings;
mod settings_store;
mod settings_types;
mod setup;
mod signals;
mod step_session;
pub mod subagents;
mod text_match;
pub mod yaml_commands;

use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;
use std::sync::Arc;

pub use agent_models::{load_agent_models, merge_models_configs};
pub use args::{CliArgs, OutputMode, TuiMode, parse_args};
pub use auth::{AuthFile, KeySources, StoredCredential};
pub use config_value::{EnvLookup, process_env, resolve_config_value};
pub use error::CliError;
pub use list_models::{format_model_list, list_models_output};
pub use model_select::{ModelChoice, ModelRequest, ModelSource, resolve_cli_model, select_model};
pub use models_json::{
    ModelDefinition, ModelOverride, ModelsConfig, ProviderConfig, load_models_json, parse_models_json,
};
pub use paths::{agent_dir, expand_home, project_dir};
pub use registry::{ModelRegistry, RegisteredModel};
pub use resolve::{ResolvedModel, resolve_model};
pub use run_defaults::{DEFAULT_THINKING_LEVEL, RunDefaults};
pub use settings::{Settings, SettingsProblem};
pub use step_session::{StepModels, open_step_session, run_step_command, step_models};

use crate::AgentDefinition;
use crate::extension::Extensions;
use crate::tools::AgentTool;
use crate::tools::process_groups::kill_all_process_groups;

/// Runs the agent's command line with the process arguments; returns the exit code.
pub fn run(definition: AgentDefinition) -> ExitCode {
    run_with_tools(definition, Vec::new())
}

/// [`run`] for an agent whose YAML declares tools implemented in Rust (`tools.custom` entries with a Rust
/// handler): `rust_tools` holds their implementations, matched to the declarations by name. A declared tool
/// without an implementation, or an implementation nobody declared, stops the run with an error.
pub fn run_with_tools(definition: AgentDefinition, rust_tools: Vec<Arc<dyn AgentTool>>) -> ExitCode {
    run_with_extensions(definition, rust_tools, Extensions::new())
}

/// [`run_with_tools`] plus extensions written in Rust. They run before the YAML's `hooks:`, in the order
/// given; the tools and commands they register join the agent's.
pub fn run_with_extensions(
    definition: AgentDefinition,
    rust_tools: Vec<Arc<dyn AgentTool>>,
    extensions: Extensions,
) -> ExitCode {
    // `<agent> mcp list`, as pi 1.5 has it.
    let raw: Vec<String> = std::env::args().skip(1).collect();
    if raw.first().is_some_and(|first| first == "mcp") {
        return mcp::run_mcp_command(&definition, &raw[1..]);
    }
    // `<agent> serve`: sessions behind an HTTP API.
    if raw.first().is_some_and(|first| first == "serve") {
        return serve::run_serve(&definition, &raw[1..], rust_tools, extensions);
    }
    // `<agent> login [provider]` / `<agent> logout [provider]`: the shell's way to /login and /logout.
    if let Some(command @ ("login" | "logout")) = raw.first().map(String::as_str) {
        return login::run_login_command(&definition, &raw[1..], command == "logout");
    }
    let args = match parse_args(&definition, raw) {
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
    if let Some(query) = &args.list_models {
        let (text, warnings) =
            list_models_output(definition.models_json.as_deref(), &agent_dir(&definition), Some(query), &process_env);
        for warning in warnings {
            eprintln!("Warning: {warning}");
        }
        return print_stdout(&text);
    }
    if let Some(input) = &args.export {
        let output = args.messages.first().map(String::as_str);
        return match crate::export_html::export_session_file(&definition.name, std::path::Path::new(input), output) {
            Ok(path) => print_stdout(&format!("Exported the session to {path}\n")),
            Err(error) => {
                eprintln!("Error: {error}");
                ExitCode::from(1)
            }
        };
    }
    kill_commands_on_panic();
    let code = match run_agent(&definition, args, rust_tools, extensions) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("Error: {error}");
            ExitCode::from(1)
        }
    };
    // Every mode stops its commands on the way out; this catches any that were left behind.
    kill_all_process_groups();
    code
}

/// A panic aborts a generated agent without running destructors: the commands running in their own process
/// groups are killed first, so none outlives the agent.
fn kill_commands_on_panic() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            kill_all_process_groups();
            previous(info);
        }));
    });
}

fn print_stdout(text: &str) -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::from(1),
    }
}

fn run_agent(
    definition: &AgentDefinition,
    args: CliArgs,
    rust_tools: Vec<Arc<dyn AgentTool>>,
    extensions: Extensions,
) -> Result<ExitCode, CliError> {
    // A sub-agent's session continues as that sub-agent (the Rust tools and extensions are the top level's).
    if let Some(subagent) = subagents::definition_for_session(definition, args.session.as_deref()) {
        return run_agent_as(&subagent, args, Vec::new(), Extensions::new());
    }
    run_agent_as(definition, args, rust_tools, extensions)
}

/// [`run_agent`] with the agent decided.
fn run_agent_as(
    definition: &AgentDefinition,
    mut args: CliArgs,
    rust_tools: Vec<Arc<dyn AgentTool>>,
    extensions: Extensions,
) -> Result<ExitCode, CliError> {
    if args.mode == Some(OutputMode::Rpc) {
        // stdin carries the commands: it is not a prompt, and it never means print mode.
        project_trust::decide(definition, &mut args, None);
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(CliError::Runtime)?;
        return runtime.block_on(async {
            let prepared = setup::prepare(definition, &args, rust_tools, extensions)?;
            let mcp = prepared.mcp.clone();
            let start_provider = prepared.agent.model().map(|model| model.provider);
            let catalog = model_catalog::ModelCatalog::load(
                definition,
                &agent_dir(definition),
                args.api_key.as_deref(),
                start_provider.as_deref(),
            )?
            .with_pi_compat(prepared.pi_compat)
            .with_scope(&prepared.model_scope);
            stop_mcp(mcp, rpc::run_rpc(prepared, catalog, &definition.name).await).await
        });
    }
    // As in pi: stdin that is not a terminal means print mode, and its text (trimmed) is prepended
    // to the first message.
    let stdin_is_terminal = std::io::stdin().is_terminal();
    if let Some(piped) = if stdin_is_terminal { None } else { read_piped_stdin()? } {
        match args.messages.first_mut() {
            Some(first) => first.insert_str(0, &piped),
            None => args.messages.push(piped),
        }
    }
    let mode = match args.mode {
        Some(OutputMode::Json) => OutputMode::Json,
        _ if args.print || !stdin_is_terminal || args.mode == Some(OutputMode::Text) => OutputMode::Text,
        _ => return run_interactive_mode(definition, args, rust_tools, extensions),
    };
    project_trust::decide(definition, &mut args, None);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(CliError::Runtime)?;
    runtime.block_on(async {
        let prepared = setup::prepare(definition, &args, rust_tools, extensions)?;
        let mcp = prepared.mcp.clone();
        stop_mcp(mcp, modes::run_mode(mode, prepared, args.messages).await).await
    })
}

/// No `-p`, no `--mode`, a terminal on stdin: the person works with the agent in the terminal.
fn run_interactive_mode(
    definition: &AgentDefinition,
    mut args: CliArgs,
    rust_tools: Vec<Arc<dyn AgentTool>>,
    extensions: Extensions,
) -> Result<ExitCode, CliError> {
    // pi 1.5 asks about a folder's own files before anything of it is read.
    let mut ask = |cwd: &std::path::Path, choices: &[project_trust::TrustChoice]| {
        let (global, _) = Settings::load(&agent_dir(definition), None);
        let theme = global.string("theme");
        interactive::trust_prompt::ask_at_start(cwd, choices, &definition.name, &definition.config_dir, theme)
    };
    project_trust::decide(definition, &mut args, Some(&mut ask));
    let args = &args;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(CliError::Runtime)?;
    runtime.block_on(async {
        // `-r` opens the session selector inside the interactive mode instead of asking on the terminal.
        let mut session_args = args.clone();
        session_args.resume = false;
        let prepared = setup::prepare(definition, &session_args, rust_tools, extensions)?;
        let mcp = prepared.mcp.clone();
        let agent_dir = agent_dir(definition);
        let project = args.uses_project_files().then(|| project_dir(definition, &prepared.cwd));
        let (settings, _) = Settings::load(&agent_dir, project.as_deref());
        // pi 1.5 opens fullscreen unless told otherwise; 0.73 draws inline.
        let screen = match (args.tui_mode, settings.string("tuiMode")) {
            (Some(TuiMode::Fullscreen), _) | (None, Some("fullscreen")) => pi_tui::renderer::ScreenMode::Fullscreen,
            (Some(_), _) | (None, Some("regular")) => pi_tui::renderer::ScreenMode::Inline,
            (None, _) if prepared.pi_compat.is_v1_5() => pi_tui::renderer::ScreenMode::Fullscreen,
            (None, _) => pi_tui::renderer::ScreenMode::Inline,
        };
        let start_provider = prepared.agent.model().map(|model| model.provider);
        let catalog = model_catalog::ModelCatalog::load(
            definition,
            &agent_dir,
            args.api_key.as_deref(),
            start_provider.as_deref(),
        )?
        .with_pi_compat(prepared.pi_compat)
        .with_scope(&prepared.model_scope);
        let options = interactive::InteractiveOptions {
            agent_name: definition.name.clone(),
            version: definition.version.clone(),
            screen,
            theme: settings.string("theme").map(str::to_owned),
            pick_session: args.resume,
            reloader: Some(std::rc::Rc::new(reload::Reloader::new(
                definition,
                args,
                agent_dir.clone(),
                prepared.cwd.clone(),
                start_provider.clone(),
            ))),
            pi_compat: prepared.pi_compat,
            trust: prepared.pi_compat.is_v1_5().then(|| interactive::trust_prompt::TrustContext {
                agent_dir: agent_dir.clone(),
                trusted: args.uses_project_files(),
            }),
        };
        // Whatever went before (the initial messages) becomes the first prompt, as pi does.
        stop_mcp(mcp, interactive::run_interactive(prepared, catalog, options, args.messages.clone()).await).await
    })
}

/// Stops the run's MCP servers once its mode is done, and passes the mode's outcome on.
async fn stop_mcp<T>(mcp: Option<mcp::McpRun>, outcome: T) -> T {
    if let Some(run) = mcp {
        run.manager.shutdown().await;
    }
    outcome
}

/// All of piped stdin, trimmed; `None` when it holds only whitespace.
fn read_piped_stdin() -> Result<Option<String>, CliError> {
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text).map_err(|source| CliError::Read { path: "<stdin>".into(), source })?;
    let trimmed = text.trim();
    Ok((!trimmed.is_empty()).then(|| trimmed.to_owned()))
}
