//! The RPC commands about the model and the session file: thinking levels, switching and cycling models,
//! switching to another session file.

use serde_json::{Value, json};

use super::command::RpcReply;
use super::dispatch::Rpc;
use super::state::model_json;
use crate::ai::ThinkingLevel;
use crate::extension::ModelSelectSource;
use crate::protocol::SessionOnlyEvent;

impl Rpc {
    pub(super) fn set_thinking_level(&self, id: Option<Value>, level: &str) -> RpcReply {
        let level = match ThinkingLevel::parse_at(level, self.session.agent().pi_compat()) {
            Ok(level) => level,
            Err(error) => return RpcReply::failure(id, Some("set_thinking_level"), error.to_string()),
        };
        let before = self.session.agent().thinking_level();
        match self.session.set_thinking_level(level) {
            Ok(now) => {
                if now != before {
                    self.out.event(&SessionOnlyEvent::ThinkingLevelChanged { level: now.as_str().to_owned() });
                }
                RpcReply::ok(id, "set_thinking_level")
            }
            Err(error) => RpcReply::failure(id, Some("set_thinking_level"), error.to_string()),
        }
    }

    pub(super) fn cycle_thinking_level(&self, id: Option<Value>) -> RpcReply {
        match self.session.cycle_thinking_level() {
            Ok(Some(level)) => {
                self.out.event(&SessionOnlyEvent::ThinkingLevelChanged { level: level.as_str().to_owned() });
                RpcReply::with_data(id, "cycle_thinking_level", json!({ "level": level.as_str() }))
            }
            Ok(None) => RpcReply::with_data(id, "cycle_thinking_level", Value::Null),
            Err(error) => RpcReply::failure(id, Some("cycle_thinking_level"), error.to_string()),
        }
    }

    /// Switches to `provider`/`id`; returns the model as printed and the thinking level now in effect.
    pub(super) async fn switch_model(
        &self,
        provider: &str,
        id: &str,
        source: ModelSelectSource,
    ) -> Result<(Value, ThinkingLevel), String> {
        let chosen = self.models.choose(provider, id)?;
        let before = self.session.agent().thinking_level();
        let printed = model_json(&chosen.model);
        let map = chosen.thinking_level_map.as_ref();
        let level = self
            .session
            .set_model(chosen.model, Some(chosen.api_key), map, source)
            .await
            .map_err(|error| error.to_string())?;
        if level != before {
            self.out.event(&SessionOnlyEvent::ThinkingLevelChanged { level: level.as_str().to_owned() });
        }
        Ok((printed, level))
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
        let current = self.session.agent().model();
        let Some(target) = self.models.cycle_from(current.as_ref(), false) else {
            return RpcReply::with_data(id, "cycle_model", Value::Null);
        };
        let (model, mut level) = match self.switch_model(&target.provider, &target.id, ModelSelectSource::Cycle).await {
            Ok(switched) => switched,
            Err(error) => return RpcReply::failure(id, Some("cycle_model"), error),
        };
        // A level the scope's pattern names replaces the current one (clamped to the model).
        if let Some(wanted) = target.thinking {
            match self.session.set_thinking_level(wanted) {
                Ok(applied) if applied != level => {
                    self.out.event(&SessionOnlyEvent::ThinkingLevelChanged { level: applied.as_str().to_owned() });
                    level = applied;
                }
                Ok(_) => {}
                Err(error) => return RpcReply::failure(id, Some("cycle_model"), error.to_string()),
            }
        }
        let data = json!({ "model": model, "thinkingLevel": level.as_str(), "isScoped": target.scoped });
        RpcReply::with_data(id, "cycle_model", data)
    }
}
