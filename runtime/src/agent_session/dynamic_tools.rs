//! Tools that come and go while a session runs (an MCP server's tools arrive when it has started and change
//! when it says so), and a wait before the next prompt for tools still on their way.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Weak};

use super::AgentSession;
use super::link::{SessionLink, lock};
use crate::tools::AgentTool;

/// Awaited before a prompt's run starts.
pub type PromptGate = Pin<Box<dyn Future<Output = ()> + Send>>;
/// Gives the wait for each prompt.
pub type PromptGateFn = Arc<dyn Fn() -> PromptGate + Send + Sync>;

/// Changes a session's tool set from outside it; does nothing once the session is gone.
#[derive(Clone)]
pub struct DynamicTools {
    link: Weak<SessionLink>,
}

impl DynamicTools {
    /// Replaces the tools `owns` claims (by name) with `tools`. Of these, the ones `activate` accepts join the
    /// active tools, after the others; the system prompt is rebuilt for the new set.
    pub fn replace(
        &self,
        owns: &dyn Fn(&str) -> bool,
        tools: Vec<Arc<dyn AgentTool>>,
        activate: &dyn Fn(&str) -> bool,
    ) {
        let Some(link) = self.link.upgrade() else { return };
        let active = {
            let mut state = lock(&link.tools);
            state.all.retain(|tool| !owns(tool.name()));
            let mut active: Vec<String> = state.active.iter().filter(|name| !owns(name)).cloned().collect();
            for tool in tools {
                if activate(tool.name()) {
                    active.push(tool.name().to_owned());
                }
                state.all.push(tool);
            }
            active
        };
        link.activate_tools(&active);
    }
}

impl AgentSession {
    /// A handle that changes this session's tools (for tools that arrive or change while it runs).
    pub fn dynamic_tools(&self) -> DynamicTools {
        DynamicTools { link: Arc::downgrade(&self.link) }
    }

    /// Makes every prompt wait for what `gate` gives before its run starts (e.g. for MCP servers still
    /// starting, or tool lists a server said have changed), since a run keeps the tools it starts with.
    pub fn set_prompt_gate(&self, gate: PromptGateFn) {
        *lock(&self.prompt_gate) = Some(gate);
    }

    pub(super) async fn pass_prompt_gate(&self) {
        let gate = lock(&self.prompt_gate).clone();
        if let Some(gate) = gate {
            gate().await;
        }
    }
}
