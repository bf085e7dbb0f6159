//! One MCP server tool as an agent tool: named `mcp__<server>__<tool>`, described and typed as the server
//! says, its calls bounded by the server's timeout and the agent's abort.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;

use rmcp::model::Tool;
use serde_json::Value;

use super::connection::{CallError, ServerCaller};
use super::result::tool_result;
use crate::tools::{AgentTool, ToolContext, ToolError, ToolFuture};

/// Gives the server's current caller, starting the server again if it exited (`None`: it cannot be had).
pub type Reconnect = Arc<dyn Fn() -> BoxFuture<'static, Option<ServerCaller>> + Send + Sync>;

/// A server's tool offered to the model.
pub struct McpTool {
    name: String,
    label: String,
    description: String,
    parameters: Value,
    server: String,
    remote_name: String,
    timeout: Duration,
    caller: ServerCaller,
    reconnect: Reconnect,
}

impl McpTool {
    /// `tool` of `server`, offered to the model as `name`.
    pub(super) fn new(
        name: String,
        server: &str,
        tool: &Tool,
        timeout: Duration,
        caller: ServerCaller,
        reconnect: Reconnect,
    ) -> Self {
        let mut parameters = Value::Object(tool.input_schema.as_ref().clone());
        // Some servers leave out `type` (or `properties`) for tools without arguments; providers want both.
        if parameters.get("type").is_none() {
            parameters["type"] = Value::String("object".into());
        }
        if parameters.get("properties").is_none() {
            parameters["properties"] = Value::Object(serde_json::Map::new());
        }
        let title = tool.title.clone().or_else(|| tool.annotations.as_ref().and_then(|notes| notes.title.clone()));
        let description = [tool.description.as_deref(), title.as_deref()]
            .into_iter()
            .flatten()
            .map(str::trim)
            .find(|text| !text.is_empty())
            .map_or_else(|| format!("Tool \"{}\" of the MCP server \"{server}\"", tool.name), str::to_owned);
        Self {
            name,
            label: title.unwrap_or_else(|| tool.name.to_string()),
            description,
            parameters,
            server: server.to_owned(),
            remote_name: tool.name.to_string(),
            timeout,
            caller,
            reconnect,
        }
    }

    /// The server this tool belongs to.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The tool's name on its server.
    pub fn remote_name(&self) -> &str {
        &self.remote_name
    }

    async fn run(&self, args: Value, ctx: ToolContext) -> Result<crate::protocol::AgentToolResult, ToolError> {
        let (server, tool) = (&self.server, &self.remote_name);
        // A server that exited is started again for this call (as pi does); the start counts against the
        // call's timeout.
        let call = async {
            let caller = if self.caller.is_closed() {
                (self.reconnect)().await.unwrap_or_else(|| self.caller.clone())
            } else {
                self.caller.clone()
            };
            caller.call(tool, args).await
        };
        let answer = tokio::select! {
            answer = call => answer,
            () = tokio::time::sleep(self.timeout) => {
                let secs = self.timeout.as_secs_f64();
                return Err(ToolError::new(format!(
                    "MCP tool \"{tool}\" of server \"{server}\" did not answer within {secs} s (its `timeout`)"
                )));
            }
            () = ctx.cancel.cancelled() => return Err(ToolError::new("Operation aborted")),
        };
        match answer {
            Ok(answer) => tool_result(server, tool, &answer).map_err(ToolError::new),
            Err(CallError::Closed) => Err(ToolError::new(format!(
                "MCP server \"{server}\" is not running (it exited or its connection closed), so \"{tool}\" got no answer; the next call starts it again, and /mcp shows its state"
            ))),
            Err(CallError::Failed(message)) => {
                Err(ToolError::new(format!("MCP tool \"{tool}\" of server \"{server}\" failed: {message}")))
            }
        }
    }
}

impl AgentTool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn label(&self) -> &str {
        &self.label
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn execute(&self, args: Value, ctx: ToolContext) -> ToolFuture<'_> {
        Box::pin(self.run(args, ctx))
    }
}
