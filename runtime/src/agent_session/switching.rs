//! Replacing the session under a running agent: a new session, another session file, or a fork of this one.
//! What runs is stopped first; extensions may cancel (`session_before_switch`, `session_before_fork`) and
//! hear about it after (`session_switch`, `session_fork`).

use std::path::{Path, PathBuf};

use super::AgentSession;
use super::link::lock;
use crate::extension::{
    EventKind, ForkPosition, SessionBeforeForkEvent, SessionBeforeSwitchEvent, SessionForkEvent, SessionSwitchEvent,
    SwitchReason,
};
use crate::protocol::AgentMessage;
use crate::session::{EntryKind, SessionError, SessionManager};

/// How a fork went.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ForkOutcome {
    /// An extension cancelled it.
    Cancelled,
    /// The session is now the fork; `text` is the user message it was cut before (to edit and resend).
    Forked { text: String },
}

impl AgentSession {
    /// Starts a new, empty session beside the current one (`parent_session` recorded in its header).
    /// Returns `false` when an extension cancelled.
    pub async fn new_session(&self, parent_session: Option<String>) -> Result<bool, SessionError> {
        self.stop_everything().await;
        if self.switch_cancelled(SwitchReason::New, None).await {
            return Ok(false);
        }
        let fresh = self.manager().new_sibling(parent_session)?;
        let previous = self.install(fresh)?;
        self.announce_switch(SwitchReason::New, previous).await;
        Ok(true)
    }

    /// Continues in the session file at `path` (its messages become the context; its thinking level is
    /// restored; the model it used is for the caller to restore, see [`AgentSession::session_model`]).
    /// Returns `false` when an extension cancelled.
    pub async fn switch_session(&self, path: &Path) -> Result<bool, SessionError> {
        self.stop_everything().await;
        if self.switch_cancelled(SwitchReason::Resume, Some(path.to_path_buf())).await {
            return Ok(false);
        }
        let opened = SessionManager::open(path)?;
        let previous = self.install(opened)?;
        self.announce_switch(SwitchReason::Resume, previous).await;
        Ok(true)
    }

    /// pi's fork: a new session holding the branch up to (not including) the user message `entry_id`;
    /// the session continues there.
    pub async fn fork_before(&self, entry_id: &str) -> Result<ForkOutcome, ForkError> {
        let (text, parent) = {
            let manager = self.manager();
            let entry = manager.tree().entry(entry_id).ok_or(ForkError::NotAUserMessage)?;
            let EntryKind::Message { message: AgentMessage::User(user) } = &entry.kind else {
                return Err(ForkError::NotAUserMessage);
            };
            (user.content.text(), entry.parent_id.clone())
        };
        self.fork_at(entry_id, parent.as_deref(), ForkPosition::Before).await.map(|forked| match forked {
            true => ForkOutcome::Forked { text },
            false => ForkOutcome::Cancelled,
        })
    }

    /// pi's clone: a new session holding the whole current branch. Returns `false` when cancelled.
    pub async fn clone_session(&self) -> Result<bool, ForkError> {
        let leaf = self.manager().tree().leaf_id().map(str::to_owned).ok_or(ForkError::Empty)?;
        self.fork_at(&leaf, Some(&leaf), ForkPosition::At).await
    }

    async fn fork_at(&self, entry_id: &str, leaf: Option<&str>, position: ForkPosition) -> Result<bool, ForkError> {
        self.stop_everything().await;
        if self.runner.has_handlers(EventKind::SessionBeforeFork) {
            let event = SessionBeforeForkEvent { entry_id: entry_id.to_owned(), position };
            if self.runner.emit_session_before_fork(&event).await.cancel {
                return Ok(false);
            }
        }
        let forked = self.manager().fork(leaf).map_err(ForkError::Session)?;
        let previous = self.install(forked).map_err(ForkError::Session)?;
        if self.runner.has_handlers(EventKind::SessionFork) {
            self.runner.emit_session_fork(&SessionForkEvent { previous_session_file: previous }).await;
        }
        Ok(true)
    }

    /// The model the current session last used (`provider`, `id`), if it recorded one.
    pub fn session_model(&self) -> Option<(String, String)> {
        self.manager().context().model
    }

    /// Aborts the run, a retry wait or a summary, and waits until the agent is idle.
    async fn stop_everything(&self) {
        self.abort();
        self.agent.wait_for_idle().await;
        self.agent.clear_all_queues();
    }

    async fn switch_cancelled(&self, reason: SwitchReason, target: Option<PathBuf>) -> bool {
        if !self.runner.has_handlers(EventKind::SessionBeforeSwitch) {
            return false;
        }
        let event = SessionBeforeSwitchEvent { reason, target_session_file: target };
        self.runner.emit_session_before_switch(&event).await.cancel
    }

    async fn announce_switch(&self, reason: SwitchReason, previous: Option<PathBuf>) {
        if self.runner.has_handlers(EventKind::SessionSwitch) {
            self.runner.emit_session_switch(&SessionSwitchEvent { reason, previous_session_file: previous }).await;
        }
    }

    /// Puts `manager` in place of the current session: its context becomes the agent's messages, its thinking
    /// level the agent's; a new session first records the model and thinking level, as a fresh run does.
    /// Returns the previous session's file.
    fn install(&self, mut manager: SessionManager) -> Result<Option<PathBuf>, SessionError> {
        let state = self.agent.state();
        if manager.entries().is_empty() {
            if let Some(model) = &state.model {
                manager.append_model_change(&model.provider, &model.id)?;
            }
            manager.append_thinking_level_change(state.thinking_level.as_str())?;
        } else if let Ok(level) = manager.context().thinking_level.parse() {
            self.agent.set_thinking_level(level);
            *lock(&self.thinking_preference) = level;
        }
        self.agent.replace_messages(manager.context().messages);
        self.agent.set_session_id(Some(manager.session_id().to_owned()));
        let previous = std::mem::replace(&mut *self.manager(), manager);
        Ok(previous.path().map(Path::to_path_buf))
    }
}

/// Why a fork or clone did not happen.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ForkError {
    #[error("a fork starts at a user message of this session; get_fork_messages lists them")]
    NotAUserMessage,
    #[error("the session has no entries to clone yet")]
    Empty,
    #[error(transparent)]
    Session(SessionError),
}
