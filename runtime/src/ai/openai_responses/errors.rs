//! Failure texts of the Responses stream and of HTTP errors: pi's wording of `error` and
//! `response.failed` events, and the OpenAI SDK's wording of API errors.

use serde_json::Value;

pub(crate) use crate::ai::openai_sdk_errors::{
    http_error_message, is_truthy, stream_error_message as sdk_error_message,
};

/// Said when a failed response carries neither an error nor a reason.
pub(super) const FAILED_WITHOUT_DETAILS: &str = "the response failed and gave no reason";
/// pi's own words for it (used at level 1.5).
pub(super) const PI_FAILED_WITHOUT_DETAILS: &str = "Unknown error (no error details in response)";

/// The message of an `error` event: `Error Code {code}: {message}`.
pub(super) fn error_event_message(event: &Value) -> String {
    let (code, message) = (js_text_or_undefined(event.get("code")), js_text_or_undefined(event.get("message")));
    format!("Error Code {code}: {message}")
}

/// How JavaScript writes a value into a template string (`null` for null and missing values here).
pub(super) fn js_text(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Null) | None => "null".to_owned(),
        Some(other) => other.to_string(),
    }
}

pub(super) fn js_text_or_undefined(value: Option<&Value>) -> String {
    match value {
        None => "undefined".to_owned(),
        some => js_text(some),
    }
}

/// The message of a `response.failed` event: `code: message`, else the incomplete reason.
pub(super) fn failure_message(response: Option<&Value>) -> String {
    let error = response.and_then(|r| r.get("error")).filter(|e| is_truthy(e));
    if let Some(error) = error {
        let part = |key: &str, fallback: &str| match error.get(key).filter(|v| is_truthy(v)) {
            Some(value) => js_text(Some(value)),
            None => fallback.to_owned(),
        };
        return format!("{}: {}", part("code", "unknown"), part("message", "no message"));
    }
    match response.and_then(|r| r.pointer("/incomplete_details/reason")).filter(|r| is_truthy(r)) {
        Some(reason) => format!("incomplete: {}", js_text(Some(reason))),
        None => FAILED_WITHOUT_DETAILS.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn failure_events_name_their_cause() {
        let error = json!({"type": "error", "code": "rate_limit_exceeded", "message": "Slow down", "param": null});
        assert_eq!(error_event_message(&error), "Error Code rate_limit_exceeded: Slow down");
        assert_eq!(error_event_message(&json!({"message": "odd"})), "Error Code undefined: odd");
        assert_eq!(error_event_message(&json!({"code": null, "message": 5})), "Error Code null: 5");
        let failed = |response: serde_json::Value| failure_message(Some(&response));
        assert_eq!(failed(json!({"error": {"code": "server_error", "message": "boom"}})), "server_error: boom");
        assert_eq!(failed(json!({"error": {"message": ""}})), "unknown: no message");
        let incomplete = json!({"error": null, "incomplete_details": {"reason": "max_output_tokens"}});
        assert_eq!(failed(incomplete), "incomplete: max_output_tokens");
        assert_eq!(failed(json!({})), FAILED_WITHOUT_DETAILS);
        assert_eq!(failure_message(None), FAILED_WITHOUT_DETAILS);
    }

    #[test]
    fn http_errors_use_the_sdk_wording() {
        let body = r#"{"error":{"message":"Invalid 'input[2].id'","type":"invalid_request_error","param":"input"}}"#;
        assert_eq!(http_error_message(400, body), "400 Invalid 'input[2].id'");
        assert_eq!(http_error_message(404, ""), "404 status code (no body)");
        assert_eq!(http_error_message(502, "Bad gateway"), "502 Bad gateway");
        assert_eq!(http_error_message(400, r#"{"error":{"code":7}}"#), r#"400 {"code":7}"#);
        let openrouter = r#"{"error":{"message":"Provider returned error","metadata":{"raw":"upstream said no"}}}"#;
        assert_eq!(http_error_message(400, openrouter), "400 Provider returned error\nupstream said no");
        assert_eq!(sdk_error_message(&json!({"message": {"detail": 1}})), r#"{"detail":1}"#);
    }
}
