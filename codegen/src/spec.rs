//! The agent spec: the serde model of an agent YAML file (the subset the walking skeleton needs;
//! the full v1 schema grows here).

use serde::Deserialize;

/// Built-in tools the runtime provides, in pi's order.
pub const BUILTIN_TOOLS: [&str; 7] = ["read", "bash", "edit", "write", "grep", "find", "ls"];

/// The built-in tools an agent gets when its YAML names none (pi's defaults; grep, find and ls are opt-in).
pub const DEFAULT_TOOLS: [&str; 4] = ["read", "bash", "edit", "write"];

/// One agent YAML file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentSpec {
    /// Schema version; only 1 exists.
    pub version: u32,
    /// The binary's name.
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// Project config directory (`.pi`); the global one is `~/<config_dir>/agent`.
    #[serde(default)]
    pub config_dir: Option<String>,
    /// Environment variable overriding the global agent directory (default `<NAME>_AGENT_DIR`).
    #[serde(default)]
    pub agent_dir_env: Option<String>,
    #[serde(default)]
    pub model: Option<ModelSpec>,
    #[serde(default)]
    pub system_prompt: Option<SystemPromptSpec>,
    #[serde(default)]
    pub tools: Option<ToolsSpec>,
    /// Context compaction defaults (settings.json's `compaction` overrides them field by field).
    #[serde(default)]
    pub compaction: Option<CompactionSpec>,
    /// Auto-retry defaults (settings.json's `retry` overrides them field by field).
    #[serde(default)]
    pub retry: Option<RetrySpec>,
}

/// `compaction:` in the YAML; absent fields keep pi's defaults.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompactionSpec {
    #[serde(default)]
    pub enabled: Option<bool>,
    #[serde(default)]
    pub reserve_tokens: Option<u64>,
    #[serde(default)]
    pub keep_recent_tokens: Option<u64>,
    /// `provider/id` of a model to write summaries with instead of the agent's own.
    #[serde(default)]
    pub model: Option<String>,
}

/// `retry:` in the YAML; absent fields keep pi's defaults.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetrySpec {
    #[serde(default)]
    pub enabled: Option<bool>,
    #[serde(default)]
    pub max_retries: Option<u32>,
    #[serde(default)]
    pub base_delay_ms: Option<u64>,
    #[serde(default)]
    pub max_delay_ms: Option<u64>,
}

/// The default model.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    #[serde(default)]
    pub provider: Option<String>,
    #[serde(default)]
    pub id: Option<String>,
}

/// System prompt settings.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SystemPromptSpec {
    /// The first paragraph of the default prompt.
    #[serde(default)]
    pub identity: Option<String>,
    /// Guidelines added after the ones derived from the active tools.
    #[serde(default)]
    pub guidelines: Vec<String>,
    /// A documentation block after the guidelines, e.g. where the agent's own docs live.
    #[serde(default)]
    pub documentation: Option<String>,
}

/// Which tools the agent has and how they run.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolsSpec {
    #[serde(default)]
    pub builtin: Option<Vec<String>>,
    #[serde(default)]
    pub execution: Option<ExecutionSpec>,
}

/// Tool execution mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExecutionSpec {
    Sequential,
    Parallel,
}

impl AgentSpec {
    /// The environment variable naming the global agent directory.
    pub fn agent_dir_env(&self) -> String {
        self.agent_dir_env.clone().unwrap_or_else(|| {
            let stem: String = self
                .name
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' })
                .collect();
            format!("{stem}_AGENT_DIR")
        })
    }

    /// The project config directory name.
    pub fn config_dir(&self) -> String {
        self.config_dir.clone().unwrap_or_else(|| format!(".{}", self.name))
    }
}
