//! How a failed Codex HTTP response becomes an error: the server's message (from its JSON `error` object,
//! else the body, else the status text), and pi's usage-limit reading (`usage_limit_reached`,
//! `usage_not_included`, `rate_limit_exceeded` codes or any 429 with an `error` object), which names the plan
//! and the minutes until `resets_at` and is never retried.

use serde_json::Value;

use crate::ai::error_kind::ProviderErrorKind;
use crate::ai::openai_sdk_errors::is_truthy;

/// The error codes pi reads as a used-up ChatGPT plan (matched case-insensitively, anywhere in the code).
const USAGE_LIMIT_CODES: [&str; 3] = ["usage_limit_reached", "usage_not_included", "rate_limit_exceeded"];
/// Said when the response gave neither a body nor a status text.
const REQUEST_FAILED: &str = "the request failed";

/// A failed response, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodexHttpError {
    pub message: String,
    /// The plan's usage limit was hit: retrying now cannot help.
    pub usage_limit: bool,
    /// The kind the status gives, where it cannot change what is retried: pi decides a retry from the
    /// message alone, so rate limits and server errors carry none and pi's text rules judge them.
    pub kind: Option<ProviderErrorKind>,
}

/// Reads a failed response (`status_text` is the status line's reason phrase).
pub fn http_error(status: u16, status_text: &str, body: &str) -> CodexHttpError {
    let mut message = if !body.is_empty() {
        body.to_owned()
    } else if !status_text.is_empty() {
        status_text.to_owned()
    } else {
        REQUEST_FAILED.to_owned()
    };
    let mut usage_limit_message = None;
    let parsed = serde_json::from_str::<Value>(body).ok();
    if let Some(error) = parsed.as_ref().and_then(|p| p.get("error")).filter(|e| is_truthy(e)) {
        let code = [error.get("code"), error.get("type")]
            .into_iter()
            .flatten()
            .find(|value| is_truthy(value))
            .map(|value| value.as_str().map_or_else(|| value.to_string(), str::to_owned))
            .unwrap_or_default()
            .to_ascii_lowercase();
        if status == 429 || USAGE_LIMIT_CODES.iter().any(|limit| code.contains(limit)) {
            usage_limit_message = Some(usage_limit_text(error));
        }
        match error.get("message").filter(|m| is_truthy(m)) {
            Some(Value::String(text)) => message = text.clone(),
            Some(other) => message = other.to_string(),
            None => {
                if let Some(text) = &usage_limit_message {
                    message = text.clone();
                }
            }
        }
    }
    let usage_limit = usage_limit_message.is_some();
    let kind = match status {
        401 | 403 => Some(ProviderErrorKind::Authentication),
        429 | 413 | 500.. => None,
        _ if usage_limit => None,
        _ => Some(ProviderErrorKind::InvalidRequest),
    };
    CodexHttpError { message: usage_limit_message.unwrap_or(message), usage_limit, kind }
}

/// The usage-limit message: the plan (`plan_type`, lower case) and, with `resets_at` (Unix seconds), the
/// minutes until the limit resets. Its words avoid those pi retries on.
fn usage_limit_text(error: &Value) -> String {
    let plan = error.get("plan_type").and_then(Value::as_str).filter(|plan| !plan.is_empty());
    let mut text = match plan {
        Some(plan) => format!("ChatGPT usage limit reached ({} plan).", plan.to_lowercase()),
        None => "ChatGPT usage limit reached.".to_owned(),
    };
    if let Some(resets_at) = error.get("resets_at").filter(|r| is_truthy(r)).and_then(Value::as_f64) {
        let now_ms = crate::protocol::now_ms() as f64;
        let minutes = ((resets_at * 1000.0 - now_ms) / 60_000.0).round().max(0.0);
        text.push_str(&format!(" It resets in about {minutes} min."));
    }
    text
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::ai::is_retryable_error;
    use crate::protocol::{AssistantMessage, StopReason};

    fn failed(text: &str) -> AssistantMessage {
        AssistantMessage {
            stop_reason: StopReason::Error,
            error_message: Some(text.to_owned()),
            ..AssistantMessage::default()
        }
    }

    #[test]
    fn server_messages_win_over_bodies_and_status_texts() {
        let body = json!({"error": {"message": "Model not found", "type": "invalid_request_error"}}).to_string();
        let error = http_error(400, "Bad Request", &body);
        assert_eq!((error.message.as_str(), error.usage_limit), ("Model not found", false));
        assert_eq!(error.kind, Some(ProviderErrorKind::InvalidRequest));
        assert_eq!(http_error(503, "Service Unavailable", "").message, "Service Unavailable");
        assert_eq!(http_error(502, "Bad Gateway", "upstream connect error").message, "upstream connect error");
        assert_eq!(http_error(500, "", "").message, REQUEST_FAILED);
        assert_eq!(http_error(401, "Unauthorized", "").kind, Some(ProviderErrorKind::Authentication));
        assert_eq!(http_error(500, "", r#"{"error":{"message":"boom"}}"#).kind, None, "pi's text rules decide");
    }

    #[test]
    fn usage_limits_name_the_plan_and_the_reset_and_are_not_retried() {
        let resets_at = crate::protocol::now_ms() / 1000 + 30 * 60;
        let body = json!({"error": {"code": "usage_limit_reached", "plan_type": "PLUS", "resets_at": resets_at}});
        let error = http_error(429, "Too Many Requests", &body.to_string());
        assert!(error.usage_limit);
        assert!(error.message.starts_with("ChatGPT usage limit reached (plus plan). It resets in about "));
        assert!(error.message.ends_with(" min."), "{}", error.message);
        assert!(!is_retryable_error(&failed(&error.message), None), "pi does not retry it");
        let coded = json!({"error": {"type": "usage_not_included", "message": "Upgrade to use Codex"}});
        let error = http_error(403, "Forbidden", &coded.to_string());
        assert_eq!((error.usage_limit, error.message.as_str()), (true, "ChatGPT usage limit reached."));
        let plain = http_error(429, "Too Many Requests", "slow down");
        assert!(!plain.usage_limit, "no error object, no usage-limit reading");
    }
}
