//! Sub-agents (the YAML's `subagents:`): each one a tool of its parent that runs another compiled-in agent
//! in-process on a task, with its own system prompt, tools, hooks and session file, and answers with the
//! sub-agent's final text.
//!
//! Session files: a sub-agent run of a parent whose session is `<dir>/<stem>.jsonl` is saved as
//! `<dir>/<stem>/<timestamp>_<id>.jsonl` (a folder beside the parent's file, which session listings do not
//! look into); a parent in memory runs its sub-agents in memory too.

mod resume;
mod run;
mod tool;

use std::path::Path;
use std::sync::{Arc, OnceLock, Weak};

use super::args::CliArgs;
use crate::AgentDefinition;
use crate::agent::{Agent, WeakAgent};
use crate::extension::ExtensionRunner;
use crate::tools::AgentTool;

pub use resume::definition_for_session;
pub use run::{SUBAGENT_RUN_ENTRY, SUBAGENT_SESSION_ENTRY, subagent_session_dir};

/// Where an agent sits in a tree of sub-agents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubagentScope {
    /// 0 for the agent the command line runs; its sub-agents are at 1.
    pub depth: u32,
    /// The top-level agent's `max_subagent_depth`.
    pub max_depth: u32,
    /// The tool names from the top-level agent down to this one (empty at the top).
    pub chain: Vec<String>,
}

impl SubagentScope {
    /// The scope of the agent the command line runs.
    pub fn top_level(definition: &AgentDefinition) -> Self {
        Self { depth: 0, max_depth: definition.max_subagent_depth, chain: Vec::new() }
    }

    /// The scope of this agent's sub-agent `name`.
    fn child(&self, name: &str) -> Self {
        let mut chain = self.chain.clone();
        chain.push(name.to_owned());
        Self { depth: self.depth + 1, max_depth: self.max_depth, chain }
    }
}

/// The parent agent and its extensions, once they exist: the tools are built before the agent that holds
/// them, and they must not keep it alive.
#[derive(Clone, Default)]
pub struct ParentLink {
    slot: Arc<OnceLock<(WeakAgent, Weak<ExtensionRunner>)>>,
}

impl ParentLink {
    /// Connects the tools to the agent they belong to (once).
    pub fn attach(&self, agent: &Agent, runner: &Arc<ExtensionRunner>) {
        let _ = self.slot.set((agent.downgrade(), Arc::downgrade(runner)));
    }

    fn get(&self) -> Option<(Agent, Arc<ExtensionRunner>)> {
        let (agent, runner) = self.slot.get()?;
        Some((agent.upgrade()?, runner.upgrade()?))
    }
}

/// What a sub-agent tool needs of its parent's run besides the parent itself.
#[derive(Clone)]
struct ParentRun {
    link: ParentLink,
    cwd: std::path::PathBuf,
    agent_dir: std::path::PathBuf,
    /// The flags the sub-agent keeps: the parent's pi release, the project-trust decision, `--no-context-files`,
    /// for its permissions `--approve-all` and the mode (RPC clients confirm), and `--record` (its model's
    /// responses join the parent's recording, in the order they are asked for).
    args: CliArgs,
}

/// `child` as it runs under `parent`: in the parent's agent and config directories (auth.json, models.json,
/// settings, sessions), and with the parent's providers when it declares none of its own.
pub(super) fn under_parent(parent: &AgentDefinition, child: &AgentDefinition) -> AgentDefinition {
    let mut child = child.clone();
    child.config_dir = parent.config_dir.clone();
    child.agent_dir_env = parent.agent_dir_env.clone();
    child.session = parent.session.clone();
    if child.models_json.is_none() {
        child.models_json = parent.models_json.clone();
    }
    child
}

/// The tools of `definition`'s sub-agents (none once the depth limit is reached).
pub(super) fn subagent_tools(
    definition: &AgentDefinition,
    args: &CliArgs,
    pi_compat: crate::protocol::PiCompat,
    scope: &SubagentScope,
    link: &ParentLink,
    cwd: &Path,
    agent_dir: &Path,
) -> Vec<Arc<dyn AgentTool>> {
    if definition.subagents.is_empty() {
        return Vec::new();
    }
    // Sub-agents speak the parent's pi release, whatever their own YAML says.
    let kept = CliArgs {
        pi_compat: Some(pi_compat),
        project_trusted: args.project_trusted,
        no_context_files: args.no_context_files,
        approve_all: args.approve_all,
        mode: args.mode,
        record: args.record.clone(),
        ..CliArgs::default()
    };
    let parent =
        ParentRun { link: link.clone(), cwd: cwd.to_path_buf(), agent_dir: agent_dir.to_path_buf(), args: kept };
    definition
        .subagents
        .iter()
        .map(|subagent| {
            let runs = under_parent(definition, &subagent.definition);
            Arc::new(tool::SubagentTool::new(subagent, runs, parent.clone(), scope.child(&subagent.name))) as _
        })
        .collect()
}
