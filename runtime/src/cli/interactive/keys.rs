//! Keys and submitted text: the editor gets every key first; what it leaves (Escape, Ctrl+C, Alt+Enter, the
//! toggles) is the application's. A submitted text is a `!command`, a built-in `/command`, or a prompt: run
//! now, or queued as steering (Enter) or a follow-up (Alt+Enter) while the agent works.

use std::time::{Duration, Instant};

use pi_tui::Role;
use pi_tui::editor::EditorOutcome;
use pi_tui::keys::is_key;
use pi_tui::renderer::DiffRenderer;
use pi_tui::terminal::{InputEvent, ProcessTerminal};

use super::UiEvent;
use super::app::App;
use crate::agent_session::{PromptOptions, StreamingBehavior};
use crate::extension::InputSource;

/// Two presses of Ctrl+C (or Escape) within this time count as a double press.
const DOUBLE_PRESS: Duration = Duration::from_millis(500);

impl App {
    /// Handles a key or paste; returns whether it may have changed what the footer shows (anything but
    /// editing the draft).
    pub(super) async fn on_input(
        &mut self,
        input: InputEvent,
        terminal: &mut ProcessTerminal,
        renderer: &mut DiffRenderer,
    ) -> bool {
        let key = match input {
            InputEvent::Paste(text) => {
                self.editor.handle_paste(&text);
                return false;
            }
            InputEvent::Resize(..) => return false,
            InputEvent::Key(key) => key,
            _ => return false,
        };
        if self.overlay.is_some() {
            self.on_overlay_key(&key);
            return true;
        }
        let ctrl_c = is_key(&key, "ctrl+c");
        if !ctrl_c {
            self.hint = None;
        }
        match self.editor.handle_key(&key) {
            EditorOutcome::Submit(text) => {
                self.submit(text, StreamingBehavior::Steer);
                return true;
            }
            EditorOutcome::Ignored => {}
            _ => return false,
        }
        if ctrl_c {
            self.on_ctrl_c();
        } else if is_key(&key, "escape") {
            self.on_escape();
        } else if is_key(&key, "alt+escape") {
            // Two Escapes that arrived together read as Alt+Escape.
            self.on_escape();
            self.on_escape();
        } else if is_key(&key, "ctrl+d") {
            if self.editor.is_empty() {
                self.exit = true;
            }
        } else if is_key(&key, "alt+enter") {
            let text = self.editor.text();
            self.editor.clear();
            self.submit(text, StreamingBehavior::FollowUp);
        } else if is_key(&key, "alt+up") {
            self.restore_queue();
        } else if is_key(&key, "ctrl+o") {
            self.transcript.expand_tools = !self.transcript.expand_tools;
        } else if is_key(&key, "ctrl+t") {
            self.transcript.show_thinking = !self.transcript.show_thinking;
        } else if is_key(&key, "ctrl+l") {
            self.open_model_picker();
        } else if is_key(&key, "ctrl+p") {
            self.cycle_model(false);
        } else if is_key(&key, "ctrl+shift+p") {
            self.cycle_model(true);
        } else if is_key(&key, "shift+tab") {
            self.cycle_thinking();
        } else if is_key(&key, "ctrl+z") {
            suspend(terminal, renderer);
        } else if is_key(&key, "ctrl+g") {
            self.edit_externally(terminal, renderer);
        } else if is_key(&key, "pageup") {
            self.scroll += self.screen_height.saturating_sub(4).max(1);
        } else if is_key(&key, "pagedown") {
            self.scroll = self.scroll.saturating_sub(self.screen_height.saturating_sub(4).max(1));
        }
        true
    }

    fn on_ctrl_c(&mut self) {
        let now = Instant::now();
        if self.last_ctrl_c.is_some_and(|last| now.duration_since(last) <= DOUBLE_PRESS) {
            self.exit = true;
            return;
        }
        // The first press clears the editor; a second one soon after quits.
        self.editor.clear();
        self.last_ctrl_c = Some(now);
        self.hint = Some("Press ctrl+c again to exit".to_owned());
    }

    fn on_escape(&mut self) {
        if self.busy || self.session.agent().is_streaming() {
            self.session.abort();
            self.status = None;
            return;
        }
        if self.session.is_compacting() {
            self.session.abort();
            return;
        }
        // Twice on an empty editor: the session tree.
        let now = Instant::now();
        if self.editor.is_empty() && self.last_escape.is_some_and(|last| now.duration_since(last) <= DOUBLE_PRESS) {
            self.last_escape = None;
            self.open_tree_picker();
            return;
        }
        self.last_escape = Some(now);
    }

    /// Runs what the person submitted.
    pub(super) fn submit(&mut self, text: String, behavior: StreamingBehavior) {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return;
        }
        self.editor.add_to_history(text.clone());
        if let Some(command) = trimmed.strip_prefix('!') {
            let (command, excluded) = match command.strip_prefix('!') {
                Some(rest) => (rest.trim().to_owned(), true),
                None => (command.trim().to_owned(), false),
            };
            return self.run_user_bash(command, excluded);
        }
        if trimmed.starts_with('/') && self.run_builtin_command(trimmed) {
            return;
        }
        if self.run_yaml_command(trimmed, behavior) {
            return;
        }
        self.send_prompt(text, behavior, true);
    }

    /// Sends `text` as a prompt, or queues it while the agent works (commands of extensions run at once);
    /// `expand: false` for text already expanded (a YAML command's prompt).
    pub(super) fn send_prompt(&mut self, text: String, behavior: StreamingBehavior, expand: bool) {
        let trimmed = text.trim();
        let extension_command = trimmed
            .strip_prefix('/')
            .and_then(|body| body.split_whitespace().next())
            .is_some_and(|name| self.session.extensions().command(name).is_some());
        if self.busy && !extension_command {
            let delivered = self.session.queue_message(text.clone(), Vec::new(), behavior);
            self.pending.push(&text, &delivered, behavior);
            return;
        }
        let session = self.session.clone();
        let sender = self.sender.clone();
        let running_prompt = !self.busy;
        if running_prompt {
            self.busy = true;
        }
        let options = PromptOptions {
            source: InputSource::Interactive,
            streaming_behavior: Some(behavior),
            expand,
            ..PromptOptions::default()
        };
        let task = tokio::task::spawn_local(async move {
            let outcome = session.prompt_with(text, options).await;
            let error = outcome.err().map(|error| error.to_string());
            let event = if running_prompt { UiEvent::PromptFinished(error) } else { UiEvent::TaskFinished(error) };
            let _ = sender.send(event);
        });
        self.keep(task);
    }

    /// Alt+Up: the queued messages come back into the editor and leave the agent's queues.
    fn restore_queue(&mut self) {
        let texts = self.pending.take_all();
        if texts.is_empty() {
            return;
        }
        self.session.agent().clear_all_queues();
        let mut text = texts.join("\n\n");
        let draft = self.editor.text();
        if !draft.trim().is_empty() {
            text.push_str("\n\n");
            text.push_str(&draft);
        }
        self.editor.set_text(&text);
    }

    fn cycle_thinking(&mut self) {
        match self.session.cycle_thinking_level() {
            Ok(Some(level)) => self.transcript.notice(format!("Thinking level: {}", level.as_str()), Role::Muted),
            Ok(None) => self.transcript.notice("This model does not reason.", Role::Muted),
            Err(error) => self.transcript.notice(format!("Error: {error}"), Role::Error),
        }
    }

    /// Ctrl+G: the draft opens in `$VISUAL` or `$EDITOR`; what is saved comes back.
    fn edit_externally(&mut self, terminal: &mut ProcessTerminal, renderer: &mut DiffRenderer) {
        let set = |name: &str| std::env::var(name).ok().filter(|value| !value.trim().is_empty());
        let Some(program) = set("VISUAL").or_else(|| set("EDITOR")) else {
            self.transcript.notice("Set $VISUAL or $EDITOR to edit the message in your editor.", Role::Warning);
            return;
        };
        let path = std::env::temp_dir().join(format!("{}-message-{}.md", self.agent_name, uuid::Uuid::new_v4()));
        if let Err(error) = std::fs::write(&path, self.editor.text()) {
            self.transcript.notice(format!("Error: cannot write {}: {error}", path.display()), Role::Error);
            return;
        }
        terminal.suspend();
        let status =
            std::process::Command::new("sh").arg("-c").arg(format!("{program} \"$1\"")).arg("sh").arg(&path).status();
        let _ = terminal.resume();
        renderer.invalidate();
        match status {
            Ok(status) if status.success() => {
                if let Ok(text) = std::fs::read_to_string(&path) {
                    self.editor.set_text(text.trim_end_matches('\n'));
                }
            }
            Ok(status) => self
                .transcript
                .notice(format!("The editor exited with {status}; the draft is unchanged."), Role::Warning),
            Err(error) => self.transcript.notice(format!("Error: cannot start {program}: {error}"), Role::Error),
        }
        let _ = std::fs::remove_file(&path);
    }
}

/// Ctrl+Z: the terminal goes back to the shell until the job is continued.
fn suspend(terminal: &mut ProcessTerminal, renderer: &mut DiffRenderer) {
    terminal.suspend();
    // SAFETY: raising a signal at our own process has no memory-safety preconditions.
    unsafe {
        libc::raise(libc::SIGTSTP);
    }
    let _ = terminal.resume();
    renderer.invalidate();
}
