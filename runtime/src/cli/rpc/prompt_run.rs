//! How a prompt runs in RPC mode once accepted: the run, then the command output kept while it ran, then a
//! failure reply; and the replies shared by plain prompts and the YAML's commands.
//!
//! pi 0.73 acknowledges a prompt at once and reports a failure in a second reply. pi 1.5 answers once,
//! saying what became of the prompt (`data.disposition`): `started` as its run starts (just before
//! `agent_start`), `queued` when it waits behind the run under way, `handled` when a command or an
//! extension took it without a run; a prompt that cannot start (no model, no key) gets only a failure.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::command::RpcReply;
use super::output::RpcOutput;
use crate::agent_session::{AgentSession, PromptOptions, StreamingBehavior};
use crate::protocol::AgentMessage;

/// What became of a prompt, `steer` or `follow_up` (pi 1.5's `data.disposition`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Disposition {
    /// Its run started.
    Started,
    /// It waits in the steering or follow-up queue.
    Queued,
    /// A command or an extension took it; no run started for it.
    Handled,
}

impl Disposition {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Started => "started",
            Self::Queued => "queued",
            Self::Handled => "handled",
        }
    }
}

/// The success reply to `command`: bare as pi 0.73 gives it, or with the disposition (pi 1.5, `serve`).
pub(super) fn accepted(with_disposition: bool, id: Option<Value>, command: &str, disposition: Disposition) -> RpcReply {
    if with_disposition {
        RpcReply::with_data(id, command, json!({ "disposition": disposition.as_str() }))
    } else {
        RpcReply::ok(id, command)
    }
}

/// A prompt's acknowledgement held until its run starts (pi 1.5): the event printer lets it out just before
/// `agent_start`, and the prompt lets it out (or replaces it with a failure) when it ends without a run.
#[derive(Debug, Clone, Default)]
pub struct PendingAck(Arc<Mutex<Option<RpcReply>>>);

impl PendingAck {
    pub(super) fn hold(&self, reply: RpcReply) {
        *self.lock() = Some(reply);
    }

    /// The held acknowledgement, if any (taking it).
    pub fn release(&self) -> Option<RpcReply> {
        self.lock().take()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<RpcReply>> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// What a prompt needs to run: the session, the busy flag it holds while running, the command output kept
/// until it ends, and how it is answered.
pub(super) struct PromptRun {
    pub(super) session: Rc<AgentSession>,
    pub(super) busy: Rc<RefCell<bool>>,
    /// Woken when the prompt finishes.
    pub(super) done: Rc<tokio::sync::Notify>,
    pub(super) deferred: Rc<RefCell<Vec<AgentMessage>>>,
    /// Acknowledge as the run starts, with a disposition (pi 1.5, `serve`), rather than at once (pi 0.73).
    pub(super) hold_ack: bool,
    pub(super) ack: PendingAck,
    pub(super) out: RpcOutput,
}

impl PromptRun {
    /// Acknowledges a prompt about to run: pi 0.73 now, pi 1.5 as its run starts (see [`PendingAck`]).
    pub(super) fn acknowledge(&self, id: Option<Value>) {
        let ack = accepted(self.hold_ack, id, "prompt", Disposition::Started);
        if self.hold_ack {
            self.ack.hold(ack);
        } else {
            self.out.reply(&ack);
        }
    }

    /// Runs an acknowledged prompt (the agent is idle and `busy` set), saves the command output kept
    /// meanwhile, and replies to a failure.
    pub(super) async fn run(self, id: Option<Value>, message: String, options: PromptOptions) {
        let outcome = self.session.prompt_with(message, options).await;
        self.finish(id, outcome);
    }

    /// Runs what extensions asked for while the agent was idle, as a prompt would (a failure is reported
    /// with no id: no command asked for it).
    pub(super) async fn run_deferred(self) {
        let outcome = self.session.run_deferred().await;
        self.finish(None, outcome);
    }

    /// Finishes the run a crash cut short (see [`AgentSession::resume_interrupted`]), as a prompt would.
    pub(super) async fn run_resume(self) {
        let outcome = self.session.resume_interrupted().await.map(|_| ());
        self.finish(None, outcome);
    }

    fn finish(self, id: Option<Value>, outcome: Result<(), crate::agent::AgentError>) {
        *self.busy.borrow_mut() = false;
        self.done.notify_waiters();
        for message in self.deferred.borrow_mut().drain(..) {
            if let Err(error) = self.session.record_message(message) {
                eprintln!("Error: cannot save a command's output: {error}");
            }
        }
        // Still held: the prompt ended without starting a run.
        let held = if self.hold_ack { self.ack.release() } else { None };
        match (outcome, held) {
            (Ok(()), Some(held)) => self.out.reply(&accepted(self.hold_ack, held.id, "prompt", Disposition::Handled)),
            (Ok(()), None) => {}
            (Err(error), Some(held)) => self.out.reply(&RpcReply::failure(held.id, Some("prompt"), error.to_string())),
            // pi 1.5 answers a prompt once; what goes wrong after its run started shows in the events.
            (Err(error), None) if self.hold_ack => eprintln!("Error: {error}"),
            (Err(error), None) => self.out.reply(&RpcReply::failure(id, Some("prompt"), error.to_string())),
        }
    }
}

/// The reply to a prompt that arrives while the agent works and does not say how to queue it.
pub(super) fn still_working(id: Option<Value>) -> RpcReply {
    let error = "the agent is still working on a prompt; send `streamingBehavior` \"steer\" or \"followUp\" to \
                 queue this one";
    RpcReply::failure(id, Some("prompt"), error)
}

/// A prompt's `streamingBehavior`.
pub(super) fn parse_streaming_behavior(behavior: &str) -> Result<StreamingBehavior, String> {
    match behavior {
        "steer" => Ok(StreamingBehavior::Steer),
        "followUp" => Ok(StreamingBehavior::FollowUp),
        other => Err(format!("invalid streamingBehavior `{other}`; expected \"steer\" or \"followUp\"")),
    }
}
