//! Session actions of extension commands (new session, fork, tree, switch, compact, model, thinking level)
//! carried out by the interactive mode on its session, with the conversation redrawn afterwards.

use std::rc::Rc;

use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::oneshot;

use super::UiEvent;
use super::app::App;
use crate::agent::BoxFuture;
use crate::agent_session::{AgentSession, ForkOutcome};
use crate::ai::ThinkingLevel;
use crate::cli::model_catalog::ModelCatalog;
use crate::extension::{ModelSelectSource, SessionAction, SessionActions};

/// A session action waiting to be carried out.
pub struct ActionRequest {
    pub action: SessionAction,
    pub reply: oneshot::Sender<Result<bool, String>>,
}

/// Sends the actions of extension commands to the interactive loop.
pub struct InteractiveSessionActions {
    pub sender: UnboundedSender<UiEvent>,
}

impl SessionActions for InteractiveSessionActions {
    fn perform(&self, action: SessionAction) -> BoxFuture<'static, Result<bool, String>> {
        let (reply, answer) = oneshot::channel();
        let sent = self.sender.send(UiEvent::SessionAction(Box::new(ActionRequest { action, reply })));
        Box::pin(async move {
            if sent.is_err() {
                return Err("the interactive session has ended".to_owned());
            }
            answer.await.unwrap_or_else(|_| Err("the interactive session has ended".to_owned()))
        })
    }
}

impl App {
    /// Carries out an extension's session action in the background (the command that asked may be running
    /// as a prompt, so the busy check of the person's own commands does not apply).
    pub(super) fn perform_session_action(&mut self, request: ActionRequest) {
        let session = self.session.clone();
        let sender = self.sender.clone();
        let models = self.models.clone();
        let task = tokio::task::spawn_local(async move {
            let ActionRequest { action, reply } = request;
            let redraw = !matches!(action, SessionAction::WaitForIdle | SessionAction::SetThinkingLevel { .. });
            let (result, editor_text) = perform(&session, &models, action).await;
            let notice = result.as_ref().err().map(|error| format!("Error: {error}"));
            let _ = reply.send(result);
            if redraw || notice.is_some() {
                let _ = sender.send(UiEvent::Reload { editor_text, notice });
            }
        });
        self.keep(task);
    }
}

async fn perform(
    session: &Rc<AgentSession>,
    models: &ModelCatalog,
    action: SessionAction,
) -> (Result<bool, String>, Option<String>) {
    let text = |error: &dyn std::fmt::Display| error.to_string();
    match action {
        SessionAction::WaitForIdle => {
            session.agent().wait_for_idle().await;
            (Ok(true), None)
        }
        SessionAction::NewSession => (session.new_session(None).await.map_err(|e| text(&e)), None),
        SessionAction::Fork { entry_id } => match session.fork_before(&entry_id).await {
            Ok(ForkOutcome::Forked { text }) => (Ok(true), Some(text)),
            Ok(_) => (Ok(false), None),
            Err(error) => (Err(text(&error)), None),
        },
        SessionAction::NavigateTree { target_id, summarize } => {
            match session.navigate_tree(&target_id, summarize, None).await {
                Ok(navigation) => (Ok(true), navigation.editor_text),
                Err(error) => (Err(error), None),
            }
        }
        SessionAction::SwitchSession { path } => (session.switch_session(&path).await.map_err(|e| text(&e)), None),
        SessionAction::Compact { instructions } => {
            (session.compact_now(instructions.as_deref()).await.map(|result| result.is_some()), None)
        }
        SessionAction::SetModel { provider, model_id } => {
            let result = match models.choose(&provider, &model_id) {
                Ok(chosen) => {
                    let map = chosen.thinking_level_map.as_ref();
                    let source = ModelSelectSource::Set;
                    session
                        .set_model(chosen.model, Some(chosen.api_key), map, source)
                        .await
                        .map(|_| true)
                        .map_err(|e| text(&e))
                }
                Err(error) => Err(error),
            };
            (result, None)
        }
        SessionAction::SetThinkingLevel { level } => {
            let result = ThinkingLevel::parse_at(&level, session.agent().pi_compat())
                .map_err(|e| text(&e))
                .and_then(|level| session.set_thinking_level(level).map(|_| true).map_err(|e| text(&e)));
            (result, None)
        }
    }
}
