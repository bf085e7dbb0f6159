//! The tool a parent calls a sub-agent with: `{ task: string }` in, the sub-agent's final answer out.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{ParentRun, SubagentScope};
use crate::AgentDefinition;
use crate::definition::SubagentDefinition;
use crate::tools::{AgentTool, ToolContext, ToolError, ToolFuture};

/// Runs one sub-agent per call.
pub(super) struct SubagentTool {
    name: String,
    description: String,
    parameters: Value,
    /// The sub-agent as it runs under its parent ([`super::under_parent`]).
    definition: Arc<AgentDefinition>,
    parent: ParentRun,
    /// The sub-agent's own place in the tree.
    scope: SubagentScope,
}

impl SubagentTool {
    pub(super) fn new(
        subagent: &SubagentDefinition,
        definition: AgentDefinition,
        parent: ParentRun,
        scope: SubagentScope,
    ) -> Self {
        let description = format!(
            "{} (a sub-agent: it works on the task on its own, with its own tools, and answers with its result; \
             say everything it needs in the task)",
            subagent.description.trim_end_matches('.')
        );
        let parameters = json!({
            "type": "object",
            "properties": {
                "task": {
                    "type": "string",
                    "description": "The task for the sub-agent, complete with the context it needs"
                }
            },
            "required": ["task"]
        });
        Self { name: subagent.name.clone(), description, parameters, definition: Arc::new(definition), parent, scope }
    }
}

impl AgentTool for SubagentTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn label(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn execute(&self, args: Value, ctx: ToolContext) -> ToolFuture<'_> {
        Box::pin(async move {
            let task = crate::tools::arg_str(&args, "task")?.trim().to_owned();
            if task.is_empty() {
                return Err(ToolError::new("Invalid arguments: \"task\" must say what the sub-agent should do"));
            }
            if self.scope.depth > self.scope.max_depth {
                return Err(ToolError::new(format!(
                    "Sub-agent {} is not run: sub-agents nest only {} deep",
                    self.name, self.scope.max_depth
                )));
            }
            let run = super::run::SubagentRun {
                tool_name: &self.name,
                definition: &self.definition,
                parent: &self.parent,
                scope: &self.scope,
            };
            run.run(task, ctx).await
        })
    }
}
