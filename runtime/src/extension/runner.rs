//! [`ExtensionRunner`]: the extensions of a session in registration order, and pi's rule for combining
//! their answers to each event. A failing handler is reported as an `extension_error` and skipped.

use std::sync::{Arc, RwLock};

use serde::Serialize;
use serde_json::Value;

use super::api::{DynExtension, EventKind, EventSet, Extension, ExtensionError, HookResult};
use super::context::ExtensionContext;
use super::events::*;
use super::registrar::{ExtensionRegistrar, RegisteredCommand};
use super::results::*;
use super::session_events::*;
use crate::protocol::{AgentMessage, ImageContent};
use crate::tools::AgentTool;

/// A handler failed (`type: "extension_error"` on the wire).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename = "extension_error", rename_all = "camelCase")]
pub struct ExtensionErrorEvent {
    /// The extension's name.
    pub extension_path: String,
    /// The event whose handler failed.
    pub event: String,
    pub error: String,
}

/// Receives handler failures.
pub type ExtensionErrorSink = Arc<dyn Fn(&ExtensionErrorEvent) + Send + Sync>;

/// Extensions in the order they were added (the order their handlers run in).
#[derive(Default, Clone)]
pub struct Extensions {
    list: Vec<Arc<dyn DynExtension>>,
}

impl Extensions {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, extension: impl Extension) {
        self.list.push(Arc::new(extension));
    }

    pub fn with(mut self, extension: impl Extension) -> Self {
        self.push(extension);
        self
    }

    /// Appends every extension of `other` after these.
    pub fn extend(&mut self, other: Extensions) {
        self.list.extend(other.list);
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

/// The result of `before_agent_start` over all handlers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BeforeAgentStartOutcome {
    /// Every handler's message, in order.
    pub messages: Vec<ExtensionMessage>,
    /// The system prompt after the last handler that changed it; `None` when nobody did.
    pub system_prompt: Option<String>,
}

/// Runs the handlers of every extension for each event and combines their answers.
pub struct ExtensionRunner {
    extensions: Vec<Arc<dyn DynExtension>>,
    subscribed: EventSet,
    tools: Vec<Arc<dyn AgentTool>>,
    commands: Vec<RegisteredCommand>,
    context: RwLock<ExtensionContext>,
    on_error: RwLock<Option<ExtensionErrorSink>>,
}

impl ExtensionRunner {
    /// Builds the runner and collects what each extension registers. Handlers see `context` (replace it
    /// with [`ExtensionRunner::bind`] once the session exists).
    pub fn new(extensions: Extensions, context: ExtensionContext) -> Self {
        let mut tools = Vec::new();
        let mut commands = Vec::new();
        let mut subscribed = EventSet::empty();
        for extension in &extensions.list {
            let mut registrar = ExtensionRegistrar::for_extension(extension.name());
            extension.register(&mut registrar);
            tools.extend(registrar.tools);
            commands.extend(registrar.commands);
            let own = extension.subscriptions();
            for kind in EventKind::ALL {
                if own.contains(*kind) {
                    subscribed = subscribed.with(*kind);
                }
            }
        }
        Self {
            extensions: extensions.list,
            subscribed,
            tools,
            commands,
            context: RwLock::new(context),
            on_error: RwLock::new(None),
        }
    }

    /// A runner with no extensions.
    pub fn empty(context: ExtensionContext) -> Self {
        Self::new(Extensions::new(), context)
    }

    /// The context handlers get from now on.
    pub fn bind(&self, context: ExtensionContext) {
        let mut bound = self.context.write().unwrap_or_else(|poisoned| poisoned.into_inner());
        // The dialogs stay with the mode that shows them when the session is bound again.
        let ui = if context.has_ui() { context.ui_handle().cloned() } else { bound.ui_handle().cloned() };
        let actions = context.actions_handle().or(bound.actions_handle()).cloned();
        *bound = context.with_ui(ui).with_actions(actions);
    }

    /// Session actions of every handler (a command's `new_session`, `fork`, ...) go to `actions` from now on.
    pub fn set_session_actions(&self, actions: super::session_actions::SessionActionsHandle) {
        let mut bound = self.context.write().unwrap_or_else(|poisoned| poisoned.into_inner());
        *bound = bound.with_actions(Some(actions));
    }

    /// Dialogs of every handler go to `ui` from now on (interactive mode sets it).
    pub fn set_ui(&self, ui: super::ui::ExtensionUiHandle) {
        let mut bound = self.context.write().unwrap_or_else(|poisoned| poisoned.into_inner());
        *bound = bound.with_ui(Some(ui));
    }

    /// Where handler failures go (by default: standard error).
    pub fn on_error(&self, sink: ExtensionErrorSink) {
        *self.on_error.write().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(sink);
    }

    pub fn context(&self) -> ExtensionContext {
        self.context.read().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }

    /// Whether any extension handles `kind`.
    pub fn has_handlers(&self, kind: EventKind) -> bool {
        self.subscribed.contains(kind)
    }

    pub fn len(&self) -> usize {
        self.extensions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.extensions.is_empty()
    }

    /// The tools the extensions registered, in registration order.
    pub fn tools(&self) -> &[Arc<dyn AgentTool>] {
        &self.tools
    }

    /// The slash commands the extensions registered.
    pub fn commands(&self) -> &[RegisteredCommand] {
        &self.commands
    }

    /// The command `/name` names, if an extension registered it.
    pub fn command(&self, name: &str) -> Option<&RegisteredCommand> {
        self.commands.iter().find(|command| command.name == name)
    }

    /// Reports a failed handler.
    pub fn report_error(&self, extension: &str, event: EventKind, error: &ExtensionError) {
        let report = ExtensionErrorEvent {
            extension_path: extension.to_owned(),
            event: event.as_str().to_owned(),
            error: error.message.clone(),
        };
        match self.on_error.read().unwrap_or_else(|poisoned| poisoned.into_inner()).as_ref() {
            Some(sink) => sink(&report),
            None => {
                eprintln!("Warning: extension {} failed on {}: {}", report.extension_path, report.event, report.error)
            }
        }
    }

    /// The extensions subscribed to `kind`.
    fn handlers(&self, kind: EventKind) -> impl Iterator<Item = &Arc<dyn DynExtension>> {
        let any = self.subscribed.contains(kind);
        self.extensions.iter().filter(move |extension| any && extension.subscriptions().contains(kind))
    }

    /// A handler's value, or `None` after reporting its failure.
    fn settle<T>(&self, extension: &dyn DynExtension, kind: EventKind, result: HookResult<T>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(error) => {
                self.report_error(extension.name(), kind, &error);
                None
            }
        }
    }

    /// `input`: transforms chain (each handler sees the text so far); `Handled` stops at once. The result is
    /// `Continue` when nobody changed anything.
    pub async fn emit_input(&self, text: &str, images: &[ImageContent], source: InputSource) -> InputAction {
        let kind = EventKind::Input;
        let ctx = self.context();
        let mut event = InputEvent { text: text.to_owned(), images: images.to_vec(), source };
        let mut changed = false;
        for extension in self.handlers(kind) {
            match self.settle(extension.as_ref(), kind, extension.input(&event, &ctx).await) {
                Some(InputAction::Handled) => return InputAction::Handled,
                Some(InputAction::Transform { text, images }) => {
                    event.text = text;
                    if let Some(images) = images {
                        event.images = images;
                    }
                    changed = true;
                }
                _ => {}
            }
        }
        if changed {
            InputAction::Transform { text: event.text, images: Some(event.images) }
        } else {
            InputAction::Continue
        }
    }

    /// `before_agent_start`: messages accumulate; system prompt changes chain.
    pub async fn emit_before_agent_start(
        &self,
        prompt: &str,
        images: &[ImageContent],
        system_prompt: &str,
    ) -> BeforeAgentStartOutcome {
        let kind = EventKind::BeforeAgentStart;
        let mut outcome = BeforeAgentStartOutcome::default();
        let mut event = BeforeAgentStartEvent {
            prompt: prompt.to_owned(),
            images: images.to_vec(),
            system_prompt: system_prompt.to_owned(),
        };
        let base = self.context();
        for extension in self.handlers(kind) {
            let ctx = base.with_system_prompt(&event.system_prompt);
            let Some(result) = self.settle(extension.as_ref(), kind, extension.before_agent_start(&event, &ctx).await)
            else {
                continue;
            };
            if let Some(message) = result.message {
                outcome.messages.push(message);
            }
            if let Some(prompt) = result.system_prompt {
                event.system_prompt = prompt.clone();
                outcome.system_prompt = Some(prompt);
            }
        }
        outcome
    }

    /// `context`: `messages` is the handlers' own copy; each handler sees the previous one's output.
    pub async fn emit_context(&self, messages: Vec<AgentMessage>) -> Vec<AgentMessage> {
        let kind = EventKind::Context;
        let ctx = self.context();
        let mut event = ContextEvent { messages };
        for extension in self.handlers(kind) {
            if let Some(Some(messages)) = self.settle(extension.as_ref(), kind, extension.context(&event, &ctx).await) {
                event.messages = messages;
            }
        }
        event.messages
    }

    /// `before_provider_request`: each handler may replace the payload the next one sees.
    pub async fn emit_before_provider_request(&self, payload: Value) -> Value {
        let kind = EventKind::BeforeProviderRequest;
        let ctx = self.context();
        let mut event = BeforeProviderRequestEvent { payload };
        for extension in self.handlers(kind) {
            let result = extension.before_provider_request(&event, &ctx).await;
            if let Some(Some(payload)) = self.settle(extension.as_ref(), kind, result) {
                event.payload = payload;
            }
        }
        event.payload
    }

    /// `tool_call`: the first block wins and later handlers do not run. A failing handler is reported and
    /// blocks the call with its error (a guard that cannot decide does not let the call through).
    pub async fn emit_tool_call(&self, event: &ToolCallEvent) -> ToolCallDecision {
        let kind = EventKind::ToolCall;
        let ctx = self.context();
        for extension in self.handlers(kind) {
            match extension.tool_call(event, &ctx).await {
                Ok(ToolCallDecision::Allow) => {}
                Ok(block) => return block,
                Err(error) => {
                    self.report_error(extension.name(), kind, &error);
                    return ToolCallDecision::Block { reason: Some(error.message) };
                }
            }
        }
        ToolCallDecision::Allow
    }

    /// `tool_result`: each field a handler returns replaces the result's, and later handlers see it. `None`
    /// when nobody changed anything.
    pub async fn emit_tool_result(&self, mut event: ToolResultEvent) -> Option<ToolResultPatch> {
        let kind = EventKind::ToolResult;
        let ctx = self.context();
        let mut changed = false;
        for extension in self.handlers(kind) {
            let Some(patch) = self.settle(extension.as_ref(), kind, extension.tool_result(&event, &ctx).await) else {
                continue;
            };
            if let Some(content) = patch.content {
                event.content = content;
                changed = true;
            }
            if let Some(details) = patch.details {
                event.details = Some(details);
                changed = true;
            }
            if let Some(is_error) = patch.is_error {
                event.is_error = is_error;
                changed = true;
            }
        }
        changed.then_some(ToolResultPatch {
            content: Some(event.content),
            details: event.details,
            is_error: Some(event.is_error),
        })
    }

    /// `message_end`: a handler may replace the message with one of the same role (a different role is
    /// reported and ignored). `None` when nobody replaced it.
    pub async fn emit_message_end(&self, message: &AgentMessage) -> Option<AgentMessage> {
        let kind = EventKind::MessageEnd;
        let ctx = self.context();
        let mut event = MessageEvent { message: message.clone() };
        let mut replaced = false;
        for extension in self.handlers(kind) {
            let Some(Some(replacement)) =
                self.settle(extension.as_ref(), kind, extension.message_end(&event, &ctx).await)
            else {
                continue;
            };
            if replacement.role() != event.message.role() {
                let error = ExtensionError::new(format!(
                    "a message_end handler must return a message of the same role ({}), not {}",
                    event.message.role(),
                    replacement.role()
                ));
                self.report_error(extension.name(), kind, &error);
                continue;
            }
            event.message = replacement;
            replaced = true;
        }
        replaced.then_some(event.message)
    }

    /// `session_before_compact`: the last answer wins, a cancel stops at once.
    pub async fn emit_session_before_compact(&self, event: &SessionBeforeCompactEvent) -> CompactDecision {
        let kind = EventKind::SessionBeforeCompact;
        let ctx = self.context();
        let mut decision = CompactDecision::default();
        for extension in self.handlers(kind) {
            if let Some(answer) =
                self.settle(extension.as_ref(), kind, extension.session_before_compact(event, &ctx).await)
            {
                if answer.cancel {
                    return answer;
                }
                if answer.compaction.is_some() {
                    decision = answer;
                }
            }
        }
        decision
    }

    /// `session_before_switch`: any cancel stops the switch.
    pub async fn emit_session_before_switch(&self, event: &SessionBeforeSwitchEvent) -> CancelResult {
        let kind = EventKind::SessionBeforeSwitch;
        let ctx = self.context();
        for extension in self.handlers(kind) {
            let answer = extension.session_before_switch(event, &ctx).await;
            if let Some(answer) = self.settle(extension.as_ref(), kind, answer).filter(|answer| answer.cancel) {
                return answer;
            }
        }
        CancelResult::default()
    }

    /// `session_before_fork`: the last answer wins, a cancel stops at once.
    pub async fn emit_session_before_fork(&self, event: &SessionBeforeForkEvent) -> ForkDecision {
        let kind = EventKind::SessionBeforeFork;
        let ctx = self.context();
        let mut decision = ForkDecision::default();
        for extension in self.handlers(kind) {
            if let Some(answer) =
                self.settle(extension.as_ref(), kind, extension.session_before_fork(event, &ctx).await)
            {
                if answer.cancel {
                    return answer;
                }
                decision = answer;
            }
        }
        decision
    }

    /// `session_before_tree`: any cancel stops the navigation.
    pub async fn emit_session_before_tree(&self, event: &SessionBeforeTreeEvent) -> CancelResult {
        let kind = EventKind::SessionBeforeTree;
        let ctx = self.context();
        for extension in self.handlers(kind) {
            let answer = extension.session_before_tree(event, &ctx).await;
            if let Some(answer) = self.settle(extension.as_ref(), kind, answer).filter(|answer| answer.cancel) {
                return answer;
            }
        }
        CancelResult::default()
    }

    /// `resources_discover`: every handler's paths, in order.
    pub async fn emit_resources_discover(&self, event: &ResourcesDiscoverEvent) -> DiscoveredResources {
        let kind = EventKind::ResourcesDiscover;
        let ctx = self.context();
        let mut all = DiscoveredResources::default();
        for extension in self.handlers(kind) {
            if let Some(found) = self.settle(extension.as_ref(), kind, extension.resources_discover(event, &ctx).await)
            {
                all.skill_paths.extend(found.skill_paths);
                all.prompt_paths.extend(found.prompt_paths);
            }
        }
        all
    }

    /// `session_directory`: the last directory given wins.
    pub async fn emit_session_directory(&self, event: &SessionDirectoryEvent) -> Option<std::path::PathBuf> {
        let kind = EventKind::SessionDirectory;
        let ctx = self.context();
        let mut chosen = None;
        for extension in self.handlers(kind) {
            let answer = extension.session_directory(event, &ctx).await;
            if let Some(Some(dir)) = self.settle(extension.as_ref(), kind, answer) {
                chosen = Some(dir);
            }
        }
        chosen
    }
}

/// `emit_<event>` for events whose handlers only observe: every handler runs, failures are reported.
macro_rules! observers {
    ($( $emit:ident, $method:ident, $kind:ident, $event:ty; )*) => {
        impl ExtensionRunner {
            $(
                #[doc = concat!("`", stringify!($method), "`: every handler runs, in order.")]
                pub async fn $emit(&self, event: &$event) {
                    let kind = EventKind::$kind;
                    if !self.subscribed.contains(kind) {
                        return;
                    }
                    let ctx = self.context();
                    for extension in self.handlers(kind) {
                        let result = extension.$method(event, &ctx).await;
                        self.settle(extension.as_ref(), kind, result);
                    }
                }
            )*
        }
    };
}

observers! {
    emit_agent_start, agent_start, AgentStart, AgentStartEvent;
    emit_agent_end, agent_end, AgentEnd, AgentEndEvent;
    emit_turn_start, turn_start, TurnStart, TurnStartEvent;
    emit_turn_end, turn_end, TurnEnd, TurnEndEvent;
    emit_message_start, message_start, MessageStart, MessageEvent;
    emit_message_update, message_update, MessageUpdate, MessageUpdateEvent;
    emit_tool_execution_start, tool_execution_start, ToolExecutionStart, ToolExecutionStartEvent;
    emit_tool_execution_update, tool_execution_update, ToolExecutionUpdate, ToolExecutionUpdateEvent;
    emit_tool_execution_end, tool_execution_end, ToolExecutionEnd, ToolExecutionEndEvent;
    emit_model_select, model_select, ModelSelect, ModelSelectEvent;
    emit_session_start, session_start, SessionStart, SessionStartEvent;
    emit_session_shutdown, session_shutdown, SessionShutdown, SessionShutdownEvent;
    emit_session_switch, session_switch, SessionSwitch, SessionSwitchEvent;
    emit_session_fork, session_fork, SessionFork, SessionForkEvent;
    emit_session_compact, session_compact, SessionCompact, SessionCompactEvent;
    emit_session_tree, session_tree, SessionTree, SessionTreeEvent;
}
