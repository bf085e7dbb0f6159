//! How the OpenAI JS SDK words API errors (shared by the openai-completions and openai-responses
//! providers), and JavaScript's truthiness test that pi applies to error fields.

use serde_json::Value;

/// JavaScript truthiness of a JSON value (how pi tests `chunk.error`).
pub(crate) fn is_truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// The message of a status-less API error built from an error object: its `message` (stringified
/// when not a string), else the whole object as compact JSON (the OpenAI SDK's wording).
pub(crate) fn stream_error_message(error: &Value) -> String {
    match error.get("message").filter(|m| is_truthy(m)) {
        Some(Value::String(message)) => message.clone(),
        Some(message) => message.to_string(),
        None => error.to_string(),
    }
}

/// `{status} {message}` as the OpenAI SDK words an HTTP error (`{status} status code (no body)`
/// without one), plus OpenRouter's `error.metadata.raw` on its own line, as pi adds it.
pub(crate) fn http_error_message(status: u16, body: &str) -> String {
    let parsed = serde_json::from_str::<Value>(body).ok().filter(is_truthy);
    let (message, raw) = match &parsed {
        Some(json) => {
            let error = json.get("error").filter(|e| is_truthy(e)).unwrap_or(json);
            let raw = error.pointer("/metadata/raw").and_then(Value::as_str).filter(|r| !r.is_empty());
            (stream_error_message(error), raw)
        }
        None => (body.to_owned(), None),
    };
    let mut text =
        if message.is_empty() { format!("{status} status code (no body)") } else { format!("{status} {message}") };
    if let Some(raw) = raw {
        text.push('\n');
        text.push_str(raw);
    }
    text
}
