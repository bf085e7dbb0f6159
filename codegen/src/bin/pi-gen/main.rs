//! `pi-gen`: build agents from YAML, check agent files, run an agent (against a real or the scripted model),
//! test it, and serve the scripted mock LLM.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

mod agent_tests;
mod mock_model;

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
        /// Optional parts to compile in, comma-separated: temporal (scale-out: `store`, `worker`,
        /// `serve --engine temporal`)
        #[arg(long, value_delimiter = ',')]
        features: Vec<pi_codegen::AgentFeature>,
    },
    /// Validate agent files and print every error as file:line:column: message
    Check {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Print the JSON Schema of the agent YAML format (for editors and other tools)
    Schema,
    /// Create a new agent to start from: NAME/NAME.yaml, a skill, an example test, the schema and a README
    New {
        name: String,
        /// Directory to create (default ./NAME)
        #[arg(long)]
        dir: Option<PathBuf>,
        /// A standalone Rust crate instead, whose tools are written in Rust with #[agent] (built with cargo)
        #[arg(long)]
        rust: bool,
    },
    /// Build the agent into a cache keyed by the spec's contents (if needed), then run it with ARGS
    Run {
        /// The agent YAML file
        file: PathBuf,
        /// Build with optimizations
        #[arg(long)]
        release: bool,
        /// Answer with this scripted model (mock-llm's script format) instead of a real one: the agent gets a
        /// scratch agent directory whose models.json points at the mock
        #[arg(long, value_name = "SCRIPT")]
        mock: Option<PathBuf>,
        /// With --mock: append every request the model gets as one JSON line to this file
        #[arg(long, value_name = "FILE", requires = "mock")]
        log: Option<PathBuf>,
        /// Arguments for the agent, after `--`
        #[arg(last = true)]
        args: Vec<std::ffi::OsString>,
    },
    /// Run the agent's tests: every case of the test files (default: tests/*.yaml beside the agent) against
    /// the scripted model, each in a scratch directory; exits 1 when a case fails
    Test {
        /// The agent YAML file
        file: PathBuf,
        /// Test files (default: tests/*.yaml beside the agent's YAML)
        tests: Vec<PathBuf>,
        /// Build with optimizations
        #[arg(long)]
        release: bool,
        /// Keep the scratch directory of each failed case
        #[arg(long)]
        keep: bool,
        /// Run only the cases whose name contains this text
        #[arg(long, value_name = "TEXT")]
        filter: Option<String>,
        /// Test this binary instead of building the YAML (e.g. an #[agent] crate's target/debug/NAME)
        #[arg(long, value_name = "PATH")]
        binary: Option<PathBuf>,
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
    let success = |result: anyhow::Result<()>| result.map(|()| ExitCode::SUCCESS);
    let result = match cli.command {
        Commands::Build { file, out, release, features } => success(build(file, out, release, features)),
        Commands::Check { files } => success(check(&files)),
        Commands::Schema => success(print_schema()),
        Commands::New { name, dir, rust } => success(new_agent(&name, dir, rust)),
        Commands::Run { file, release, mock: None, args, .. } => success(run(&file, release, &args)),
        Commands::Run { file, release, mock: Some(script), log, args } => {
            run_with_mock(&file, release, &script, log, &args)
        }
        Commands::Test { file, tests, release, keep, filter, binary } => {
            test(&file, tests, crate::agent_tests::TestOptions { release, keep, filter, binary })
        }
        Commands::MockLlm { script, port, log } => success(mock_llm(script, port, log)),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            report_error(&error);
            ExitCode::from(1)
        }
    }
}

/// Every refusal ends in one `Error:` line; located problems come first, one `file:line:col: message` each.
fn report_error(error: &anyhow::Error) {
    match error.downcast_ref::<SpecError>() {
        Some(SpecError::Invalid(problems)) => {
            for problem in problems {
                eprintln!("{problem}");
            }
            let files: std::collections::BTreeSet<_> = problems.iter().map(|problem| &problem.path).collect();
            let names: Vec<String> = files.iter().map(|path| path.display().to_string()).collect();
            eprintln!("Error: {} problem(s) in {}", problems.len(), names.join(", "));
        }
        _ => eprintln!("Error: {error}"),
    }
}

fn build(
    file: PathBuf,
    out: Option<PathBuf>,
    release: bool,
    features: Vec<pi_codegen::AgentFeature>,
) -> anyhow::Result<()> {
    let mut request = BuildRequest::new(file);
    request.output = out;
    request.release = release;
    request.features = features;
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
        anyhow::bail!("{failed} of {} file(s) have problems", files.len());
    }
    Ok(())
}

fn print_schema() -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(pi_codegen::schema::agent_schema_text().as_bytes())?;
    stdout.flush()?;
    Ok(())
}

fn new_agent(name: &str, dir: Option<PathBuf>, rust: bool) -> anyhow::Result<()> {
    let dir = dir.unwrap_or_else(|| PathBuf::from(name));
    if rust {
        let sources = pi_codegen::scaffold_rust::RustCrateSources::of_this_checkout();
        let manifest = pi_codegen::scaffold_rust::create_rust_agent(&dir, name, &sources)?;
        println!("created {}", manifest.display());
        println!("next: cd {} && cargo build && target/debug/{name} -p \"hello\"", dir.display());
        return Ok(());
    }
    let yaml = pi_codegen::scaffold::create_agent(&dir, name)?;
    println!("created {}", yaml.display());
    println!("next: pi-gen run {} -- -p \"hello\"", yaml.display());
    Ok(())
}

/// Builds into the cache unless the binary for exactly this spec is there, then replaces this process
/// with the agent (exit code, signals and the terminal pass straight through).
fn run(file: &std::path::Path, release: bool, args: &[std::ffi::OsString]) -> anyhow::Result<()> {
    use std::os::unix::process::CommandExt;
    let binary = build_cached(file, release)?;
    let error = std::process::Command::new(&binary).args(args).exec();
    Err(anyhow::anyhow!("cannot start {}: {error}", binary.display()))
}

/// `run --mock`: the mock model on 127.0.0.1 with `script`, a scratch agent directory pointing at it, and the
/// agent as a child (the terminal passes through; the agent's exit code is returned).
fn run_with_mock(
    file: &std::path::Path,
    release: bool,
    script: &std::path::Path,
    log: Option<PathBuf>,
    args: &[std::ffi::OsString],
) -> anyhow::Result<ExitCode> {
    use pi_runtime::testing::{MockLlmServer, MockScript};
    let script = MockScript::from_file(script)?;
    let spec = load_spec(file)?;
    let binary = build_cached(file, release)?;
    let target = crate::mock_model::MockTarget::for_spec(&spec);
    let scratch = tempfile::Builder::new().prefix("pi-gen-run-").tempdir()?;
    let agent_dir = scratch.path().join("agent");
    let total = script.responses.len();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()?;
    let server = runtime.block_on(MockLlmServer::start(script))?;
    if let Some(log) = log {
        server.set_log_file(log);
    }
    target.write_agent_dir(&agent_dir, &server.base_url())?;
    eprintln!(
        "pi-gen: {} answers from the scripted model at {} ({total} response(s)); agent directory {}",
        spec.name,
        server.base_url(),
        agent_dir.display()
    );
    let status = runtime.block_on(async {
        let mut child = tokio::process::Command::new(&binary)
            .args(target.model_args(args))
            .args(args)
            .env(spec.agent_dir_env(), &agent_dir)
            .spawn()?;
        // Ctrl-C reaches the agent from the terminal; pi-gen waits for it to finish. SIGTERM is passed on.
        let mut interrupt = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
        let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        loop {
            tokio::select! {
                status = child.wait() => return status,
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {
                    if let Some(pid) = child.id().and_then(|pid| i32::try_from(pid).ok()) {
                        // SAFETY: kill(2) with a child's pid and a valid signal number has no memory effects.
                        unsafe { libc::kill(pid, libc::SIGTERM) };
                    }
                }
            }
        }
    })?;
    let unused = server.remaining_responses();
    if unused > 0 {
        eprintln!("pi-gen: {unused} of {total} scripted response(s) were not used");
    }
    runtime.block_on(server.shutdown());
    let code = match status.code() {
        Some(code) => u8::try_from(code).unwrap_or(1),
        None => {
            use std::os::unix::process::ExitStatusExt;
            status.signal().map_or(1, |signal| u8::try_from(128 + signal).unwrap_or(1))
        }
    };
    Ok(ExitCode::from(code))
}

/// The agent's binary in the run cache, built first unless it is there.
fn build_cached(file: &std::path::Path, release: bool) -> anyhow::Result<PathBuf> {
    let binary = pi_codegen::run_cache::cached_binary(file, release)?;
    if !binary.is_file() {
        let mut request = BuildRequest::new(file).with_output(&binary);
        request.release = release;
        build_agent(&request)?;
    }
    Ok(binary)
}

fn test(
    file: &std::path::Path,
    tests: Vec<PathBuf>,
    options: crate::agent_tests::TestOptions,
) -> anyhow::Result<ExitCode> {
    let tests = if tests.is_empty() { crate::agent_tests::default_test_files(file) } else { tests };
    if tests.is_empty() {
        let dir = file.parent().unwrap_or_else(|| std::path::Path::new("")).join("tests");
        anyhow::bail!(
            "no test files: name them after the agent (pi-gen test {} FILE...), or put them in {}/ \
             (pi-gen new writes an example)",
            file.display(),
            dir.display()
        );
    }
    let mut stdout = std::io::stdout().lock();
    let summary = crate::agent_tests::run_tests(file, &tests, &options, &mut stdout)?;
    Ok(if summary.failed == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
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
