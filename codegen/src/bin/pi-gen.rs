//! `pi-gen`: build agents from YAML, check agent files, and run the scripted mock LLM server.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use pi_codegen::{BuildRequest, SpecError, build_agent, load_spec};

#[derive(Debug, Parser)]
#[command(name = "pi-gen", version, about = "Turn agent YAML files into fast, standalone agent binaries")]
struct Cli {
    #[command(subcommand)]
    command: Commands,
}

#[derive(Debug, Subcommand)]
enum Commands {
    /// Generate the agent's crate and compile it into a standalone binary
    Build {
        /// The agent YAML file
        file: PathBuf,
        /// Where the binary goes: a file path, or a directory that receives <name> (default ./<name>)
        #[arg(long)]
        out: Option<PathBuf>,
        /// Build with optimizations
        #[arg(long)]
        release: bool,
    },
    /// Validate agent files and print every error as file:line:column: message
    Check {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Print the JSON Schema of the agent YAML format (for editors and other tools)
    Schema,
    /// Create a new agent to start from: NAME/NAME.yaml, a skill, the schema and a README
    New {
        name: String,
        /// Directory to create (default ./NAME)
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// Build the agent into a cache keyed by the spec's contents (if needed), then run it with ARGS
    Run {
        /// The agent YAML file
        file: PathBuf,
        /// Build with optimizations
        #[arg(long)]
        release: bool,
        /// Arguments for the agent, after `--`
        #[arg(last = true)]
        args: Vec<std::ffi::OsString>,
    },
    /// Serve scripted LLM responses on 127.0.0.1 (all four APIs, chosen by request path) until interrupted
    MockLlm {
        /// JSON script: {"responses": [{"text": ...}, {"toolCalls": [...]}, {"error": {...}}]}
        #[arg(long)]
        script: PathBuf,
        /// Port to listen on (default: any free port)
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// Append every request as one JSON line to this file
        #[arg(long)]
        log: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Commands::Build { file, out, release } => build(file, out, release),
        Commands::Check { files } => check(&files),
        Commands::Schema => print_schema(),
        Commands::New { name, dir } => new_agent(&name, dir),
        Commands::Run { file, release, args } => run(&file, release, &args),
        Commands::MockLlm { script, port, log } => mock_llm(script, port, log),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{error}");
            ExitCode::from(1)
        }
    }
}

fn build(file: PathBuf, out: Option<PathBuf>, release: bool) -> anyhow::Result<()> {
    let mut request = BuildRequest::new(file);
    request.output = out;
    request.release = release;
    let binary = build_agent(&request)?;
    println!("{}", binary.display());
    Ok(())
}

fn check(files: &[PathBuf]) -> anyhow::Result<()> {
    let mut failed = 0;
    for file in files {
        match load_spec(file) {
            Ok(_) => println!("{}: ok", file.display()),
            Err(error @ (SpecError::Invalid(_) | SpecError::Read { .. })) => {
                eprintln!("{error}");
                failed += 1;
            }
            Err(other) => return Err(other.into()),
        }
    }
    if failed > 0 {
        anyhow::bail!("{failed} of {} file(s) have errors", files.len());
    }
    Ok(())
}

fn print_schema() -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(pi_codegen::schema::agent_schema_text().as_bytes())?;
    stdout.flush()?;
    Ok(())
}

fn new_agent(name: &str, dir: Option<PathBuf>) -> anyhow::Result<()> {
    let dir = dir.unwrap_or_else(|| PathBuf::from(name));
    let yaml = pi_codegen::scaffold::create_agent(&dir, name)?;
    println!("created {}", yaml.display());
    println!("next: pi-gen run {} -- -p \"hello\"", yaml.display());
    Ok(())
}

/// Builds into the cache unless the binary for exactly this spec is there, then replaces this process
/// with the agent (exit code, signals and the terminal pass straight through).
fn run(file: &std::path::Path, release: bool, args: &[std::ffi::OsString]) -> anyhow::Result<()> {
    use std::os::unix::process::CommandExt;
    let binary = pi_codegen::run_cache::cached_binary(file, release)?;
    if !binary.is_file() {
        let mut request = BuildRequest::new(file).with_output(&binary);
        request.release = release;
        build_agent(&request)?;
    }
    let error = std::process::Command::new(&binary).args(args).exec();
    Err(anyhow::anyhow!("cannot start {}: {error}", binary.display()))
}

fn mock_llm(script: PathBuf, port: u16, log: Option<PathBuf>) -> anyhow::Result<()> {
    use pi_runtime::testing::{MockLlmServer, MockScript};
    let script = MockScript::from_file(&script)?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async move {
        let server = MockLlmServer::start_on(script, port).await?;
        if let Some(log) = log {
            server.set_log_file(log);
        }
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{}", server.base_url())?;
        stdout.flush()?;
        drop(stdout);
        wait_for_shutdown_signal().await?;
        server.shutdown().await;
        Ok(())
    })
}

async fn wait_for_shutdown_signal() -> std::io::Result<()> {
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        result = tokio::signal::ctrl_c() => result,
        _ = terminate.recv() => Ok(()),
    }
}
