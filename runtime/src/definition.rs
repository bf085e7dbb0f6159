//! AgentDefinition: the plain-Rust value an agent YAML file becomes. Generated code builds one and
//! hands it to [`crate::cli::run`].

/// How tool calls of one assistant message are run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolExecutionMode {
    /// One after another, polling for steering after each (the seed's behaviour).
    Sequential,
    /// Sequential preflight, concurrent execution, results in call order (pi 0.58+ default).
    #[default]
    Parallel,
}

/// Everything a generated binary knows about its agent.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentDefinition {
    /// The binary's name (`pi`).
    pub name: String,
    pub version: String,
    pub description: String,
    /// Project config directory name, e.g. `.pi` (holds SYSTEM.md, settings.json, ...).
    pub config_dir: String,
    /// Environment variable that overrides the global agent directory, e.g. `PI_CODING_AGENT_DIR`.
    pub agent_dir_env: String,
    /// First line of the default system prompt.
    pub identity: String,
    /// Guidelines added after the tool-derived ones in the default system prompt.
    pub guidelines: Vec<String>,
    /// A documentation block placed after the guidelines (pointers to the agent's own docs).
    pub documentation: Option<String>,
    /// Built-in tools active by default, in order.
    pub tools: Vec<String>,
    pub tool_execution: ToolExecutionMode,
    /// Default provider and model (used when no flag or setting names one).
    pub default_provider: Option<String>,
    pub default_model: Option<String>,
    /// Compaction defaults from the YAML (settings.json overrides them field by field).
    pub compaction: crate::compaction::CompactionSettings,
    /// `provider/id` of the model that writes compaction and branch summaries (the agent's model if `None`).
    pub summary_model: Option<String>,
    /// Auto-retry defaults from the YAML (settings.json overrides them field by field).
    pub retry: crate::agent_session::RetrySettings,
}

impl Default for AgentDefinition {
    fn default() -> Self {
        Self {
            name: "pi".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            description: "A coding agent".to_owned(),
            config_dir: ".pi".to_owned(),
            agent_dir_env: "PI_CODING_AGENT_DIR".to_owned(),
            identity: crate::prompt::DEFAULT_IDENTITY.to_owned(),
            guidelines: Vec::new(),
            documentation: None,
            tools: crate::tools::DEFAULT_TOOL_NAMES.iter().map(|s| (*s).to_owned()).collect(),
            tool_execution: ToolExecutionMode::default(),
            default_provider: None,
            default_model: None,
            compaction: crate::compaction::CompactionSettings::default(),
            summary_model: None,
            retry: crate::agent_session::RetrySettings::default(),
        }
    }
}
