//! The agent spec: the serde model of YAML v1. The JSON Schema (`pi-gen schema`) is generated from
//! these types, so every doc comment here is also the hover text an editor shows.

mod commands;
mod compat;
mod context;
mod hooks;
mod mcp;
mod permissions;
mod providers;
mod subagents;
mod tools;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

pub use commands::{BUILTIN_COMMANDS, CommandArgumentSpec, CommandSpec, is_command_name};
pub use compat::PiCompatSpec;
pub use context::{BuiltinPanelSpec, CommandPanelSpec, ContextSpec, ContextStrategySpec, DetachSpec, PanelTextsSpec};
pub use hooks::{
    ExplicitPattern, HOOK_EVENTS, HookActionKind, HookSpec, InjectMessageFields, InjectMessageSpec, PatternSpec,
    TOOL_EVENTS,
};
pub use mcp::{
    DEFAULT_MCP_TIMEOUT_SECS, MCP_TOOL_PREFIX, McpServerSpec, McpSpec, is_mcp_server_name, mcp_tool_prefix_key,
};
pub use permissions::{PermissionActionSpec, PermissionRuleSpec, PermissionsSpec};
pub use providers::{CostSpec, ModelEntrySpec, ProviderApi, ProviderSpec, models_json};
pub use subagents::{DEFAULT_MAX_SUBAGENT_DEPTH, LoadedSubagent, SubagentSpec, is_tool_name};
pub use tools::{BUILTIN_TOOLS, BuiltinTool, CustomToolSpec, DEFAULT_TOOLS, ExecutionSpec, HandlerSpec, ToolsSpec};

/// An agent: everything `pi-gen build` needs to produce a standalone binary.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "pi-gen agent (YAML v1)")]
pub struct AgentSpec {
    /// Schema version; only 1 exists.
    pub version: u32,
    /// The binary's name: letters, digits, '-' and '_'.
    pub name: String,
    /// One line about what the agent is for (shown in --help and the generated README).
    #[serde(default)]
    pub description: Option<String>,
    /// Project config directory, e.g. `.coder` (holds SYSTEM.md, settings.json, skills/, prompts/). The global
    /// directory is `~/<config_dir>/agent`. Default: `.<name>`.
    #[serde(default)]
    pub config_dir: Option<String>,
    /// Prefix of the agent's environment variables: `<PREFIX>_DIR` overrides the global agent directory and
    /// `<PREFIX>_SESSION_DIR` the session directory (pi: `PI_CODING_AGENT`). Default: `<NAME>_AGENT`.
    #[serde(default)]
    pub env_prefix: Option<String>,
    /// The default model (flags and settings.json still choose another).
    #[serde(default)]
    pub model: Option<ModelSpec>,
    /// Providers beyond the built-in ones, in models.json's shape with snake_case keys. The user's
    /// models.json is applied over them.
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderSpec>,
    /// How the system prompt is made.
    #[serde(default)]
    pub system_prompt: Option<SystemPromptSpec>,
    /// Built-in tools, custom tools and how tool calls run.
    #[serde(default)]
    pub tools: Option<ToolsSpec>,
    /// Skills compiled into the binary (directories of SKILL.md files, as pi's skills/ folders).
    #[serde(default)]
    pub skills: Option<SkillsSpec>,
    /// Prompt templates compiled into the binary: directories of `*.md` files and inline templates.
    #[serde(default)]
    pub prompts: Option<PromptsSpec>,
    /// Context compaction defaults (settings.json's `compaction` overrides them field by field).
    #[serde(default)]
    pub compaction: Option<CompactionSpec>,
    /// Auto-retry defaults (settings.json's `retry` overrides them field by field).
    #[serde(default)]
    pub retry: Option<RetrySpec>,
    /// Session defaults.
    #[serde(default)]
    pub session: Option<SessionSpec>,
    /// How steering messages queued while the agent works are delivered (settings `steeringMode` wins).
    #[serde(default)]
    pub steering_mode: Option<QueueModeSpec>,
    /// How follow-up messages queued while the agent works are delivered (settings `followUpMode` wins).
    #[serde(default)]
    pub follow_up_mode: Option<QueueModeSpec>,
    /// Reactions to the agent's events, in order, each `on` one event with one action: `block` a tool call,
    /// `append_system_prompt` / `replace_system_prompt` / `inject_message` before a prompt runs, `transform`
    /// the input, or run a `command` on any event. They run after extensions given in Rust.
    #[serde(default)]
    pub hooks: Vec<HookSpec>,
    /// Slash commands: `/name args` expands a `prompt` (with `$1`, `$@`, ... as prompt templates do) or runs
    /// a shell `command` whose output is shown to the user or, with `send: true`, sent to the model.
    #[serde(default)]
    pub commands: Vec<CommandSpec>,
    /// How each request's context is built: pi's message pipeline (`strategy: messages`, the default) or
    /// Context Pilot's panels (`strategy: panels`), with the panels shown, files opened from the start,
    /// command panels, the detachment limits and the texts around the panels.
    #[serde(default)]
    pub context: Option<ContextSpec>,
    /// MCP (Model Context Protocol) servers whose tools the agent takes, as `mcp__<server>__<tool>`: each one
    /// a `command` started as a child process (stdio) or a `url` (streamable HTTP). The user's `mcp.json`
    /// files add servers at run time.
    #[serde(default)]
    pub mcp: Option<McpSpec>,
    /// The pi release whose json and RPC events, session entries, system prompt structure and requests the
    /// agent reproduces: `"0.73"` (pi 0.73.1, the default) or `"1.5"` (pi 1.5.x, the current pi).
    /// `--pi-compat` and the `piCompat` setting override it.
    #[serde(default)]
    pub pi_compat: Option<PiCompatSpec>,
    /// Which tool calls run at once, wait for the person's approval (`ask`), or never run (`deny`): rules
    /// with the hooks' matchers (a pattern on the tool's name, patterns on its arguments), the first match
    /// winning, and a default for the rest. settings.json's `permissions` rules come first.
    #[serde(default)]
    pub permissions: Option<PermissionsSpec>,
    /// The form of the final answer: JSON valid against `schema`. APIs with native structured output are
    /// asked for it; an answer that does not match is sent back once with the errors; print mode prints the
    /// JSON alone.
    #[serde(default)]
    pub output: Option<OutputSpec>,
    /// Other agents this one calls as tools: each entry's `name` becomes a tool taking `{ task: string }`
    /// that runs the agent of `path` (another agent YAML, compiled in) in-process with its own system prompt,
    /// tools, hooks and model, and answers with its final text. Its session is saved beside this agent's.
    #[serde(default)]
    pub subagents: Vec<SubagentSpec>,
    /// How deep sub-agents may nest below this agent (1: its sub-agents have none of their own). A deeper
    /// chain, or a cycle, is a build error. Default: 3.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub max_subagent_depth: Option<u32>,
    /// The sub-agents with their YAML files read (filled in when the file is loaded).
    #[serde(skip)]
    #[schemars(skip)]
    pub loaded_subagents: Vec<LoadedSubagent>,
}

/// `output:`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutputSpec {
    /// A JSON Schema (checked at build time), e.g. `{ type: object, properties: {...}, required: [...] }`.
    pub schema: serde_json::Value,
}

/// The default model.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    /// Provider name, e.g. `anthropic`, `openai`, or one declared under `providers`.
    #[serde(default)]
    pub provider: Option<String>,
    /// Model id, e.g. `claude-sonnet-4-5`.
    #[serde(default)]
    pub id: Option<String>,
    /// Default thinking level (clamped to what the model supports). Default: medium.
    #[serde(default)]
    pub thinking: Option<ThinkingSpec>,
    /// Sampling temperature sent with every request.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 2.0))]
    pub temperature: Option<f64>,
    /// Output token limit sent with every request.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub max_tokens: Option<u64>,
    /// Models the same request goes to, in order, when the model fails with an error that is not retried or
    /// its retries are used up: `provider/id` with an optional `:<thinking>` (`--fallback-model` adds more).
    #[serde(default)]
    pub fallbacks: Vec<String>,
}

/// `system_prompt.date_line`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DateLineSpec {
    /// `Current date: 2026-03-07` (pi).
    Date,
    /// `Current date and time: Saturday, March 7, 2026 at 08:55:05 AM CST` (the seeds).
    DateTime,
}

/// A thinking level, as pi's `--thinking` takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ThinkingSpec {
    Off,
    Minimal,
    Low,
    Medium,
    High,
    Xhigh,
    // pi 1.5's level above `xhigh` (only with `pi_compat: "1.5"`).
    Max,
}

/// pi's queue modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum QueueModeSpec {
    /// One queued message per turn (pi's default).
    OneAtATime,
    /// Everything queued, at once.
    All,
}

/// System prompt settings.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SystemPromptSpec {
    /// The first paragraph of the default prompt ("You are ..."). Not with `template`.
    #[serde(default)]
    pub identity: Option<String>,
    /// A file (relative to this YAML) holding the whole prompt instead of the default one, as a minijinja
    /// template rendered at build time with `name`, `description`, `tools` (names of the default tools),
    /// `custom_tools` (list of {name, description, prompt_snippet}), `guidelines` and `documentation`. Context files, skills, date and cwd are still appended, as pi does
    /// for SYSTEM.md.
    #[serde(default)]
    pub template: Option<String>,
    /// Text always appended to the system prompt (before APPEND_SYSTEM.md or --append-system-prompt).
    #[serde(default)]
    pub append: Option<String>,
    /// Guidelines added after the ones derived from the active tools.
    #[serde(default)]
    pub guidelines: Vec<String>,
    /// File names read as context files from the agent directory and from the cwd upwards.
    /// Default: [AGENTS.md, CLAUDE.md].
    #[serde(default)]
    pub context_files: Option<Vec<String>>,
    /// The date line before the working directory: `date` (pi's `Current date: 2026-03-07`, the default) or
    /// `date_time` (the seeds' `Current date and time: Saturday, March 7, 2026 at 08:55:05 AM CST`). pi 1.5's
    /// layout (`pi_compat: "1.5"`) has no date line.
    #[serde(default)]
    pub date_line: Option<DateLineSpec>,
    /// A documentation block after the guidelines, e.g. where the agent's own docs live.
    #[serde(default)]
    pub documentation: Option<String>,
}

/// `skills:`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillsSpec {
    /// Directories (relative to this YAML) scanned for skills with pi's rules, compiled into the binary.
    #[serde(default)]
    pub dirs: Vec<String>,
}

/// `prompts:`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PromptsSpec {
    /// Directories (relative to this YAML) of prompt templates (`*.md`), compiled into the binary.
    #[serde(default)]
    pub dirs: Vec<String>,
    /// Templates written here; `/name args` expands them.
    #[serde(default)]
    pub templates: Vec<InlineTemplateSpec>,
}

/// One inline prompt template.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InlineTemplateSpec {
    /// The command name: `/name`.
    pub name: String,
    /// Shown in listings.
    #[serde(default)]
    pub description: Option<String>,
    /// The template text; `$1`, `$@`, `$ARGUMENTS`, `${@:N}` and `${@:N:L}` take the arguments.
    pub content: String,
}

/// `compaction:`; absent fields keep pi's defaults.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompactionSpec {
    /// Compact automatically when the context nears the window. Default: true.
    #[serde(default)]
    pub enabled: Option<bool>,
    /// Tokens kept free for the answer. Default: 16384.
    #[serde(default)]
    pub reserve_tokens: Option<u64>,
    /// Recent tokens kept verbatim. Default: 20000.
    #[serde(default)]
    pub keep_recent_tokens: Option<u64>,
    /// `provider/id` of a model to write summaries with instead of the agent's own.
    #[serde(default)]
    pub model: Option<String>,
}

/// `retry:`; absent fields keep pi's defaults.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetrySpec {
    /// Retry transient provider errors. Default: true.
    #[serde(default)]
    pub enabled: Option<bool>,
    /// Default: 3.
    #[serde(default)]
    pub max_retries: Option<u32>,
    /// First delay; doubles each attempt. Default: 2000.
    #[serde(default)]
    pub base_delay_ms: Option<u64>,
    /// Longest delay, also the cap on a server's retry-after. Default: 60000.
    #[serde(default)]
    pub max_delay_ms: Option<u64>,
}

/// `session:`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionSpec {
    /// Save sessions by default. `false` acts as --no-session unless -c, -r or --session ask for one.
    #[serde(default)]
    pub enabled: Option<bool>,
    /// Default session directory (`~` expanded); --session-dir and `<PREFIX>_SESSION_DIR` win.
    #[serde(default)]
    pub dir: Option<String>,
}

/// Whether `name` can be an agent's binary name: letters, digits, '-' and '_', not starting with '-'.
pub fn is_binary_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('-')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The environment-variable prefix of an agent named `name` that sets none: `<NAME>_AGENT`, upper-cased,
/// with every other character as `_`.
pub fn default_env_prefix(name: &str) -> String {
    let stem: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }).collect();
    format!("{stem}_AGENT")
}

impl AgentSpec {
    /// The environment-variable prefix (`<NAME>_AGENT` unless set).
    pub fn env_prefix(&self) -> String {
        self.env_prefix.clone().unwrap_or_else(|| default_env_prefix(&self.name))
    }

    /// The environment variable naming the global agent directory.
    pub fn agent_dir_env(&self) -> String {
        format!("{}_DIR", self.env_prefix())
    }

    /// The project config directory name.
    pub fn config_dir(&self) -> String {
        self.config_dir.clone().unwrap_or_else(|| format!(".{}", self.name))
    }

    /// The custom tools, in YAML order.
    pub fn custom_tools(&self) -> &[CustomToolSpec] {
        self.tools.as_ref().map(|tools| tools.custom.as_slice()).unwrap_or_default()
    }
}
