//! The channel a provider streams an assistant message through. A stream ends with exactly one
//! terminal event (`done` or `error`); a sender dropped before that is reported as an error by the reader.

use tokio::sync::mpsc;

use crate::protocol::AssistantMessageEvent;

/// The provider's end of the stream.
#[derive(Debug, Clone)]
pub struct AssistantMessageSender {
    tx: mpsc::UnboundedSender<AssistantMessageEvent>,
}

impl AssistantMessageSender {
    /// Sends one event. Returns false once the reader has gone away (the provider may stop work).
    pub fn push(&self, event: AssistantMessageEvent) -> bool {
        self.tx.send(event).is_ok()
    }

    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}

/// Called once with a stream's terminal event, as its reader takes it (`--record`).
pub type TerminalObserver = Box<dyn FnOnce(&AssistantMessageEvent) + Send>;

/// The consumer's end of the stream.
pub struct AssistantMessageStream {
    rx: mpsc::UnboundedReceiver<AssistantMessageEvent>,
    finished: bool,
    on_terminal: Option<TerminalObserver>,
}

impl std::fmt::Debug for AssistantMessageStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AssistantMessageStream")
            .field("finished", &self.finished)
            .field("observed", &self.on_terminal.is_some())
            .finish()
    }
}

impl AssistantMessageStream {
    pub fn channel() -> (AssistantMessageSender, AssistantMessageStream) {
        let (tx, rx) = mpsc::unbounded_channel();
        (AssistantMessageSender { tx }, AssistantMessageStream { rx, finished: false, on_terminal: None })
    }

    /// This stream, with `observer` called on its terminal event (not when the reader drops it first).
    pub fn observed(mut self, observer: TerminalObserver) -> Self {
        self.on_terminal = Some(observer);
        self
    }

    /// A stream that holds only the given events (for errors detected before any I/O).
    pub fn from_events(events: impl IntoIterator<Item = AssistantMessageEvent>) -> Self {
        let (tx, stream) = Self::channel();
        for event in events {
            tx.push(event);
        }
        stream
    }

    /// The next event; `None` after the terminal event, or if the provider vanished without one.
    pub async fn next(&mut self) -> Option<AssistantMessageEvent> {
        if self.finished {
            return None;
        }
        let event = self.rx.recv().await?;
        if event.is_terminal() {
            self.finished = true;
            if let Some(observer) = self.on_terminal.take() {
                observer(&event);
            }
        }
        Some(event)
    }
}
