//! What pi 1.5 changed in every provider alike: messages stream with stopReason `pending` until the
//! provider's own reason arrives, the `user-agent` pi sends, and OpenRouter's billed cost taken as the total.

use reqwest::header::{HeaderMap, HeaderValue, USER_AGENT};
use serde_json::Value;

use super::Model;
use super::provider::{StreamOptions, empty_assistant_message};
use crate::protocol::{AssistantMessage, PiCompat, StopReason, Usage};

/// The message a decoder starts from: at level 1.5 it says `pending` until the stream settles its stop reason.
pub(crate) fn initial_message(model: &Model, compat: PiCompat) -> AssistantMessage {
    let mut message = empty_assistant_message(model);
    if compat.is_v1_5() {
        message.stop_reason = StopReason::Pending;
    }
    message
}

/// Sets the call's `user-agent` (pi 1.5's `pi/<version> (<os>; node/<version>; <arch>)`) when it has one.
pub(crate) fn apply_user_agent(headers: &mut HeaderMap, options: &StreamOptions) -> Result<(), String> {
    if let Some(agent) = options.user_agent.as_deref() {
        let value = HeaderValue::from_str(agent).map_err(|_| format!("invalid user-agent \"{agent}\""))?;
        headers.insert(USER_AGENT, value);
    }
    Ok(())
}

/// The error a finished stream reports at level 1.5: `ended` while the stop reason is still pending,
/// the message's own error text (or pi's generic one) when it stopped with an error, else none.
pub(crate) fn settled_error(message: &AssistantMessage, ended: &str) -> Option<String> {
    match message.stop_reason {
        StopReason::Pending => Some(ended.to_owned()),
        StopReason::Error | StopReason::Aborted => {
            Some(message.error_message.clone().unwrap_or_else(|| "An unknown error occurred".to_owned()))
        }
        _ => None,
    }
}

/// Whether pi treats the model as served by OpenRouter (whose usage reports what it billed).
fn is_openrouter(model: &Model) -> bool {
    model.provider == "openrouter" || model.base_url.contains("openrouter.ai")
}

/// A non-negative finite number.
fn cost_of(value: Option<&Value>) -> Option<f64> {
    value.and_then(Value::as_f64).filter(|cost| cost.is_finite() && *cost >= 0.0)
}

/// For OpenRouter models, the total OpenRouter reports in `reported` (a usage object: `cost`, `is_byok`,
/// `cost_details`) replaces the computed one and is marked as the provider's; incomplete figures are ignored.
pub(crate) fn apply_openrouter_cost(model: &Model, usage: &mut Usage, reported: &Value) {
    if !is_openrouter(model) {
        return;
    }
    let Some(cost) = cost_of(reported.get("cost")) else { return };
    let total = match reported.get("is_byok").and_then(Value::as_bool) {
        Some(false) => cost,
        Some(true) => {
            let Some(details) = reported.get("cost_details").filter(|d| !d.is_null()) else { return };
            let upstream = match details.get("upstream_inference_cost") {
                Some(Value::Null) => {
                    let prompt = cost_of(details.get("upstream_inference_prompt_cost"));
                    let completions = cost_of(details.get("upstream_inference_completions_cost"));
                    let (Some(prompt), Some(completions)) = (prompt, completions) else { return };
                    prompt + completions
                }
                other => match cost_of(other) {
                    Some(upstream) => upstream,
                    None => return,
                },
            };
            cost + upstream
        }
        None => return,
    };
    usage.cost.total = total;
    usage.cost.total_from_provider = Some(true);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn openrouter_totals_follow_its_billing_fields() {
        let mut model = Model::new("openrouter", "m", "openai-completions", "http://127.0.0.1:9/v1");
        let total = |model: &Model, reported: Value| {
            let mut usage = Usage::default();
            usage.cost.total = 1.0;
            usage.cost.total_from_provider = Some(false);
            apply_openrouter_cost(model, &mut usage, &reported);
            (usage.cost.total, usage.cost.total_from_provider)
        };
        // Observed with pi 1.5.2: 0.123 billed, and 0.123 + 0.2 upstream for a bring-your-own-key call.
        assert_eq!(total(&model, json!({"cost": 0.123, "is_byok": false})), (0.123, Some(true)));
        let byok = json!({"cost": 0.123, "is_byok": true, "cost_details": {"upstream_inference_cost": 0.2}});
        assert_eq!(total(&model, byok), (0.123 + 0.2, Some(true)));
        let split = json!({"cost": 1, "is_byok": true, "cost_details": {"upstream_inference_cost": null,
            "upstream_inference_prompt_cost": 2, "upstream_inference_completions_cost": 3}});
        assert_eq!(total(&model, split), (6.0, Some(true)));
        for ignored in [
            json!({"cost": 0.5}),
            json!({"cost": -1, "is_byok": false}),
            json!({"cost": 1, "is_byok": true}),
            json!({"cost": 1, "is_byok": true, "cost_details": {"upstream_inference_cost": null}}),
        ] {
            assert_eq!(total(&model, ignored.clone()), (1.0, Some(false)), "{ignored}");
        }
        model.provider = "mock".into();
        assert_eq!(total(&model, json!({"cost": 0.123, "is_byok": false})), (1.0, Some(false)), "not OpenRouter");
        model.base_url = "https://openrouter.ai/api/v1".into();
        assert_eq!(total(&model, json!({"cost": 0.123, "is_byok": false})), (0.123, Some(true)), "by its URL");
    }

    #[test]
    fn messages_start_pending_at_1_5_only() {
        let model = Model::new("mock", "m", "openai-completions", "http://127.0.0.1:9/v1");
        assert_eq!(initial_message(&model, PiCompat::V0_73).stop_reason, StopReason::Stop);
        let mut message = initial_message(&model, PiCompat::V1_5);
        assert_eq!(message.stop_reason, StopReason::Pending);
        assert_eq!(settled_error(&message, "ended early").as_deref(), Some("ended early"));
        message.stop_reason = StopReason::Error;
        assert_eq!(settled_error(&message, "x").as_deref(), Some("An unknown error occurred"));
        message.error_message = Some("Provider stopped with: SAFETY".into());
        assert_eq!(settled_error(&message, "x").as_deref(), Some("Provider stopped with: SAFETY"));
        message.stop_reason = StopReason::ToolUse;
        assert_eq!(settled_error(&message, "x"), None);
    }

    #[test]
    fn the_user_agent_is_the_calls_own() {
        let mut headers = HeaderMap::new();
        let options = StreamOptions { user_agent: Some("pi/1.5.2 (linux; x64)".into()), ..StreamOptions::default() };
        assert!(apply_user_agent(&mut headers, &options).is_ok());
        assert_eq!(headers.get("user-agent").and_then(|v| v.to_str().ok()), Some("pi/1.5.2 (linux; x64)"));
        let bad = StreamOptions { user_agent: Some("a\nb".into()), ..StreamOptions::default() };
        assert!(apply_user_agent(&mut headers, &bad).is_err());
    }
}
