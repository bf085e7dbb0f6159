//! pi-runtime: the engine behind every pi-gen agent. It reproduces the pi coding agent: the agent
//! loop with steering and follow-ups, LLM providers over their real wire protocols, built-in tools,
//! the system prompt, and pi's CLI modes.

pub mod agent;
pub mod ai;
pub mod cli;
pub mod definition;
pub mod prompt;
pub mod protocol;
#[cfg(feature = "testing")]
pub mod testing;
pub mod tools;

pub use definition::{AgentDefinition, ToolExecutionMode};
