//! Fallback models: when a run ends in an error that is not retried (or its retries are used up), the same
//! request goes to the next model of the chain, announced by a `model_fallback` event and recorded as a
//! `custom` entry of that type (not a `model_change`: resuming the session goes back to the model the user
//! chose). The fallback serves the rest of that run; the next prompt starts again from the chosen model.

use std::sync::Arc;

use serde_json::json;

use super::AgentSession;
use super::auto_retry::drop_last_assistant;
use super::link::lock;
use crate::ai::{Model, ThinkingLevel, is_context_overflow};
use crate::protocol::{AgentMessage, SessionOnlyEvent, StopReason};
use crate::session::MODEL_FALLBACK_ENTRY;

/// A fallback model ready to use: the model, its key, and the thinking level for it.
#[derive(Debug, Clone)]
pub struct FallbackModel {
    pub model: Model,
    pub api_key: Option<String>,
    pub thinking: ThinkingLevel,
}

/// Turns `provider/id[:thinking]` into a [`FallbackModel`], or says why it cannot be used.
pub type FallbackResolver = Arc<dyn Fn(&str) -> Result<FallbackModel, String> + Send + Sync>;

/// The fallbacks of a session, in order, resolved only when needed.
#[derive(Clone)]
pub struct FallbackChain {
    pub models: Vec<String>,
    pub resolver: FallbackResolver,
}

/// The model, key and thinking level the user chose, kept while a fallback serves the run.
pub(super) struct ChosenModel {
    model: Model,
    api_key: Option<String>,
    thinking: ThinkingLevel,
    /// The fallback now in use (the choice is restored only while it still is).
    fallback: Model,
}

impl AgentSession {
    /// Sets the fallback models (`None` or an empty list: none).
    pub fn set_fallbacks(&self, chain: Option<FallbackChain>) {
        *lock(&self.fallbacks) = chain.filter(|chain| !chain.models.is_empty());
    }

    /// The failed answer a fallback should replace: the run's last message, an error that is neither an
    /// abort nor a context overflow (compaction handles that).
    fn fallback_worthy_error(&self) -> Option<String> {
        let window = self.agent.model().map(|model| model.context_window);
        self.agent.with_messages(|messages| {
            let AgentMessage::Assistant(answer) = messages.last()? else { return None };
            (answer.stop_reason == StopReason::Error && !is_context_overflow(answer, window))
                .then(|| answer.error_message.clone().unwrap_or_else(|| "Unknown error".to_owned()))
        })
    }

    /// Moves the run to the next usable fallback after `*next` (advancing it). Returns `false` when the run's
    /// end is not a fallback-worthy error or no fallback is left. Fallbacks that cannot be resolved are
    /// announced (`model_fallback` with `skipped`) and passed over.
    pub(super) fn switch_to_fallback(&self, next: &mut usize, chosen: &mut Option<ChosenModel>) -> bool {
        let Some(error_message) = self.fallback_worthy_error() else { return false };
        let Some(chain) = lock(&self.fallbacks).clone() else { return false };
        let Some(current) = self.agent.model() else { return false };
        while let Some(wanted) = chain.models.get(*next) {
            *next += 1;
            let fallback = match (chain.resolver)(wanted) {
                Ok(fallback) => fallback,
                Err(reason) => {
                    (self.emit)(&SessionOnlyEvent::ModelFallback {
                        from: model_name(&current),
                        to: wanted.clone(),
                        error_message: error_message.clone(),
                        skipped: Some(reason),
                    });
                    continue;
                }
            };
            let state = self.agent.state();
            if chosen.is_none() {
                *chosen = Some(ChosenModel {
                    model: current.clone(),
                    api_key: lock(&self.api_key).clone(),
                    thinking: state.thinking_level,
                    fallback: fallback.model.clone(),
                });
            }
            if let Some(chosen) = chosen.as_mut() {
                chosen.fallback = fallback.model.clone();
            }
            let (from, to) = (model_name(&current), model_name(&fallback.model));
            (self.emit)(&SessionOnlyEvent::ModelFallback {
                from: from.clone(),
                to: to.clone(),
                error_message: error_message.clone(),
                skipped: None,
            });
            // As before a retry: the failed answer leaves the context (the file keeps it).
            if self.agent.pi_compat().is_v1_5() {
                self.record_dropped_answer()();
            }
            drop_last_assistant(&self.agent);
            let data = json!({
                "from": from,
                "to": to,
                "thinkingLevel": fallback.thinking.as_str(),
                "errorMessage": error_message,
            });
            if let Err(error) = self.manager().append_custom(MODEL_FALLBACK_ENTRY, Some(data)) {
                self.link.record_write_error(&error);
            }
            self.adopt_model(fallback.model, fallback.api_key, fallback.thinking);
            return true;
        }
        false
    }

    /// Gives the run's end back to the model the user chose, unless someone chose another model meanwhile.
    pub(super) fn restore_chosen_model(&self, chosen: Option<ChosenModel>) {
        let Some(chosen) = chosen else { return };
        let now = self.agent.model();
        if now
            .as_ref()
            .is_some_and(|model| model.provider == chosen.fallback.provider && model.id == chosen.fallback.id)
        {
            self.adopt_model(chosen.model, chosen.api_key, chosen.thinking);
        }
    }

    /// A step of a run a fallback serves: the session continues on `model` (`provider/id[:level]`, one of
    /// its fallback chain), recording nothing, as the run that switched to it did.
    pub fn use_fallback_model(&self, model: &str) -> Result<(), String> {
        let chain = lock(&self.fallbacks).clone().ok_or("the session has no fallback models")?;
        let fallback = (chain.resolver)(model)?;
        self.adopt_model(fallback.model, fallback.api_key, fallback.thinking);
        Ok(())
    }

    /// The agent goes on with `model`, its key and thinking level (the session's own choice is untouched).
    fn adopt_model(&self, model: Model, api_key: Option<String>, thinking: ThinkingLevel) {
        self.agent.set_model(model);
        self.agent.set_api_key(api_key.clone());
        *lock(&self.api_key) = api_key;
        self.agent.set_thinking_level(thinking);
    }
}

fn model_name(model: &Model) -> String {
    format!("{}/{}", model.provider, model.id)
}
