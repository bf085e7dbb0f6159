//! What an extension's command may do to the session, as pi's command context allows: wait until the agent
//! is idle, start a new session, fork, move in the tree, switch to another session file, compact, and change
//! the model or the thinking level. The mode that owns the session carries the actions out (interactive
//! mode does, and redraws the conversation); where none does, the actions fail with an error that says so.

use std::path::PathBuf;
use std::sync::Arc;

use super::context::ExtensionContext;
use crate::agent::BoxFuture;

/// One action on the session.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SessionAction {
    WaitForIdle,
    NewSession,
    /// A new session holding what came before the user message `entry_id`.
    Fork {
        entry_id: String,
    },
    /// Moves the leaf (with a summary of the branch left, `summarize`).
    NavigateTree {
        target_id: String,
        summarize: bool,
    },
    SwitchSession {
        path: PathBuf,
    },
    Compact {
        instructions: Option<String>,
    },
    SetModel {
        provider: String,
        model_id: String,
    },
    SetThinkingLevel {
        level: String,
    },
}

/// Carries out session actions: `Ok(false)` when an extension cancelled the change.
pub trait SessionActions: Send + Sync {
    fn perform(&self, action: SessionAction) -> BoxFuture<'static, Result<bool, String>>;
}

/// The shared handle.
pub type SessionActionsHandle = Arc<dyn SessionActions>;

const NO_OWNER: &str = "this mode does not let extensions change the session";

impl ExtensionContext {
    async fn perform(&self, action: SessionAction) -> Result<bool, String> {
        match self.actions_handle() {
            Some(actions) => actions.perform(action).await,
            None => Err(NO_OWNER.to_owned()),
        }
    }

    /// Waits until the agent has finished what it is doing.
    pub async fn wait_for_idle(&self) -> Result<(), String> {
        self.perform(SessionAction::WaitForIdle).await.map(|_| ())
    }

    /// Starts a new, empty session; `false` when an extension kept the current one.
    pub async fn new_session(&self) -> Result<bool, String> {
        self.perform(SessionAction::NewSession).await
    }

    /// Forks before the user message `entry_id` (its text goes back to the editor).
    pub async fn fork(&self, entry_id: &str) -> Result<bool, String> {
        self.perform(SessionAction::Fork { entry_id: entry_id.to_owned() }).await
    }

    /// Moves the session's leaf to `target_id`, summarizing the branch left when `summarize`.
    pub async fn navigate_tree(&self, target_id: &str, summarize: bool) -> Result<bool, String> {
        self.perform(SessionAction::NavigateTree { target_id: target_id.to_owned(), summarize }).await
    }

    /// Continues in the session file `path`.
    pub async fn switch_session(&self, path: impl Into<PathBuf>) -> Result<bool, String> {
        self.perform(SessionAction::SwitchSession { path: path.into() }).await
    }

    /// Compacts the context now, with optional focus instructions; `false` when there was nothing to do.
    pub async fn compact(&self, instructions: Option<&str>) -> Result<bool, String> {
        self.perform(SessionAction::Compact { instructions: instructions.map(str::to_owned) }).await
    }

    /// Switches to the model `provider`/`model_id` (its provider needs a key).
    pub async fn set_model(&self, provider: &str, model_id: &str) -> Result<bool, String> {
        let action = SessionAction::SetModel { provider: provider.to_owned(), model_id: model_id.to_owned() };
        self.perform(action).await
    }

    /// Sets the thinking level (`off`, `minimal`, `low`, `medium`, `high`, `xhigh`; clamped to the model).
    pub async fn set_thinking_level(&self, level: &str) -> Result<bool, String> {
        self.perform(SessionAction::SetThinkingLevel { level: level.to_owned() }).await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    struct Recorder(Mutex<Vec<SessionAction>>);

    impl SessionActions for Recorder {
        fn perform(&self, action: SessionAction) -> BoxFuture<'static, Result<bool, String>> {
            let cancelled = action == SessionAction::NewSession;
            self.0.lock().expect("lock").push(action);
            Box::pin(async move { Ok(!cancelled) })
        }
    }

    #[tokio::test]
    async fn actions_reach_the_owner_and_without_one_fail_clearly() {
        let detached = ExtensionContext::detached("/tmp");
        let error = detached.new_session().await.expect_err("nobody owns the session");
        assert!(error.contains("does not let extensions"), "{error}");

        let recorder = Arc::new(Recorder(Mutex::new(Vec::new())));
        let context = ExtensionContext::detached("/tmp").with_actions(Some(recorder.clone()));
        assert_eq!(context.new_session().await, Ok(false));
        assert_eq!(context.navigate_tree("abc", true).await, Ok(true));
        assert_eq!(context.set_thinking_level("high").await, Ok(true));
        context.wait_for_idle().await.expect("idle");
        let seen = recorder.0.lock().expect("lock");
        assert_eq!(seen[1], SessionAction::NavigateTree { target_id: "abc".into(), summarize: true });
        assert_eq!(seen.len(), 4);
    }
}
