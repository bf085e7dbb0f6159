//! One of the two Rust tools is not implemented.

use engine::protocol::AgentToolResult;
use engine::tools::{ToolContext, ToolError};
use pi_macros::agent;

#[agent("tests/ui/two_tools.yaml")]
struct Shelf;

impl ShelfTools for Shelf {
    async fn add_item(&self, _args: AddItemArgs, _ctx: ToolContext) -> Result<AgentToolResult, ToolError> {
        Ok(AgentToolResult::text("added"))
    }
}

fn main() {}
