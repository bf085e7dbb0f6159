//! RPC mode (`--mode rpc`): commands as JSON lines on stdin, replies and the session's events as JSON lines
//! on stdout, in pi's shapes. A prompt is acknowledged at once and runs while later commands are read, so a
//! client can steer, queue follow-ups, ask for the state or abort. When stdin ends, whatever runs is
//! aborted, what finished is saved, and the process exits with 0; SIGINT, SIGTERM and SIGHUP do the same and
//! exit with 130, 143 and 129.

mod command;
mod dispatch;
mod entries;
pub(in crate::cli) mod export;
mod model_commands;
pub(crate) mod output;
mod prompt_run;
mod prompting;
mod state;
pub(in crate::cli) mod ui;
pub(in crate::cli) mod user_bash;

use std::io::BufRead;
use std::process::ExitCode;
use std::rc::Rc;
use std::sync::Arc;

use tokio::sync::mpsc;

pub use command::{COMMAND_TYPES, ParsedLine, RpcCommand, RpcReply, parse_line};
pub use state::model_json;
pub use ui::{parse_response as parse_ui_response, request_line as ui_request_line};

pub(crate) use self::dispatch::Rpc;
use self::output::RpcOutput;
use self::prompt_run::PendingAck;
use super::error::CliError;
use super::model_catalog::ModelCatalog;
use super::modes::open_session;
use super::pending_queue::PendingQueue;
use super::setup::Prepared;
use super::signals::{SETTLE_TIMEOUT, StopSignals};
use crate::agent_session::{AgentSession, SessionEventSink};
use crate::extension::{ExtensionErrorEvent, SessionChangeReason, SessionShutdownEvent, SessionStartEvent};
use crate::protocol::{AgentEvent, SessionOnlyEvent, WireEvent};
use crate::tools::process_groups::kill_all_process_groups;

/// Serves commands from stdin until it ends; returns the exit code.
pub async fn run_rpc(prepared: Prepared, models: ModelCatalog, agent_name: &str) -> Result<ExitCode, CliError> {
    let wired = open_rpc_session(prepared, models, agent_name, RpcOutput::stdout(), false).await?;
    let (rpc, session) = (wired.rpc, wired.session);
    let mut lines = read_stdin_lines(wired.dialogs);
    let mut signals = StopSignals::install().map_err(CliError::Runtime)?;
    let local = tokio::task::LocalSet::new();
    let signalled = local
        .run_until(async {
            let serve = async {
                loop {
                    tokio::select! {
                        line = lines.recv() => match line {
                            Some(line) => rpc.handle_line(&line).await,
                            None => break,
                        },
                        // An extension woke the idle agent (the panels' Spine, a triggered message).
                        () = session.deferred_ready() => rpc.run_deferred(),
                    }
                }
            };
            let signalled = tokio::select! {
                () = serve => None,
                code = signals.next() => Some(code),
            };
            // Stdin ended or a signal came: what runs is aborted (its tools' process groups killed) and saves
            // what it finished. After a signal that may take SETTLE_TIMEOUT at most, and a second one ends it.
            match signalled {
                None => rpc.finish().await,
                Some(_) => tokio::select! {
                    _ = tokio::time::timeout(SETTLE_TIMEOUT, rpc.finish()) => {}
                    _ = signals.next() => {}
                },
            }
            signalled
        })
        .await;
    kill_all_process_groups();
    let shutdown = SessionShutdownEvent { reason: SessionChangeReason::Quit, target_session_file: None };
    session.extensions().emit_session_shutdown(&shutdown).await;
    Ok(signalled.map_or(ExitCode::SUCCESS, ExitCode::from))
}

/// An RPC session ready for commands: the dispatcher, its agent session, and the extension dialogs waiting
/// for the client.
pub(crate) struct RpcSession {
    pub rpc: Rpc,
    pub session: Rc<AgentSession>,
    pub dialogs: ui::PendingDialogs,
}

/// Opens the session of `prepared` for RPC commands whose replies and events go to `out`: extension errors,
/// session events, the agent's events and queue updates become event lines, extension dialogs go to the
/// client, and the extensions hear `session_start`. With `hold_acks`, every prompt is acknowledged as its run
/// starts, with its disposition (as pi 1.5 does; `serve` always does).
pub(crate) async fn open_rpc_session(
    prepared: Prepared,
    models: ModelCatalog,
    agent_name: &str,
    out: RpcOutput,
    hold_acks: bool,
) -> Result<RpcSession, CliError> {
    let errors = out.clone();
    prepared.extensions.on_error(Arc::new(move |error: &ExtensionErrorEvent| errors.event(error)));
    let session_events = out.clone();
    let emit: SessionEventSink = Arc::new(move |event: &SessionOnlyEvent| session_events.event(event));
    let resources = prepared.resources.clone();
    let tool_env = prepared.tool_env.clone();
    let dialogs = ui::PendingDialogs::default();
    prepared.extensions.set_ui(Arc::new(ui::RpcUi { pending: dialogs.clone(), out: out.clone() }));
    let level = prepared.pi_compat;
    let session = Rc::new(open_session(prepared, emit).await?);
    let pending = Arc::new(PendingQueue::default());
    let watcher = pending.clone();
    // A held prompt acknowledgement goes out as its run starts, just before `agent_start`.
    let ack = PendingAck::default();
    let held = ack.clone();
    let printer = out.clone();
    session.subscribe(move |event: &AgentEvent| {
        if matches!(event, AgentEvent::AgentStart)
            && let Some(reply) = held.release()
        {
            printer.reply(&reply);
        }
        printer.event(&WireEvent::new(event, level));
        if let Some(update) = watcher.on_event(event) {
            printer.event(&update);
        }
    });
    let start = SessionStartEvent { reason: SessionChangeReason::Startup, previous_session_file: None };
    session.extensions().emit_session_start(&start).await;
    let mut rpc = Rpc::new(session.clone(), pending, resources, models, tool_env, agent_name)
        .at_level(level, ack)
        .with_output(out);
    if hold_acks {
        rpc = rpc.holding_acks();
    }
    Ok(RpcSession { rpc, session, dialogs })
}

/// Stdin split at line feeds (strictly: a U+2028 inside a JSON string is not a line break), read on its own
/// thread so a blocking read never stalls the agent. The last line counts even without a line feed. Answers
/// to extension dialogs are taken here, so they arrive while the command that asked is still handled.
fn read_stdin_lines(dialogs: ui::PendingDialogs) -> mpsc::UnboundedReceiver<String> {
    let (sender, receiver) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        for line in stdin.lock().split(b'\n') {
            let Ok(bytes) = line else { break };
            let line = String::from_utf8_lossy(&bytes).into_owned();
            if dialogs.take_response(&line) {
                continue;
            }
            if sender.send(line).is_err() {
                break;
            }
        }
        dialogs.cancel_all();
    });
    receiver
}
