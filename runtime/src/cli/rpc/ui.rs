//! Extension UI over RPC, as pi's RPC mode carries it: every request goes to the client as an
//! `extension_ui_request` line; dialogs (select, confirm, input, editor) wait for the client's
//! `extension_ui_response` with the same `id` (`value`, `confirmed` or `cancelled`), the rest are fire and
//! forget. Responses are taken off stdin by the reader thread, so a dialog is answered even while the command
//! that opened it is still being handled.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value, json};
use tokio::sync::oneshot;

use super::output::RpcOutput;
use crate::agent::BoxFuture;
use crate::extension::{ExtensionUi, NotifyLevel, UiRequest, UiResponse};

/// Dialogs waiting for the client, by request id.
#[derive(Clone, Default)]
pub struct PendingDialogs(Arc<Mutex<HashMap<String, oneshot::Sender<Value>>>>);

impl PendingDialogs {
    /// Takes `line` when it is an `extension_ui_response` (answering the dialog it names, if any still
    /// waits); returns whether it was one.
    pub fn take_response(&self, line: &str) -> bool {
        if !line.contains("extension_ui_response") {
            return false;
        }
        let Ok(Value::Object(object)) = serde_json::from_str::<Value>(line) else { return false };
        if object.get("type").and_then(Value::as_str) != Some("extension_ui_response") {
            return false;
        }
        let id = object.get("id").and_then(Value::as_str).unwrap_or_default();
        let waiting = self.0.lock().unwrap_or_else(PoisonError::into_inner).remove(id);
        if let Some(reply) = waiting {
            let _ = reply.send(Value::Object(object));
        }
        true
    }

    /// Answers every waiting dialog as cancelled (stdin ended: nobody is left to answer).
    pub fn cancel_all(&self) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).clear();
    }

    fn wait_for(&self, id: &str) -> oneshot::Receiver<Value> {
        let (reply, answer) = oneshot::channel();
        self.0.lock().unwrap_or_else(PoisonError::into_inner).insert(id.to_owned(), reply);
        answer
    }
}

/// The extensions' UI in RPC mode.
pub struct RpcUi {
    pub pending: PendingDialogs,
    pub out: RpcOutput,
}

impl ExtensionUi for RpcUi {
    fn request(&self, request: UiRequest) -> BoxFuture<'static, UiResponse> {
        let id = uuid::Uuid::new_v4().to_string();
        let line = request_line(&id, &request);
        if !request.is_dialog() {
            self.out.event(&line);
            return Box::pin(async { UiResponse::Done });
        }
        let answer = self.pending.wait_for(&id);
        self.out.event(&line);
        let confirm = matches!(request, UiRequest::Confirm { .. });
        Box::pin(async move {
            match answer.await {
                Ok(response) => parse_response(&response, confirm),
                Err(_) => UiResponse::Cancelled,
            }
        })
    }
}

/// The `extension_ui_request` line for `request`, fields in pi's order (absent values left out).
pub fn request_line(id: &str, request: &UiRequest) -> Value {
    let mut line = Map::new();
    line.insert("type".into(), json!("extension_ui_request"));
    line.insert("id".into(), json!(id));
    let mut put = |key: &str, value: Value| {
        line.insert(key.to_owned(), value);
    };
    match request {
        UiRequest::Select { title, options } => {
            put("method", json!("select"));
            put("title", json!(title));
            put("options", json!(options));
        }
        UiRequest::Confirm { title, message } => {
            put("method", json!("confirm"));
            put("title", json!(title));
            put("message", json!(message));
        }
        UiRequest::Input { title, placeholder } => {
            put("method", json!("input"));
            put("title", json!(title));
            if let Some(placeholder) = placeholder {
                put("placeholder", json!(placeholder));
            }
        }
        UiRequest::Editor { title, prefill } => {
            put("method", json!("editor"));
            put("title", json!(title));
            put("prefill", json!(prefill));
        }
        UiRequest::Notify { message, level } => {
            put("method", json!("notify"));
            put("message", json!(message));
            let kind = match level {
                NotifyLevel::Warning => "warning",
                NotifyLevel::Error => "error",
                _ => "info",
            };
            put("notifyType", json!(kind));
        }
        UiRequest::SetStatus { key, text } => {
            put("method", json!("setStatus"));
            put("statusKey", json!(key));
            if let Some(text) = text {
                put("statusText", json!(text));
            }
        }
        UiRequest::SetWidget { key, lines, placement } => {
            put("method", json!("setWidget"));
            put("widgetKey", json!(key));
            if let Some(lines) = lines {
                put("widgetLines", json!(lines));
            }
            put("widgetPlacement", json!(placement.as_str()));
        }
        UiRequest::SetTitle { title } => {
            put("method", json!("setTitle"));
            put("title", json!(title));
        }
        UiRequest::SetEditorText { text } => {
            put("method", json!("set_editor_text"));
            put("text", json!(text));
        }
    }
    Value::Object(line)
}

/// The answer in a client's response: `cancelled: true` cancels; a confirm takes `confirmed`, the other
/// dialogs `value` (a response without the field it needs counts as cancelled, as in pi).
pub fn parse_response(response: &Value, confirm: bool) -> UiResponse {
    if response.get("cancelled").and_then(Value::as_bool) == Some(true) {
        return UiResponse::Cancelled;
    }
    if confirm {
        return UiResponse::Confirmed(response.get("confirmed").and_then(Value::as_bool).unwrap_or(false));
    }
    match response.get("value").and_then(Value::as_str) {
        Some(value) => UiResponse::Value(value.to_owned()),
        None => UiResponse::Cancelled,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extension::WidgetPlacement;

    #[test]
    fn requests_have_pis_fields_in_pis_order() {
        let line = request_line("r1", &UiRequest::Select { title: "Pick".into(), options: vec!["a".into()] });
        assert_eq!(
            line.to_string(),
            r#"{"type":"extension_ui_request","id":"r1","method":"select","title":"Pick","options":["a"]}"#
        );
        let input = request_line("r2", &UiRequest::Input { title: "Name".into(), placeholder: None });
        assert_eq!(input.to_string(), r#"{"type":"extension_ui_request","id":"r2","method":"input","title":"Name"}"#);
        let status = request_line("r3", &UiRequest::SetStatus { key: "k".into(), text: None });
        assert_eq!(
            status.to_string(),
            r#"{"type":"extension_ui_request","id":"r3","method":"setStatus","statusKey":"k"}"#
        );
        let widget = UiRequest::SetWidget {
            key: "w".into(),
            lines: Some(vec!["x".into()]),
            placement: WidgetPlacement::BelowEditor,
        };
        assert_eq!(
            request_line("r4", &widget).to_string(),
            r#"{"type":"extension_ui_request","id":"r4","method":"setWidget","widgetKey":"w","widgetLines":["x"],"widgetPlacement":"belowEditor"}"#
        );
        let text = request_line("r5", &UiRequest::SetEditorText { text: "t".into() });
        assert_eq!(text["method"], "set_editor_text");
    }

    #[test]
    fn responses_answer_the_dialog_they_name() {
        assert_eq!(parse_response(&json!({"value": "b"}), false), UiResponse::Value("b".into()));
        assert_eq!(parse_response(&json!({"confirmed": true}), true), UiResponse::Confirmed(true));
        assert_eq!(parse_response(&json!({"cancelled": true, "value": "b"}), false), UiResponse::Cancelled);
        assert_eq!(parse_response(&json!({"confirmed": true}), false), UiResponse::Cancelled);

        let pending = PendingDialogs::default();
        let mut answer = pending.wait_for("d1");
        assert!(!pending.take_response(r#"{"type":"prompt","message":"extension_ui_response"}"#));
        assert!(pending.take_response(r#"{"type":"extension_ui_response","id":"other","value":"x"}"#));
        assert!(answer.try_recv().is_err(), "a response for another id answers nothing");
        assert!(pending.take_response(r#"{"type":"extension_ui_response","id":"d1","value":"x"}"#));
        assert_eq!(answer.try_recv().ok().map(|value| value["value"].clone()), Some(json!("x")));
    }
}
