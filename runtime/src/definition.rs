//! AgentDefinition: the plain-Rust value an agent YAML file becomes. Generated code builds one and
//! hands it to [`crate::cli::run`].

use std::borrow::Cow;

use crate::agent::QueueMode;
use crate::ai::ThinkingLevel;

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
    /// The pi release the agent reproduces unless `--pi-compat` or the `piCompat` setting says otherwise.
    pub pi_compat: crate::protocol::PiCompat,
    /// Default provider and model (used when no flag or setting names one).
    pub default_provider: Option<String>,
    pub default_model: Option<String>,
    /// Compaction defaults from the YAML (settings.json overrides them field by field).
    pub compaction: crate::compaction::CompactionSettings,
    /// `provider/id` of the model that writes compaction and branch summaries (the agent's model if `None`).
    pub summary_model: Option<String>,
    /// Auto-retry defaults from the YAML (settings.json overrides them field by field).
    pub retry: crate::agent_session::RetrySettings,
    /// Default thinking level (`None`: pi's medium); settings `defaultThinkingLevel` and `--thinking` win.
    pub thinking: Option<ThinkingLevel>,
    /// Sampling temperature sent with every request (`None`: the provider's default).
    pub temperature: Option<f64>,
    /// Output token limit sent with every request (`None`: the model's own limit).
    pub max_tokens: Option<u64>,
    /// Providers the agent declares, as models.json text. The user's models.json is applied over them
    /// (a provider defined in both takes the user's definition).
    pub models_json: Option<String>,
    /// Replaces the default system prompt, as SYSTEM.md does; SYSTEM.md and `--system-prompt` still win.
    pub system_prompt: Option<String>,
    /// Always appended to the system prompt, before APPEND_SYSTEM.md or `--append-system-prompt` text.
    pub append_system_prompt: Option<String>,
    /// File names looked up as context files in the agent directory and from the cwd upwards.
    pub context_file_names: Vec<String>,
    /// The system prompt's date line: pi's date (the default) or the seeds' date and time.
    pub date_line: crate::prompt::DateLine,
    /// Skills and prompt templates compiled into the binary.
    pub resources: EmbeddedResources,
    /// Tools declared in the YAML beyond the built-ins, always active.
    pub custom_tools: Vec<CustomToolDefinition>,
    /// Session defaults.
    pub session: SessionDefaults,
    /// The YAML's `hooks:`, in order (they run after extensions given in Rust).
    pub hooks: Vec<crate::extension::HookDefinition>,
    /// How queued steering messages are delivered (settings `steeringMode` wins).
    pub steering_mode: QueueMode,
    /// How queued follow-up messages are delivered (settings `followUpMode` wins).
    pub follow_up_mode: QueueMode,
    /// The YAML's `commands:`: slash commands of the agent's own, in YAML order.
    pub commands: Vec<CommandDefinition>,
    /// The YAML's `context:`: pi's message pipeline (default) or Context Pilot's panels.
    pub context: crate::panels::ContextDefinition,
    /// The YAML's `mcp:`: MCP servers whose tools the agent takes (the user's `mcp.json` files add to them).
    pub mcp: crate::mcp::McpDefinition,
    /// The YAML's `permissions:`: which tool calls run, wait for approval, or never run (settings.json's
    /// rules come before these).
    pub permissions: crate::permissions::PermissionsDefinition,
    /// The YAML's `model.fallbacks`: `provider/id[:thinking]` models the same request goes to, in order,
    /// when the model fails with an error that is not retried (or its retries are used up).
    pub fallback_models: Vec<String>,
    /// The YAML's `output.schema`, as JSON text (checked at build time): the final answer must be JSON valid
    /// against it.
    pub output_schema: Option<String>,
    /// The YAML's `subagents:`: other agents compiled in, each one a tool of this agent.
    pub subagents: Vec<SubagentDefinition>,
    /// How deep sub-agents may nest below this agent (checked at build time, and again at run time).
    pub max_subagent_depth: u32,
}

/// A sub-agent: a tool of the parent (`name`, taking `{ task }`) that runs `definition` in-process.
#[derive(Debug, Clone, PartialEq)]
pub struct SubagentDefinition {
    /// The tool's name.
    pub name: String,
    /// The tool's description (what the sub-agent is good for).
    pub description: String,
    /// The sub-agent itself: its own prompt, tools, hooks, resources, model and sub-agents.
    pub definition: Box<AgentDefinition>,
}

/// How deep sub-agents nest unless the YAML says otherwise.
pub const DEFAULT_MAX_SUBAGENT_DEPTH: u32 = 3;

/// A file compiled into the binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddedFile {
    /// Relative path with `/` separators, e.g. `skills/0/review/SKILL.md`.
    pub path: String,
    pub contents: Cow<'static, [u8]>,
    /// Unpacked with the executable bit (the source file had it: hook and skill scripts).
    pub executable: bool,
}

/// Skills and prompt templates the YAML references, compiled in. At run time the files are unpacked
/// once into `<agent dir>/embedded/<name>-<hash>/` so skills can point the model at real paths.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EmbeddedResources {
    /// Hash of every path and content; names the unpack directory, so a new build never reuses old files.
    pub hash: String,
    pub files: Vec<EmbeddedFile>,
    /// Relative directories (among `files`) scanned for skills, in YAML order, after the user's own.
    pub skill_dirs: Vec<String>,
    /// Relative directories (among `files`) holding prompt templates (`*.md`), after the user's own.
    pub prompt_dirs: Vec<String>,
    /// For messages: each compiled-in directory (`skills/0`) and the path its author wrote in the YAML
    /// (`skills`), so a warning names `skills/review/SKILL.md`, not the unpacked copy.
    pub source_dirs: Vec<(String, String)>,
}

impl EmbeddedResources {
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

/// A tool the YAML declares (`tools.custom`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomToolDefinition {
    pub name: String,
    /// A human-readable name for UIs (defaults to the name).
    pub label: String,
    pub description: String,
    /// The line in the system prompt's tool list (falls back to the description).
    pub prompt_snippet: Option<String>,
    /// Guidelines added to the system prompt while the tool is active.
    pub prompt_guidelines: Vec<String>,
    /// JSON Schema of the arguments, as JSON text (checked at build time).
    pub parameters: String,
    pub handler: CustomToolHandler,
}

/// How a custom tool runs.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CustomToolHandler {
    /// A minijinja command template run by the bash tool's executor. Every substituted value is
    /// shell-quoted unless the template marks it `| safe`; the arguments also arrive as JSON on stdin
    /// and as `TOOL_ARG_<NAME>` environment variables.
    Command {
        template: String,
        /// Seconds before the command is killed (`None`: no limit, like bash).
        timeout_secs: Option<u64>,
    },
    /// Implemented in Rust by the user of `#[agent]`; the implementation is handed to
    /// [`crate::cli::run_with_tools`].
    Rust,
}

/// A slash command the YAML declares (`commands:`): `/name args` expands a prompt or runs a shell command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandDefinition {
    /// What follows the `/` (`[a-z0-9][a-z0-9-_:]*`, checked at build time).
    pub name: String,
    pub description: String,
    /// The positional arguments, in order (for the hint and the check of required ones).
    pub arguments: Vec<CommandArgument>,
    pub action: CommandAction,
}

impl CommandDefinition {
    /// The arguments as a hint: `<file> [focus]` (required ones in angle brackets); empty without arguments.
    pub fn argument_hint(&self) -> String {
        let words: Vec<String> = self
            .arguments
            .iter()
            .map(
                |argument| {
                    if argument.required { format!("<{}>", argument.name) } else { format!("[{}]", argument.name) }
                },
            )
            .collect();
        words.join(" ")
    }
}

/// One positional argument of a [`CommandDefinition`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandArgument {
    pub name: String,
    pub description: Option<String>,
    /// The command refuses to run without it.
    pub required: bool,
}

/// What a [`CommandDefinition`] does.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CommandAction {
    /// The user's prompt becomes `template` with pi's placeholders (`$1`, `$@`, `$ARGUMENTS`, `${@:N}`,
    /// `${@:N:L}`) taking the arguments, as a prompt template's do.
    Prompt { template: String },
    /// `command` runs with the agent's shell in its working directory (like the bash tool), the arguments
    /// as its positional parameters; its output becomes the prompt (`send`) or is shown to the user only.
    Shell {
        command: String,
        send: bool,
        /// Seconds before the command is killed (`None`: no limit).
        timeout_secs: Option<u64>,
    },
}

/// Session defaults from the YAML.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionDefaults {
    /// `false`: sessions are not saved unless asked for (as if `--no-session` were given).
    pub enabled: bool,
    /// Default session directory (`~` expanded); `--session-dir` and the environment variable win.
    pub dir: Option<String>,
}

impl Default for SessionDefaults {
    fn default() -> Self {
        Self { enabled: true, dir: None }
    }
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
            pi_compat: crate::protocol::PiCompat::default(),
            default_provider: None,
            default_model: None,
            compaction: crate::compaction::CompactionSettings::default(),
            summary_model: None,
            retry: crate::agent_session::RetrySettings::default(),
            thinking: None,
            temperature: None,
            max_tokens: None,
            models_json: None,
            system_prompt: None,
            append_system_prompt: None,
            context_file_names: crate::prompt::CONTEXT_FILE_NAMES.iter().map(|name| (*name).to_owned()).collect(),
            date_line: crate::prompt::DateLine::default(),
            resources: EmbeddedResources::default(),
            custom_tools: Vec::new(),
            session: SessionDefaults::default(),
            hooks: Vec::new(),
            steering_mode: QueueMode::default(),
            follow_up_mode: QueueMode::default(),
            commands: Vec::new(),
            context: crate::panels::ContextDefinition::default(),
            mcp: crate::mcp::McpDefinition::default(),
            permissions: crate::permissions::PermissionsDefinition::default(),
            fallback_models: Vec::new(),
            output_schema: None,
            subagents: Vec::new(),
            max_subagent_depth: DEFAULT_MAX_SUBAGENT_DEPTH,
        }
    }
}
