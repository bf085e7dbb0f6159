//! Notices on a session's channel: messages numbered 0, which are never kept and which event watchers never
//! give out. An abort and an answer to an extension dialog travel this way, to the step that listens for
//! them at that moment (see [`super::EventBus::abort_notices`] and [`super::EventBus::dialog_answers`]).

use std::sync::Arc;

use tokio::sync::broadcast;

use super::events::{DIALOG_NOTICE, Listener, Live};

/// Notices (number 0, never kept) on one session's channel, from the moment of listening.
pub(super) struct Notices {
    pub(super) listener: Arc<Listener>,
    pub(super) session: String,
    pub(super) live: Option<broadcast::Receiver<Live>>,
}

impl Notices {
    /// The next notice's body; `None` once the listening connection is gone.
    async fn next(&mut self) -> Option<Arc<str>> {
        loop {
            let live = self.live.as_mut()?;
            match live.recv().await {
                Ok(Live { id: 0, body: Some(body) }) => return Some(body),
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => self.live = None,
            }
        }
    }
}

impl Drop for Notices {
    fn drop(&mut self) {
        drop(self.live.take());
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let (listener, session) = (self.listener.clone(), std::mem::take(&mut self.session));
            runtime.spawn(async move { listener.leave(&session).await });
        }
    }
}

/// Abort notices of one session (see [`EventBus::abort_notices`]).
pub struct AbortNotices {
    pub(super) notices: Notices,
    /// The step listening.
    pub(super) step: u64,
}

impl AbortNotices {
    /// Resolves when an abort of this step (or of any) is asked for; never, if the listening connection is
    /// gone.
    pub async fn requested(&mut self) {
        let mine = |body: &str| match body.strip_prefix("abort") {
            Some("") => true,
            Some(step) => step.trim_start().parse() == Ok(self.step),
            None => false,
        };
        loop {
            match self.notices.next().await {
                Some(body) if mine(&body) => return,
                Some(_) => {}
                None => return std::future::pending().await,
            }
        }
    }
}

/// Answers to a session's extension dialogs (see [`EventBus::dialog_answers`]).
pub struct DialogAnswers {
    pub(super) notices: Notices,
}

impl DialogAnswers {
    /// The answer to dialog `id` (an `extension_ui_response` object); `None` if the listening connection is
    /// gone first.
    pub async fn answer(&mut self, id: &str) -> Option<serde_json::Value> {
        loop {
            let body = self.notices.next().await?;
            let Some(line) = body.strip_prefix(DIALOG_NOTICE) else { continue };
            if let Ok(answer) = serde_json::from_str::<serde_json::Value>(line)
                && answer["id"] == id
            {
                return Some(answer);
            }
        }
    }
}
