//! A `read` tool that answers at once, shared by the benches that run whole prompts, so what they measure is
//! the runtime's own work.

use pi_runtime::protocol::AgentToolResult;
use pi_runtime::tools::{AgentTool, ToolContext, ToolFuture};
use serde_json::Value;

pub struct InstantTool {
    pub schema: Value,
}

impl AgentTool for InstantTool {
    fn name(&self) -> &str {
        "read"
    }
    fn label(&self) -> &str {
        "read"
    }
    fn description(&self) -> &str {
        "Read a file"
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    fn execute(&self, _args: Value, _ctx: ToolContext) -> ToolFuture<'_> {
        Box::pin(async { Ok(AgentToolResult::text("Hello from the fixture file.\nSecond line.\n")) })
    }
}
