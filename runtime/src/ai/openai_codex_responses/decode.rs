//! Reads Codex's event stream as pi's Codex provider does: only `data:` lines count (event names are
//! ignored), `error` and `response.failed` events end the call in Codex's own terms, and any of
//! `response.done`, `response.completed` or `response.incomplete` is the final `response.completed` (an
//! unknown status dropped), after which nothing more is read. Everything else is openai-responses'.

use serde_json::Value;

use crate::ai::Model;
use crate::ai::openai_responses::ResponsesState;
use crate::ai::pi15::initial_message;
use crate::ai::transport::{DecodeError, Flow, StreamDecoder};
use crate::protocol::{AssistantMessage, AssistantMessageEvent, PiCompat};

use super::errors::http_error;

/// The statuses pi passes on; any other is dropped (the response then ends as `stop`).
const KNOWN_STATUSES: [&str; 6] = ["completed", "incomplete", "failed", "cancelled", "queued", "in_progress"];
/// Said for a `response.failed` event without an error message.
pub const RESPONSE_FAILED: &str = "the Codex response failed without saying why";

/// Codex stream events in, assistant-message events out.
pub struct CodexDecoder {
    state: ResponsesState,
    model: Model,
}

impl CodexDecoder {
    /// A decoder for one response of `model` (read as pi 0.73.1 reads it, whatever the agent's pi release).
    pub fn new(model: &Model) -> Self {
        Self { state: ResponsesState::new(initial_message(model, PiCompat::V0_73)), model: model.clone() }
    }
}

impl StreamDecoder for CodexDecoder {
    fn message(&self) -> &AssistantMessage {
        self.state.message()
    }

    fn take_message(&mut self) -> AssistantMessage {
        self.state.take_message()
    }

    fn on_event(
        &mut self,
        _name: &str,
        data: &str,
        events: &mut Vec<AssistantMessageEvent>,
    ) -> Result<Flow, DecodeError> {
        let data = data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(Flow::Continue);
        }
        if self.state.apply_typical_delta(data, events) {
            return Ok(Flow::Continue);
        }
        let event: Value =
            serde_json::from_str(data).map_err(|e| format!("Codex sent an event that is not JSON ({e}): {data}"))?;
        let Some(kind) = event.get("type").and_then(Value::as_str).filter(|kind| !kind.is_empty()) else {
            return Ok(Flow::Continue);
        };
        match kind {
            "error" => Err(error_event_message(&event).into()),
            "response.failed" => {
                let message = event.pointer("/response/error/message").and_then(Value::as_str);
                Err(message.filter(|m| !m.is_empty()).unwrap_or(RESPONSE_FAILED).into())
            }
            "response.done" | "response.completed" | "response.incomplete" => {
                let completed = completed_event(&event);
                events.extend(self.state.apply_event(&completed, &self.model)?);
                Ok(Flow::Stop)
            }
            _ => {
                events.extend(self.state.apply_event(&event, &self.model)?);
                Ok(Flow::Continue)
            }
        }
    }

    /// A stream that ends without a final event ends the message as it stands, as in pi.
    fn finish(&mut self, _events: &mut Vec<AssistantMessageEvent>) -> Result<(), DecodeError> {
        Ok(())
    }

    fn http_error(&self, status: u16, body: &str) -> String {
        http_error(status, "", body).message
    }
}

/// The event's message, else its code, else the whole event, said to come from Codex.
fn error_event_message(event: &Value) -> String {
    let field = |key: &str| event.get(key).and_then(Value::as_str).filter(|text| !text.is_empty());
    let detail = field("message").or_else(|| field("code")).map_or_else(|| event.to_string(), str::to_owned);
    format!("Codex reported an error: {detail}")
}

/// The final event as `response.completed`, its response's status kept only when pi knows it.
fn completed_event(event: &Value) -> Value {
    let mut completed = event.as_object().cloned().unwrap_or_default();
    completed.insert("type".into(), Value::from("response.completed"));
    if let Some(Value::Object(response)) = completed.get_mut("response") {
        let known = response.get("status").and_then(Value::as_str).is_some_and(|s| KNOWN_STATUSES.contains(&s));
        if !known {
            response.remove("status");
        }
    }
    Value::Object(completed)
}

#[cfg(test)]
#[path = "decode_tests.rs"]
mod tests;
