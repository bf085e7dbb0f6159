//! `AgentSession::prompt`: the stages of pi's prompt pipeline in order: extension command, `input`,
//! `/skill:` and template expansion, queueing while streaming, model and key checks, the pre-prompt
//! compaction check, `[user, next-turn messages]`, `before_agent_start`, the run, and what extensions asked
//! to do afterwards.

use std::future::Future;
use std::pin::Pin;

use super::AgentSession;
use super::link::{Deferred, SessionLink, lock};
use crate::agent::{AgentError, PromptInput};
use crate::extension::{EventKind, InputAction, InputSource};
use crate::protocol::{AgentMessage, ImageContent, SessionOnlyEvent, StopReason};

/// What to do with a prompt that arrives while the agent is streaming.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamingBehavior {
    Steer,
    FollowUp,
}

/// Options of [`AgentSession::prompt_with`].
#[derive(Debug, Clone, PartialEq)]
pub struct PromptOptions {
    pub images: Vec<ImageContent>,
    pub source: InputSource,
    /// Required when the agent may be streaming.
    pub streaming_behavior: Option<StreamingBehavior>,
    /// Extension commands, `/skill:` and templates apply (off for prompts extensions send).
    pub expand: bool,
}

/// A prompt that passed the stages before the run.
#[derive(Debug, Clone)]
pub struct PreparedRun {
    /// The messages that start the run, in order.
    pub messages: Vec<AgentMessage>,
    /// The system prompt of this run.
    pub system_prompt: String,
}

impl Default for PromptOptions {
    fn default() -> Self {
        Self { images: Vec::new(), source: InputSource::Interactive, streaming_behavior: None, expand: true }
    }
}

impl AgentSession {
    /// Runs one prompt through the whole pipeline with default options.
    pub async fn prompt(&self, text: String) -> Result<(), AgentError> {
        self.prompt_with(text, PromptOptions::default()).await
    }

    /// Runs one prompt through the whole pipeline (see the module documentation).
    pub fn prompt_with(
        &self,
        text: String,
        options: PromptOptions,
    ) -> Pin<Box<dyn Future<Output = Result<(), AgentError>> + Send + '_>> {
        Box::pin(async move {
            self.prompt_stages(text, options).await?;
            self.run_deferred().await
        })
    }

    async fn prompt_stages(&self, text: String, options: PromptOptions) -> Result<(), AgentError> {
        let Some(run) = self.prepare_prompt(text, options).await? else { return Ok(()) };
        self.agent.set_system_prompt(run.system_prompt);
        self.run_and_check(run.messages).await
    }

    /// The pipeline's stages before the run (see the module documentation): `None` when the prompt was
    /// handled (a command, an `input` handler) or queued behind the running agent; otherwise the messages
    /// that start the run and the system prompt it runs with (a `before_agent_start` change, or the base).
    pub async fn prepare_prompt(
        &self,
        text: String,
        options: PromptOptions,
    ) -> Result<Option<PreparedRun>, AgentError> {
        if options.expand && text.starts_with('/') && self.run_command(&text).await {
            return Ok(None);
        }
        let (mut text, mut images) = (text, options.images);
        if self.runner.has_handlers(EventKind::Input) {
            match self.runner.emit_input(&text, &images, options.source).await {
                InputAction::Handled => return Ok(None),
                InputAction::Transform { text: new_text, images: new_images } => {
                    text = new_text;
                    images = new_images.unwrap_or(images);
                }
                _ => {}
            }
        }
        if options.expand
            && let Some(expand) = self.expander()
        {
            text = expand(&text);
        }
        if self.agent.is_streaming() {
            let behavior = options.streaming_behavior.ok_or(AgentError::StreamingBehaviorRequired)?;
            self.enqueue(text, images, behavior);
            return Ok(None);
        }
        let model = self.agent.model().ok_or(AgentError::NoModel)?;
        if self.require_api_key && lock(&self.api_key).as_deref().is_none_or(str::is_empty) {
            return Err(AgentError::NoApiKey(model.provider));
        }
        self.pass_prompt_gate().await;
        self.reset_cancel();
        self.check_compaction_before_prompt().await?;
        // The user's message starts a new attempt: an overflow in its run may be recovered from again.
        self.reset_overflow_recovery();
        let mut messages: Vec<AgentMessage> = self.opening_system_message().into_iter().collect();
        messages.extend(PromptInput::Text { text: text.clone(), images: images.clone() }.into_messages());
        messages.append(&mut lock(&self.link.next_turn));
        let base_prompt = self.base_system_prompt();
        let outcome = if self.runner.has_handlers(EventKind::BeforeAgentStart) {
            self.runner.emit_before_agent_start(&text, &images, &base_prompt).await
        } else {
            Default::default()
        };
        messages.extend(outcome.messages.into_iter().map(SessionLink::custom_message));
        // A change lasts for this prompt only: without one, the base prompt comes back.
        let system_prompt = outcome.system_prompt.filter(|prompt| !prompt.is_empty()).unwrap_or(base_prompt);
        Ok(Some(PreparedRun { messages, system_prompt }))
    }

    /// Queues a message for the running agent (or its next run): steering is delivered after the current
    /// tool calls, a follow-up once the agent would stop. `/skill:` and templates are expanded first; returns
    /// the text as it will be delivered.
    pub fn queue_message(&self, text: String, images: Vec<ImageContent>, behavior: StreamingBehavior) -> String {
        let text = match self.expander() {
            Some(expand) => expand(&text),
            None => text,
        };
        self.enqueue(text.clone(), images, behavior);
        text
    }

    fn enqueue(&self, text: String, images: Vec<ImageContent>, behavior: StreamingBehavior) {
        for message in (PromptInput::Text { text, images }).into_messages() {
            match behavior {
                StreamingBehavior::FollowUp => self.agent.follow_up(message),
                StreamingBehavior::Steer => self.agent.steer(message),
            }
        }
    }

    /// The run itself: with auto-retry, then the after-run compaction check.
    /// At level 1.5 the session then reports `agent_settled`, once nothing more follows on its own.
    async fn run_and_check(&self, input: impl Into<PromptInput>) -> Result<(), AgentError> {
        let outcome = match self.run_with_retry(self.agent.prompt(input)).await {
            Ok(()) => self.check_compaction_after_run().await,
            Err(error) => Err(error),
        };
        let outcome = match outcome {
            Ok(()) => self.enforce_output_schema().await,
            Err(error) => Err(error),
        };
        self.report_settled();
        outcome
    }

    /// At level 1.5: `agent_settled` (aborted when the run's last answer was).
    pub(super) fn report_settled(&self) {
        if self.agent.pi_compat().is_v1_5() {
            let last = self.agent.find_last_message(|message| message.as_assistant().map(|answer| answer.stop_reason));
            (self.emit)(&SessionOnlyEvent::AgentSettled { aborted: last == Some(StopReason::Aborted) });
        }
    }

    /// Runs `/name args` when an extension registered `name`; returns whether it did.
    async fn run_command(&self, text: &str) -> bool {
        let body = &text[1..];
        let (name, args) = match body.find(char::is_whitespace) {
            Some(at) => (&body[..at], body[at..].trim_start()),
            None => (body, ""),
        };
        let Some(command) = self.runner.command(name).cloned() else { return false };
        if let Err(error) = (command.handler)(args.to_owned(), self.runner.context()).await {
            self.runner.report_error(&command.extension, EventKind::Input, &error);
        }
        true
    }

    /// Whether extensions asked for prompts or runs that have not started yet.
    pub fn has_deferred(&self) -> bool {
        !lock(&self.link.deferred).is_empty()
    }

    /// Resolves once an extension asked for a prompt or a run while the agent was idle (at once if it did
    /// since the last call); a mode waiting for input then calls [`AgentSession::run_deferred`].
    pub async fn deferred_ready(&self) {
        self.link.wake.notified().await;
    }

    /// What extensions asked for while the agent was idle: new prompts and triggered runs, in order. Runs
    /// after every prompt; modes that wait for input call it when [`AgentSession::deferred_ready`] fires.
    pub async fn run_deferred(&self) -> Result<(), AgentError> {
        loop {
            let next = lock(&self.link.deferred).pop_front();
            match next {
                None => return Ok(()),
                Some(Deferred::UserPrompt(text)) => {
                    let options = PromptOptions { source: InputSource::Extension, expand: false, ..Default::default() };
                    self.prompt_stages(text, options).await?;
                }
                Some(Deferred::Trigger(message)) => {
                    self.reset_cancel();
                    self.run_and_check(*message).await?;
                }
            }
        }
    }
}
