//! [`Agent`]: the stateful wrapper around the loop (pi's `Agent` class). It owns the transcript,
//! the steering and follow-up queues and the listeners; it runs one prompt at a time and can be
//! steered, aborted and awaited from other tasks (it is a cheap, cloneable handle).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::config::{AgentContext, AgentEventSink, AgentLoopConfig, BoxFuture, QueueMode, default_convert_to_llm};
use super::queue::MessageQueue;
use super::run_loop::{run_agent_loop, run_agent_loop_continue};
use super::state::{AgentError, AgentOptions, AgentState, PromptInput};
use crate::ai::{Model, ThinkingLevel};
use crate::protocol::{AgentEvent, AgentMessage, ImageContent};
use crate::tools::AgentTool;

mod request_settings;
mod steps;

use steps::failure_message;
pub use steps::{StepReport, StepRequest, StepWork};

type SyncListener = Arc<dyn Fn(&AgentEvent) + Send + Sync>;
type AsyncListener = Arc<dyn Fn(&AgentEvent) -> BoxFuture<'static, ()> + Send + Sync>;

#[derive(Clone)]
enum Listener {
    Sync(SyncListener),
    Async(AsyncListener),
}

struct Inner {
    state: Mutex<AgentState>,
    /// What each run is configured with (provider, key, stages, hooks); the state fields are unused.
    settings: Mutex<AgentOptions>,
    steering: Mutex<MessageQueue>,
    follow_up: Mutex<MessageQueue>,
    listeners: Mutex<Vec<(u64, Listener)>>,
    next_listener_id: AtomicU64,
    /// The cancellation token of the run in progress.
    active: Mutex<Option<CancellationToken>>,
    idle: watch::Sender<bool>,
}

/// Locks a mutex, recovering the data if a panicking thread poisoned it.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A stateful agent. Clones share the same agent.
#[derive(Clone)]
pub struct Agent {
    inner: Arc<Inner>,
}

/// An [`Agent`] that is not kept alive by this handle.
#[derive(Clone, Default)]
pub struct WeakAgent {
    inner: Weak<Inner>,
}

impl WeakAgent {
    /// The agent, while it still exists.
    pub fn upgrade(&self) -> Option<Agent> {
        self.inner.upgrade().map(|inner| Agent { inner })
    }
}

/// Unsubscribes its listener when dropped (or call [`Subscription::detach`] to keep it forever).
#[must_use = "dropping the subscription unsubscribes the listener"]
pub struct Subscription {
    inner: Option<Weak<Inner>>,
    id: u64,
}

impl Subscription {
    /// Keeps the listener for the agent's whole life.
    pub fn detach(mut self) {
        self.inner = None;
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.take().and_then(|weak| weak.upgrade()) {
            lock(&inner.listeners).retain(|(id, _)| *id != self.id);
        }
    }
}

enum RunKind {
    Prompt { messages: Vec<AgentMessage>, skip_initial_steering_poll: bool },
    Continue,
}

impl Agent {
    pub fn new(options: AgentOptions) -> Self {
        let state = AgentState {
            system_prompt: options.system_prompt.clone(),
            model: options.model.clone(),
            thinking_level: options.thinking_level,
            tools: options.tools.clone(),
            messages: options.messages.clone(),
            ..AgentState::default()
        };
        let (idle, _) = watch::channel(true);
        Self {
            inner: Arc::new(Inner {
                state: Mutex::new(state),
                steering: Mutex::new(MessageQueue::new(options.steering_mode)),
                follow_up: Mutex::new(MessageQueue::new(options.follow_up_mode)),
                settings: Mutex::new(options),
                listeners: Mutex::new(Vec::new()),
                next_listener_id: AtomicU64::new(0),
                active: Mutex::new(None),
                idle,
            }),
        }
    }

    /// Calls `listener` for every event, after the agent's state reflects it.
    pub fn subscribe(&self, listener: impl Fn(&AgentEvent) + Send + Sync + 'static) -> Subscription {
        self.add_listener(Listener::Sync(Arc::new(listener)))
    }

    /// Like [`Agent::subscribe`], but the loop waits for the returned future before going on.
    pub fn subscribe_async(
        &self,
        listener: impl Fn(&AgentEvent) -> BoxFuture<'static, ()> + Send + Sync + 'static,
    ) -> Subscription {
        self.add_listener(Listener::Async(Arc::new(listener)))
    }

    fn add_listener(&self, listener: Listener) -> Subscription {
        let id = self.inner.next_listener_id.fetch_add(1, Ordering::Relaxed);
        lock(&self.inner.listeners).push((id, listener));
        Subscription { inner: Some(Arc::downgrade(&self.inner)), id }
    }

    /// A snapshot of the state.
    /// The pi release whose events and message fields the agent reproduces.
    pub fn pi_compat(&self) -> crate::protocol::PiCompat {
        lock(&self.inner.settings).pi_compat
    }

    pub fn state(&self) -> AgentState {
        lock(&self.inner.state).clone()
    }

    /// The first value `pick` finds, looking from the newest message back (without copying the context).
    pub fn find_last_message<T>(&self, pick: impl Fn(&AgentMessage) -> Option<T>) -> Option<T> {
        lock(&self.inner.state).messages.iter().rev().find_map(pick)
    }

    /// The active tools (without copying the rest of the state).
    pub fn state_tools(&self) -> Vec<Arc<dyn AgentTool>> {
        lock(&self.inner.state).tools.clone()
    }

    pub fn messages(&self) -> Vec<AgentMessage> {
        lock(&self.inner.state).messages.clone()
    }

    /// What `read` makes of the context, without copying it (the agent's state is locked meanwhile: `read`
    /// must not call back into the agent).
    pub fn with_messages<T>(&self, read: impl FnOnce(&[AgentMessage]) -> T) -> T {
        read(&lock(&self.inner.state).messages)
    }

    /// The current model (without copying the rest of the state).
    pub fn model(&self) -> Option<Model> {
        lock(&self.inner.state).model.clone()
    }

    /// The current thinking level (without copying the rest of the state).
    pub fn thinking_level(&self) -> ThinkingLevel {
        lock(&self.inner.state).thinking_level
    }

    pub fn is_streaming(&self) -> bool {
        lock(&self.inner.state).is_streaming
    }

    /// Runs the loop for a new prompt; returns when the run is over. Fails only when a run is in
    /// progress or no model is set.
    pub async fn prompt(&self, input: impl Into<PromptInput>) -> Result<(), AgentError> {
        if lock(&self.inner.active).is_some() {
            return Err(AgentError::AlreadyRunning);
        }
        let messages = input.into().into_messages();
        self.run(RunKind::Prompt { messages, skip_initial_steering_poll: false }).await
    }

    /// A text prompt with attached images.
    pub async fn prompt_with_images(
        &self,
        text: impl Into<String>,
        images: Vec<ImageContent>,
    ) -> Result<(), AgentError> {
        self.prompt(PromptInput::Text { text: text.into(), images }).await
    }

    /// Continues from the transcript. After an assistant message, queued steering (then follow-up)
    /// messages start the run; a user or tool-result tail is answered as it is.
    pub async fn continue_(&self) -> Result<(), AgentError> {
        if lock(&self.inner.active).is_some() {
            return Err(AgentError::AlreadyRunning);
        }
        let last_is_assistant = match lock(&self.inner.state).messages.last() {
            None => return Err(AgentError::NoMessages),
            Some(message) => matches!(message, AgentMessage::Assistant(_)),
        };
        if !last_is_assistant {
            return self.run(RunKind::Continue).await;
        }
        let steering = lock(&self.inner.steering).drain();
        if !steering.is_empty() {
            return self.run(RunKind::Prompt { messages: steering, skip_initial_steering_poll: true }).await;
        }
        let follow_ups = lock(&self.inner.follow_up).drain();
        if !follow_ups.is_empty() {
            return self.run(RunKind::Prompt { messages: follow_ups, skip_initial_steering_poll: false }).await;
        }
        Err(AgentError::ContinueFromAssistant)
    }

    /// Queues a message that interrupts the run after the current tool calls.
    pub fn steer(&self, message: AgentMessage) {
        lock(&self.inner.steering).push(message);
    }

    /// Queues a message for when the agent would otherwise stop.
    pub fn follow_up(&self, message: AgentMessage) {
        lock(&self.inner.follow_up).push(message);
    }

    pub fn clear_steering_queue(&self) {
        lock(&self.inner.steering).clear();
    }

    pub fn clear_follow_up_queue(&self) {
        lock(&self.inner.follow_up).clear();
    }

    pub fn clear_all_queues(&self) {
        self.clear_steering_queue();
        self.clear_follow_up_queue();
    }

    pub fn has_queued_messages(&self) -> bool {
        !lock(&self.inner.steering).is_empty() || !lock(&self.inner.follow_up).is_empty()
    }

    /// How many steering and follow-up messages are queued.
    pub fn queued_counts(&self) -> (usize, usize) {
        (lock(&self.inner.steering).len(), lock(&self.inner.follow_up).len())
    }

    pub fn steering_mode(&self) -> QueueMode {
        lock(&self.inner.steering).mode
    }

    pub fn set_steering_mode(&self, mode: QueueMode) {
        lock(&self.inner.steering).mode = mode;
    }

    pub fn follow_up_mode(&self) -> QueueMode {
        lock(&self.inner.follow_up).mode
    }

    pub fn set_follow_up_mode(&self, mode: QueueMode) {
        lock(&self.inner.follow_up).mode = mode;
    }

    /// Cancels the run in progress: the stream ends as `aborted`, running tools are told to stop.
    pub fn abort(&self) {
        if let Some(token) = lock(&self.inner.active).as_ref() {
            token.cancel();
        }
    }

    /// Resolves once no run is in progress.
    pub async fn wait_for_idle(&self) {
        let mut idle = self.inner.idle.subscribe();
        let _ = idle.wait_for(|idle| *idle).await;
    }

    pub fn set_system_prompt(&self, prompt: impl Into<String>) {
        lock(&self.inner.state).system_prompt = prompt.into();
    }

    pub fn set_model(&self, model: Model) {
        lock(&self.inner.state).model = Some(model);
    }

    pub fn set_thinking_level(&self, level: ThinkingLevel) {
        lock(&self.inner.state).thinking_level = level;
    }

    pub fn set_tools(&self, tools: Vec<Arc<dyn AgentTool>>) {
        lock(&self.inner.state).tools = tools;
    }

    pub fn replace_messages(&self, messages: Vec<AgentMessage>) {
        lock(&self.inner.state).messages = messages;
    }

    pub fn append_message(&self, message: AgentMessage) {
        lock(&self.inner.state).messages.push(message);
    }

    pub fn clear_messages(&self) {
        lock(&self.inner.state).messages.clear();
    }

    /// Clears the transcript, the run state and both queues.
    pub fn reset(&self) {
        {
            let mut state = lock(&self.inner.state);
            state.messages.clear();
            state.is_streaming = false;
            state.streaming_message = None;
            state.pending_tool_calls.clear();
            state.error = None;
        }
        self.clear_all_queues();
    }

    /// A handle that does not keep the agent alive (for tools the agent itself holds).
    pub fn downgrade(&self) -> WeakAgent {
        WeakAgent { inner: Arc::downgrade(&self.inner) }
    }

    async fn run(&self, kind: RunKind) -> Result<(), AgentError> {
        let skip_initial = matches!(kind, RunKind::Prompt { skip_initial_steering_poll: true, .. });
        let (cancel, context, config) = self.begin_run(skip_initial)?;
        // Resets the run state even if the caller drops this future mid-run.
        let _finish = FinishRun(&self.inner);
        let sink = StateSink(&self.inner);
        let outcome = match kind {
            RunKind::Prompt { messages, .. } => run_agent_loop(messages, context, &config, &cancel, &sink).await,
            RunKind::Continue => run_agent_loop_continue(context, &config, &cancel, &sink).await,
        };
        if let Err(error) = outcome {
            self.record_failure(error.to_string(), cancel.is_cancelled(), &config.model, &sink).await;
        }
        Ok(())
    }

    /// Marks the agent running and takes what the run works with: its cancellation token, the context as it
    /// stands and the loop's configuration. Pair it with a [`FinishRun`] guard.
    fn begin_run(&self, skip_initial: bool) -> Result<(CancellationToken, AgentContext, AgentLoopConfig), AgentError> {
        {
            let mut active = lock(&self.inner.active);
            if active.is_some() {
                return Err(AgentError::AlreadyRunning);
            }
            let mut state = lock(&self.inner.state);
            let model = state.model.clone().ok_or(AgentError::NoModel)?;
            let config = self.loop_config(model, state.thinking_level, skip_initial);
            let context = AgentContext {
                system_prompt: state.system_prompt.clone(),
                messages: state.messages.clone(),
                tools: state.tools.clone(),
            };
            state.is_streaming = true;
            state.streaming_message = None;
            state.error = None;
            let cancel = CancellationToken::new();
            *active = Some(cancel.clone());
            self.inner.idle.send_replace(false);
            Ok((cancel, context, config))
        }
    }

    fn loop_config(&self, model: Model, thinking: ThinkingLevel, skip_initial_steering_poll: bool) -> AgentLoopConfig {
        let options = lock(&self.inner.settings);
        let inner = Arc::downgrade(&self.inner);
        let skip = Arc::new(AtomicBool::new(skip_initial_steering_poll));
        let steering_inner = inner.clone();
        AgentLoopConfig {
            reasoning: (thinking != ThinkingLevel::Off).then_some(thinking),
            api_key: options.api_key.clone(),
            get_api_key: options.get_api_key.clone(),
            session_id: options.session_id.clone(),
            temperature: options.temperature,
            max_tokens: options.max_tokens,
            response_schema: options.response_schema.clone(),
            headers: options.headers.clone(),
            idle_timeout: options.idle_timeout,
            provider_retry: options.provider_retry,
            thinking_budgets: options.thinking_budgets,
            convert_to_llm: options.convert_to_llm.clone().unwrap_or_else(default_convert_to_llm),
            transform_context: options.transform_context.clone(),
            get_steering_messages: Some(Arc::new(move || {
                if skip.swap(false, Ordering::Relaxed) {
                    return Vec::new();
                }
                steering_inner.upgrade().map(|inner| lock(&inner.steering).drain()).unwrap_or_default()
            })),
            get_follow_up_messages: Some(Arc::new(move || {
                inner.upgrade().map(|inner| lock(&inner.follow_up).drain()).unwrap_or_default()
            })),
            before_tool_call: options.before_tool_call.clone(),
            after_tool_call: options.after_tool_call.clone(),
            on_payload: options.on_payload.clone(),
            tool_execution: options.tool_execution,
            pi_compat: options.pi_compat,
            user_agent: options.user_agent.clone(),
            ..AgentLoopConfig::new(model, options.provider.clone())
        }
    }

    /// A run failed outside the model's answer: record a synthetic assistant message and end the run.
    async fn record_failure(&self, error: String, aborted: bool, model: &Model, sink: &StateSink<'_>) {
        let failure = AgentMessage::Assistant(failure_message(&error, aborted, model));
        {
            let mut state = lock(&self.inner.state);
            state.messages.push(failure.clone());
            state.error = Some(error);
        }
        sink.emit(AgentEvent::AgentEnd { messages: vec![failure], will_retry: None }).await;
    }
}

/// Applies each loop event to the state, then hands it to the listeners in subscription order.
struct StateSink<'a>(&'a Inner);

impl StateSink<'_> {
    fn reduce(&self, event: &AgentEvent) {
        let mut state = lock(&self.0.state);
        match event {
            AgentEvent::MessageStart { message } | AgentEvent::MessageUpdate { message, .. } => {
                state.streaming_message = Some(message.clone());
            }
            AgentEvent::MessageEnd { message } => {
                state.streaming_message = None;
                state.messages.push(message.clone());
            }
            AgentEvent::ToolExecutionStart { tool_call_id, .. } => {
                state.pending_tool_calls.insert(tool_call_id.clone());
            }
            AgentEvent::ToolExecutionEnd { tool_call_id, .. } => {
                state.pending_tool_calls.remove(tool_call_id);
            }
            AgentEvent::TurnEnd { message: AgentMessage::Assistant(assistant), .. } => {
                if let Some(error) = &assistant.error_message {
                    state.error = Some(error.clone());
                }
            }
            AgentEvent::AgentEnd { .. } => state.streaming_message = None,
            _ => {}
        }
    }
}

impl AgentEventSink for StateSink<'_> {
    /// The state's last message after the listeners ran: a listener replaces a finished message there.
    fn emit_message_end(&self, message: AgentMessage) -> BoxFuture<'_, AgentMessage> {
        Box::pin(async move {
            self.emit(AgentEvent::MessageEnd { message: message.clone() }).await;
            let state = lock(&self.0.state);
            match state.messages.last() {
                Some(last) if last.role() == message.role() => last.clone(),
                _ => message,
            }
        })
    }

    fn emit(&self, event: AgentEvent) -> BoxFuture<'_, ()> {
        self.reduce(&event);
        let listeners: Vec<Listener> = lock(&self.0.listeners).iter().map(|(_, l)| l.clone()).collect();
        Box::pin(async move {
            for listener in listeners {
                match listener {
                    Listener::Sync(listener) => listener(&event),
                    Listener::Async(listener) => listener(&event).await,
                }
            }
        })
    }
}

/// Ends the run: clears the streaming state and the active token, then wakes `wait_for_idle`.
struct FinishRun<'a>(&'a Inner);

impl Drop for FinishRun<'_> {
    fn drop(&mut self) {
        {
            let mut state = lock(&self.0.state);
            state.is_streaming = false;
            state.streaming_message = None;
            state.pending_tool_calls.clear();
        }
        *lock(&self.0.active) = None;
        self.0.idle.send_replace(true);
    }
}
