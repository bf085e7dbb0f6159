//! The [`Extension`] trait: one async method per event, each with a default that does nothing, and the
//! boxed form the runner keeps (so extensions of different types sit in one list).

use std::future::Future;
use std::path::PathBuf;

use serde_json::Value;

use super::context::ExtensionContext;
use super::events::*;
use super::registrar::ExtensionRegistrar;
use super::results::*;
use super::session_events::*;
use crate::agent::BoxFuture;
use crate::protocol::AgentMessage;

/// A handler failed. The runner reports it as an `extension_error` and goes on with the next handler.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ExtensionError {
    pub message: String,
}

impl ExtensionError {
    pub fn new(message: impl Into<String>) -> Self {
        Self { message: message.into() }
    }
}

impl From<String> for ExtensionError {
    fn from(message: String) -> Self {
        Self { message }
    }
}

impl From<&str> for ExtensionError {
    fn from(message: &str) -> Self {
        Self { message: message.to_owned() }
    }
}

impl From<std::io::Error> for ExtensionError {
    fn from(error: std::io::Error) -> Self {
        Self { message: error.to_string() }
    }
}

impl From<serde_json::Error> for ExtensionError {
    fn from(error: serde_json::Error) -> Self {
        Self { message: error.to_string() }
    }
}

/// What every handler returns.
pub type HookResult<T> = Result<T, ExtensionError>;

/// A set of [`EventKind`]s (which events an extension handles).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventSet(u64);

impl EventSet {
    pub const fn empty() -> Self {
        Self(0)
    }

    pub const fn all() -> Self {
        Self(u64::MAX)
    }

    pub const fn of(kinds: &[EventKind]) -> Self {
        let mut bits = 0u64;
        let mut index = 0;
        while index < kinds.len() {
            bits |= 1 << kinds[index] as u32;
            index += 1;
        }
        Self(bits)
    }

    pub const fn with(self, kind: EventKind) -> Self {
        Self(self.0 | 1 << kind as u32)
    }

    pub const fn contains(self, kind: EventKind) -> bool {
        self.0 & (1 << kind as u32) != 0
    }
}

macro_rules! extension_events {
    ($( $(#[$doc:meta])* $method:ident, $kind:ident, $name:literal, $event:ty => $result:ty = $default:expr; )*) => {
        /// Every event an extension can handle.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum EventKind {
            $( $(#[$doc])* $kind, )*
        }

        impl EventKind {
            /// All events, in the order the trait lists them.
            pub const ALL: &'static [EventKind] = &[$(EventKind::$kind,)*];

            /// pi's name of the event (`tool_call`, `before_agent_start`, ...).
            pub fn as_str(self) -> &'static str {
                match self {
                    $( Self::$kind => $name, )*
                }
            }

            /// The event named `name`, if there is one.
            pub fn from_name(name: &str) -> Option<Self> {
                match name {
                    $( $name => Some(Self::$kind), )*
                    _ => None,
                }
            }
        }

        /// An extension: handlers for the events it cares about, plus the tools and commands it registers.
        /// Every handler has a default that does nothing, so an implementation writes only the ones it needs,
        /// as `async fn`. The result types limit each event to the actions pi allows for it.
        pub trait Extension: Send + Sync + 'static {
            /// How errors name this extension (pi shows the extension's path).
            fn name(&self) -> &str;

            /// The events this extension handles; the runner skips it for the others (a speed-up only:
            /// the default handlers do nothing anyway).
            fn subscriptions(&self) -> EventSet {
                EventSet::all()
            }

            /// Registers tools and slash commands; called once, when the runner is built.
            fn register(&self, _registrar: &mut ExtensionRegistrar) {}

            $(
                $(#[$doc])*
                fn $method(&self, _event: &$event, _ctx: &ExtensionContext)
                    -> impl Future<Output = HookResult<$result>> + Send {
                    async { Ok($default) }
                }
            )*
        }

        /// [`Extension`] with boxed futures, so different extensions share one list.
        pub(crate) trait DynExtension: Send + Sync {
            fn name(&self) -> &str;
            fn subscriptions(&self) -> EventSet;
            fn register(&self, registrar: &mut ExtensionRegistrar);
            $(
                fn $method<'a>(&'a self, event: &'a $event, ctx: &'a ExtensionContext)
                    -> BoxFuture<'a, HookResult<$result>>;
            )*
        }

        impl<T: Extension> DynExtension for T {
            fn name(&self) -> &str {
                Extension::name(self)
            }

            fn subscriptions(&self) -> EventSet {
                Extension::subscriptions(self)
            }

            fn register(&self, registrar: &mut ExtensionRegistrar) {
                Extension::register(self, registrar)
            }

            $(
                fn $method<'a>(&'a self, event: &'a $event, ctx: &'a ExtensionContext)
                    -> BoxFuture<'a, HookResult<$result>> {
                    Box::pin(Extension::$method(self, event, ctx))
                }
            )*
        }
    };
}

extension_events! {
    /// `input`: a prompt as typed, before `/skill:` and template expansion. Transforms chain; `Handled` stops.
    input, Input, "input", InputEvent => InputAction = InputAction::Continue;
    /// `before_agent_start`: once per prompt. Messages accumulate; system prompt changes chain and last for
    /// this prompt only.
    before_agent_start, BeforeAgentStart, "before_agent_start", BeforeAgentStartEvent => BeforeAgentStartResult
        = BeforeAgentStartResult::default();
    /// `context`: before every LLM call; `Some(messages)` replaces the messages the next handler and the
    /// model see (the session's own transcript is not changed).
    context, Context, "context", ContextEvent => Option<Vec<AgentMessage>> = None;
    /// `before_provider_request`: the request body; `Some(payload)` replaces it (chained).
    before_provider_request, BeforeProviderRequest, "before_provider_request", BeforeProviderRequestEvent
        => Option<Value> = None;
    /// `tool_call`: may block the call; the first block wins.
    tool_call, ToolCall, "tool_call", ToolCallEvent => ToolCallDecision = ToolCallDecision::Allow;
    /// `tool_result`: may replace content, details and the error flag, field by field (chained).
    tool_result, ToolResult, "tool_result", ToolResultEvent => ToolResultPatch = ToolResultPatch::default();
    /// `agent_start`.
    agent_start, AgentStart, "agent_start", AgentStartEvent => () = ();
    /// `agent_end`.
    agent_end, AgentEnd, "agent_end", AgentEndEvent => () = ();
    /// `turn_start`.
    turn_start, TurnStart, "turn_start", TurnStartEvent => () = ();
    /// `turn_end`.
    turn_end, TurnEnd, "turn_end", TurnEndEvent => () = ();
    /// `message_start`.
    message_start, MessageStart, "message_start", MessageEvent => () = ();
    /// `message_update`.
    message_update, MessageUpdate, "message_update", MessageUpdateEvent => () = ();
    /// `message_end`: may replace the finished message with one of the same role, before it is saved.
    message_end, MessageEnd, "message_end", MessageEvent => Option<AgentMessage> = None;
    /// `tool_execution_start`.
    tool_execution_start, ToolExecutionStart, "tool_execution_start", ToolExecutionStartEvent => () = ();
    /// `tool_execution_update`.
    tool_execution_update, ToolExecutionUpdate, "tool_execution_update", ToolExecutionUpdateEvent => () = ();
    /// `tool_execution_end`.
    tool_execution_end, ToolExecutionEnd, "tool_execution_end", ToolExecutionEndEvent => () = ();
    /// `model_select`.
    model_select, ModelSelect, "model_select", ModelSelectEvent => () = ();
    /// `session_start`.
    session_start, SessionStart, "session_start", SessionStartEvent => () = ();
    /// `session_shutdown`.
    session_shutdown, SessionShutdown, "session_shutdown", SessionShutdownEvent => () = ();
    /// `session_before_switch`: may cancel.
    session_before_switch, SessionBeforeSwitch, "session_before_switch", SessionBeforeSwitchEvent
        => CancelResult = CancelResult::default();
    /// `session_switch`.
    session_switch, SessionSwitch, "session_switch", SessionSwitchEvent => () = ();
    /// `session_before_fork`: may cancel.
    session_before_fork, SessionBeforeFork, "session_before_fork", SessionBeforeForkEvent
        => ForkDecision = ForkDecision::default();
    /// `session_fork`.
    session_fork, SessionFork, "session_fork", SessionForkEvent => () = ();
    /// `session_before_compact`: may cancel or supply the compaction.
    session_before_compact, SessionBeforeCompact, "session_before_compact", SessionBeforeCompactEvent
        => CompactDecision = CompactDecision::default();
    /// `session_compact`.
    session_compact, SessionCompact, "session_compact", SessionCompactEvent => () = ();
    /// `session_before_tree`: may cancel.
    session_before_tree, SessionBeforeTree, "session_before_tree", SessionBeforeTreeEvent
        => CancelResult = CancelResult::default();
    /// `session_tree`.
    session_tree, SessionTree, "session_tree", SessionTreeEvent => () = ();
    /// `resources_discover`: may add skill and prompt-template paths.
    resources_discover, ResourcesDiscover, "resources_discover", ResourcesDiscoverEvent
        => DiscoveredResources = DiscoveredResources::default();
    /// `session_directory`: may choose the session directory (the last answer wins).
    session_directory, SessionDirectory, "session_directory", SessionDirectoryEvent => Option<PathBuf> = None;
}
