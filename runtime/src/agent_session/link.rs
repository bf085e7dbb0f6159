//! The session as extensions reach it ([`SessionControl`]) and the forwarding of the agent's events to
//! extensions, then to the session's listeners, then to the session file.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;

use crate::agent::{Agent, BoxFuture, PromptInput};
use crate::ai::Model;
use crate::extension::*;
use crate::prompt::SystemPromptBuilder;
use crate::protocol::{AgentEvent, AgentMessage, CustomMessage, now_ms};
use crate::session::{SessionError, SessionManager};
use crate::tools::AgentTool;

/// Something to do once the current prompt is over (asked for by an extension while the agent was idle).
pub(super) enum Deferred {
    /// A new prompt from an extension (`send_user_message`).
    UserPrompt(String),
    /// A run started by a custom message (`send_message` with `trigger_turn`).
    Trigger(Box<AgentMessage>),
}

/// The tools a session can activate and the base system prompt built for the active ones.
pub(super) struct ToolState {
    pub all: Vec<Arc<dyn AgentTool>>,
    pub active: Vec<String>,
    pub builder: Option<SystemPromptBuilder>,
    /// The system prompt without per-prompt changes.
    pub base_prompt: String,
}

/// A listener of the session's events (after extensions saw them).
pub type SessionListener = Arc<dyn Fn(&AgentEvent) + Send + Sync>;

/// The parts of the session that extensions and the event listener share.
pub(super) struct SessionLink {
    pub agent: Agent,
    pub manager: Arc<Mutex<SessionManager>>,
    pub tools: Mutex<ToolState>,
    pub next_turn: Mutex<Vec<AgentMessage>>,
    pub deferred: Mutex<VecDeque<Deferred>>,
    pub listeners: Mutex<Vec<SessionListener>>,
    pub write_error: Mutex<Option<String>>,
    pub turn_index: AtomicU64,
    /// Where session-only events go (json and RPC output).
    pub emit: super::SessionEventSink,
    /// The latest request's panels, under the panels strategy.
    pub context_report: Mutex<Option<crate::panels::ContextReport>>,
    /// Signalled when something is deferred while the agent is idle, so a mode that waits for input can run
    /// it (see [`super::AgentSession::deferred_ready`]).
    pub wake: tokio::sync::Notify,
    /// The running prompt's auto-retry, while one runs (pi 1.5's `agent_end.willRetry` asks it).
    pub retry_probe: Mutex<Option<super::auto_retry::RetryProbe>>,
}

pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl SessionLink {
    /// Tells the session's listeners about `event`.
    pub fn notify(&self, event: &AgentEvent) {
        let listeners: Vec<SessionListener> = lock(&self.listeners).clone();
        for listener in listeners {
            listener(event);
        }
    }

    /// Records a failure to write the session file (reported once; the run goes on).
    pub fn record_write_error(&self, error: &SessionError) {
        let mut slot = lock(&self.write_error);
        if slot.is_none() {
            eprintln!("Warning: the session is no longer being saved: {error}");
            *slot = Some(error.to_string());
        }
    }

    /// Makes the named tools active (in the order given, unknown names skipped) and rebuilds the base prompt.
    pub fn activate_tools(&self, names: &[String]) {
        let mut state = lock(&self.tools);
        let mut active: Vec<Arc<dyn AgentTool>> = Vec::new();
        for name in names {
            let known = state.all.iter().find(|tool| tool.name() == name);
            if let Some(tool) = known.filter(|_| !active.iter().any(|seen| seen.name() == name)) {
                active.push(tool.clone());
            }
        }
        state.active = active.iter().map(|tool| tool.name().to_owned()).collect();
        if let Some(builder) = &state.builder {
            state.base_prompt = builder.build(&active);
        }
        self.agent.set_system_prompt(state.base_prompt.clone());
        self.agent.set_tools(active);
    }

    /// Handles one agent event: extensions first (a `message_end` handler may replace the message), then the
    /// listeners, then the session file.
    pub async fn process(&self, runner: &ExtensionRunner, event: &AgentEvent) {
        let replaced = forward(runner, event, &self.turn_index).await;
        let event = match replaced {
            Some(message) => {
                self.replace_last_message(&message);
                AgentEvent::MessageEnd { message }
            }
            None => match event {
                AgentEvent::AgentEnd { messages, .. } if self.agent.pi_compat().is_v1_5() => {
                    let last = messages.iter().rev().find_map(AgentMessage::as_assistant);
                    let probe = lock(&self.retry_probe).clone();
                    let will_retry = probe.is_some_and(|probe| probe.will_retry(last));
                    AgentEvent::AgentEnd { messages: messages.clone(), will_retry: Some(will_retry) }
                }
                _ => event.clone(),
            },
        };
        self.notify(&event);
        if let AgentEvent::MessageEnd { message } = &event
            && let Err(error) = persist(&mut lock(&self.manager), message)
        {
            self.record_write_error(&error);
        }
    }

    fn replace_last_message(&self, message: &AgentMessage) {
        let mut messages = self.agent.messages();
        if let Some(last) = messages.iter_mut().rev().find(|m| m.role() == message.role()) {
            *last = message.clone();
            self.agent.replace_messages(messages);
        }
    }

    /// An extension's message as the transcript keeps it, stamped now.
    pub fn custom_message(message: ExtensionMessage) -> AgentMessage {
        AgentMessage::Custom(CustomMessage {
            custom_type: message.custom_type,
            content: message.content,
            display: message.display,
            details: message.details,
            timestamp: now_ms(),
        })
    }
}

/// Appends a finished message to the session (pi persists these roles at `message_end`).
pub(super) fn persist(manager: &mut SessionManager, message: &AgentMessage) -> Result<(), SessionError> {
    match message {
        AgentMessage::User(_) | AgentMessage::Assistant(_) | AgentMessage::ToolResult(_) | AgentMessage::System(_) => {
            manager.append_message(message.clone()).map(drop)
        }
        AgentMessage::Custom(custom) => manager.append_custom_message(custom).map(drop),
        _ => Ok(()),
    }
}

/// Sends an agent event to the extensions; returns a `message_end` replacement.
async fn forward(runner: &ExtensionRunner, event: &AgentEvent, turn_index: &AtomicU64) -> Option<AgentMessage> {
    match event {
        AgentEvent::AgentStart => {
            turn_index.store(0, Ordering::Relaxed);
            runner.emit_agent_start(&AgentStartEvent {}).await;
        }
        AgentEvent::AgentEnd { messages, .. } => {
            if runner.has_handlers(EventKind::AgentEnd) {
                runner.emit_agent_end(&AgentEndEvent { messages: messages.clone() }).await;
            }
        }
        AgentEvent::TurnStart => {
            let turn_index = turn_index.load(Ordering::Relaxed);
            runner.emit_turn_start(&TurnStartEvent { turn_index, timestamp: now_ms() }).await;
        }
        AgentEvent::TurnEnd { message, tool_results } => {
            let index = turn_index.fetch_add(1, Ordering::Relaxed);
            if runner.has_handlers(EventKind::TurnEnd) {
                let event =
                    TurnEndEvent { turn_index: index, message: message.clone(), tool_results: tool_results.clone() };
                runner.emit_turn_end(&event).await;
            }
        }
        AgentEvent::MessageStart { message } => {
            if runner.has_handlers(EventKind::MessageStart) {
                runner.emit_message_start(&MessageEvent { message: message.clone() }).await;
            }
        }
        AgentEvent::MessageUpdate { message, assistant_message_event } => {
            if runner.has_handlers(EventKind::MessageUpdate) {
                let event = MessageUpdateEvent {
                    message: message.clone(),
                    assistant_message_event: assistant_message_event.clone(),
                };
                runner.emit_message_update(&event).await;
            }
        }
        AgentEvent::MessageEnd { message } => {
            if runner.has_handlers(EventKind::MessageEnd) {
                return runner.emit_message_end(message).await;
            }
        }
        AgentEvent::ToolExecutionStart { tool_call_id, tool_name, args } => {
            if runner.has_handlers(EventKind::ToolExecutionStart) {
                let event = ToolExecutionStartEvent {
                    tool_call_id: tool_call_id.clone(),
                    tool_name: tool_name.clone(),
                    args: args.clone(),
                };
                runner.emit_tool_execution_start(&event).await;
            }
        }
        AgentEvent::ToolExecutionUpdate { tool_call_id, tool_name, args, partial_result } => {
            if runner.has_handlers(EventKind::ToolExecutionUpdate) {
                let event = ToolExecutionUpdateEvent {
                    tool_call_id: tool_call_id.clone(),
                    tool_name: tool_name.clone(),
                    args: args.clone(),
                    partial_result: partial_result.clone(),
                };
                runner.emit_tool_execution_update(&event).await;
            }
        }
        AgentEvent::ToolExecutionEnd { tool_call_id, tool_name, result, is_error, .. } => {
            if runner.has_handlers(EventKind::ToolExecutionEnd) {
                let event = ToolExecutionEndEvent {
                    tool_call_id: tool_call_id.clone(),
                    tool_name: tool_name.clone(),
                    result: result.clone(),
                    is_error: *is_error,
                };
                runner.emit_tool_execution_end(&event).await;
            }
        }
    }
    None
}

impl SessionControl for SessionLink {
    fn model(&self) -> Option<Model> {
        self.agent.model()
    }

    fn is_idle(&self) -> bool {
        !self.agent.is_streaming()
    }

    fn abort(&self) {
        self.agent.abort();
    }

    fn has_pending_messages(&self) -> bool {
        self.agent.has_queued_messages()
    }

    fn system_prompt(&self) -> String {
        self.agent.state().system_prompt
    }

    fn send_message(&self, message: ExtensionMessage, options: SendOptions) {
        let message = Self::custom_message(message);
        match options.deliver_as {
            Some(Delivery::NextTurn) => lock(&self.next_turn).push(message),
            deliver_as if self.agent.is_streaming() => match deliver_as {
                Some(Delivery::FollowUp) => self.agent.follow_up(message),
                _ => self.agent.steer(message),
            },
            _ if options.trigger_turn => {
                lock(&self.deferred).push_back(Deferred::Trigger(Box::new(message)));
                self.wake.notify_one();
            }
            _ => {
                self.agent.append_message(message.clone());
                let start = AgentEvent::MessageStart { message: message.clone() };
                self.notify(&start);
                if let Err(error) = persist(&mut lock(&self.manager), &message) {
                    self.record_write_error(&error);
                }
                self.notify(&AgentEvent::MessageEnd { message });
            }
        }
    }

    fn send_user_message(&self, text: String, deliver_as: Option<Delivery>) {
        if !self.agent.is_streaming() {
            lock(&self.deferred).push_back(Deferred::UserPrompt(text));
            self.wake.notify_one();
            return;
        }
        // The same user message a prompt makes of its text.
        for message in PromptInput::from(text).into_messages() {
            match deliver_as {
                Some(Delivery::FollowUp) => self.agent.follow_up(message),
                Some(Delivery::NextTurn) => lock(&self.next_turn).push(message),
                _ => self.agent.steer(message),
            }
        }
    }

    fn append_entry(&self, custom_type: &str, data: Option<Value>) -> Result<String, String> {
        lock(&self.manager).append_custom(custom_type, data).map_err(|error| error.to_string())
    }

    fn active_tools(&self) -> Vec<String> {
        lock(&self.tools).active.clone()
    }

    fn all_tools(&self) -> Vec<ToolInfo> {
        let state = lock(&self.tools);
        state
            .all
            .iter()
            .map(|tool| ToolInfo { name: tool.name().to_owned(), description: tool.description().to_owned() })
            .collect()
    }

    fn set_active_tools(&self, names: &[String]) {
        self.activate_tools(names);
    }

    fn session_file(&self) -> Option<PathBuf> {
        lock(&self.manager).path().map(PathBuf::from)
    }

    fn session_id(&self) -> String {
        lock(&self.manager).session_id().to_owned()
    }

    fn custom_entries(&self, custom_type: &str) -> Vec<Value> {
        let manager = lock(&self.manager);
        manager
            .tree()
            .current_path()
            .into_iter()
            .filter_map(|entry| match &entry.kind {
                crate::session::EntryKind::Custom { custom_type: kind, data } if kind == custom_type => {
                    Some(data.clone().unwrap_or(Value::Null))
                }
                _ => None,
            })
            .collect()
    }

    fn report_context(&self, report: &crate::panels::ContextReport) {
        *lock(&self.context_report) = Some(report.clone());
        (self.emit)(&crate::protocol::SessionOnlyEvent::ContextPanels(Box::new(report.clone())));
    }
}

/// The async agent listener that drives [`SessionLink::process`].
pub(super) fn event_processor(
    link: Arc<SessionLink>,
    runner: Arc<ExtensionRunner>,
) -> impl Fn(&AgentEvent) -> BoxFuture<'static, ()> + Send + Sync + 'static {
    move |event: &AgentEvent| {
        let (link, runner, event) = (link.clone(), runner.clone(), event.clone());
        Box::pin(async move { link.process(&runner, &event).await })
    }
}
