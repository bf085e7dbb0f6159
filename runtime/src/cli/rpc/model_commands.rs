//! The RPC commands about the model and the session file: thinking levels, switching and cycling models
//! (carried out by [`ModelControls`], replies and events on RPC's output), switching to another session file.

use serde_json::{Value, json};

use super::command::RpcReply;
use super::dispatch::Rpc;
use crate::ai::ThinkingLevel;
use crate::cli::model_controls::ModelControls;
use crate::extension::ModelSelectSource;

impl Rpc {
    /// The model commands on this session, their events on RPC's output.
    fn controls(&self) -> ModelControls<'_> {
        let out = self.out.clone();
        ModelControls { session: &self.session, models: &self.models, emit: Box::new(move |event| out.event(event)) }
    }

    pub(super) fn set_thinking_level(&self, id: Option<Value>, level: &str) -> RpcReply {
        match self.controls().set_thinking_level(level) {
            Ok(()) => RpcReply::ok(id, "set_thinking_level"),
            Err(error) => RpcReply::failure(id, Some("set_thinking_level"), error),
        }
    }

    pub(super) fn cycle_thinking_level(&self, id: Option<Value>) -> RpcReply {
        match self.controls().cycle_thinking_level() {
            Ok(data) => RpcReply::with_data(id, "cycle_thinking_level", data),
            Err(error) => RpcReply::failure(id, Some("cycle_thinking_level"), error),
        }
    }

    /// Switches to `provider`/`id`; returns the model as printed and the thinking level now in effect.
    pub(super) async fn switch_model(
        &self,
        provider: &str,
        id: &str,
        source: ModelSelectSource,
    ) -> Result<(Value, ThinkingLevel), String> {
        self.controls().switch_model(provider, id, source).await
    }

    /// Continues in another session file; its model comes back when it can be used.
    pub(super) async fn switch_session(&self, id: Option<Value>, path: &str) -> RpcReply {
        let path = crate::cli::expand_home(std::path::Path::new(path));
        match self.session.switch_session(&path).await {
            Ok(false) => RpcReply::with_data(id, "switch_session", json!({ "cancelled": true })),
            Ok(true) => {
                let current = self.session.agent().model().map(|model| (model.provider, model.id));
                if let Some((provider, model_id)) =
                    self.session.session_model().filter(|used| Some(used) != current.as_ref())
                    && let Err(error) = self.switch_model(&provider, &model_id, ModelSelectSource::Restore).await
                {
                    eprintln!(
                        "Warning: the session used {provider}/{model_id}, which cannot be used here ({error}); keeping the current model"
                    );
                }
                RpcReply::with_data(id, "switch_session", json!({ "cancelled": false }))
            }
            Err(error) => RpcReply::failure(id, Some("switch_session"), error.to_string()),
        }
    }

    /// The next available model after the current one (wrapping); `null` when there is no other.
    pub(super) async fn cycle_model(&self, id: Option<Value>) -> RpcReply {
        match self.controls().cycle_model().await {
            Ok(data) => RpcReply::with_data(id, "cycle_model", data),
            Err(error) => RpcReply::failure(id, Some("cycle_model"), error),
        }
    }
}
