//! Extensions: Rust code hooked into the session's pipeline (pi's extension API). An [`Extension`] has one
//! async handler per event, each with a typed answer; the [`ExtensionRunner`] runs them in registration
//! order and combines the answers by pi's rules. The agent's YAML `hooks:` become built-in extensions:
//! declarative ones ([`declarative`]) and external commands ([`command_hook`]).

mod api;
pub mod command_hook;
mod context;
pub mod declarative;
mod events;
mod hook_definition;
mod registrar;
mod results;
mod runner;
mod session_actions;
mod session_events;
mod ui;

#[cfg(test)]
mod tests_runner;

pub use api::{EventKind, EventSet, Extension, ExtensionError, HookResult};
pub use context::{CommandHandler, Delivery, ExtensionContext, SendOptions, SessionControl, ToolInfo};
pub use events::*;
pub use hook_definition::{ArgumentPattern, HookAction, HookDefinition, TextPattern};
pub use registrar::{ExtensionRegistrar, RegisteredCommand};
pub use results::*;
pub use runner::{BeforeAgentStartOutcome, ExtensionErrorEvent, ExtensionErrorSink, ExtensionRunner, Extensions};
pub use session_actions::{SessionAction, SessionActions, SessionActionsHandle};
pub use session_events::*;
#[cfg(test)]
pub(crate) use ui::scripted as ui_scripted;
pub use ui::{ExtensionUi, ExtensionUiHandle, NotifyLevel, UiRequest, UiResponse, WidgetPlacement};
