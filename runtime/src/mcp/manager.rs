//! The agent's MCP servers: started together when the agent starts, their tools kept up to date (a server's
//! `tools/list_changed` lists them again), their states for `/mcp` and the listing, and their stop.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::watch;

use super::McpServerDefinition;
use super::connection::{ClientIdentity, Connection, Launch, log_path};
use super::tool::McpTool;
use crate::tools::AgentTool;

/// How long a stopping stdio server gets to exit once its input is closed, before SIGTERM.
const STOP_GRACE: Duration = Duration::from_millis(500);
/// How long it then gets after SIGTERM, before SIGKILL.
const TERM_GRACE: Duration = Duration::from_secs(2);

/// Where a server's settings come from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum McpOrigin {
    /// The agent's YAML (compiled in).
    Agent,
    /// An `mcp.json` file.
    File(PathBuf),
}

impl std::fmt::Display for McpOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Agent => f.write_str("agent"),
            Self::File(path) => write!(f, "{}", path.display()),
        }
    }
}

/// A server and where it was declared.
#[derive(Debug, Clone, PartialEq)]
pub struct McpServerEntry {
    pub definition: McpServerDefinition,
    pub origin: McpOrigin,
}

/// Where a server is in its life.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum McpServerState {
    /// `enabled: false`, or all MCP servers are off (`--no-mcp`).
    Disabled,
    Starting,
    Ready,
    /// It could not be started; the reason.
    Failed(String),
    /// It was running and went away; its tools answer an error.
    Exited,
}

impl McpServerState {
    /// One word for listings.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Disabled => "disabled",
            Self::Starting => "starting",
            Self::Ready => "connected",
            Self::Failed(_) => "failed",
            Self::Exited => "exited",
        }
    }
}

/// A server as `/mcp` and the listing show it.
#[derive(Debug, Clone, PartialEq)]
pub struct McpServerStatus {
    pub name: String,
    /// `stdio` or `http`.
    pub transport: &'static str,
    pub origin: McpOrigin,
    pub state: McpServerState,
    pub required: bool,
    pub description: Option<String>,
    /// `name version` as the server calls itself.
    pub server_info: Option<String>,
    /// `(name the model sees, the server's own name)` of the tools the agent took.
    pub tools: Vec<(String, String)>,
    /// A stdio server's stderr log.
    pub log: Option<PathBuf>,
}

/// Told the complete MCP tool set whenever it changes.
pub type ToolsListener = Arc<dyn Fn(Vec<Arc<dyn AgentTool>>) + Send + Sync>;
/// Told what happened to a server that the user should know (it failed to start, it exited).
pub type NoticeSink = Arc<dyn Fn(&str) + Send + Sync>;

pub(super) struct Slot {
    pub entry: McpServerEntry,
    pub state: McpServerState,
    pub server_info: Option<String>,
    pub tools: Vec<Arc<McpTool>>,
    pub connection: Option<Arc<Connection>>,
}

pub(super) struct Shared {
    pub slots: Mutex<Vec<Slot>>,
    /// How many servers are still starting.
    pub starting: watch::Sender<usize>,
    /// How many announced tool-list changes are not listed yet.
    pub relists: Arc<watch::Sender<usize>>,
    listener: Mutex<Option<ToolsListener>>,
    notices: Mutex<Option<NoticeSink>>,
    pub identity: ClientIdentity,
    pub cwd: PathBuf,
    pub agent_dir: PathBuf,
    /// Held while a server that exited is started again, so two calls do not start it twice.
    pub restarting: tokio::sync::Mutex<()>,
}

pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The MCP servers of one agent run.
#[derive(Clone)]
pub struct McpManager {
    shared: Arc<Shared>,
}

impl McpManager {
    /// Starts every enabled server at once (on the current tokio runtime) and returns without waiting.
    pub fn start(servers: Vec<McpServerEntry>, identity: ClientIdentity, cwd: &Path, agent_dir: &Path) -> Self {
        let enabled = servers.iter().filter(|entry| entry.definition.enabled).count();
        let slots = servers
            .into_iter()
            .map(|entry| Slot {
                state: if entry.definition.enabled { McpServerState::Starting } else { McpServerState::Disabled },
                entry,
                server_info: None,
                tools: Vec::new(),
                connection: None,
            })
            .collect();
        let manager = Self {
            shared: Arc::new(Shared {
                slots: Mutex::new(slots),
                starting: watch::Sender::new(enabled),
                relists: Arc::new(watch::Sender::new(0)),
                listener: Mutex::new(None),
                notices: Mutex::new(None),
                identity,
                cwd: cwd.to_path_buf(),
                agent_dir: agent_dir.to_path_buf(),
                restarting: tokio::sync::Mutex::new(()),
            }),
        };
        let enabled: Vec<usize> = lock(&manager.shared.slots)
            .iter()
            .enumerate()
            .filter(|(_, slot)| slot.entry.definition.enabled)
            .map(|(index, _)| index)
            .collect();
        // Processes are started here and now, so they come up while the agent reads the rest of its setup.
        for index in enabled {
            let shared = &manager.shared;
            let launch = {
                let slots = lock(&shared.slots);
                let definition = &slots[index].entry.definition;
                Launch::new(definition, &shared.cwd, Some(&log_path(&shared.agent_dir, &definition.name)))
            };
            tokio::spawn(super::lifecycle::run_server(shared.clone(), index, launch));
        }
        manager
    }

    /// A manager with no servers (`--no-mcp` with nothing to list, or none declared).
    pub fn is_empty(&self) -> bool {
        lock(&self.shared.slots).is_empty()
    }

    /// Waits until no server is starting any more.
    pub async fn ready(&self) {
        let mut starting = self.shared.starting.subscribe();
        let _ = starting.wait_for(|count| *count == 0).await;
    }

    /// Waits until every tool-list change a server announced has been listed (and the tools replaced).
    pub async fn tools_settled(&self) {
        let mut pending = self.shared.relists.subscribe();
        let _ = pending.wait_for(|count| *count == 0).await;
    }

    /// Whether every server has started or failed.
    pub fn is_ready(&self) -> bool {
        *self.shared.starting.borrow() == 0
    }

    /// The first required server that failed to start, with its reason.
    pub fn required_failure(&self) -> Option<(String, String)> {
        lock(&self.shared.slots).iter().find_map(|slot| match &slot.state {
            McpServerState::Failed(reason) if slot.entry.definition.required => {
                Some((slot.entry.definition.name.clone(), reason.clone()))
            }
            _ => None,
        })
    }

    /// The tools of every connected (or since exited) server, in server order.
    pub fn tools(&self) -> Vec<Arc<dyn AgentTool>> {
        all_tools(&lock(&self.shared.slots))
    }

    /// Calls `listener` with the whole MCP tool set now and whenever it changes.
    pub fn on_tools_changed(&self, listener: ToolsListener) {
        *lock(&self.shared.listener) = Some(listener.clone());
        listener(self.tools());
    }

    /// Sends notices (a server failed or exited) to `sink` instead of stderr.
    pub fn on_notice(&self, sink: NoticeSink) {
        *lock(&self.shared.notices) = Some(sink);
    }

    /// Every server with its state and tools.
    pub fn statuses(&self) -> Vec<McpServerStatus> {
        lock(&self.shared.slots)
            .iter()
            .map(|slot| {
                let definition = &slot.entry.definition;
                McpServerStatus {
                    name: definition.name.clone(),
                    transport: definition.transport.kind(),
                    origin: slot.entry.origin.clone(),
                    state: slot.state.clone(),
                    required: definition.required,
                    description: definition.description.clone(),
                    server_info: slot.server_info.clone(),
                    tools: slot
                        .tools
                        .iter()
                        .map(|tool| (tool.name().to_owned(), tool.remote_name().to_owned()))
                        .collect(),
                    log: (definition.transport.kind() == "stdio")
                        .then(|| log_path(&self.shared.agent_dir, &definition.name)),
                }
            })
            .collect()
    }

    /// Stops every server (all at once; each gets a moment to exit before its process group is killed).
    pub async fn shutdown(&self) {
        let connections: Vec<Arc<Connection>> =
            lock(&self.shared.slots).iter_mut().filter_map(|slot| slot.connection.take()).collect();
        let stops = connections.iter().map(|connection| connection.stop(STOP_GRACE, TERM_GRACE));
        futures_util::future::join_all(stops).await;
    }
}

pub(super) fn all_tools(slots: &[Slot]) -> Vec<Arc<dyn AgentTool>> {
    slots.iter().flat_map(|slot| slot.tools.iter().map(|tool| tool.clone() as Arc<dyn AgentTool>)).collect()
}

impl Shared {
    pub fn notice(&self, text: &str) {
        let sink = lock(&self.notices).clone();
        match sink {
            Some(sink) => sink(text),
            None => eprintln!("Warning: {text}"),
        }
    }

    pub fn tools_changed(&self) {
        let listener = lock(&self.listener).clone();
        if let Some(listener) = listener {
            let tools = all_tools(&lock(&self.slots));
            listener(tools);
        }
    }

    pub fn finish_start(&self) {
        self.starting.send_modify(|count| *count = count.saturating_sub(1));
    }
}
