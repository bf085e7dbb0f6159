//! The panels strategy's tools as [`AgentTool`]s: each runs one synchronous action on the shared
//! [`PanelsCore`] and answers with a short text; the panels show the result in the next request.

use std::sync::Arc;

use serde_json::Value;

use super::engine::PanelsCore;
use crate::protocol::{AgentToolResult, now_ms};
use crate::tools::{AgentTool, ToolContext, ToolError, ToolFuture};

/// The panels' state, shared by the extension and its tools.
pub type SharedCore = Arc<tokio::sync::Mutex<PanelsCore>>;

/// What a panel tool does: changes the core (at `now_ms`) and says what it did.
pub type PanelAction = fn(&mut PanelsCore, &Value, i64) -> Result<String, ToolError>;

/// A tool of the panels strategy.
pub struct PanelTool {
    name: &'static str,
    label: &'static str,
    description: &'static str,
    snippet: &'static str,
    parameters: Value,
    action: PanelAction,
    core: SharedCore,
}

/// How a panel tool is described.
pub struct PanelToolSpec {
    pub name: &'static str,
    pub label: &'static str,
    pub description: &'static str,
    /// The line in the system prompt's tool list.
    pub snippet: &'static str,
    pub parameters: Value,
    pub action: PanelAction,
}

impl PanelTool {
    pub fn new(spec: PanelToolSpec, core: SharedCore) -> Self {
        let PanelToolSpec { name, label, description, snippet, parameters, action } = spec;
        Self { name, label, description, snippet, parameters, action, core }
    }
}

impl AgentTool for PanelTool {
    fn name(&self) -> &str {
        self.name
    }

    fn label(&self) -> &str {
        self.label
    }

    fn description(&self) -> &str {
        self.description
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn prompt_snippet(&self) -> Option<&str> {
        Some(self.snippet)
    }

    fn execute(&self, args: Value, _ctx: ToolContext) -> ToolFuture<'_> {
        Box::pin(async move {
            let mut core = self.core.lock().await;
            let text = (self.action)(&mut core, &args, now_ms())?;
            Ok(AgentToolResult::text(text))
        })
    }
}

/// The string field `key` of `value`, if present.
pub(super) fn text_field<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// The array field `key` (absent: empty).
pub(super) fn list_field<'a>(value: &'a Value, key: &str) -> &'a [Value] {
    value.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

/// Ids given as strings (`"T3"`) or, where `prefix` is set, bare numbers (`3` → `T3`).
pub(super) fn ids_field(value: &Value, key: &str, prefix: &str) -> Vec<String> {
    list_field(value, key)
        .iter()
        .filter_map(|id| match id {
            Value::String(text) => Some(text.trim().to_owned()),
            Value::Number(number) => Some(format!("{prefix}{number}")),
            _ => None,
        })
        .collect()
}

/// "Added T1, T2; removed T3" from the non-empty parts.
pub(super) fn summary(parts: &[(&str, Vec<String>)]) -> String {
    let said: Vec<String> = parts
        .iter()
        .filter(|(_, ids)| !ids.is_empty())
        .map(|(verb, ids)| format!("{verb} {}", ids.join(", ")))
        .collect();
    let joined = said.join("; ");
    let mut chars = joined.chars();
    match chars.next() {
        None => "Nothing changed.".to_owned(),
        Some(first) => format!("{}{}.", first.to_uppercase(), chars.as_str()),
    }
}
