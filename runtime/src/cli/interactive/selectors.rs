//! The selectors that take the editor's place: models (`/model`, Ctrl+L), sessions to resume (`/resume`, `-r`,
//! Tab for every project), forks; the session tree is in `tree_selector.rs`.

use std::path::{Path, PathBuf};

use pi_tui::Role;
use pi_tui::keys::KeyEvent;
use pi_tui::keys::is_key;
use pi_tui::select_list::SelectItem;

use super::UiEvent;
use super::app::App;
use super::dialogs::{ChoiceDialog, TextDialog};
use super::picker::{Picker, PickerOutcome};
use super::session_list::{SessionSummary, list_sessions};
use super::tree_selector::{LabelPrompt, TreeSelector};
use crate::extension::ModelSelectSource;

/// What the editor's place holds instead of the editor.
pub enum Overlay {
    Models(Picker),
    Sessions {
        picker: Picker,
        all_projects: bool,
        exit_on_cancel: bool,
    },
    Tree(TreeSelector),
    /// The label prompt over the tree (Shift+L).
    TreeLabel(Box<LabelPrompt>),
    /// The user messages of this branch, to fork before one of them.
    Fork(Picker),
    /// An extension's select or confirm dialog.
    Choice(ChoiceDialog),
    /// An extension's input or editor dialog.
    Text(TextDialog),
    /// `/trust` (pi 1.5).
    Trust(super::trust_prompt::TrustSelector),
}

impl Overlay {
    pub fn render(&mut self, width: usize, theme: &pi_tui::Theme) -> Vec<String> {
        match self {
            Self::Choice(dialog) => dialog.picker.render(width),
            Self::Text(dialog) => dialog.render(width, theme),
            Self::Tree(tree) => tree.render(width),
            Self::Trust(selector) => selector.render(width),
            Self::TreeLabel(prompt) => prompt.render(width, theme),
            Self::Models(picker) | Self::Sessions { picker, .. } | Self::Fork(picker) => picker.render(width),
        }
    }
}

impl App {
    pub(super) fn open_model_picker(&mut self) {
        let current = self.session.agent().model().map(|model| format!("{}/{}", model.provider, model.id));
        let mut items = Vec::new();
        let mut details = Vec::new();
        for registered in self.models.available() {
            let model = &registered.model;
            let value = format!("{}/{}", model.provider, model.id);
            details.push((value.clone(), format!("Model name: {}", model.name)));
            items.push(SelectItem::new(value, model.id.clone()).with_hint(format!("[{}]", model.provider)));
        }
        let hints = vec!["Models whose provider has a key. Type to search; enter: switch, esc: close.".to_owned()];
        let mut picker = Picker::new("Select a model", hints, items, &self.theme).with_details(details);
        if let Some(current) = current {
            picker.select_value(&current);
            picker.mark_value(Some(current));
        }
        self.overlay = Some(Overlay::Models(picker));
    }

    pub(super) fn open_session_picker(&mut self, all_projects: bool, exit_on_cancel: bool) {
        let sessions = self.sessions_for(all_projects);
        let current = self.session.manager().path().map(Path::to_path_buf);
        let items = session_items(&sessions, all_projects);
        let scope = if all_projects { "every project" } else { "this project" };
        let hints = vec![format!(
            "Sessions of {scope}, latest first. Type to search; enter: resume, tab: {}, esc: close.",
            if all_projects { "this project only" } else { "every project" }
        )];
        let mut picker = Picker::new("Resume a session", hints, items, &self.theme);
        picker.mark_value(current.map(|path| path.to_string_lossy().into_owned()));
        self.overlay = Some(Overlay::Sessions { picker, all_projects, exit_on_cancel });
    }

    pub(super) fn open_fork_picker(&mut self) {
        let items: Vec<SelectItem> = {
            let manager = self.session.manager();
            manager
                .tree()
                .current_path()
                .iter()
                .filter_map(|entry| match &entry.kind {
                    crate::session::EntryKind::Message { message: crate::protocol::AgentMessage::User(user) } => {
                        let text: String = user.content.text().split_whitespace().collect::<Vec<_>>().join(" ");
                        Some(SelectItem::new(entry.id.clone(), text).with_opaque_value())
                    }
                    _ => None,
                })
                .rev()
                .collect()
        };
        if items.is_empty() {
            self.transcript.notice("There is no message of yours to fork from yet.", Role::Muted);
            return;
        }
        let hints = vec![
            "A new session with everything before the message you pick; the message comes back to edit.".to_owned(),
        ];
        self.overlay = Some(Overlay::Fork(Picker::new("Fork from a message", hints, items, &self.theme)));
    }

    fn fork(&mut self, entry_id: String) {
        if self.refuse_while_busy() {
            return;
        }
        let session = self.session.clone();
        let sender = self.sender.clone();
        let task = tokio::task::spawn_local(async move {
            let event = match session.fork_before(&entry_id).await {
                Ok(crate::agent_session::ForkOutcome::Forked { text }) => {
                    UiEvent::Reload { editor_text: Some(text), notice: Some("Forked into a new session.".to_owned()) }
                }
                Ok(_) => {
                    UiEvent::Reload { editor_text: None, notice: Some("An extension kept this session.".to_owned()) }
                }
                Err(error) => UiEvent::Reload { editor_text: None, notice: Some(format!("Error: {error}")) },
            };
            let _ = sender.send(event);
        });
        self.keep(task);
    }

    /// The sessions of this project (or of every project), newest first.
    fn sessions_for(&self, all_projects: bool) -> Vec<SessionSummary> {
        let Some(dir) = self.sessions_dir.clone() else { return Vec::new() };
        let mut dirs = vec![dir.clone()];
        if all_projects
            && let Some(root) = dir.parent()
            && let Ok(entries) = std::fs::read_dir(root)
        {
            dirs = entries.flatten().map(|entry| entry.path()).filter(|path| path.is_dir()).collect();
        }
        let mut sessions: Vec<SessionSummary> = dirs.iter().flat_map(|dir| list_sessions(dir)).collect();
        sessions.sort_by_key(|summary| std::cmp::Reverse(summary.modified));
        sessions
    }

    /// A key while a selector is open.
    pub(super) fn on_overlay_key(&mut self, key: &KeyEvent) {
        let Some(mut overlay) = self.overlay.take() else { return };
        let outcome = match &mut overlay {
            Overlay::Models(picker) | Overlay::Sessions { picker, .. } | Overlay::Fork(picker) => {
                picker.handle_key(key)
            }
            Overlay::Tree(_) | Overlay::TreeLabel(_) => {
                match overlay {
                    Overlay::Tree(tree) => self.on_tree_key(tree, key),
                    Overlay::TreeLabel(prompt) => self.on_label_key(*prompt, key),
                    other => self.overlay = Some(other),
                }
                self.next_dialog();
                return;
            }
            Overlay::Trust(_) => {
                if let Overlay::Trust(selector) = overlay {
                    self.on_trust_key(selector, key);
                }
                self.next_dialog();
                return;
            }
            Overlay::Choice(_) | Overlay::Text(_) => {
                self.overlay = match overlay {
                    Overlay::Choice(dialog) => self.on_choice_key(dialog, key).map(Overlay::Choice),
                    Overlay::Text(dialog) => self.on_text_key(dialog, key).map(Overlay::Text),
                    other => Some(other),
                };
                self.next_dialog();
                return;
            }
        };
        match (outcome, overlay) {
            (PickerOutcome::Stay, overlay) => self.overlay = Some(overlay),
            (PickerOutcome::Closed, Overlay::Sessions { exit_on_cancel: true, .. }) => self.exit = true,
            (PickerOutcome::Closed, _) => {}
            (PickerOutcome::Picked { value, .. }, Overlay::Models(_)) => {
                if let Some((provider, id)) = value.split_once('/') {
                    self.apply_model(provider.to_owned(), id.to_owned(), ModelSelectSource::Set);
                }
            }
            (PickerOutcome::Picked { value, .. }, Overlay::Sessions { .. }) => self.resume(PathBuf::from(value)),
            (PickerOutcome::Picked { value, .. }, Overlay::Fork(_)) => self.fork(value),
            (PickerOutcome::Other(key), Overlay::Sessions { exit_on_cancel, all_projects, .. })
                if is_key(&key, "tab") =>
            {
                self.open_session_picker(!all_projects, exit_on_cancel);
            }
            (PickerOutcome::Other(_), overlay) => self.overlay = Some(overlay),
            (
                _,
                overlay @ (Overlay::Choice(_)
                | Overlay::Text(_)
                | Overlay::Tree(_)
                | Overlay::TreeLabel(_)
                | Overlay::Trust(_)),
            ) => self.overlay = Some(overlay),
        }
        self.next_dialog();
    }

    /// Switches to the model `provider/id` in the background; a notice tells how it went.
    pub(super) fn apply_model(&mut self, provider: String, id: String, source: ModelSelectSource) {
        self.switch_model_to(provider, id, None, source);
    }

    /// [`App::apply_model`], then the thinking level `thinking` when given (a scoped model's).
    fn switch_model_to(
        &mut self,
        provider: String,
        id: String,
        thinking: Option<crate::ai::ThinkingLevel>,
        source: ModelSelectSource,
    ) {
        let chosen = match self.models.choose(&provider, &id) {
            Ok(chosen) => chosen,
            Err(error) => {
                self.transcript.notice(format!("Error: {error}"), Role::Error);
                return;
            }
        };
        let session = self.session.clone();
        let sender = self.sender.clone();
        let task = tokio::task::spawn_local(async move {
            let map = chosen.thinking_level_map.as_ref();
            let switched = match session.set_model(chosen.model, Some(chosen.api_key), map, source).await {
                Ok(level) => match thinking {
                    Some(wanted) => session.set_thinking_level(wanted),
                    None => Ok(level),
                },
                Err(error) => Err(error),
            };
            let notice = match switched {
                Ok(level) => format!("Model: {provider}/{id} (thinking: {})", level.as_str()),
                Err(error) => format!("Error: {error}"),
            };
            let _ = sender.send(UiEvent::TaskFinished(Some(notice)));
        });
        self.keep(task);
    }

    /// Ctrl+P / Shift+Ctrl+P: the next (or previous) model with a key, or of the scoped models (`--models`).
    pub(super) fn cycle_model(&mut self, backwards: bool) {
        let current = self.session.agent().model();
        let Some(target) = self.models.cycle_from(current.as_ref(), backwards) else {
            self.transcript.notice("There is no other model to cycle to.", Role::Muted);
            return;
        };
        self.switch_model_to(target.provider, target.id, target.thinking, ModelSelectSource::Cycle);
    }

    /// Continues in the session file `path`: the conversation is redrawn and its model restored.
    fn resume(&mut self, path: PathBuf) {
        if self.refuse_while_busy() {
            return;
        }
        let session = self.session.clone();
        let sender = self.sender.clone();
        let models = self.models.clone();
        let task = tokio::task::spawn_local(async move {
            let notice = match session.switch_session(&path).await {
                Ok(true) => {
                    let current = session.agent().model().map(|model| (model.provider, model.id));
                    let restore = session.session_model().filter(|used| Some(used) != current.as_ref());
                    match restore.map(|(provider, id)| models.choose(&provider, &id)) {
                        Some(Ok(chosen)) => {
                            let map = chosen.thinking_level_map.as_ref();
                            let source = ModelSelectSource::Restore;
                            let _ = session.set_model(chosen.model, Some(chosen.api_key), map, source).await;
                        }
                        Some(Err(error)) => {
                            let _ = sender.send(UiEvent::TaskFinished(Some(format!("Kept the model: {error}"))));
                        }
                        None => {}
                    }
                    format!("Resumed {}", path.display())
                }
                Ok(false) => "An extension kept this session.".to_owned(),
                Err(error) => format!("Error: {error}"),
            };
            let _ = sender.send(UiEvent::Reload { editor_text: None, notice: Some(notice) });
        });
        self.keep(task);
    }
}

fn session_items(sessions: &[SessionSummary], all_projects: bool) -> Vec<SelectItem> {
    sessions
        .iter()
        .map(|summary| {
            let title =
                summary.name.clone().or_else(|| summary.first_message.clone()).unwrap_or_else(|| "(empty)".to_owned());
            let mut hint = format!("{} · {} messages", summary.age(), summary.messages);
            if all_projects {
                hint.push_str(&format!(" · {}", summary.cwd));
            }
            SelectItem::new(summary.path.to_string_lossy().into_owned(), title.replace('\n', " "))
                .with_hint(hint)
                .with_opaque_value()
        })
        .collect()
}
