//! An in-process scripted provider for deterministic tests: it plays prepared responses as
//! assistant-message events (with optional pauses, errors and hangs), records every context it is
//! given, and honours cancellation like a real provider (the stream ends `aborted`).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::model::{Model, ThinkingLevel};
use super::provider::{ApiProvider, LlmContext, StreamOptions, empty_assistant_message, error_stream};
use super::stream::{AssistantMessageSender, AssistantMessageStream};
use crate::protocol::{
    AssistantContent, AssistantMessage, AssistantMessageEvent, DoneReason, ErrorReason, StopReason, TextContent,
    ThinkingContent, ToolCall, Usage,
};

/// The error text of a cancelled scripted stream (the wording real providers use).
pub const SCRIPTED_ABORTED: &str = "Request was aborted";

/// One content block of a scripted answer.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ScriptedBlock {
    Text(String),
    Thinking(String),
    ToolCall { id: String, name: String, arguments: Value },
}

/// One scripted answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScriptedResponse {
    pub blocks: Vec<ScriptedBlock>,
    /// After the blocks, end with an `error` event carrying this text.
    pub error: Option<String>,
    pub usage: Usage,
    /// Pause before each event after `start`.
    pub delay: Duration,
    /// After this many events (counting `start`), wait until cancelled.
    pub hang_after: Option<usize>,
}

impl ScriptedResponse {
    /// An answer with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::default().with_text(text)
    }

    /// An answer with one tool call (id `call_<name>_<n>` where n counts the blocks).
    pub fn tool_call(name: impl Into<String>, arguments: Value) -> Self {
        Self::default().with_tool_call(name, arguments)
    }

    /// A failed answer: no content, stopReason `error` with `message`.
    pub fn error(message: impl Into<String>) -> Self {
        Self { error: Some(message.into()), ..Self::default() }
    }

    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.blocks.push(ScriptedBlock::Text(text.into()));
        self
    }

    pub fn with_thinking(mut self, thinking: impl Into<String>) -> Self {
        self.blocks.push(ScriptedBlock::Thinking(thinking.into()));
        self
    }

    pub fn with_tool_call(mut self, name: impl Into<String>, arguments: Value) -> Self {
        let name = name.into();
        let id = format!("call_{name}_{}", self.blocks.len());
        self.blocks.push(ScriptedBlock::ToolCall { id, name, arguments });
        self
    }

    /// A tool call with a chosen id.
    pub fn with_tool_call_id(mut self, id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        self.blocks.push(ScriptedBlock::ToolCall { id: id.into(), name: name.into(), arguments });
        self
    }

    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = usage;
        self
    }

    pub fn with_delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    pub fn hanging_after(mut self, events: usize) -> Self {
        self.hang_after = Some(events);
        self
    }
}

/// What the provider was asked, one per call.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptedRequest {
    pub model_id: String,
    pub context: LlmContext,
    pub api_key: Option<String>,
    pub reasoning: Option<ThinkingLevel>,
}

#[derive(Default)]
struct Script {
    responses: VecDeque<ScriptedResponse>,
    requests: Vec<ScriptedRequest>,
}

/// Plays [`ScriptedResponse`]s in order, one per `stream` call. Clones share the script.
#[derive(Clone, Default)]
pub struct ScriptedProvider {
    script: Arc<Mutex<Script>>,
}

impl ScriptedProvider {
    pub fn new(responses: impl IntoIterator<Item = ScriptedResponse>) -> Self {
        let script = Script { responses: responses.into_iter().collect(), requests: Vec::new() };
        Self { script: Arc::new(Mutex::new(script)) }
    }

    fn script(&self) -> MutexGuard<'_, Script> {
        self.script.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Adds a response to the end of the script.
    pub fn push(&self, response: ScriptedResponse) {
        self.script().responses.push_back(response);
    }

    /// Every call so far, in order.
    pub fn requests(&self) -> Vec<ScriptedRequest> {
        self.script().requests.clone()
    }

    pub fn remaining(&self) -> usize {
        self.script().responses.len()
    }
}

impl ApiProvider for ScriptedProvider {
    fn api(&self) -> &str {
        "scripted"
    }

    fn stream(&self, model: &Model, context: &LlmContext, options: StreamOptions) -> AssistantMessageStream {
        let response = {
            let mut script = self.script();
            script.requests.push(ScriptedRequest {
                model_id: model.id.clone(),
                context: context.clone(),
                api_key: options.api_key.clone(),
                reasoning: options.reasoning,
            });
            script.responses.pop_front()
        };
        let Some(response) = response else {
            return error_stream(model, "the scripted provider has no response left".to_owned());
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return error_stream(model, "the scripted provider needs a tokio runtime".to_owned());
        };
        let (tx, stream) = AssistantMessageStream::channel();
        runtime.spawn(play(response, empty_assistant_message(model), options.cancel, tx));
        stream
    }
}

/// Sends events until the script ends or the call is cancelled.
struct Player {
    response: ScriptedResponse,
    message: AssistantMessage,
    cancel: CancellationToken,
    tx: AssistantMessageSender,
    sent: usize,
}

/// The player stopped early: cancelled, or the reader went away.
struct Stopped;

impl Player {
    async fn send(&mut self, event: AssistantMessageEvent) -> Result<(), Stopped> {
        if self.sent > 0 && !self.response.delay.is_zero() {
            tokio::select! {
                _ = self.cancel.cancelled() => return Err(Stopped),
                _ = tokio::time::sleep(self.response.delay) => {}
            }
        }
        if self.cancel.is_cancelled() || !self.tx.push(event) {
            return Err(Stopped);
        }
        self.sent += 1;
        if self.response.hang_after == Some(self.sent) {
            self.cancel.cancelled().await;
            return Err(Stopped);
        }
        Ok(())
    }

    fn partial(&self) -> AssistantMessage {
        self.message.clone()
    }

    async fn play_block(&mut self, block: ScriptedBlock) -> Result<(), Stopped> {
        let index = self.message.content.len();
        match block {
            ScriptedBlock::Text(text) => {
                self.message.content.push(AssistantContent::Text(TextContent::new("")));
                self.send(AssistantMessageEvent::TextStart { content_index: index, partial: self.partial() }).await?;
                for piece in halves(&text) {
                    let delta = match self.message.content.get_mut(index) {
                        Some(AssistantContent::Text(block)) => block.text.push_str_view(piece),
                        _ => piece.into(),
                    };
                    self.send(AssistantMessageEvent::TextDelta {
                        content_index: index,
                        delta,
                        partial: self.partial(),
                    })
                    .await?;
                }
                self.send(AssistantMessageEvent::TextEnd {
                    content_index: index,
                    content: text.into(),
                    partial: self.partial(),
                })
                .await
            }
            ScriptedBlock::Thinking(thinking) => {
                let block = ThinkingContent { thinking: Default::default(), thinking_signature: None, redacted: None };
                self.message.content.push(AssistantContent::Thinking(block));
                self.send(AssistantMessageEvent::ThinkingStart { content_index: index, partial: self.partial() })
                    .await?;
                let delta = match self.message.content.get_mut(index) {
                    Some(AssistantContent::Thinking(block)) => block.thinking.push_str_view(&thinking),
                    _ => thinking.as_str().into(),
                };
                self.send(AssistantMessageEvent::ThinkingDelta {
                    content_index: index,
                    delta,
                    partial: self.partial(),
                })
                .await?;
                let content = thinking.into();
                self.send(AssistantMessageEvent::ThinkingEnd { content_index: index, content, partial: self.partial() })
                    .await
            }
            ScriptedBlock::ToolCall { id, name, arguments } => {
                let call = ToolCall { id, name, arguments: Value::Object(Default::default()), thought_signature: None };
                self.message.content.push(AssistantContent::ToolCall(call.clone()));
                self.send(AssistantMessageEvent::ToolcallStart { content_index: index, partial: self.partial() })
                    .await?;
                let call = ToolCall { arguments, ..call };
                self.message.content[index] = AssistantContent::ToolCall(call.clone());
                let delta = call.arguments.to_string().into();
                self.send(AssistantMessageEvent::ToolcallDelta {
                    content_index: index,
                    delta,
                    partial: self.partial(),
                })
                .await?;
                let partial = self.partial();
                self.send(AssistantMessageEvent::ToolcallEnd { content_index: index, tool_call: call, partial }).await
            }
        }
    }
}

/// The text in two pieces (one when it is short), split on a character boundary.
fn halves(text: &str) -> Vec<&str> {
    let mut middle = text.len() / 2;
    while middle > 0 && !text.is_char_boundary(middle) {
        middle -= 1;
    }
    if middle == 0 { vec![text] } else { vec![&text[..middle], &text[middle..]] }
}

async fn play(
    response: ScriptedResponse,
    message: AssistantMessage,
    cancel: CancellationToken,
    tx: AssistantMessageSender,
) {
    let blocks = response.blocks.clone();
    let usage = response.usage;
    let error = response.error.clone();
    let mut player = Player { response, message, cancel, tx, sent: 0 };
    let mut played = player.send(AssistantMessageEvent::Start { partial: player.partial() }).await;
    for block in blocks {
        if played.is_err() {
            break;
        }
        played = player.play_block(block).await;
    }
    let mut message = player.message;
    message.usage = usage;
    let final_event = match (played, error) {
        (Err(Stopped), _) => {
            message.stop_reason = StopReason::Aborted;
            message.error_message = Some(SCRIPTED_ABORTED.to_owned());
            AssistantMessageEvent::Error { reason: ErrorReason::Aborted, error: message }
        }
        (Ok(()), Some(text)) => {
            message.stop_reason = StopReason::Error;
            message.error_message = Some(text);
            AssistantMessageEvent::Error { reason: ErrorReason::Error, error: message }
        }
        (Ok(()), None) => {
            let has_calls = message.tool_calls().next().is_some();
            message.stop_reason = if has_calls { StopReason::ToolUse } else { StopReason::Stop };
            let reason = if has_calls { DoneReason::ToolUse } else { DoneReason::Stop };
            AssistantMessageEvent::Done { reason, message }
        }
    };
    player.tx.push(final_event);
}
