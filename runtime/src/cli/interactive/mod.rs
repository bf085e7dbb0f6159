//! Interactive mode: the agent in the terminal for a person. The conversation, an editor and a footer are
//! drawn by pi-tui's differential renderer, inline (the conversation joins the terminal's scrollback) or
//! fullscreen; keys and pastes arrive from an input thread, the session's events from its listeners, and
//! prompts run as local tasks so the person can steer, queue follow-ups or abort while the agent works.

mod app;
mod commands;
mod completion;
mod dialogs;
mod events;
mod footer;
mod format;
mod keys;
mod login;
mod picker;
mod reload;
mod selectors;
mod session_actions;
mod session_list;
mod shell;
mod tool_view;
mod transcript;
mod tree_items;
mod tree_selector;
pub(super) mod trust_prompt;

use std::process::ExitCode;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use pi_tui::renderer::{DiffRenderer, ScreenMode};
use pi_tui::terminal::{InputEvent, ProcessTerminal};
use tokio::sync::mpsc;

use self::app::App;
use super::error::CliError;
use super::model_catalog::ModelCatalog;
use super::modes::open_session;
use super::setup::Prepared;
use super::signals::{SETTLE_TIMEOUT, StopSignals};
use crate::agent_session::{SessionEventSink, StreamingBehavior};
use crate::extension::{ExtensionErrorEvent, SessionChangeReason, SessionShutdownEvent, SessionStartEvent};
use crate::protocol::{AgentEvent, SessionOnlyEvent};
use crate::tools::process_groups::kill_all_process_groups;

/// What reaches the interactive loop.
pub enum UiEvent {
    Input(InputEvent),
    Agent(Box<AgentEvent>),
    Session(SessionOnlyEvent),
    ExtensionError(String),
    /// A prompt task ended (with the error text when it failed).
    PromptFinished(Option<String>),
    /// Text to send as a prompt (already expanded), or to queue while the agent works.
    Prompt {
        text: String,
        behavior: StreamingBehavior,
    },
    /// An extension's command acts on the session.
    SessionAction(Box<session_actions::ActionRequest>),
    /// An extension opened a dialog.
    Dialog(Box<dialogs::DialogRequest>),
    /// An entry for the conversation, made by background work.
    Show(Box<transcript::Item>),
    /// The session changed under the conversation (resumed, moved in the tree): draw it again; text for the
    /// editor and a notice may come along.
    Reload {
        editor_text: Option<String>,
        notice: Option<String>,
    },
    /// `/reload` read the files again: what the screen shows of them.
    Reloaded(Box<reload::ReloadedScreen>),
    /// auth.json changed (`/login`, `/logout`): the models that are available now.
    Models(Box<ModelCatalog>),
    /// Work run for the user ended: a `!command`, a compaction, a session switch; its notice.
    TaskFinished(Option<String>),
    Tick,
}

/// What the interactive mode needs besides the prepared session.
pub struct InteractiveOptions {
    pub agent_name: String,
    pub version: String,
    pub screen: ScreenMode,
    pub theme: Option<String>,
    /// Open the session selector first (`-r`); leaving it quits.
    pub pick_session: bool,
    /// Reads the files again for `/reload`.
    pub reloader: Option<Rc<crate::cli::reload::Reloader>>,
    /// The pi release whose screens to reproduce (pi 1.5 collapses `read` calls).
    pub pi_compat: crate::protocol::PiCompat,
    /// pi 1.5's project trust (`/trust`); `None` at 0.73.
    pub trust: Option<trust_prompt::TrustContext>,
}

/// Runs the interactive mode until the person quits; returns the exit code.
pub async fn run_interactive(
    prepared: Prepared,
    models: ModelCatalog,
    options: InteractiveOptions,
    initial_messages: Vec<String>,
) -> Result<ExitCode, CliError> {
    let (sender, mut receiver) = mpsc::unbounded_channel::<UiEvent>();
    let errors = sender.clone();
    prepared.extensions.on_error(Arc::new(move |error: &ExtensionErrorEvent| {
        let text = format!("Extension {} failed on {}: {}", error.extension_path, error.event, error.error);
        let _ = errors.send(UiEvent::ExtensionError(text));
    }));
    let session_events = sender.clone();
    let emit: SessionEventSink = Arc::new(move |event: &SessionOnlyEvent| {
        let _ = session_events.send(UiEvent::Session(event.clone()));
    });
    let resources = prepared.resources.clone();
    let tool_env = prepared.tool_env.clone();
    let cwd = prepared.cwd.clone();
    let logins =
        login::LoginContext { keyring: prepared.oauth.clone(), auth_path: prepared.agent_dir.join("auth.json") };
    prepared.extensions.set_ui(Arc::new(dialogs::InteractiveUi { sender: sender.clone() }));
    prepared
        .extensions
        .set_session_actions(Arc::new(session_actions::InteractiveSessionActions { sender: sender.clone() }));
    let session = Rc::new(open_session(prepared, emit).await?);
    let agent_events = sender.clone();
    session.subscribe(move |event: &AgentEvent| {
        let _ = agent_events.send(UiEvent::Agent(Box::new(event.clone())));
    });

    let mut terminal = ProcessTerminal::start(options.screen).map_err(CliError::Runtime)?;
    let input = sender.clone();
    terminal.spawn_input(move |event| input.send(UiEvent::Input(event)).is_ok());
    let mut renderer = DiffRenderer::new(options.screen);
    let mut app = App::new(session.clone(), sender.clone(), resources, models, tool_env, cwd, &options);
    app.logins = Some(logins);

    let mut signals = StopSignals::install_without_interrupt().map_err(CliError::Runtime)?;
    let local = tokio::task::LocalSet::new();
    let signalled = local
        .run_until(async {
            let start = SessionStartEvent { reason: SessionChangeReason::Startup, previous_session_file: None };
            session.extensions().emit_session_start(&start).await;
            let ticker = sender.clone();
            tokio::task::spawn_local(async move {
                let mut interval = tokio::time::interval(Duration::from_millis(80));
                loop {
                    interval.tick().await;
                    if ticker.send(UiEvent::Tick).is_err() {
                        break;
                    }
                }
            });
            if options.pick_session {
                app.open_session_picker(false, true);
            }
            let mut initial = initial_messages.into_iter();
            if let Some(first) = initial.next() {
                app.submit(first, StreamingBehavior::Steer);
                for later in initial {
                    app.submit(later, StreamingBehavior::FollowUp);
                }
            }
            app.draw(&mut terminal, &mut renderer);
            let mut signalled = None;
            loop {
                let event = tokio::select! {
                    event = receiver.recv() => event,
                    code = signals.next() => {
                        signalled = Some(code);
                        break;
                    }
                };
                let Some(event) = event else { break };
                app.handle(event, &mut terminal, &mut renderer).await;
                while let Ok(event) = receiver.try_recv() {
                    app.handle(event, &mut terminal, &mut renderer).await;
                }
                if app.should_exit() {
                    break;
                }
                app.draw(&mut terminal, &mut renderer);
            }
            app.draw(&mut terminal, &mut renderer);
            // Whatever still runs stops here (tools' and commands' process groups are killed); what it
            // finished is saved. After SIGTERM or SIGHUP that may take SETTLE_TIMEOUT at most, and a second
            // signal ends it.
            match signalled {
                None => app.stop_tasks().await,
                Some(_) => tokio::select! {
                    _ = tokio::time::timeout(SETTLE_TIMEOUT, app.stop_tasks()) => {}
                    _ = signals.next() => {}
                },
            }
            signalled
        })
        .await;
    kill_all_process_groups();
    let _ = terminal.write(&renderer.finish());
    terminal.stop();
    let shutdown = SessionShutdownEvent { reason: SessionChangeReason::Quit, target_session_file: None };
    session.extensions().emit_session_shutdown(&shutdown).await;
    if let Some(error) = session.write_error() {
        eprintln!("Warning: the session could not be saved: {error}");
    }
    Ok(signalled.map_or(ExitCode::SUCCESS, ExitCode::from))
}
