//! `<agent> serve`: many sessions of the agent behind an HTTP API, from the same binary and over the same
//! session files as the command line. Each session is a task pinned to one of a few session threads and is
//! driven by the RPC dispatcher; the HTTP side (axum) only routes requests to it and streams its events.
//! SIGINT or SIGTERM stops accepting requests, aborts what runs, saves, and exits.

mod actor;
mod api_error;
mod auth;
mod batches;
mod embedded;
mod engine;
mod events;
mod local_batches;
mod metrics;
mod openapi;
mod options;
mod registry;
mod routes;
mod turns;

use std::path::PathBuf;
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::Arc;

use tokio::sync::Semaphore;

use options::parse_serve_args;

pub use axum::http::StatusCode;

pub use self::actor::PromptAccepted;
pub use self::api_error::ApiError;
pub use self::batches::{
    BatchAnswer, BatchItemStatus, BatchRequest, BatchSessionRef, BatchSessionStatus, BatchStarted, BatchStatus,
    batch_not_found,
};
pub use self::embedded::no_session_file;
pub use self::engine::{
    EngineFuture, EventStream, PromptRequest, SessionEngine, allowed_cwd, allowed_remote_cwd, check_import,
    not_supported, session_exists, session_flags, under_remote_root, under_root,
};
pub use self::metrics::Metrics;
use self::registry::{AgentParts, Registry, SessionDirs};
pub use self::registry::{NewSession, SessionSummary};
use self::routes::{AppState, router};
use super::{CliError, agent_dir, parse_args};
use crate::AgentDefinition;
use crate::extension::Extensions;
use crate::tools::AgentTool;
use crate::tools::process_groups::kill_all_process_groups;

/// Runs `serve` with its arguments (after the word `serve`); returns the exit code.
pub fn run_serve(
    definition: &AgentDefinition,
    raw: &[String],
    rust_tools: Vec<Arc<dyn AgentTool>>,
    extensions: Extensions,
) -> ExitCode {
    run_serve_with_engine(definition, raw, rust_tools, extensions, None)
}

/// What another engine is made from, once `serve`'s options are read.
pub struct EngineSetup {
    pub definition: Arc<AgentDefinition>,
    /// The agent's flags given to `serve`, for every session.
    pub agent_args: Vec<String>,
    /// The directories sessions may work in (resolved).
    pub roots: Vec<PathBuf>,
}

/// Makes the sessions' engine (inside the server's async runtime); an error is printed and ends `serve`.
pub type EngineFactory =
    Box<dyn FnOnce(EngineSetup) -> Pin<Box<dyn Future<Output = Result<Arc<dyn SessionEngine>, String>>>>>;

/// [`run_serve`] with the sessions run by the engine `engine` makes (the embedded engine when `None`).
pub fn run_serve_with_engine(
    definition: &AgentDefinition,
    raw: &[String],
    rust_tools: Vec<Arc<dyn AgentTool>>,
    extensions: Extensions,
    engine: Option<EngineFactory>,
) -> ExitCode {
    if raw.iter().any(|arg| arg == "--help" || arg == "-h") {
        print!("{}", options::help_text(&definition.name));
        return ExitCode::SUCCESS;
    }
    match serve(definition, raw, rust_tools, extensions, engine) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("Error: {error}");
            ExitCode::from(1)
        }
    }
}

fn serve(
    definition: &AgentDefinition,
    raw: &[String],
    rust_tools: Vec<Arc<dyn AgentTool>>,
    extensions: Extensions,
    engine: Option<EngineFactory>,
) -> Result<(), CliError> {
    let cwd = std::env::current_dir().map_err(|source| CliError::Read { path: ".".into(), source })?;
    let options = parse_serve_args(raw, &cwd, engine.is_some()).map_err(|error| CliError::Usage(error.to_string()))?;
    let agent_args = parse_args(definition, options.agent_args.clone())
        .map_err(|error| CliError::Usage(actor::clap_message(&error)))?;
    options::check_agent_args(&agent_args).map_err(|error| CliError::Usage(error.to_string()))?;
    let agent_dir = agent_dir(definition);
    let session_dirs =
        match super::session_select::session_dir_override(definition, &agent_args, |name| std::env::var_os(name)) {
            Some(dir) => SessionDirs::Single(dir),
            None => SessionDirs::PerCwd(agent_dir.join("sessions")),
        };
    let threads = std::thread::available_parallelism().map_or(2, |count| count.get()).max(2);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.min(4))
        .enable_all()
        .build()
        .map_err(CliError::Runtime)?;
    runtime.block_on(async move {
        let parts = AgentParts {
            definition: Arc::new(definition.clone()),
            agent_args: options.agent_args.clone(),
            rust_tools,
            extensions,
        };
        let (engine, registry): (Arc<dyn SessionEngine>, Option<Arc<Registry>>) = match engine {
            None => {
                let registry = Arc::new(Registry::new(parts, options.roots.clone(), session_dirs, threads));
                (registry.clone(), Some(registry))
            }
            Some(make) => {
                let setup = EngineSetup {
                    definition: parts.definition.clone(),
                    agent_args: options.agent_args.clone(),
                    roots: options.roots.clone(),
                };
                (make(setup).await.map_err(CliError::Usage)?, None)
            }
        };
        let state = AppState {
            engine: engine.clone(),
            token: options.token.as_deref().map(Arc::from),
            turns: Arc::new(Semaphore::new(options.max_turns)),
            max_turns: options.max_turns,
            max_image_bytes: options.max_image_bytes,
            openapi: Arc::new(openapi::openapi_document(&definition.name, &definition.version)),
            batches: Arc::default(),
        };
        let listener = tokio::net::TcpListener::bind(options.listen).await.map_err(CliError::Runtime)?;
        let address = listener.local_addr().map_err(CliError::Runtime)?;
        let roots: Vec<String> = options.roots.iter().map(|root| root.display().to_string()).collect();
        eprintln!("{} serving on http://{address} (roots: {})", definition.name, roots.join(", "));
        let app = router(state, options.max_body_bytes);
        if let Some(recovering) = registry {
            tokio::spawn(async move { recovering.recover_interrupted_turns().await });
        }
        // Open event streams would keep the server from finishing: closing the sessions first ends them.
        let name = definition.name.clone();
        let stopping = async move {
            stop_signal().await;
            eprintln!("{name}: stopping; aborting what runs and saving the sessions");
            if let Err(error) = engine.stop().await {
                eprintln!("Warning: {}", error.message);
            }
        };
        // Events go out as small writes: without TCP_NODELAY each waits for the client's delayed ACK (40 ms).
        let listener = axum::serve::ListenerExt::tap_io(listener, |stream: &mut tokio::net::TcpStream| {
            let _ = stream.set_nodelay(true);
        });
        axum::serve(listener, app).with_graceful_shutdown(stopping).await.map_err(CliError::Runtime)?;
        Ok::<(), CliError>(())
    })?;
    kill_all_process_groups();
    Ok(())
}

/// Resolves at the first SIGINT or SIGTERM.
async fn stop_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut interrupt), Ok(mut terminate)) = (signal(SignalKind::interrupt()), signal(SignalKind::terminate()))
    else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = interrupt.recv() => {}
        _ = terminate.recv() => {}
    }
}
