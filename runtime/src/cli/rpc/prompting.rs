//! Prompts in RPC: one starts at once when the agent is idle and is queued (or refused) while it works; a
//! command of the YAML runs first; extensions' deferred work and a crash's unfinished run start the same way.

use serde_json::Value;

use super::command::RpcReply;
use super::dispatch::Rpc;
use super::prompt_run::{Disposition, PromptRun, accepted, parse_streaming_behavior, still_working};
use crate::agent_session::{PromptOptions, StreamingBehavior};
use crate::cli::yaml_commands::{YamlCommandOutcome, notify_request, run_yaml_command, session_yaml_command};
use crate::extension::InputSource;
use crate::protocol::ImageContent;

impl Rpc {
    /// An idle agent starts the prompt in the background (acknowledged first; a failure is a second reply).
    /// A busy one queues it when the client said how, and refuses it otherwise.
    pub(super) fn prompt(
        &self,
        id: Option<Value>,
        message: String,
        images: Vec<ImageContent>,
        behavior: Option<&str>,
    ) -> Option<RpcReply> {
        if session_yaml_command(&self.session, &self.resources.commands, &message).is_some() {
            return self.yaml_command(id, message, images, behavior.map(str::to_owned));
        }
        if *self.busy.borrow() || self.session.agent().is_streaming() {
            match behavior.map(parse_streaming_behavior) {
                None => return Some(still_working(id)),
                Some(Err(error)) => return Some(RpcReply::failure(id, Some("prompt"), error)),
                Some(Ok(behavior)) => self.queue(message, images, behavior),
            }
            return Some(accepted(self.hold_ack, id, "prompt", Disposition::Queued));
        }
        let run = self.prompt_run();
        run.acknowledge(id.clone());
        *self.busy.borrow_mut() = true;
        let options = PromptOptions { images, source: InputSource::Rpc, ..PromptOptions::default() };
        let task = tokio::task::spawn_local(run.run(id, message, options));
        self.keep(task);
        None
    }

    /// Runs what extensions asked for while the agent was idle, unless a prompt runs (it runs them itself
    /// when it ends).
    pub(crate) fn run_deferred(&self) {
        if *self.busy.borrow() || self.session.agent().is_streaming() || !self.session.has_deferred() {
            return;
        }
        *self.busy.borrow_mut() = true;
        let task = tokio::task::spawn_local(self.prompt_run().run_deferred());
        self.keep(task);
    }

    /// Finishes, in the background, the run the session file shows cut short by a crash (`serve` after a
    /// restart). Does nothing while a prompt runs.
    pub(crate) fn resume_interrupted(&self) {
        if self.is_busy() {
            return;
        }
        *self.busy.borrow_mut() = true;
        let task = tokio::task::spawn_local(self.prompt_run().run_resume());
        self.keep(task);
    }

    pub(super) fn prompt_run(&self) -> PromptRun {
        PromptRun {
            session: self.session.clone(),
            busy: self.busy.clone(),
            done: self.prompt_done.clone(),
            deferred: self.deferred.clone(),
            hold_ack: self.hold_ack,
            ack: self.ack.clone(),
            out: self.out.clone(),
        }
    }

    /// A command of the YAML runs at once, even while the agent works (`abort_bash` stops it), and is answered
    /// when done. Its prompt then runs, or is queued, as a prompt would; shown output is a `notify` request.
    fn yaml_command(
        &self,
        id: Option<Value>,
        message: String,
        images: Vec<ImageContent>,
        behavior: Option<String>,
    ) -> Option<RpcReply> {
        let cancel = self.stop.child_token();
        *self.bash_cancel.borrow_mut() = Some(cancel.clone());
        let (commands, env, pending) = (self.resources.commands.clone(), self.tool_env.clone(), self.pending.clone());
        let run = self.prompt_run();
        let options = PromptOptions { images, source: InputSource::Rpc, expand: false, ..PromptOptions::default() };
        let task = tokio::task::spawn_local(async move {
            let outcome = run_yaml_command(&commands, &message, &env, &cancel).await;
            match outcome.unwrap_or_else(|| YamlCommandOutcome::Error(format!("{message}: no such command"))) {
                YamlCommandOutcome::Prompt(text) if *run.busy.borrow() || run.session.agent().is_streaming() => {
                    let behavior = match behavior.as_deref().map(parse_streaming_behavior) {
                        None => return run.out.reply(&still_working(id)),
                        Some(Err(error)) => return run.out.reply(&RpcReply::failure(id, Some("prompt"), error)),
                        Some(Ok(behavior)) => behavior,
                    };
                    let delivered = run.session.queue_message(text.clone(), options.images, behavior);
                    run.out.event(&pending.push(&text, &delivered, behavior));
                    run.out.reply(&accepted(run.hold_ack, id, "prompt", Disposition::Queued));
                }
                YamlCommandOutcome::Prompt(text) => {
                    run.acknowledge(id.clone());
                    *run.busy.borrow_mut() = true;
                    run.run(id, text, options).await;
                }
                YamlCommandOutcome::Show(output) => {
                    run.out.reply(&accepted(run.hold_ack, id, "prompt", Disposition::Handled));
                    run.out.event(&notify_request(&output, false));
                }
                YamlCommandOutcome::Error(error) => run.out.reply(&RpcReply::failure(id, Some("prompt"), error)),
            }
        });
        self.keep(task);
        None
    }

    pub(super) fn queue(&self, text: String, images: Vec<ImageContent>, behavior: StreamingBehavior) {
        let delivered = self.session.queue_message(text.clone(), images, behavior);
        self.out.event(&self.pending.push(&text, &delivered, behavior));
    }
}
