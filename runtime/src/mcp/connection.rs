//! One MCP server's connection: starting it (a child process in a process group of its own, its stderr in a
//! log file, or a streamable HTTP session), the `initialize` handshake, listing and calling its tools, noticing
//! that it went away, and stopping it.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, JsonObject, ProtocolVersion, Tool,
};
use rmcp::service::{NotificationContext, Peer, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::transport::streamable_http_client::{StreamableHttpClientTransport, StreamableHttpClientTransportConfig};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::Value;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::expand::{expand_home, expand_vars};
use super::http_client::McpHttpClient;
use super::{McpServerDefinition, McpTransport};
use crate::tools::process_groups;

/// What the agent tells servers about itself.
#[derive(Debug, Clone)]
pub struct ClientIdentity {
    pub name: String,
    pub version: String,
}

/// What a connection reports to whoever watches it.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum ConnectionEvent {
    /// The server sent `notifications/tools/list_changed`.
    ToolsChanged,
}

/// The client side of one connection: answers nothing, passes tool-list changes on.
#[derive(Clone)]
struct ClientEvents {
    info: ClientConfig,
    events: mpsc::UnboundedSender<ConnectionEvent>,
    /// Counts tool-list changes announced and not yet listed again (the receiver lists them and counts down).
    relists: Arc<watch::Sender<usize>>,
}

impl ClientHandler for ClientEvents {
    fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) -> impl Future<Output = ()> + Send + '_ {
        self.relists.send_modify(|pending| *pending += 1);
        if self.events.send(ConnectionEvent::ToolsChanged).is_err() {
            self.relists.send_modify(|pending| *pending = pending.saturating_sub(1));
        }
        std::future::ready(())
    }

    fn get_info(&self) -> ClientConfig {
        self.info.clone()
    }
}

/// A started server.
pub(super) struct Connection {
    peer: Peer<RoleClient>,
    stop: CancellationToken,
    /// Turns `true` when the connection ended (the server exited, the stream broke, or it was stopped).
    closed: watch::Receiver<bool>,
    /// The stdio server's process group.
    pgid: Option<i32>,
    /// `name version` as the server calls itself.
    pub server_info: Option<String>,
}

/// Why a server could not be started.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StartError(pub String);

/// A server on its way: its process started (stdio) or its transport made (HTTP), the handshake still to do.
pub(super) enum Launch {
    Stdio { transport: TokioChildProcess, pgid: Option<i32>, log_start: u64 },
    Http { transport: StreamableHttpClientTransport<McpHttpClient>, url: String },
}

impl Launch {
    /// Starts a stdio server's process at once (its stderr appended to `log`), or makes an HTTP server's
    /// transport; the handshake is [`Connection::start`]'s. Needs a tokio runtime.
    pub fn new(server: &McpServerDefinition, cwd: &Path, log: Option<&Path>) -> Result<Self, StartError> {
        match &server.transport {
            McpTransport::Stdio { command, args, env, cwd: server_cwd } => {
                let log_start = log.and_then(|path| std::fs::metadata(path).ok()).map_or(0, |meta| meta.len());
                let (transport, pgid) = spawn_stdio(command, args, env, server_cwd.as_deref(), cwd, log)?;
                Ok(Self::Stdio { transport, pgid, log_start })
            }
            McpTransport::Http { url, headers } => {
                Ok(Self::Http { transport: http_transport(url, headers)?, url: url.clone() })
            }
        }
    }
}

impl Connection {
    /// Completes the handshake with a launched server; tool-list changes go to `events`. A stdio server that
    /// fails is stopped, and the end of its stderr `log` is quoted.
    pub async fn start(
        launch: Launch,
        identity: &ClientIdentity,
        log: Option<&Path>,
        events: mpsc::UnboundedSender<ConnectionEvent>,
        relists: Arc<watch::Sender<usize>>,
    ) -> Result<Self, StartError> {
        let info =
            ClientConfig::new(ClientCapabilities::default(), Implementation::new(&identity.name, &identity.version))
                .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE);
        let handler = ClientEvents { info, events, relists };
        match launch {
            Launch::Stdio { transport, pgid, log_start } => match handler.serve(transport).await {
                Ok(service) => Ok(Self::running(service, pgid)),
                Err(error) => {
                    if let Some(pgid) = pgid {
                        process_groups::kill_group(pgid);
                        process_groups::forget(pgid);
                    }
                    // What the server said on its way out explains more than the broken pipe it left.
                    let message = match log.and_then(|path| log_tail(path, log_start)) {
                        Some(tail) => {
                            format!("it stopped before completing the MCP handshake; its stderr ended with: {tail}")
                        }
                        None => format!("it did not complete the MCP handshake: {error}"),
                    };
                    Err(StartError(message))
                }
            },
            Launch::Http { transport, url } => {
                let service = handler
                    .serve(transport)
                    .await
                    .map_err(|error| StartError(format!("connecting to {url} failed: {error}")))?;
                Ok(Self::running(service, None))
            }
        }
    }

    fn running(service: RunningService<RoleClient, ClientEvents>, pgid: Option<i32>) -> Self {
        let peer = service.peer().clone();
        let stop = CancellationToken::new();
        let server_info = service
            .peer_info()
            .and_then(|info| info.server_info.as_ref().map(|server| format!("{} {}", server.name, server.version)));
        let (closed_tx, closed) = watch::channel(false);
        let stopping = stop.clone();
        tokio::spawn(async move {
            let cancel = service.cancellation_token();
            let waiting = service.waiting();
            tokio::pin!(waiting);
            tokio::select! {
                _ = &mut waiting => {}
                () = stopping.cancelled() => {
                    cancel.cancel();
                    let _ = waiting.await;
                }
            }
            if let Some(pgid) = pgid {
                process_groups::forget(pgid);
            }
            let _ = closed_tx.send(true);
        });
        Self { peer, stop, closed, pgid, server_info }
    }

    /// Every tool the server offers (all pages).
    pub async fn list_tools(&self) -> Result<Vec<Tool>, String> {
        self.peer.list_all_tools().await.map_err(|error| error.to_string())
    }

    /// A handle for calls, shared by the server's tools.
    pub fn caller(&self) -> ServerCaller {
        ServerCaller { peer: self.peer.clone(), closed: self.closed.clone() }
    }

    /// Resolves when the connection ends.
    pub fn closed(&self) -> watch::Receiver<bool> {
        self.closed.clone()
    }

    /// Ends the connection: an HTTP session is deleted; a stdio server's input is closed, its process group
    /// is sent SIGTERM if it has not exited after `grace`, and SIGKILL after `grace` and `term_grace` more.
    pub async fn stop(&self, grace: Duration, term_grace: Duration) {
        self.stop.cancel();
        let mut closed = self.closed.clone();
        let ended = tokio::time::timeout(grace, closed.wait_for(|closed| *closed)).await.is_ok();
        let Some(pgid) = self.pgid else { return };
        if !ended {
            process_groups::signal_group(pgid, libc::SIGTERM);
            if tokio::time::timeout(term_grace, closed.wait_for(|closed| *closed)).await.is_err() {
                process_groups::kill_group(pgid);
            }
        }
        // What the server left running in its group goes with it.
        process_groups::kill_group(pgid);
        process_groups::forget(pgid);
    }
}

/// Calls a server's tools.
#[derive(Clone)]
pub(super) struct ServerCaller {
    peer: Peer<RoleClient>,
    closed: watch::Receiver<bool>,
}

/// How a call went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum CallError {
    /// The connection ended before or during the call.
    Closed,
    /// The server answered with a JSON-RPC error, or the request could not be sent.
    Failed(String),
}

impl ServerCaller {
    pub fn is_closed(&self) -> bool {
        *self.closed.borrow()
    }

    /// Calls `tool` with `arguments`; the answer as JSON (`content`, `structuredContent`, `isError`).
    pub async fn call(&self, tool: &str, arguments: Value) -> Result<Value, CallError> {
        if self.is_closed() {
            return Err(CallError::Closed);
        }
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Value::Object(map) = arguments {
            params = params.with_arguments(JsonObject::from_iter(map));
        }
        let mut closed = self.closed.clone();
        let answer = tokio::select! {
            answer = self.peer.call_tool(params) => answer,
            _ = closed.wait_for(|closed| *closed) => return Err(CallError::Closed),
        };
        match answer {
            Ok(result) => serde_json::to_value(result).map_err(|error| CallError::Failed(error.to_string())),
            Err(rmcp::ServiceError::McpError(error)) => Err(CallError::Failed(error.message.to_string())),
            Err(_) if self.is_closed() => Err(CallError::Closed),
            Err(error) => Err(CallError::Failed(error.to_string())),
        }
    }
}

fn spawn_stdio(
    command: &str,
    args: &[String],
    env: &[(String, String)],
    server_cwd: Option<&str>,
    agent_cwd: &Path,
    log: Option<&Path>,
) -> Result<(TokioChildProcess, Option<i32>), StartError> {
    let program = expand_home(command);
    let mut child = tokio::process::Command::new(&program);
    child.args(args.iter().map(|arg| expand_home(arg)));
    for (name, value) in env {
        child.env(name, resolve("env", name, value)?);
    }
    let dir = server_cwd.map_or_else(|| agent_cwd.to_path_buf(), |dir| agent_cwd.join(expand_home(dir)));
    child.current_dir(&dir);
    // Its own process group: a terminal's Ctrl+C is the agent's to handle, and the agent stops the whole group.
    child.process_group(0);
    die_with_parent(&mut child);
    let stderr = match log.map(open_log) {
        Some(Ok(file)) => Stdio::from(file),
        _ => Stdio::null(),
    };
    let (transport, _) = TokioChildProcess::builder(child).stderr(stderr).spawn().map_err(|error| {
        let what = if error.kind() == std::io::ErrorKind::NotFound && !dir.is_dir() {
            format!("its working directory {} does not exist", dir.display())
        } else if error.kind() == std::io::ErrorKind::NotFound {
            format!("\"{}\" was not found (is it installed and on PATH?)", program.display())
        } else {
            format!("running \"{}\" failed: {error}", program.display())
        };
        StartError(what)
    })?;
    let pgid = transport.id().and_then(|pid| i32::try_from(pid).ok());
    if let Some(pgid) = pgid {
        process_groups::register(pgid);
    }
    Ok((transport, pgid))
}

/// An `env` or `headers` value with its environment references replaced.
fn resolve(what: &str, name: &str, value: &str) -> Result<String, StartError> {
    expand_vars(value).map_err(|missing| {
        let (noun, verb) = if missing.len() == 1 { ("variable", "is") } else { ("variables", "are") };
        StartError(format!(
            "{what} \"{name}\" names the environment {noun} {}, which {verb} not set (or empty)",
            missing.join(", ")
        ))
    })
}

/// Asks Linux to send the server SIGTERM when the agent dies without stopping it (a crash or SIGKILL).
#[cfg(target_os = "linux")]
fn die_with_parent(command: &mut tokio::process::Command) {
    // SAFETY: the closure runs in the forked child before exec and only calls prctl(2), which is
    // async-signal-safe and touches no memory of the parent.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_command: &mut tokio::process::Command) {}

fn open_log(path: &Path) -> std::io::Result<std::fs::File> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::OpenOptions::new().create(true).append(true).open(path)
}

/// The last lines the server wrote to its log since `start` (for a start that failed).
fn log_tail(path: &Path, start: u64) -> Option<String> {
    let text = std::fs::read(path).ok()?;
    let text = String::from_utf8_lossy(text.get(usize::try_from(start).ok()?..)?).into_owned();
    let lines: Vec<&str> = text.lines().map(str::trim_end).filter(|line| !line.is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(3)..].join(" | ");
    (!tail.is_empty()).then(|| crate::tools::truncate::truncate_line(&tail, 2000).0)
}

fn http_transport(
    url: &str,
    headers: &[(String, String)],
) -> Result<StreamableHttpClientTransport<McpHttpClient>, StartError> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    for (name, value) in headers {
        let value = resolve("header", name, value)?;
        let header_name = http::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| StartError(format!("\"{name}\" is not a valid HTTP header name")))?;
        let header_value = http::HeaderValue::from_str(&value)
            .map_err(|_| StartError(format!("the value of header \"{name}\" is not a valid HTTP header value")))?;
        config.custom_headers.insert(header_name, header_value);
    }
    let client = reqwest::Client::builder()
        .build()
        .map_err(|error| StartError(format!("the HTTP client could not be built: {error}")))?;
    Ok(StreamableHttpClientTransport::with_client(McpHttpClient::new(client), config))
}

/// Where a server's stderr goes: `<agent dir>/mcp-logs/<server>.log`.
pub fn log_path(agent_dir: &Path, server: &str) -> PathBuf {
    agent_dir.join("mcp-logs").join(format!("{}.log", super::naming::sanitize(server)))
}
