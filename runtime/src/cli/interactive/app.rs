//! The interactive mode's state: the conversation, the editor, what runs in the background, and how a frame
//! is laid out (conversation, status, queued messages, editor, footer).

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pi_tui::editor::Editor;
use pi_tui::renderer::{DiffRenderer, ScreenMode};
use pi_tui::terminal::ProcessTerminal;
use pi_tui::text::{truncate_to_width, wrap_text};
use pi_tui::{ColorDepth, Role, Theme};
use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::completion::CommandCompletion;
use super::footer::{FooterInfo, footer, header};
use super::format::{git_branch, home_relative};
use super::selectors::Overlay;
use super::transcript::{Item, Transcript};
use super::{InteractiveOptions, UiEvent};
use crate::agent_session::AgentSession;
use crate::cli::model_catalog::ModelCatalog;
use crate::cli::pending_queue::PendingQueue;
use crate::cli::resources::Resources;
use crate::extension::WidgetPlacement;
use crate::protocol::AgentEvent;
use crate::tools::ToolEnvironment;

const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// Everything the interactive mode keeps between events.
pub struct App {
    pub(super) session: Rc<AgentSession>,
    pub(super) sender: UnboundedSender<UiEvent>,
    pub(super) models: Rc<ModelCatalog>,
    /// The selector shown in the editor's place, if any.
    pub(super) overlay: Option<Overlay>,
    /// Dialogs that arrived while another selector or dialog was open.
    pub(super) waiting_dialogs: std::collections::VecDeque<super::dialogs::DialogRequest>,
    /// Where this project's sessions are (none for a session kept in memory).
    pub(super) sessions_dir: Option<PathBuf>,
    pub(super) tool_env: ToolEnvironment,
    /// The YAML's `commands:`.
    pub(super) yaml_commands: Vec<crate::definition::CommandDefinition>,
    pub(super) agent_name: String,
    pub(super) version: String,
    pub(super) cwd: PathBuf,
    pub(super) reloader: Option<Rc<crate::cli::reload::Reloader>>,
    /// pi 1.5's project trust, for `/trust`.
    pub(super) trust: Option<super::trust_prompt::TrustContext>,
    /// The run's subscription logins, for `/login` and `/logout`.
    pub(super) logins: Option<super::login::LoginContext>,
    pub(super) theme: Theme,
    pub(super) transcript: Transcript,
    pub(super) editor: Editor,
    pub(super) pending: Arc<PendingQueue>,
    /// A prompt task runs (true before the agent starts streaming, too).
    pub(super) busy: bool,
    /// What the status line says while something runs besides a prompt (compaction, retry wait).
    pub(super) status: Option<String>,
    /// A hint under the conversation that the next key clears ("press ctrl+c again to exit").
    pub(super) hint: Option<String>,
    pub(super) last_ctrl_c: Option<Instant>,
    pub(super) last_escape: Option<Instant>,
    pub(super) exit: bool,
    pub(super) tasks: Rc<RefCell<Vec<JoinHandle<()>>>>,
    /// Cancelled on the way out; the person's commands (`!command`, the YAML's commands) run with a child of it.
    pub(super) stop: CancellationToken,
    pub(super) dirty: bool,
    spinner: usize,
    cwd_label: String,
    branch: Option<String>,
    /// Fullscreen: how many lines the conversation is scrolled up from its end.
    pub(super) scroll: usize,
    pub(super) screen_height: usize,
    /// Extensions' footer statuses, by key.
    pub(super) statuses: std::collections::BTreeMap<String, String>,
    /// Extensions' widgets (lines by the editor), by key.
    pub(super) widgets: std::collections::BTreeMap<String, (Vec<String>, WidgetPlacement)>,
    /// The footer as last drawn: width, lines, whether the model thinks.
    footer_cache: Option<(usize, Vec<String>, bool)>,
}

impl App {
    pub fn new(
        session: Rc<AgentSession>,
        sender: UnboundedSender<UiEvent>,
        resources: Resources,
        models: ModelCatalog,
        tool_env: ToolEnvironment,
        cwd: PathBuf,
        options: &InteractiveOptions,
    ) -> Self {
        let depth = ColorDepth::detect(|name| std::env::var(name).ok());
        let theme =
            options.theme.as_deref().and_then(|name| Theme::named(name, depth)).unwrap_or_else(|| Theme::dark(depth));
        let mut transcript = Transcript::new();
        transcript.collapse_reads = options.pi_compat.is_v1_5();
        transcript.push(Item::Static(header(&options.agent_name, &options.version, &theme)));
        let messages = session.agent().messages();
        if !messages.is_empty() {
            transcript.load(&messages, &theme);
        }
        let mut editor = Editor::new(theme.clone());
        editor.set_autocomplete(Box::new(CommandCompletion::new(&session, &resources, cwd.clone())));
        for text in user_history(&messages) {
            editor.add_to_history(text);
        }
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let sessions_dir = session.manager().path().and_then(|path| path.parent().map(PathBuf::from));
        Self {
            cwd_label: home_relative(&cwd, home.as_deref()),
            branch: git_branch(&cwd),
            cwd,
            session,
            sender,
            models: Rc::new(models),
            overlay: None,
            waiting_dialogs: std::collections::VecDeque::new(),
            sessions_dir,
            yaml_commands: resources.commands.clone(),
            tool_env,
            agent_name: options.agent_name.clone(),
            version: options.version.clone(),
            reloader: options.reloader.clone(),
            trust: options.trust.clone(),
            logins: None,
            theme,
            transcript,
            editor,
            pending: Arc::default(),
            busy: false,
            status: None,
            hint: None,
            last_ctrl_c: None,
            last_escape: None,
            exit: false,
            tasks: Rc::default(),
            stop: CancellationToken::new(),
            dirty: true,
            spinner: 0,
            scroll: 0,
            screen_height: 24,
            footer_cache: None,
            statuses: Default::default(),
            widgets: Default::default(),
        }
    }

    pub fn should_exit(&self) -> bool {
        self.exit
    }

    /// Handles one event; the caller draws afterwards.
    pub async fn handle(&mut self, event: UiEvent, terminal: &mut ProcessTerminal, renderer: &mut DiffRenderer) {
        // What the footer shows changes with whole messages, not with streamed deltas or typing.
        let footer_stays = match &event {
            UiEvent::Agent(event) => {
                matches!(**event, AgentEvent::MessageUpdate { .. } | AgentEvent::ToolExecutionUpdate { .. })
            }
            UiEvent::Tick | UiEvent::Input(_) => true,
            _ => false,
        };
        if !footer_stays {
            self.footer_cache = None;
        }
        match event {
            UiEvent::Input(input) => {
                if self.on_input(input, terminal, renderer).await {
                    self.footer_cache = None;
                }
                self.dirty = true;
            }
            UiEvent::Agent(event) => {
                self.on_agent_event(*event);
                self.dirty = true;
            }
            UiEvent::Session(event) => {
                self.on_session_event(event);
                self.dirty = true;
            }
            UiEvent::ExtensionError(text) => {
                self.transcript.notice(text, Role::Error);
                self.dirty = true;
            }
            UiEvent::PromptFinished(error) => {
                self.busy = false;
                self.status = None;
                if let Some(error) = error {
                    self.transcript.notice(format!("Error: {error}"), Role::Error);
                }
                self.dirty = true;
            }
            UiEvent::Reload { editor_text, notice } => {
                self.status = None;
                let messages = self.session.agent().messages();
                self.transcript.load(&messages, &self.theme);
                if let Some(text) = editor_text {
                    self.editor.set_text(&text);
                }
                if let Some(text) = notice {
                    let role = if text.starts_with("Error") { Role::Error } else { Role::Muted };
                    self.transcript.notice(text, role);
                }
                self.dirty = true;
            }
            UiEvent::Dialog(dialog) => {
                self.close_abandoned_dialog();
                self.open_dialog(*dialog);
            }
            UiEvent::SessionAction(request) => self.perform_session_action(*request),
            UiEvent::Prompt { text, behavior } => {
                self.status = None;
                self.send_prompt(text, behavior, false);
                self.dirty = true;
            }
            UiEvent::Show(item) => {
                self.transcript.push(*item);
                self.dirty = true;
            }
            UiEvent::Reloaded(reloaded) => {
                self.apply_reload(*reloaded);
                self.dirty = true;
            }
            UiEvent::Models(models) => self.models = Rc::new(*models),
            UiEvent::TaskFinished(notice) => {
                self.close_abandoned_dialog();
                self.status = None;
                if let Some(text) = notice {
                    self.transcript.notice(text, Role::Muted);
                }
                self.dirty = true;
            }
            UiEvent::Tick => {
                self.run_deferred_when_idle();
                if self.busy || self.status.is_some() {
                    self.spinner = (self.spinner + 1) % SPINNER.len();
                    self.dirty = true;
                }
            }
        }
    }

    /// Runs what extensions asked for while the agent was idle (the panels' Spine waking it for a process
    /// that exited, a triggered message), as a prompt would run.
    fn run_deferred_when_idle(&mut self) {
        if self.busy || !self.session.has_deferred() {
            return;
        }
        self.busy = true;
        let (session, sender) = (self.session.clone(), self.sender.clone());
        let task = tokio::task::spawn_local(async move {
            let error = session.run_deferred().await.err().map(|error| error.to_string());
            let _ = sender.send(UiEvent::PromptFinished(error));
        });
        self.keep(task);
    }

    /// Whether the agent works (and so what changes the session must wait); says so when it does.
    pub(super) fn refuse_while_busy(&mut self) -> bool {
        if self.busy {
            self.transcript.notice("Wait for the agent to finish (or press Escape) first.", Role::Warning);
        }
        self.busy
    }

    /// Keeps a background task so quitting can wait for it.
    pub(super) fn keep(&self, task: JoinHandle<()>) {
        let mut tasks = self.tasks.borrow_mut();
        tasks.retain(|task| !task.is_finished());
        tasks.push(task);
    }

    /// The way out: stops the agent and the person's commands (killing their process groups) and waits until
    /// they have ended and saved what they finished. The abort is repeated until then: a prompt task that had
    /// not started its run yet would otherwise start it afterwards, with fresh cancellation.
    pub async fn stop_tasks(&self) {
        self.stop.cancel();
        let tasks: Vec<JoinHandle<()>> = self.tasks.borrow_mut().drain(..).collect();
        let stopped = async {
            for task in tasks {
                let _ = task.await;
            }
            self.session.agent().wait_for_idle().await;
        };
        tokio::pin!(stopped);
        loop {
            self.session.abort();
            if tokio::time::timeout(Duration::from_millis(100), &mut stopped).await.is_ok() {
                break;
            }
        }
    }

    /// Draws the frame when something changed.
    pub fn draw(&mut self, terminal: &mut ProcessTerminal, renderer: &mut DiffRenderer) {
        if !self.dirty {
            return;
        }
        self.dirty = false;
        let (columns, rows) = terminal.size();
        let (width, height) = (usize::from(columns).max(1), usize::from(rows).max(1));
        self.screen_height = height;
        let bottom = self.bottom(width);
        let bytes = match renderer.mode() {
            ScreenMode::Fullscreen => {
                let window = self.fullscreen_frame(width, height, bottom);
                renderer.render(&window, width, height)
            }
            _ => {
                let frame = self.transcript.frame(width, &self.theme, bottom);
                renderer.render_from(frame.lines, frame.stable, width, height)
            }
        };
        let _ = terminal.write(&bytes);
    }

    /// Fullscreen: the rows of the conversation that fit above the bottom (scrolled up by `scroll`), then it.
    fn fullscreen_frame(&mut self, width: usize, height: usize, bottom: Vec<String>) -> Vec<String> {
        self.transcript.frame(width, &self.theme, Vec::new());
        let conversation = self.transcript.conversation();
        let room = height.saturating_sub(bottom.len());
        let max_scroll = conversation.len().saturating_sub(room);
        self.scroll = self.scroll.min(max_scroll);
        let end = conversation.len() - self.scroll;
        let start = end.saturating_sub(room);
        let mut window = conversation[start..end].to_vec();
        window.resize(room, String::new());
        window.extend(bottom);
        window
    }

    fn bottom(&mut self, width: usize) -> Vec<String> {
        let theme = &self.theme;
        let mut lines = vec![String::new()];
        if self.busy || self.status.is_some() {
            let label = self.status.clone().unwrap_or_else(|| "Working...".to_owned());
            let spinner = theme.fg(Role::Accent, SPINNER[self.spinner]);
            lines.push(format!(
                " {spinner} {} {}",
                theme.fg(Role::Muted, &label),
                theme.fg(Role::Dim, "(esc to interrupt)")
            ));
            lines.push(String::new());
        }
        let (steering, follow_up) = self.pending.texts();
        for (label, texts) in [("Steering", steering), ("Follow-up", follow_up)] {
            for text in texts {
                let line = format!("{label}: {}", text.replace('\n', " "));
                lines.extend(
                    wrap_text(&theme.fg(Role::Muted, &line), width.saturating_sub(1))
                        .into_iter()
                        .map(|l| format!(" {l}")),
                );
            }
        }
        if let Some(hint) = &self.hint {
            lines.push(format!(" {}", theme.fg(Role::Warning, hint)));
        }
        let (footer_lines, thinking) = self.footer_lines(width);
        self.editor.set_border_color(if thinking { Role::BorderAccent } else { Role::Border });
        lines.extend(self.widget_lines(WidgetPlacement::AboveEditor, width));
        match &mut self.overlay {
            Some(overlay) => lines.extend(overlay.render(width, &self.theme)),
            None => lines.extend(self.editor.render(width)),
        }
        lines.extend(self.widget_lines(WidgetPlacement::BelowEditor, width));
        lines.extend(footer_lines);
        if !self.statuses.is_empty() {
            let statuses: Vec<&str> = self.statuses.values().map(String::as_str).collect();
            let line = truncate_to_width(&statuses.join("  "), width, "…");
            lines.push(self.theme.fg(Role::Muted, &line));
        }
        lines
    }

    /// The extensions' widget lines for one place, each cut to the width.
    fn widget_lines(&self, placement: WidgetPlacement, width: usize) -> Vec<String> {
        self.widgets
            .values()
            .filter(|(_, place)| *place == placement)
            .flat_map(|(lines, _)| lines.iter().map(|line| truncate_to_width(line, width, "…")))
            .collect()
    }

    /// The footer's lines and whether the model thinks, kept until something they show may have changed
    /// (the session's statistics and state are copies of every message: too costly for each streamed delta).
    fn footer_lines(&mut self, width: usize) -> (Vec<String>, bool) {
        if let Some((drawn_width, lines, thinking)) = &self.footer_cache
            && *drawn_width == width
        {
            return (lines.clone(), *thinking);
        }
        let stats = self.session.stats();
        let state = self.session.agent().state();
        let model = state.model.as_ref();
        let level = model.is_some_and(|model| model.reasoning).then(|| state.thinking_level.as_str());
        let session_name = self.session.session_name();
        let info = FooterInfo {
            cwd: &self.cwd_label,
            branch: self.branch.as_deref(),
            session_name: session_name.as_deref(),
            stats: &stats,
            context_window: model.map_or(0, |model| model.context_window),
            auto_compaction: self.session.auto_compaction_enabled(),
            model: model.map(|model| model.id.as_str()),
            thinking: level,
        };
        let lines = footer(&info, width, &self.theme);
        let thinking = level.is_some_and(|level| level != "off");
        self.footer_cache = Some((width, lines.clone(), thinking));
        (lines, thinking)
    }
}

/// The user's earlier prompts, oldest first, for the editor's history.
fn user_history(messages: &[crate::protocol::AgentMessage]) -> Vec<String> {
    messages
        .iter()
        .filter_map(|message| match message {
            crate::protocol::AgentMessage::User(user) => Some(user.content.text()),
            _ => None,
        })
        .filter(|text| !text.trim().is_empty())
        .collect()
}
