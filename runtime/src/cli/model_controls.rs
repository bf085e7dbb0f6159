//! The model and thinking-level commands on a session (`set_model`, `cycle_model`, `set_thinking_level`,
//! `cycle_thinking_level`), apart from where their replies and events go: RPC mode and the Temporal
//! engine's settings step both carry them out here.

use serde_json::{Value, json};

use super::model_catalog::ModelCatalog;
use super::rpc::model_json;
use crate::agent_session::AgentSession;
use crate::ai::ThinkingLevel;
use crate::extension::ModelSelectSource;
use crate::protocol::SessionOnlyEvent;

/// A session, the models it may switch to, and where its `thinking_level_changed` events go.
pub struct ModelControls<'a> {
    pub session: &'a AgentSession,
    pub models: &'a ModelCatalog,
    pub emit: Box<dyn Fn(&SessionOnlyEvent) + Send + Sync + 'a>,
}

impl ModelControls<'_> {
    /// `set_thinking_level`: the level named (clamped to the model); an event when it changed.
    pub fn set_thinking_level(&self, level: &str) -> Result<(), String> {
        let level = ThinkingLevel::parse_at(level, self.session.agent().pi_compat()).map_err(|e| e.to_string())?;
        let before = self.session.agent().thinking_level();
        let now = self.session.set_thinking_level(level).map_err(|error| error.to_string())?;
        if now != before {
            self.level_changed(now);
        }
        Ok(())
    }

    /// `cycle_thinking_level`: `{"level"}` after the move, `null` when the model does not reason.
    pub fn cycle_thinking_level(&self) -> Result<Value, String> {
        match self.session.cycle_thinking_level().map_err(|error| error.to_string())? {
            Some(level) => {
                self.level_changed(level);
                Ok(json!({ "level": level.as_str() }))
            }
            None => Ok(Value::Null),
        }
    }

    /// Switches to `provider`/`id`; returns the model as printed and the thinking level now in effect.
    pub async fn switch_model(
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
            self.level_changed(level);
        }
        Ok((printed, level))
    }

    /// `cycle_model`: the next available model after the current one (wrapping), with the level in effect;
    /// `null` when there is no other.
    pub async fn cycle_model(&self) -> Result<Value, String> {
        let current = self.session.agent().model();
        let Some(target) = self.models.cycle_from(current.as_ref(), false) else { return Ok(Value::Null) };
        let (model, mut level) = self.switch_model(&target.provider, &target.id, ModelSelectSource::Cycle).await?;
        // A level the scope's pattern names replaces the current one (clamped to the model).
        if let Some(wanted) = target.thinking {
            let applied = self.session.set_thinking_level(wanted).map_err(|error| error.to_string())?;
            if applied != level {
                self.level_changed(applied);
                level = applied;
            }
        }
        Ok(json!({ "model": model, "thinkingLevel": level.as_str(), "isScoped": target.scoped }))
    }

    fn level_changed(&self, level: ThinkingLevel) {
        (self.emit)(&SessionOnlyEvent::ThinkingLevelChanged { level: level.as_str().to_owned() });
    }
}
