//! Extension dialogs of a step running on a worker: the request goes out on the session's events as RPC mode
//! sends it (`extension_ui_request`), and the answer a client gives to any API replica
//! (`POST /v1/sessions/{id}/ui/{request_id}`) comes back on the event bus, to the step that listens for it.

use std::sync::Arc;

use pi_runtime::agent::BoxFuture;
use pi_runtime::cli::rpc::{parse_ui_response, ui_request_line};
use pi_runtime::extension::{ExtensionUi, UiRequest, UiResponse};
use tokio::sync::mpsc;

use crate::store::EventBus;

/// The extensions' UI of one step.
pub struct BusUi {
    pub bus: EventBus,
    pub session: String,
    /// The step's event lines, published in order with its other events.
    pub events: mpsc::UnboundedSender<Option<String>>,
}

impl ExtensionUi for BusUi {
    fn request(&self, request: UiRequest) -> BoxFuture<'static, UiResponse> {
        let id = pi_runtime::session::new_session_id();
        let line = ui_request_line(&id, &request).to_string();
        if !request.is_dialog() {
            let _ = self.events.send(Some(line));
            return Box::pin(async { UiResponse::Done });
        }
        let confirm = matches!(request, UiRequest::Confirm { .. });
        let (bus, session, events) = (self.bus.clone(), self.session.clone(), self.events.clone());
        Box::pin(async move {
            // Listening before the request goes out: an answer to it cannot come before.
            let mut answers = match bus.dialog_answers(&session).await {
                Ok(answers) => answers,
                Err(error) => {
                    eprintln!("Warning: session {session} cannot hear a dialog's answer ({error}); it is cancelled");
                    return UiResponse::Cancelled;
                }
            };
            let _ = events.send(Some(line));
            match answers.answer(&id).await {
                Some(answer) => parse_ui_response(&answer, confirm),
                None => UiResponse::Cancelled,
            }
        })
    }
}

/// The UI handle for a step.
pub fn bus_ui(bus: EventBus, session: &str, events: mpsc::UnboundedSender<Option<String>>) -> Arc<BusUi> {
    Arc::new(BusUi { bus, session: session.to_owned(), events })
}
