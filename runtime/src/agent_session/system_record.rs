//! pi 1.5's `role: "system"` message: at level 1.5 a conversation opens with a record of its system prompt
//! (by named sections) and of the tools offered, emitted and saved before the first user message.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::AgentSession;
use super::link::lock;
use crate::protocol::{AgentMessage, SessionOnlyEvent, StopReason, SystemMessage, now_ms};
use crate::tools::AgentTool;

impl AgentSession {
    /// The system message to put before the next prompt, at level 1.5: when the conversation has none yet, or
    /// its latest one records another prompt or other tools (a session another agent or version wrote, tools
    /// switched on or off). As pi 1.5 does then, the new record is complete, not a difference.
    pub(super) fn opening_system_message(&self) -> Option<AgentMessage> {
        if !self.agent.pi_compat().is_v1_5() {
            return None;
        }
        let tools = self.agent.state_tools();
        let sections = {
            let state = lock(&self.link.tools);
            match &state.builder {
                Some(builder) => builder.build_sections(&tools).to_json_map(),
                None => Map::from_iter([("preamble".to_owned(), Value::String(state.base_prompt.clone()))]),
            }
        };
        let record = system_message(sections, &tools);
        let latest = self.agent.find_last_message(|message| match message {
            AgentMessage::System(system) => Some((system.sections.clone(), system.tools_added.clone())),
            _ => None,
        });
        match latest {
            Some((sections, tools_added)) if sections == record.sections && tools_added == record.tools_added => None,
            _ => Some(AgentMessage::System(record)),
        }
    }
}

/// The record of a system prompt made of `sections`, offering `tools`.
pub fn system_message(sections: Map<String, Value>, tools: &[Arc<dyn AgentTool>]) -> SystemMessage {
    let tools_added: Vec<Value> = tools.iter().map(|tool| tool_record(tool.as_ref())).collect();
    SystemMessage {
        content: String::new(),
        sections: (!sections.is_empty()).then_some(sections),
        timestamp: now_ms(),
        tools_added: (!tools_added.is_empty()).then_some(tools_added),
        tools_removed: None,
    }
}

/// A tool as pi 1.5's `toolsAdded` lists it: what the model is told, and that its arguments may be sampled
/// under the schema when the provider can.
fn tool_record(tool: &dyn AgentTool) -> Value {
    json!({
        "name": tool.name(),
        "description": tool.description(),
        "parameters": tool.parameters(),
        "constrainedSampling": {"type": "json_schema", "strict": "prefer"},
    })
}

impl AgentSession {
    /// pi 1.5's record of a failed answer leaving the context before a retry: a `context_edit` entry that
    /// drops it (the answer stays in the file), announced by `entry_appended`.
    pub(super) fn record_dropped_answer(&self) -> Arc<dyn Fn() + Send + Sync> {
        let (manager, link, emit) = (self.manager.clone(), self.link.clone(), self.emit.clone());
        Arc::new(move || {
            let appended = {
                let mut manager = lock(&manager);
                let failed = manager.tree().leaf_entry().filter(|entry| {
                    matches!(entry.message(), Some(AgentMessage::Assistant(answer)) if answer.stop_reason == StopReason::Error)
                });
                let Some(target) = failed.map(|entry| entry.id.clone()) else { return };
                manager.append_context_edit(&target, None)
            };
            match appended {
                Ok(entry) => {
                    if let Ok(entry) = serde_json::to_value(&entry) {
                        emit(&SessionOnlyEvent::EntryAppended { entry });
                    }
                }
                Err(error) => link.record_write_error(&error),
            }
        })
    }
}
