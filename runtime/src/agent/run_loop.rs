//! The agent loop (pi's `agentLoop` / `agentLoopContinue`): prompts in, turns of LLM call plus tool
//! execution until the model stops calling tools and no steering or follow-up message is queued.

use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::config::{AgentContext, AgentEventSink, AgentLoopConfig, BoxFuture};
use super::stream_response::stream_assistant_response;
use super::tool_calls::execute_tool_calls;
use crate::protocol::{AgentEvent, AgentMessage, StopReason};

/// The loop could not start, or a stage failed (the stateful agent turns this into an error message).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AgentLoopError {
    #[error("Cannot continue: no messages in context")]
    NoMessages,
    #[error("Cannot continue from message role: assistant")]
    ContinueFromAssistant,
    /// transformContext (or another stage) failed.
    #[error("{0}")]
    Stage(String),
}

/// Runs the loop for new `prompts` appended to `context`; returns the messages it added.
pub async fn run_agent_loop(
    prompts: Vec<AgentMessage>,
    context: AgentContext,
    config: &AgentLoopConfig,
    cancel: &CancellationToken,
    sink: &dyn AgentEventSink,
) -> Result<Vec<AgentMessage>, AgentLoopError> {
    let mut context = context;
    let mut new_messages = Vec::with_capacity(prompts.len());
    sink.emit(AgentEvent::AgentStart).await;
    sink.emit(AgentEvent::TurnStart).await;
    for prompt in prompts {
        sink.emit(AgentEvent::MessageStart { message: prompt.clone() }).await;
        let prompt = sink.emit_message_end(prompt).await;
        context.messages.push(prompt.clone());
        new_messages.push(prompt);
    }
    run_turns(&mut context, &mut new_messages, config, cancel, sink).await?;
    Ok(new_messages)
}

/// Runs the loop from the context as it stands (retries, queued tool results); the last message
/// must not be an assistant message.
pub async fn run_agent_loop_continue(
    context: AgentContext,
    config: &AgentLoopConfig,
    cancel: &CancellationToken,
    sink: &dyn AgentEventSink,
) -> Result<Vec<AgentMessage>, AgentLoopError> {
    check_can_continue(&context)?;
    let mut context = context;
    let mut new_messages = Vec::new();
    sink.emit(AgentEvent::AgentStart).await;
    sink.emit(AgentEvent::TurnStart).await;
    run_turns(&mut context, &mut new_messages, config, cancel, sink).await?;
    Ok(new_messages)
}

fn check_can_continue(context: &AgentContext) -> Result<(), AgentLoopError> {
    match context.messages.last() {
        None => Err(AgentLoopError::NoMessages),
        Some(AgentMessage::Assistant(_)) => Err(AgentLoopError::ContinueFromAssistant),
        Some(_) => Ok(()),
    }
}

/// The outer loop (follow-ups) around the inner loop (turns with tool calls and steering).
async fn run_turns(
    context: &mut AgentContext,
    new_messages: &mut Vec<AgentMessage>,
    config: &AgentLoopConfig,
    cancel: &CancellationToken,
    sink: &dyn AgentEventSink,
) -> Result<(), AgentLoopError> {
    let mut first_turn = true;
    // The user may have typed while the run was starting.
    let mut pending = config.poll_steering();
    loop {
        let mut has_more_tool_calls = true;
        while has_more_tool_calls || !pending.is_empty() {
            if first_turn {
                first_turn = false;
            } else {
                sink.emit(AgentEvent::TurnStart).await;
            }
            for message in std::mem::take(&mut pending) {
                sink.emit(AgentEvent::MessageStart { message: message.clone() }).await;
                let message = sink.emit_message_end(message).await;
                context.messages.push(message.clone());
                new_messages.push(message);
            }

            let assistant = stream_assistant_response(context, config, cancel, sink).await?;
            let assistant_message = AgentMessage::Assistant(assistant.clone());
            context.messages.push(assistant_message.clone());
            new_messages.push(assistant_message.clone());
            if matches!(assistant.stop_reason, StopReason::Error | StopReason::Aborted) {
                sink.emit(AgentEvent::TurnEnd { message: assistant_message, tool_results: Vec::new() }).await;
                sink.emit(AgentEvent::AgentEnd { messages: new_messages.clone(), will_retry: None }).await;
                return Ok(());
            }

            // Tool calls are found in the content, whatever the stop reason says.
            has_more_tool_calls = assistant.tool_calls().next().is_some();
            let mut tool_results = Vec::new();
            let mut steering_after_tools = Vec::new();
            if has_more_tool_calls {
                let batch = execute_tool_calls(context, &assistant, config, cancel, sink).await;
                for result in &batch.results {
                    context.messages.push(AgentMessage::ToolResult(result.clone()));
                    new_messages.push(AgentMessage::ToolResult(result.clone()));
                }
                tool_results = batch.results;
                steering_after_tools = batch.steering;
            }
            sink.emit(AgentEvent::TurnEnd { message: assistant_message, tool_results }).await;
            pending = if steering_after_tools.is_empty() { config.poll_steering() } else { steering_after_tools };
        }
        // The agent would stop here; follow-ups keep it going.
        let follow_ups = config.poll_follow_up();
        if follow_ups.is_empty() {
            break;
        }
        pending = follow_ups;
    }
    sink.emit(AgentEvent::AgentEnd { messages: new_messages.clone(), will_retry: None }).await;
    Ok(())
}

/// A running loop seen as a stream of events plus its final result.
#[derive(Debug)]
pub struct AgentEventStream {
    events: mpsc::UnboundedReceiver<AgentEvent>,
    result: oneshot::Receiver<Result<Vec<AgentMessage>, AgentLoopError>>,
}

impl AgentEventStream {
    /// The next event; `None` once the loop has finished.
    pub async fn next(&mut self) -> Option<AgentEvent> {
        self.events.recv().await
    }

    /// Waits for the loop to finish (dropping any events not read) and returns the new messages.
    pub async fn result(self) -> Result<Vec<AgentMessage>, AgentLoopError> {
        self.result.await.unwrap_or_else(|_| Err(AgentLoopError::Stage("the agent loop task ended early".to_owned())))
    }
}

struct ChannelSink(mpsc::UnboundedSender<AgentEvent>);

impl AgentEventSink for ChannelSink {
    fn emit(&self, event: AgentEvent) -> BoxFuture<'_, ()> {
        // A reader that went away only stops receiving; the loop runs to its end.
        let _ = self.0.send(event);
        Box::pin(std::future::ready(()))
    }
}

/// Starts [`run_agent_loop`] on the current tokio runtime and returns its events as a stream.
pub fn agent_loop(
    prompts: Vec<AgentMessage>,
    context: AgentContext,
    config: AgentLoopConfig,
    cancel: CancellationToken,
) -> AgentEventStream {
    spawn_loop(move |sink| Box::pin(async move { run_agent_loop(prompts, context, &config, &cancel, &sink).await }))
}

/// Starts [`run_agent_loop_continue`]; fails at once when the context cannot be continued.
pub fn agent_loop_continue(
    context: AgentContext,
    config: AgentLoopConfig,
    cancel: CancellationToken,
) -> Result<AgentEventStream, AgentLoopError> {
    check_can_continue(&context)?;
    Ok(spawn_loop(move |sink| Box::pin(async move { run_agent_loop_continue(context, &config, &cancel, &sink).await })))
}

type LoopResult = Result<Vec<AgentMessage>, AgentLoopError>;

fn spawn_loop(run: impl FnOnce(ChannelSink) -> BoxFuture<'static, LoopResult> + Send + 'static) -> AgentEventStream {
    let (events_tx, events) = mpsc::unbounded_channel();
    let (result_tx, result) = oneshot::channel();
    tokio::spawn(async move {
        let outcome = run(ChannelSink(events_tx)).await;
        let _ = result_tx.send(outcome);
    });
    AgentEventStream { events, result }
}
