//! MCP in the CLI: the servers of a run (the YAML's, then the user's `mcp.json` files; none with `--no-mcp`),
//! their tools joining the session as they arrive, the first prompt's wait for them, `/mcp`, and the
//! `mcp list` listing.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::args::CliArgs;
use super::error::CliError;
use crate::AgentDefinition;
use crate::agent_session::AgentSession;
use crate::extension::{Extension, ExtensionRegistrar, NotifyLevel};
use crate::mcp::{ClientIdentity, McpManager, McpServerState, McpServerStatus, load_servers};

/// How long the first prompt waits for servers still starting; their tools join later prompts.
pub const FIRST_PROMPT_WAIT: Duration = Duration::from_secs(10);
/// How long a prompt waits for a server to list the tools it said have changed.
pub const SETTLE_WAIT: Duration = Duration::from_secs(5);
/// MCP tools are named `mcp__<server>__<tool>`.
const MCP_PREFIX: &str = "mcp__";

/// A run's MCP servers and what to do with their tools.
#[derive(Clone)]
pub struct McpRun {
    pub manager: McpManager,
    /// What was wrong with the `mcp.json` files.
    pub problems: Vec<String>,
    /// Whether an MCP tool is active (`--tools`, `--no-tools`).
    pub activation: Arc<dyn Fn(&str) -> bool + Send + Sync>,
}

/// The run's MCP servers, started; `None` when there are none (or `--no-mcp`). Problems with the
/// `mcp.json` files are warnings.
pub(super) fn start_servers(
    definition: &AgentDefinition,
    args: &CliArgs,
    agent_dir: &Path,
    cwd: &Path,
) -> Option<McpRun> {
    if args.no_mcp {
        return None;
    }
    let project = args.uses_project_files().then(|| super::paths::project_dir(definition, cwd));
    let loaded = load_servers(&definition.mcp, agent_dir, project.as_deref());
    if loaded.servers.is_empty() && loaded.problems.is_empty() {
        return None;
    }
    let identity = ClientIdentity { name: definition.name.clone(), version: definition.version.clone() };
    Some(McpRun {
        manager: McpManager::start(loaded.servers, identity, cwd, agent_dir),
        problems: loaded.problems,
        activation: activation(args),
    })
}

/// Whether an MCP tool is active: always, unless `--no-tools`, or `--tools` without an `mcp__` pattern
/// that names it (`*` matches any run of characters).
pub(super) fn activation(args: &CliArgs) -> Arc<dyn Fn(&str) -> bool + Send + Sync> {
    if args.no_tools {
        return Arc::new(|_| false);
    }
    let Some(list) = &args.tools else { return Arc::new(|_| true) };
    let patterns: Vec<globset::GlobMatcher> = list
        .iter()
        .map(|entry| entry.trim())
        .filter(|entry| entry.starts_with(MCP_PREFIX))
        .filter_map(|entry| globset::Glob::new(entry).ok().map(|glob| glob.compile_matcher()))
        .collect();
    Arc::new(move |name| patterns.iter().any(|pattern| pattern.is_match(name)))
}

/// Binds the servers to the session: their tools join it now and whenever they change; the first prompt waits
/// (up to [`FIRST_PROMPT_WAIT`]) for servers still starting; notices go to the UI (or stderr). A required
/// server that cannot start ends the run.
pub(super) async fn attach(session: &AgentSession, run: &McpRun) -> Result<(), CliError> {
    let McpRun { manager, problems, activation } = run;
    let context = session.extensions().context();
    let notice_context = context.clone();
    manager.on_notice(Arc::new(move |text: &str| {
        if notice_context.has_ui() {
            notice_context.notify(text, NotifyLevel::Warning);
        } else {
            eprintln!("Warning: {text}");
        }
    }));
    for problem in problems {
        if context.has_ui() {
            context.notify(problem, NotifyLevel::Warning);
        } else {
            eprintln!("Warning: {problem}");
        }
    }
    let tools = session.dynamic_tools();
    let activate = activation.clone();
    manager.on_tools_changed(Arc::new(move |mcp_tools| {
        tools.replace(&|name| name.starts_with(MCP_PREFIX), mcp_tools, &|name| activate(name));
    }));
    if manager.statuses().iter().any(|server| server.required && server.state == McpServerState::Starting) {
        manager.ready().await;
    }
    if let Some((name, reason)) = manager.required_failure() {
        return Err(CliError::Mcp(format!("the required MCP server \"{name}\" could not be started: {reason}")));
    }
    // The first prompt waits for servers still starting (up to FIRST_PROMPT_WAIT); every prompt waits for
    // tool lists a server said have changed (up to SETTLE_WAIT), as a run keeps the tools it starts with.
    let first = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let waiting = manager.clone();
    session.set_prompt_gate(Arc::new(move || {
        let manager = waiting.clone();
        let first = first.swap(false, std::sync::atomic::Ordering::Relaxed);
        Box::pin(async move {
            if first {
                let _ = tokio::time::timeout(FIRST_PROMPT_WAIT, manager.ready()).await;
            }
            let _ = tokio::time::timeout(SETTLE_WAIT, manager.tools_settled()).await;
        })
    }));
    Ok(())
}

/// The `/mcp` command: every server with its state and tools.
pub(super) struct McpCommand {
    pub manager: McpManager,
    pub problems: Vec<String>,
}

impl Extension for McpCommand {
    fn name(&self) -> &str {
        "mcp"
    }

    fn subscriptions(&self) -> crate::extension::EventSet {
        crate::extension::EventSet::of(&[])
    }

    fn register(&self, registrar: &mut ExtensionRegistrar) {
        let manager = self.manager.clone();
        let problems = self.problems.clone();
        registrar.command("mcp", "Show the MCP servers: their state and tools", move |_args, ctx| {
            let text = status_text(&manager.statuses(), &problems);
            async move {
                ctx.notify(&text, NotifyLevel::Info);
                Ok(())
            }
        });
    }
}

/// The listing `/mcp` and `mcp list` show.
pub fn status_text(servers: &[McpServerStatus], problems: &[String]) -> String {
    let mut lines: Vec<String> = Vec::new();
    if servers.is_empty() {
        lines.push("No MCP servers.".into());
    }
    for server in servers {
        let state = match &server.state {
            McpServerState::Ready => {
                let count = server.tools.len();
                format!("connected, {count} tool{}", if count == 1 { "" } else { "s" })
            }
            other => other.label().to_owned(),
        };
        let required = if server.required { ", required" } else { "" };
        lines.push(format!("{}: {state} ({}{required}, {})", server.name, server.transport, server.origin));
        if let Some(description) = &server.description {
            lines.push(format!("  {description}"));
        }
        if let Some(info) = &server.server_info {
            lines.push(format!("  server: {info}"));
        }
        if let McpServerState::Failed(reason) = &server.state {
            lines.push(format!("  {reason}"));
        }
        if !server.tools.is_empty() {
            let names: Vec<&str> = server.tools.iter().map(|(name, _)| name.as_str()).collect();
            lines.push(format!("  tools: {}", names.join(", ")));
        }
        if let Some(log) = &server.log
            && !matches!(server.state, McpServerState::Disabled)
        {
            lines.push(format!("  log: {}", log.display()));
        }
    }
    for problem in problems {
        lines.push(format!("config error: {problem}"));
    }
    lines.join("\n")
}

/// `<agent> mcp list [--json]`: starts every server, waits for them, prints them; exit code 1 when a file has
/// problems or an enabled server did not start.
pub(super) fn run_mcp_command(definition: &AgentDefinition, args: &[String]) -> std::process::ExitCode {
    let json = args.iter().any(|arg| arg == "--json");
    match args.first().map(String::as_str) {
        Some("list") => {}
        _ => {
            eprintln!("Usage: {} mcp list [--json]", definition.name);
            return std::process::ExitCode::from(2);
        }
    }
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("Error: {error}");
            return std::process::ExitCode::from(1);
        }
    };
    runtime.block_on(async {
        let cwd = std::env::current_dir().unwrap_or_default();
        let agent_dir = super::paths::agent_dir(definition);
        // pi 1.5 lists a project's servers only for a folder saved as trusted.
        let trusted = !definition.pi_compat.is_v1_5()
            || super::project_trust::TrustStore::new(&agent_dir)
                .decision(&cwd)
                .ok()
                .flatten()
                .is_some_and(|d| d.trusted);
        let project = trusted.then(|| super::paths::project_dir(definition, &cwd));
        let loaded = load_servers(&definition.mcp, &agent_dir, project.as_deref());
        let identity = ClientIdentity { name: definition.name.clone(), version: definition.version.clone() };
        let manager = McpManager::start(loaded.servers, identity, &cwd, &agent_dir);
        manager.on_notice(Arc::new(|_: &str| {}));
        manager.ready().await;
        let statuses = manager.statuses();
        manager.shutdown().await;
        let failed = !loaded.problems.is_empty()
            || statuses.iter().any(|server| matches!(server.state, McpServerState::Failed(_) | McpServerState::Exited));
        let text =
            if json { status_json(&statuses, &loaded.problems) } else { status_text(&statuses, &loaded.problems) };
        println!("{text}");
        std::process::ExitCode::from(u8::from(failed))
    })
}

fn status_json(servers: &[McpServerStatus], problems: &[String]) -> String {
    let servers: Vec<serde_json::Value> = servers
        .iter()
        .map(|server| {
            let mut value = serde_json::json!({
                "name": server.name,
                "source": server.origin.to_string(),
                "enabled": server.state != McpServerState::Disabled,
                "transport": server.transport,
                "state": server.state.label(),
                "tools": server.tools.iter().map(|(_, remote)| remote).collect::<Vec<_>>(),
            });
            if let McpServerState::Failed(reason) = &server.state {
                value["error"] = serde_json::Value::String(reason.clone());
            }
            value
        })
        .collect();
    serde_json::json!({ "servers": servers, "errors": problems }).to_string()
}
