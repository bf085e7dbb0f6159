//! A tool method takes the wrong argument type.

use engine::protocol::AgentToolResult;
use engine::tools::{ToolContext, ToolError};
use pi_macros::agent;

#[agent("tests/ui/two_tools.yaml")]
struct Shelf;

impl ShelfTools for Shelf {
    async fn add_item(&self, _args: String, _ctx: ToolContext) -> Result<AgentToolResult, ToolError> {
        Ok(AgentToolResult::text("added"))
    }

    async fn list_items(&self, _args: ListItemsArgs, _ctx: ToolContext) -> Result<AgentToolResult, ToolError> {
        Ok(AgentToolResult::text("none"))
    }
}

fn main() {}
