//! The agent loop (pi's `agentLoop` / `agentLoopContinue`): prompts in, turns of LLM call plus tool
//! execution until the model stops calling tools and no steering or follow-up message is queued.

use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::config::{AgentContext, AgentEventSink, AgentLoopConfig, BoxFuture};
use super::decide::{LoopState, Outcome, Step};
use super::stream_response::stream_assistant_response;
use super::tool_calls::execute_tool_calls;
use crate::protocol::{AgentEvent, AgentMessage};

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

/// Carries out the steps [`LoopState::decide`] chooses until the run is over: the outer loop (follow-ups)
/// around the inner loop (turns with tool calls and steering).
async fn run_turns(
    context: &mut AgentContext,
    new_messages: &mut Vec<AgentMessage>,
    config: &AgentLoopConfig,
    cancel: &CancellationToken,
    sink: &dyn AgentEventSink,
) -> Result<(), AgentLoopError> {
    let mut state = LoopState::new();
    // Messages waiting to enter the context when the next turn starts.
    let mut queued: Vec<AgentMessage> = Vec::new();
    // The current turn's answer and tool results, for its `turn_end`.
    let mut answer: Option<AgentMessage> = None;
    let mut tool_results = Vec::new();
    loop {
        let outcome = match state.decide() {
            Step::PollSteering => {
                queued = config.poll_steering();
                Outcome::SteeringPolled { queued: !queued.is_empty() }
            }
            Step::StartTurn { announce } => {
                if announce {
                    sink.emit(AgentEvent::TurnStart).await;
                }
                for message in std::mem::take(&mut queued) {
                    sink.emit(AgentEvent::MessageStart { message: message.clone() }).await;
                    let message = sink.emit_message_end(message).await;
                    context.messages.push(message.clone());
                    new_messages.push(message);
                }
                Outcome::TurnStarted
            }
            Step::CallModel => {
                let assistant = stream_assistant_response(context, config, cancel, sink).await?;
                // Tool calls are found in the content, whatever the stop reason says.
                let outcome = Outcome::Answered {
                    stop_reason: assistant.stop_reason,
                    tool_calls: assistant.tool_calls().next().is_some(),
                };
                let message = AgentMessage::Assistant(assistant);
                context.messages.push(message.clone());
                new_messages.push(message.clone());
                answer = Some(message);
                outcome
            }
            Step::RunTools => {
                let Some(AgentMessage::Assistant(assistant)) = &answer else {
                    return Err(AgentLoopError::Stage("the agent loop ran tools without an answer".to_owned()));
                };
                let batch = execute_tool_calls(context, assistant, config, cancel, sink).await;
                for result in &batch.results {
                    context.messages.push(AgentMessage::ToolResult(result.clone()));
                    new_messages.push(AgentMessage::ToolResult(result.clone()));
                }
                tool_results = batch.results;
                queued = batch.steering;
                Outcome::ToolsRan { steering: !queued.is_empty() }
            }
            Step::EndTurn => {
                let Some(message) = answer.take() else {
                    return Err(AgentLoopError::Stage("the agent loop ended a turn without an answer".to_owned()));
                };
                sink.emit(AgentEvent::TurnEnd { message, tool_results: std::mem::take(&mut tool_results) }).await;
                Outcome::TurnEnded
            }
            Step::PollFollowUps => {
                queued = config.poll_follow_up();
                Outcome::FollowUpsPolled { queued: !queued.is_empty() }
            }
            Step::Finish => break,
        };
        state.observe(outcome).map_err(|error| AgentLoopError::Stage(error.to_string()))?;
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
