//! Extension dialogs in the terminal: a request from a handler becomes a selector or a text box in the
//! editor's place; the answer goes back when the person picks, types or closes it. Notifications become
//! notices in the conversation.

use pi_tui::editor::{Editor, EditorOutcome};
use pi_tui::keys::{KeyEvent, is_key};
use pi_tui::select_list::SelectItem;
use pi_tui::{Role, Theme};
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::oneshot;

use super::UiEvent;
use super::app::App;
use super::picker::{Picker, PickerOutcome};
use super::selectors::Overlay;
use crate::agent::BoxFuture;
use crate::extension::{ExtensionUi, NotifyLevel, UiRequest, UiResponse};

/// A dialog waiting for its answer.
pub struct DialogRequest {
    pub request: UiRequest,
    pub reply: oneshot::Sender<UiResponse>,
}

/// The extensions' dialogs, sent to the interactive loop.
pub struct InteractiveUi {
    pub sender: UnboundedSender<UiEvent>,
}

impl ExtensionUi for InteractiveUi {
    fn request(&self, request: UiRequest) -> BoxFuture<'static, UiResponse> {
        let (reply, answer) = oneshot::channel();
        let sent = self.sender.send(UiEvent::Dialog(Box::new(DialogRequest { request, reply })));
        Box::pin(async move {
            if sent.is_err() {
                return UiResponse::Cancelled;
            }
            answer.await.unwrap_or(UiResponse::Cancelled)
        })
    }
}

/// A selector dialog (select, confirm) and where its answer goes.
pub struct ChoiceDialog {
    pub picker: Picker,
    pub confirm: bool,
    pub reply: Option<oneshot::Sender<UiResponse>>,
}

/// A text dialog (input, editor) and where its answer goes.
pub struct TextDialog {
    pub title: String,
    pub hint: String,
    pub editor: Editor,
    pub reply: Option<oneshot::Sender<UiResponse>>,
}

impl TextDialog {
    pub fn render(&mut self, width: usize, theme: &Theme) -> Vec<String> {
        let mut lines = vec![
            format!(" {}", theme.bold(&theme.fg(Role::Accent, &self.title))),
            format!(" {}", theme.fg(Role::Muted, &self.hint)),
        ];
        lines.extend(self.editor.render(width));
        lines
    }
}

impl App {
    /// Shows a dialog; one that arrives while another is open waits its turn.
    pub(super) fn open_dialog(&mut self, dialog: DialogRequest) {
        if !dialog.request.is_dialog() {
            let DialogRequest { request, reply } = dialog;
            self.show_ui_part(request);
            let _ = reply.send(UiResponse::Done);
            self.dirty = true;
            return;
        }
        if self.overlay.is_some() {
            self.waiting_dialogs.push_back(dialog);
            return;
        }
        let DialogRequest { request, reply } = dialog;
        let theme = self.theme.clone();
        self.overlay = match request {
            UiRequest::Select { title, options } => {
                let items = options.iter().map(|option| SelectItem::new(option.clone(), option.clone())).collect();
                let hints = vec!["Type to search; enter: choose, esc: cancel.".to_owned()];
                let picker = Picker::new(&title, hints, items, &theme);
                Some(Overlay::Choice(ChoiceDialog { picker, confirm: false, reply: Some(reply) }))
            }
            UiRequest::Confirm { title, message } => {
                let items = vec![SelectItem::new("yes", "Yes"), SelectItem::new("no", "No")];
                let picker = Picker::new(&title, vec![message, "enter: answer, esc: no".to_owned()], items, &theme);
                Some(Overlay::Choice(ChoiceDialog { picker, confirm: true, reply: Some(reply) }))
            }
            UiRequest::Input { title, placeholder } => {
                let hint = placeholder.unwrap_or_default();
                let hint = if hint.is_empty() {
                    "enter: done, esc: cancel".to_owned()
                } else {
                    format!("{hint} · enter: done, esc: cancel")
                };
                Some(Overlay::Text(TextDialog { title, hint, editor: Editor::new(theme), reply: Some(reply) }))
            }
            UiRequest::Editor { title, prefill } => {
                let mut editor = Editor::new(theme);
                editor.set_text(&prefill);
                let hint = "enter: done, shift+enter: new line, esc: cancel".to_owned();
                Some(Overlay::Text(TextDialog { title, hint, editor, reply: Some(reply) }))
            }
            other => {
                self.show_ui_part(other);
                let _ = reply.send(UiResponse::Done);
                None
            }
        };
        self.dirty = true;
    }

    /// A request that only shows something: a notice, a footer status, a widget, the title, the editor's text.
    fn show_ui_part(&mut self, request: UiRequest) {
        match request {
            UiRequest::Notify { message, level } => {
                let role = match level {
                    NotifyLevel::Error => Role::Error,
                    NotifyLevel::Warning => Role::Warning,
                    _ => Role::Accent,
                };
                self.transcript.notice(message, role);
            }
            UiRequest::SetStatus { key, text: Some(text) } => {
                self.statuses.insert(key, text);
            }
            UiRequest::SetStatus { key, text: None } => {
                self.statuses.remove(&key);
            }
            UiRequest::SetWidget { key, lines: Some(lines), placement } => {
                self.widgets.insert(key, (lines, placement));
            }
            UiRequest::SetWidget { key, lines: None, .. } => {
                self.widgets.remove(&key);
            }
            UiRequest::SetTitle { title } => {
                // OSC 0 sets the window and tab title; control characters would end it early.
                let title: String = title.chars().filter(|c| !c.is_control()).collect();
                let _ = std::io::Write::write_all(&mut std::io::stdout(), format!("\x1b]0;{title}\x07").as_bytes());
            }
            UiRequest::SetEditorText { text } => self.editor.set_text(&text),
            _ => {}
        }
    }

    /// A key while a choice dialog is open; returns the dialog when it stays open.
    pub(super) fn on_choice_key(&mut self, mut dialog: ChoiceDialog, key: &KeyEvent) -> Option<ChoiceDialog> {
        let answer = match dialog.picker.handle_key(key) {
            PickerOutcome::Picked { value, .. } if dialog.confirm => UiResponse::Confirmed(value == "yes"),
            PickerOutcome::Picked { value, .. } => UiResponse::Value(value),
            PickerOutcome::Closed if dialog.confirm => UiResponse::Confirmed(false),
            PickerOutcome::Closed => UiResponse::Cancelled,
            _ => return Some(dialog),
        };
        if let Some(reply) = dialog.reply.take() {
            let _ = reply.send(answer);
        }
        None
    }

    /// A key while a text dialog is open; returns the dialog when it stays open.
    pub(super) fn on_text_key(&mut self, mut dialog: TextDialog, key: &KeyEvent) -> Option<TextDialog> {
        let answer = match dialog.editor.handle_key(key) {
            EditorOutcome::Submit(text) => UiResponse::Value(text),
            EditorOutcome::Ignored if is_key(key, "escape") || is_key(key, "ctrl+c") => UiResponse::Cancelled,
            _ => return Some(dialog),
        };
        if let Some(reply) = dialog.reply.take() {
            let _ = reply.send(answer);
        }
        None
    }

    /// Closes a dialog nobody waits for any more (a login the browser finished while its code box was open),
    /// then shows the next waiting one.
    pub(super) fn close_abandoned_dialog(&mut self) {
        let abandoned = match &self.overlay {
            Some(Overlay::Text(dialog)) => dialog.reply.as_ref().is_some_and(oneshot::Sender::is_closed),
            Some(Overlay::Choice(dialog)) => dialog.reply.as_ref().is_some_and(oneshot::Sender::is_closed),
            _ => false,
        };
        if abandoned {
            self.overlay = None;
            self.dirty = true;
            self.next_dialog();
        }
    }

    /// After a dialog or selector closed: the next waiting dialog, if any.
    pub(super) fn next_dialog(&mut self) {
        if self.overlay.is_none()
            && let Some(dialog) = self.waiting_dialogs.pop_front()
        {
            self.open_dialog(dialog);
        }
    }
}
