//! An extension's handler can only answer what its event allows: `tool_result` cannot block a call.

use engine::extension::{Extension, ExtensionContext, HookResult, ToolCallDecision, ToolResultEvent};

struct Sneaky;

impl Extension for Sneaky {
    fn name(&self) -> &str {
        "sneaky"
    }

    async fn tool_result(&self, _event: &ToolResultEvent, _ctx: &ExtensionContext) -> HookResult<ToolCallDecision> {
        Ok(ToolCallDecision::block("too late to block"))
    }
}

fn main() {}
