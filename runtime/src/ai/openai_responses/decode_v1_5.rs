//! How pi 1.5 ends a Responses stream: `response.completed` or `response.incomplete` brings usage (with the
//! reasoning tokens apart), the cost marked as computed, the status as the raw stop reason
//! (`incomplete.<reason>` for a cut-short response) and the stop reason it stands for.

use serde_json::Value;

use super::super::errors::js_text;
use super::{ResponsesState, apply_service_tier, parse_usage};
use crate::ai::Model;
use crate::protocol::{AssistantContent, StopReason};

impl ResponsesState {
    /// `response.completed` / `response.incomplete` at level 1.5. A status pi does not know fails at once
    /// (the usage is kept); an incomplete response other than for its output limit stops with an error.
    pub(super) fn complete_v1_5(&mut self, response: Option<&Value>, model: &Model) -> Result<(), String> {
        let response = response.filter(|r| r.is_object());
        let field = |key: &str| response.and_then(|r| r.get(key));
        if let Some(id) = field("id").and_then(Value::as_str).filter(|id| !id.is_empty()) {
            self.output.response_id = Some(id.into());
        }
        if let Some(usage) = field("usage").filter(|u| u.is_object()) {
            let mut parsed = parse_usage(usage);
            let reasoning = usage.pointer("/output_tokens_details/reasoning_tokens").and_then(Value::as_f64);
            parsed.reasoning = Some(reasoning.map_or(0, |n| n.max(0.0) as u64));
            self.output.usage = parsed;
        }
        model.apply_cost(&mut self.output.usage);
        if self.service_tier_pricing {
            apply_service_tier(&mut self.output.usage, field("service_tier").and_then(Value::as_str), model);
        }
        self.output.usage.cost.total_from_provider = Some(false);
        let (stop_reason, raw, error) = match field("status") {
            None | Some(Value::Null) => (StopReason::Stop, None, None),
            Some(Value::String(status)) => match status.as_str() {
                "" => (StopReason::Stop, None, None),
                "completed" | "in_progress" | "queued" => (StopReason::Stop, Some(status.clone()), None),
                "failed" | "cancelled" => (StopReason::Error, Some(status.clone()), None),
                "incomplete" => {
                    let reason = response
                        .and_then(|r| r.pointer("/incomplete_details/reason"))
                        .and_then(Value::as_str)
                        .filter(|r| !r.is_empty());
                    match reason {
                        Some("max_output_tokens") => {
                            (StopReason::Length, Some("incomplete.max_output_tokens".to_owned()), None)
                        }
                        Some(reason) => (
                            StopReason::Error,
                            Some(format!("incomplete.{reason}")),
                            Some(format!("Response incomplete: {reason}")),
                        ),
                        None => (
                            StopReason::Error,
                            Some("incomplete".to_owned()),
                            Some("Response incomplete without a provider reason".to_owned()),
                        ),
                    }
                }
                other => {
                    self.output.raw_stop_reason = Some(other.to_owned());
                    return Err(format!("Unhandled stop reason: {other}"));
                }
            },
            Some(other) => {
                let text = js_text(Some(other));
                self.output.raw_stop_reason = Some(text.clone());
                return Err(format!("Unhandled stop reason: {text}"));
            }
        };
        self.output.raw_stop_reason = raw;
        self.output.error_message = error;
        let has_tool_calls = self.output.content.iter().any(|b| matches!(b, AssistantContent::ToolCall(_)));
        self.output.stop_reason =
            if has_tool_calls && stop_reason == StopReason::Stop { StopReason::ToolUse } else { stop_reason };
        Ok(())
    }
}
