//! Dialogs an extension can open with the person using the agent: pick one of several options, confirm,
//! type a line, edit a text, or just be told something; and the screen parts it may set: a status in the
//! footer, a widget of lines by the editor, the terminal's title, the editor's text. Interactive mode shows
//! them in the terminal; RPC mode sends them to its client as `extension_ui_request` lines; modes without
//! a person (print, json) answer dialogs at once with the cancelled answer and ignore the rest, as pi's do.

use std::sync::Arc;

use super::context::ExtensionContext;
use crate::agent::BoxFuture;

/// What a dialog asks.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UiRequest {
    /// One of `options`, or nothing when the person cancels.
    Select { title: String, options: Vec<String> },
    /// Yes or no.
    Confirm { title: String, message: String },
    /// One line of text.
    Input { title: String, placeholder: Option<String> },
    /// A longer text, starting from `prefill`.
    Editor { title: String, prefill: String },
    /// A message; nothing is answered.
    Notify { message: String, level: NotifyLevel },
    /// A status shown in the footer under `key` (`None` removes it); nothing is answered.
    SetStatus { key: String, text: Option<String> },
    /// Lines shown by the editor under `key` (`None` removes them); nothing is answered.
    SetWidget { key: String, lines: Option<Vec<String>>, placement: WidgetPlacement },
    /// The terminal's title; nothing is answered.
    SetTitle { title: String },
    /// Replaces the editor's text; nothing is answered.
    SetEditorText { text: String },
}

impl UiRequest {
    /// Whether the request waits for the person's answer (a dialog), rather than only showing something.
    pub fn is_dialog(&self) -> bool {
        matches!(self, Self::Select { .. } | Self::Confirm { .. } | Self::Input { .. } | Self::Editor { .. })
    }
}

/// Where a widget's lines go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum WidgetPlacement {
    #[default]
    AboveEditor,
    BelowEditor,
}

impl WidgetPlacement {
    /// The wire name (`aboveEditor`, `belowEditor`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AboveEditor => "aboveEditor",
            Self::BelowEditor => "belowEditor",
        }
    }
}

/// How a notification is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum NotifyLevel {
    #[default]
    Info,
    Warning,
    Error,
}

/// The person's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UiResponse {
    /// The chosen option, the line or the edited text.
    Value(String),
    Confirmed(bool),
    /// Closed without an answer (or no person to ask).
    Cancelled,
    /// A notification was shown.
    Done,
}

/// Shows dialogs: implemented by the interactive mode (and by RPC and server modes, which forward them).
/// `request` must act when it is called (a notification is shown even if the future is dropped); the
/// future resolves with the answer.
pub trait ExtensionUi: Send + Sync {
    fn request(&self, request: UiRequest) -> BoxFuture<'static, UiResponse>;
}

/// The shared handle.
pub type ExtensionUiHandle = Arc<dyn ExtensionUi>;

impl ExtensionContext {
    /// Whether a person can answer dialogs (interactive mode).
    pub fn has_ui(&self) -> bool {
        self.ui_handle().is_some()
    }

    async fn ask(&self, request: UiRequest) -> UiResponse {
        match self.ui_handle() {
            Some(ui) => ui.request(request).await,
            None => UiResponse::Cancelled,
        }
    }

    /// Lets the person pick one of `options`; `None` when cancelled or when nobody can be asked.
    pub async fn select(&self, title: &str, options: Vec<String>) -> Option<String> {
        match self.ask(UiRequest::Select { title: title.to_owned(), options }).await {
            UiResponse::Value(choice) => Some(choice),
            _ => None,
        }
    }

    /// Asks yes or no; `false` when cancelled or when nobody can be asked.
    pub async fn confirm(&self, title: &str, message: &str) -> bool {
        let request = UiRequest::Confirm { title: title.to_owned(), message: message.to_owned() };
        matches!(self.ask(request).await, UiResponse::Confirmed(true))
    }

    /// Asks for one line of text.
    pub async fn input(&self, title: &str, placeholder: Option<&str>) -> Option<String> {
        let request = UiRequest::Input { title: title.to_owned(), placeholder: placeholder.map(str::to_owned) };
        match self.ask(request).await {
            UiResponse::Value(text) => Some(text),
            _ => None,
        }
    }

    /// Lets the person edit `prefill`; the edited text, or `None` when cancelled.
    pub async fn edit_text(&self, title: &str, prefill: &str) -> Option<String> {
        let request = UiRequest::Editor { title: title.to_owned(), prefill: prefill.to_owned() };
        match self.ask(request).await {
            UiResponse::Value(text) => Some(text),
            _ => None,
        }
    }

    /// Shows a message (nothing happens when nobody can be told).
    pub fn notify(&self, message: &str, level: NotifyLevel) {
        self.show(UiRequest::Notify { message: message.to_owned(), level });
    }

    /// Shows `text` in the footer under `key`; `None` removes it.
    pub fn set_status(&self, key: &str, text: Option<&str>) {
        self.show(UiRequest::SetStatus { key: key.to_owned(), text: text.map(str::to_owned) });
    }

    /// Shows `lines` by the editor under `key`; `None` removes them.
    pub fn set_widget(&self, key: &str, lines: Option<Vec<String>>, placement: WidgetPlacement) {
        self.show(UiRequest::SetWidget { key: key.to_owned(), lines, placement });
    }

    /// Sets the terminal's title.
    pub fn set_title(&self, title: &str) {
        self.show(UiRequest::SetTitle { title: title.to_owned() });
    }

    /// Replaces the text in the person's editor.
    pub fn set_editor_text(&self, text: &str) {
        self.show(UiRequest::SetEditorText { text: text.to_owned() });
    }

    /// Sends a request that waits for no answer (nothing happens when nobody can be told).
    fn show(&self, request: UiRequest) {
        if let Some(ui) = self.ui_handle() {
            drop(ui.request(request));
        }
    }
}

/// A UI for tests: answers dialogs from a script (last answer first) and records what was asked.
#[cfg(test)]
pub(crate) mod scripted {
    use std::sync::{Arc, Mutex};

    use super::{ExtensionUi, UiRequest, UiResponse};
    use crate::agent::BoxFuture;

    pub(crate) struct ScriptedUi {
        pub answers: Mutex<Vec<UiResponse>>,
        pub asked: Mutex<Vec<UiRequest>>,
    }

    impl ScriptedUi {
        /// A UI that gives `answers` from the last to the first, then cancels.
        pub(crate) fn new(answers: Vec<UiResponse>) -> Arc<Self> {
            Arc::new(Self { answers: Mutex::new(answers), asked: Mutex::default() })
        }
    }

    impl ExtensionUi for ScriptedUi {
        fn request(&self, request: UiRequest) -> BoxFuture<'static, UiResponse> {
            self.asked.lock().expect("lock").push(request);
            let answer = self.answers.lock().expect("lock").pop().unwrap_or(UiResponse::Cancelled);
            Box::pin(async move { answer })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::scripted::ScriptedUi;
    use super::*;

    #[tokio::test]
    async fn dialogs_reach_the_ui_and_without_one_are_cancelled() {
        let detached = ExtensionContext::detached("/tmp");
        assert!(!detached.has_ui());
        assert_eq!(detached.select("Pick", vec!["a".into()]).await, None);
        assert!(!detached.confirm("Sure?", "really").await);

        let ui = ScriptedUi::new(vec![
            UiResponse::Cancelled,
            UiResponse::Value("edited".into()),
            UiResponse::Confirmed(true),
            UiResponse::Value("b".into()),
        ]);
        let context = ExtensionContext::detached("/tmp").with_ui(Some(ui.clone()));
        assert!(context.has_ui());
        assert_eq!(context.select("Pick", vec!["a".into(), "b".into()]).await.as_deref(), Some("b"));
        assert!(context.confirm("Sure?", "really").await);
        assert_eq!(context.edit_text("Edit", "draft").await.as_deref(), Some("edited"));
        assert_eq!(context.input("Name", None).await, None);
        context.notify("done", NotifyLevel::Warning);
        context.set_status("build", Some("green"));
        context.set_widget("todo", Some(vec!["one".into()]), WidgetPlacement::BelowEditor);
        context.set_title("pi-gen");
        context.set_editor_text("draft");
        let asked = ui.asked.lock().expect("lock");
        assert_eq!(asked.len(), 9);
        assert_eq!(asked[4], UiRequest::Notify { message: "done".into(), level: NotifyLevel::Warning });
        assert_eq!(asked[5], UiRequest::SetStatus { key: "build".into(), text: Some("green".into()) });
        let widget = UiRequest::SetWidget {
            key: "todo".into(),
            lines: Some(vec!["one".into()]),
            placement: WidgetPlacement::BelowEditor,
        };
        assert_eq!(asked[6], widget);
        assert_eq!(asked[8], UiRequest::SetEditorText { text: "draft".into() });
        assert!(asked[..4].iter().all(UiRequest::is_dialog) && !asked[4..].iter().any(UiRequest::is_dialog));
    }
}
