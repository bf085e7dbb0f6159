//! MCP: tools from Model Context Protocol servers, declared in the agent's YAML or in the user's `mcp.json`
//! files, reached with the official Rust SDK (`rmcp`) over stdio or streamable HTTP.

mod config_file;
mod connection;
mod definition;
pub mod expand;
mod manager;
pub mod naming;
mod result;
mod tool;

pub use definition::{DEFAULT_CALL_TIMEOUT_MS, McpDefinition, McpServerDefinition, McpTransport};
mod http_client;
mod lifecycle;

pub use config_file::{McpServers, config_paths, load_servers};
pub use connection::{ClientIdentity, log_path};
pub use manager::{McpManager, McpOrigin, McpServerEntry, McpServerState, McpServerStatus, NoticeSink, ToolsListener};
pub use tool::McpTool;

#[cfg(test)]
mod tests_config_file;
