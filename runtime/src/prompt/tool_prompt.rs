//! Active tools and the system prompt: the tools as the prompt lists them, and a builder that rebuilds the
//! prompt whenever the active tool set changes (the tool list and tool-derived guidelines follow the tools).

use std::sync::Arc;

use super::{PromptTool, SystemPromptOptions, SystemPromptSections, build_system_prompt, build_system_prompt_sections};
use crate::agent::Agent;
use crate::tools::AgentTool;

/// The tools as the system prompt lists them: name, prompt snippet (or description) and guidelines.
pub fn prompt_tools(tools: &[Arc<dyn AgentTool>]) -> Vec<PromptTool> {
    tools
        .iter()
        .map(|tool| PromptTool {
            name: tool.name().to_owned(),
            snippet: tool.prompt_snippet().unwrap_or_else(|| tool.description()).to_owned(),
            guidelines: tool.prompt_guidelines().to_vec(),
        })
        .collect()
}

/// Everything the system prompt depends on except the tools, kept so the prompt can be rebuilt for a new
/// tool set.
#[derive(Debug, Clone, Default)]
pub struct SystemPromptBuilder {
    options: SystemPromptOptions,
}

impl SystemPromptBuilder {
    /// A builder from prompt options; their `tools` are replaced by whatever each build is given.
    pub fn new(options: SystemPromptOptions) -> Self {
        Self { options: SystemPromptOptions { tools: Vec::new(), ..options } }
    }

    /// The system prompt for these active tools.
    pub fn build(&self, tools: &[Arc<dyn AgentTool>]) -> String {
        build_system_prompt(&self.options_for(tools))
    }

    /// The system prompt for these active tools as pi 1.5's sections (whatever the options' `pi_compat`).
    pub fn build_sections(&self, tools: &[Arc<dyn AgentTool>]) -> SystemPromptSections {
        build_system_prompt_sections(&self.options_for(tools))
    }

    /// Which pi release's layout [`build`](Self::build) produces.
    pub fn pi_compat(&self) -> crate::protocol::PiCompat {
        self.options.pi_compat
    }

    fn options_for(&self, tools: &[Arc<dyn AgentTool>]) -> SystemPromptOptions {
        SystemPromptOptions { tools: prompt_tools(tools), ..self.options.clone() }
    }

    /// Makes `tools` the agent's active tools and gives it the matching system prompt.
    pub fn set_active_tools(&self, agent: &Agent, tools: Vec<Arc<dyn AgentTool>>) {
        agent.set_system_prompt(self.build(&tools));
        agent.set_tools(tools);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::agent::AgentOptions;
    use crate::ai::ProviderRegistry;
    use crate::tools::{ToolEnvironment, builtin_tool};

    fn tools(names: &[&str]) -> Vec<Arc<dyn AgentTool>> {
        let env = ToolEnvironment::new("/work");
        names.iter().map(|name| builtin_tool(name, &env).unwrap()).collect()
    }

    #[test]
    fn changing_the_tool_set_rebuilds_the_prompt() {
        let builder = SystemPromptBuilder::new(SystemPromptOptions {
            identity: "You help.".into(),
            date: Some("2026-01-02".into()),
            cwd: "/work".into(),
            ..SystemPromptOptions::default()
        });
        let agent = Agent::new(AgentOptions::new(Arc::new(ProviderRegistry::default())));
        builder.set_active_tools(&agent, tools(&["read", "bash"]));
        let first = agent.state().system_prompt;
        assert!(first.contains("- bash: ") && !first.contains("- grep: "), "{first}");
        assert_eq!(agent.state().tools.len(), 2);

        builder.set_active_tools(&agent, tools(&["read", "grep", "find", "ls"]));
        let second = agent.state().system_prompt;
        assert!(second.contains("- grep: ") && second.contains("- ls: ") && !second.contains("- bash: "), "{second}");
        assert_ne!(first, second);
        assert!(second.starts_with("You help.") && second.ends_with("Current working directory: /work"), "{second}");
        assert_eq!(
            agent.state().tools.iter().map(|tool| tool.name().to_owned()).collect::<Vec<_>>(),
            ["read", "grep", "find", "ls"]
        );
    }
}
