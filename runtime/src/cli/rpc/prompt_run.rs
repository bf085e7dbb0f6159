//! How a prompt runs in RPC mode once accepted: the run, then the command output kept while it ran, then a
//! failure reply; and the replies shared by plain prompts and the YAML's commands.

use std::cell::RefCell;
use std::rc::Rc;

use serde_json::Value;

use super::command::RpcReply;
use crate::agent_session::{AgentSession, PromptOptions, StreamingBehavior};
use crate::cli::modes::write_json;
use crate::protocol::AgentMessage;

/// What a prompt needs to run: the session, the busy flag it holds while running, and the command output
/// kept until it ends.
pub(super) struct PromptRun {
    pub(super) session: Rc<AgentSession>,
    pub(super) busy: Rc<RefCell<bool>>,
    pub(super) deferred: Rc<RefCell<Vec<AgentMessage>>>,
}

impl PromptRun {
    /// Runs the prompt (the agent is idle and `busy` set), saves the command output kept meanwhile, and
    /// replies to a failure.
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

    fn finish(self, id: Option<Value>, outcome: Result<(), crate::agent::AgentError>) {
        *self.busy.borrow_mut() = false;
        for message in self.deferred.borrow_mut().drain(..) {
            if let Err(error) = self.session.record_message(message) {
                eprintln!("Error: cannot save a command's output: {error}");
            }
        }
        if let Err(error) = outcome {
            write_json(&RpcReply::failure(id, Some("prompt"), error.to_string()));
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
