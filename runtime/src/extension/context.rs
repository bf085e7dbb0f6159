//! What a handler can see and do besides its event: the working directory, the model, the system prompt,
//! and the session's actions (send messages, append entries, change the active tools, abort).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::results::ExtensionMessage;
use crate::agent::BoxFuture;
use crate::ai::Model;

/// How a message sent by an extension is delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Delivery {
    /// While streaming: after the current tool calls (the rest are skipped).
    Steer,
    /// While streaming: when the agent would otherwise stop.
    FollowUp,
    /// With the next prompt, after the user's message.
    NextTurn,
}

/// Options of [`ExtensionContext::send_message`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SendOptions {
    /// When the agent is idle: start a run with the message (otherwise it is only recorded).
    pub trigger_turn: bool,
    /// `None`: steer while streaming.
    pub deliver_as: Option<Delivery>,
}

/// A tool as extensions list it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolInfo {
    pub name: String,
    pub description: String,
}

/// The session's side of the context, implemented by [`crate::agent_session::AgentSession`].
pub trait SessionControl: Send + Sync {
    fn model(&self) -> Option<Model>;
    fn is_idle(&self) -> bool;
    fn abort(&self);
    fn has_pending_messages(&self) -> bool;
    /// The system prompt the next LLM call uses.
    fn system_prompt(&self) -> String;
    fn send_message(&self, message: ExtensionMessage, options: SendOptions);
    fn send_user_message(&self, text: String, deliver_as: Option<Delivery>);
    /// Appends a `custom` entry (extension state, never sent to the model); returns its id.
    fn append_entry(&self, custom_type: &str, data: Option<Value>) -> Result<String, String>;
    fn active_tools(&self) -> Vec<String>;
    fn all_tools(&self) -> Vec<ToolInfo>;
    /// Activates the named tools (unknown names are ignored) and rebuilds the system prompt.
    fn set_active_tools(&self, names: &[String]);
    fn session_file(&self) -> Option<PathBuf>;
    fn session_id(&self) -> String;
    /// The `data` of the `custom` entries of `custom_type` on the current branch, oldest first.
    fn custom_entries(&self, _custom_type: &str) -> Vec<Value> {
        Vec::new()
    }
    /// What the latest request held under the panels strategy (kept for `get_session_stats` and sent as
    /// a `context_panels` event).
    fn report_context(&self, _report: &crate::panels::ContextReport) {}
}

/// Handed to every handler.
#[derive(Clone)]
pub struct ExtensionContext {
    cwd: Arc<Path>,
    session: Option<Arc<dyn SessionControl>>,
    /// During `before_agent_start`: the system prompt as the previous handler left it.
    system_prompt: Option<Arc<str>>,
    /// Where dialogs go (interactive mode); none where nobody can answer.
    ui: Option<super::ui::ExtensionUiHandle>,
    /// Who carries out session actions of commands (interactive mode); none where nobody does.
    actions: Option<super::session_actions::SessionActionsHandle>,
}

impl ExtensionContext {
    /// A context bound to a session.
    pub fn new(cwd: impl AsRef<Path>, session: Option<Arc<dyn SessionControl>>) -> Self {
        Self { cwd: Arc::from(cwd.as_ref()), session, system_prompt: None, ui: None, actions: None }
    }

    /// The same context with dialogs going to `ui`.
    pub fn with_ui(&self, ui: Option<super::ui::ExtensionUiHandle>) -> Self {
        Self { ui, ..self.clone() }
    }

    /// The same context with session actions going to `actions`.
    pub fn with_actions(&self, actions: Option<super::session_actions::SessionActionsHandle>) -> Self {
        Self { actions, ..self.clone() }
    }

    pub(crate) fn actions_handle(&self) -> Option<&super::session_actions::SessionActionsHandle> {
        self.actions.as_ref()
    }

    pub(crate) fn ui_handle(&self) -> Option<&super::ui::ExtensionUiHandle> {
        self.ui.as_ref()
    }

    /// A context with no session behind it (tests, tools run on their own): actions do nothing.
    pub fn detached(cwd: impl AsRef<Path>) -> Self {
        Self::new(cwd, None)
    }

    pub(crate) fn with_system_prompt(&self, prompt: &str) -> Self {
        Self { system_prompt: Some(Arc::from(prompt)), ..self.clone() }
    }

    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    pub fn model(&self) -> Option<Model> {
        self.session.as_ref().and_then(|session| session.model())
    }

    pub fn is_idle(&self) -> bool {
        self.session.as_ref().is_none_or(|session| session.is_idle())
    }

    /// Stops the run in progress.
    pub fn abort(&self) {
        if let Some(session) = &self.session {
            session.abort();
        }
    }

    pub fn has_pending_messages(&self) -> bool {
        self.session.as_ref().is_some_and(|session| session.has_pending_messages())
    }

    /// The system prompt in effect (inside `before_agent_start`: including earlier handlers' changes).
    pub fn system_prompt(&self) -> String {
        match (&self.system_prompt, &self.session) {
            (Some(prompt), _) => prompt.to_string(),
            (None, Some(session)) => session.system_prompt(),
            (None, None) => String::new(),
        }
    }

    /// Adds a custom message to the conversation (see [`SendOptions`] and [`Delivery`]).
    pub fn send_message(&self, message: ExtensionMessage, options: SendOptions) {
        if let Some(session) = &self.session {
            session.send_message(message, options);
        }
    }

    /// Sends a user message: a new prompt when idle (after the current one finishes), else queued.
    pub fn send_user_message(&self, text: impl Into<String>, deliver_as: Option<Delivery>) {
        if let Some(session) = &self.session {
            session.send_user_message(text.into(), deliver_as);
        }
    }

    /// Records extension state in the session as a `custom` entry; returns the entry id.
    pub fn append_entry(&self, custom_type: &str, data: Option<Value>) -> Result<String, String> {
        match &self.session {
            Some(session) => session.append_entry(custom_type, data),
            None => Err("no session to append to".to_owned()),
        }
    }

    pub fn active_tools(&self) -> Vec<String> {
        self.session.as_ref().map(|session| session.active_tools()).unwrap_or_default()
    }

    pub fn all_tools(&self) -> Vec<ToolInfo> {
        self.session.as_ref().map(|session| session.all_tools()).unwrap_or_default()
    }

    /// Changes the active tools; the system prompt is rebuilt for them.
    pub fn set_active_tools(&self, names: &[String]) {
        if let Some(session) = &self.session {
            session.set_active_tools(names);
        }
    }

    pub fn session_file(&self) -> Option<PathBuf> {
        self.session.as_ref().and_then(|session| session.session_file())
    }

    pub fn session_id(&self) -> String {
        self.session.as_ref().map(|session| session.session_id()).unwrap_or_default()
    }

    /// The `data` of the `custom` entries of `custom_type` on the session's current branch, oldest first
    /// (how an extension finds the state it saved with [`ExtensionContext::append_entry`]).
    pub fn custom_entries(&self, custom_type: &str) -> Vec<Value> {
        self.session.as_ref().map(|session| session.custom_entries(custom_type)).unwrap_or_default()
    }

    /// Hands the session what the latest request held under the panels strategy.
    pub fn report_context(&self, report: &crate::panels::ContextReport) {
        if let Some(session) = &self.session {
            session.report_context(report);
        }
    }
}

/// A slash command's handler: the text after the name, and the context.
pub type CommandHandler =
    Arc<dyn Fn(String, ExtensionContext) -> BoxFuture<'static, super::HookResult<()>> + Send + Sync>;
