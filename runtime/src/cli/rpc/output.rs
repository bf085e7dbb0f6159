//! Where an RPC session's lines go: stdout for `--mode rpc`, or a server's per-session sink (`serve`), which
//! sends each reply to the request that asked and each event to the session's event stream.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::command::{RawReply, RpcReply};

/// Receives an RPC session's output, one JSON text per line.
pub trait RpcLineSink: Send + Sync {
    /// An event: agent and session events, queue updates, extension UI requests.
    fn event(&self, line: String);
    /// The reply to the command with `id` (a command without an id gets `None`).
    fn reply(&self, id: Option<&Value>, line: String);
}

/// An RPC session's output (cheap to clone).
#[derive(Clone)]
pub struct RpcOutput(Arc<dyn RpcLineSink>);

impl RpcOutput {
    /// Lines on stdout, as `--mode rpc` prints them.
    pub fn stdout() -> Self {
        Self(Arc::new(Stdout))
    }

    pub fn new(sink: Arc<dyn RpcLineSink>) -> Self {
        Self(sink)
    }

    /// Sends an event.
    pub fn event(&self, value: &impl Serialize) {
        if let Some(line) = to_line(value) {
            self.0.event(line);
        }
    }

    /// Sends a reply.
    pub fn reply(&self, reply: &RpcReply) {
        if let Some(line) = to_line(reply) {
            self.0.reply(reply.id.as_ref(), line);
        }
    }

    /// Sends a reply whose data is JSON text already.
    pub fn raw_reply(&self, reply: &RawReply) {
        if let Some(line) = to_line(reply) {
            self.0.reply(reply.id.as_ref(), line);
        }
    }
}

fn to_line(value: &impl Serialize) -> Option<String> {
    match serde_json::to_string(value) {
        Ok(line) => Some(line),
        Err(error) => {
            eprintln!("Error: cannot serialize an RPC line: {error}");
            None
        }
    }
}

struct Stdout;

impl RpcLineSink for Stdout {
    fn event(&self, line: String) {
        crate::cli::modes::write_line(&line);
    }

    fn reply(&self, _id: Option<&Value>, line: String) {
        crate::cli::modes::write_line(&line);
    }
}
