//! pi-runtime: the engine behind every pi-gen agent. It reproduces the pi coding agent: the agent
//! loop with steering and follow-ups, LLM providers over their real wire protocols, built-in tools,
//! the system prompt, and pi's CLI modes.

pub mod agent;
pub mod agent_session;
pub mod ai;
pub mod cli;
pub mod compaction;
pub mod definition;
pub mod export_html;
pub mod extension;
#[doc(hidden)]
pub mod macro_support;
pub mod mcp;
pub mod panels;
pub mod permissions;
pub mod prompt;
pub mod protocol;
pub mod session;
#[cfg(feature = "testing")]
pub mod testing;
pub mod tools;

pub use definition::{
    AgentDefinition, CommandAction, CommandArgument, CommandDefinition, CustomToolDefinition, CustomToolHandler,
    DEFAULT_MAX_SUBAGENT_DEPTH, EmbeddedFile, EmbeddedResources, SessionDefaults, SubagentDefinition,
    ToolExecutionMode,
};
