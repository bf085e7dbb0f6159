//! One server's life in the manager: the handshake and first tool listing (bounded by its `timeout`), then
//! following it (its tool-list changes, its end), and starting it again when a tool of a server that exited
//! is called, as pi does.

use std::sync::{Arc, Weak};
use std::time::Duration;

use futures_util::future::BoxFuture;
use tokio::sync::mpsc;

use super::connection::{Connection, ConnectionEvent, Launch, ServerCaller, StartError, log_path};
use super::manager::{McpServerState, Shared, Slot, lock};
use super::tool::{McpTool, Reconnect};
use crate::tools::{AgentTool, process_groups};

/// Starts one server (its process already launched), then follows it until it ends.
pub(super) async fn run_server(shared: Arc<Shared>, index: usize, launch: Result<Launch, StartError>) {
    let connected = connect(&shared, index, launch).await;
    shared.finish_start();
    if let Ok((connection, events)) = connected {
        follow(shared, index, connection, events).await;
    }
}

/// The handshake and the first listing; on success the server's slot holds the connection and its tools.
/// On failure the slot says why, and the user is told.
async fn connect(
    shared: &Arc<Shared>,
    index: usize,
    launch: Result<Launch, StartError>,
) -> Result<(Arc<Connection>, mpsc::UnboundedReceiver<ConnectionEvent>), ()> {
    let definition = lock(&shared.slots)[index].entry.definition.clone();
    let (events_tx, events) = mpsc::unbounded_channel();
    let log = log_path(&shared.agent_dir, &definition.name);
    let pgid = match &launch {
        Ok(Launch::Stdio { pgid, .. }) => *pgid,
        _ => None,
    };
    let start = async {
        let connection =
            Connection::start(launch?, &shared.identity, Some(&log), events_tx, shared.relists.clone()).await?;
        let listed =
            connection.list_tools().await.map_err(|error| StartError(format!("listing its tools failed: {error}")))?;
        Ok::<_, StartError>((connection, listed))
    };
    // As in pi, the server's request timeout also bounds its start (the handshake and the tool listing).
    let limit = Duration::from_millis(definition.timeout_ms);
    let started = match tokio::time::timeout(limit, start).await {
        Ok(result) => result.map_err(|error| error.0),
        Err(_) => Err(format!("it did not start within {} s (its `timeout`)", limit.as_secs_f64())),
    };
    match started {
        Ok((connection, listed)) => {
            let connection = Arc::new(connection);
            {
                let mut slots = lock(&shared.slots);
                slots[index].tools = make_tools(shared, &slots, index, &listed, &connection);
                let slot = &mut slots[index];
                slot.server_info = connection.server_info.clone();
                slot.state = McpServerState::Ready;
                slot.connection = Some(connection.clone());
            }
            shared.tools_changed();
            Ok((connection, events))
        }
        Err(reason) => {
            // A server that never answered is stopped with whatever it started.
            if let Some(pgid) = pgid {
                process_groups::kill_group(pgid);
                process_groups::forget(pgid);
            }
            lock(&shared.slots)[index].state = McpServerState::Failed(reason.clone());
            let required = if definition.required { " (required)" } else { "" };
            shared.notice(&format!("MCP server \"{}\"{required} could not be started: {reason}", definition.name));
            Err(())
        }
    }
}

/// Lists the tools again whenever the server says they changed, until the connection ends; a server that
/// went away (rather than being stopped) is marked exited and the user is told.
async fn follow(
    shared: Arc<Shared>,
    index: usize,
    connection: Arc<Connection>,
    mut events: mpsc::UnboundedReceiver<ConnectionEvent>,
) {
    let mut closed = connection.closed();
    drop(connection);
    let ended = async move {
        let _ = closed.wait_for(|closed| *closed).await;
    };
    tokio::pin!(ended);
    loop {
        tokio::select! {
            event = events.recv() => match event {
                Some(ConnectionEvent::ToolsChanged) => {
                    relist(&shared, index).await;
                    shared.relists.send_modify(|pending| *pending = pending.saturating_sub(1));
                }
                None => break,
            },
            () = &mut ended => break,
        }
    }
    // Changes announced but never listed will not be: nobody needs to wait for them.
    while let Ok(ConnectionEvent::ToolsChanged) = events.try_recv() {
        shared.relists.send_modify(|pending| *pending = pending.saturating_sub(1));
    }
    let mut slots = lock(&shared.slots);
    let slot = &mut slots[index];
    // A stop the agent asked for takes the connection out first; anything else is the server going away.
    if slot.connection.take().is_some() {
        slot.state = McpServerState::Exited;
        let name = slot.entry.definition.name.clone();
        drop(slots);
        let log = log_path(&shared.agent_dir, &name);
        shared.notice(&format!(
            "MCP server \"{name}\" exited; the next call of one of its tools starts it again (its log: {})",
            log.display()
        ));
    }
}

/// Lists a server's tools again after it said they changed.
async fn relist(shared: &Arc<Shared>, index: usize) {
    let Some(connection) = lock(&shared.slots)[index].connection.clone() else { return };
    match connection.list_tools().await {
        Ok(listed) => {
            let mut slots = lock(&shared.slots);
            slots[index].tools = make_tools(shared, &slots, index, &listed, &connection);
            drop(slots);
            shared.tools_changed();
        }
        Err(error) => {
            let name = lock(&shared.slots)[index].entry.definition.name.clone();
            shared.notice(&format!("MCP server \"{name}\" changed its tools, but listing them failed: {error}"));
        }
    }
}

/// The caller of the server in `slots[index]`: its live connection's, or, when it exited, a new
/// connection's (the server is started again, once however many calls ask). `None` when it cannot be had.
async fn reconnect(shared: Weak<Shared>, index: usize) -> Option<ServerCaller> {
    let shared = shared.upgrade()?;
    let _one_at_a_time = shared.restarting.lock().await;
    let launch = {
        let slots = lock(&shared.slots);
        let slot = &slots[index];
        if let Some(connection) = &slot.connection {
            return Some(connection.caller());
        }
        if slot.state != McpServerState::Exited {
            return None;
        }
        let definition = &slot.entry.definition;
        Launch::new(definition, &shared.cwd, Some(&log_path(&shared.agent_dir, &definition.name)))
    };
    lock(&shared.slots)[index].state = McpServerState::Starting;
    let (connection, events) = connect(&shared, index, launch).await.ok()?;
    let caller = connection.caller();
    tokio::spawn(follow(shared.clone(), index, connection, events));
    Some(caller)
}

/// The tools of the server in `slots[index]` that its settings take, named clear of the other servers' tools.
fn make_tools(
    shared: &Arc<Shared>,
    slots: &[Slot],
    index: usize,
    listed: &[rmcp::model::Tool],
    connection: &Connection,
) -> Vec<Arc<McpTool>> {
    let definition = &slots[index].entry.definition;
    let timeout = Duration::from_millis(definition.timeout_ms);
    let taken: Vec<&Arc<McpTool>> =
        slots.iter().enumerate().filter(|(other, _)| *other != index).flat_map(|(_, slot)| &slot.tools).collect();
    let taken = |name: &str| taken.iter().any(|tool| tool.name() == name);
    let kept: Vec<&rmcp::model::Tool> = listed.iter().filter(|tool| definition.takes_tool(&tool.name)).collect();
    let remote: Vec<&str> = kept.iter().map(|tool| tool.name.as_ref()).collect();
    let names = super::naming::tool_names(&definition.name, &remote, &taken);
    let weak = Arc::downgrade(shared);
    // The restart runs as a task of its own: a call that gives up (its timeout, an abort) must not leave the
    // server half started.
    let reconnect: Reconnect = Arc::new(move || -> BoxFuture<'static, Option<ServerCaller>> {
        let restart = tokio::spawn(reconnect(weak.clone(), index));
        Box::pin(async move { restart.await.ok().flatten() })
    });
    kept.into_iter()
        .zip(names)
        .map(|(tool, name)| {
            Arc::new(McpTool::new(name, &definition.name, tool, timeout, connection.caller(), reconnect.clone()))
        })
        .collect()
}
