//! The agent's context strategy as its YAML `context:` section gives it: pi's message pipeline (the default)
//! or Context Pilot's panels, with the panels an agent starts with, the detachment limits, command panels,
//! the Spine's auto-continuation limit and the prompt texts.

use super::{DetachLimits, PanelTexts};

/// How each request's context is built.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContextStrategy {
    /// pi's pipeline: the session's messages through `convertToLlm`.
    #[default]
    Messages,
    /// Context Pilot's pipeline (seed 003): panels, footer, repeated system prompt, detached history.
    Panels,
}

/// The YAML's `context:`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContextDefinition {
    pub strategy: ContextStrategy,
    /// Only read with [`ContextStrategy::Panels`].
    pub panels: PanelsDefinition,
}

impl ContextDefinition {
    /// Whether the panels strategy is on.
    pub fn uses_panels(&self) -> bool {
        self.strategy == ContextStrategy::Panels
    }
}

/// A panel with a fixed id that the runtime keeps itself (seed 003's P1 to P9, and git status).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum BuiltinPanel {
    Todo,
    Library,
    Statistics,
    Tools,
    Tree,
    Memories,
    Spine,
    Logs,
    Scratchpad,
    /// `git status` of the working directory, refreshed every `git_refresh_secs` (not shown outside a
    /// repository).
    Git,
}

impl BuiltinPanel {
    /// Every built-in panel, in id order (the default set).
    pub const ALL: [BuiltinPanel; 10] = [
        Self::Todo,
        Self::Library,
        Self::Statistics,
        Self::Tools,
        Self::Tree,
        Self::Memories,
        Self::Spine,
        Self::Logs,
        Self::Scratchpad,
        Self::Git,
    ];

    /// The YAML name: `todo`, `library`, ...
    pub fn name(self) -> &'static str {
        match self {
            Self::Todo => "todo",
            Self::Library => "library",
            Self::Statistics => "statistics",
            Self::Tools => "tools",
            Self::Tree => "tree",
            Self::Memories => "memories",
            Self::Spine => "spine",
            Self::Logs => "logs",
            Self::Scratchpad => "scratchpad",
            Self::Git => "git",
        }
    }

    /// The panel named `name` in YAML.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|panel| panel.name() == name)
    }

    /// The fixed id (seed 003): `P1` to `P9`; git status is `P10`.
    pub fn id(self) -> &'static str {
        match self {
            Self::Todo => "P1",
            Self::Library => "P2",
            Self::Statistics => "P3",
            Self::Tools => "P4",
            Self::Tree => "P5",
            Self::Memories => "P6",
            Self::Spine => "P7",
            Self::Logs => "P8",
            Self::Scratchpad => "P9",
            Self::Git => "P10",
        }
    }

    /// The panel's heading.
    pub fn header(self) -> &'static str {
        match self {
            Self::Todo => "Todo List",
            Self::Library => "Library",
            Self::Statistics => "Statistics",
            Self::Tools => "Tools",
            Self::Tree => "Directory Tree",
            Self::Memories => "Memories",
            Self::Spine => "Spine",
            Self::Logs => "Logs",
            Self::Scratchpad => "Scratchpad",
            Self::Git => "Git Status",
        }
    }
}

/// The first id given to panels opened at run time (files, command results, consoles, history chunks).
pub const FIRST_DYNAMIC_PANEL: u32 = 11;

/// A panel whose content is a shell command's output (a pi-gen addition), re-run when older than
/// `refresh_secs`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandPanelDefinition {
    /// The panel's heading.
    pub name: String,
    /// Run with the agent's shell in its working directory.
    pub command: String,
    pub refresh_secs: u64,
    /// Seconds before a run is stopped (its output so far is kept, with a note).
    pub timeout_secs: u64,
}

/// Default seconds between refreshes of a command panel.
pub const DEFAULT_COMMAND_REFRESH_SECS: u64 = 60;
/// Default seconds a command panel's command may run.
pub const DEFAULT_COMMAND_TIMEOUT_SECS: u64 = 10;
/// Context Pilot's refresh interval for git and GitHub results.
pub const DEFAULT_GIT_REFRESH_SECS: u64 = 120;
/// Default limit on Spine wake-ups in a row without a user message.
pub const DEFAULT_MAX_AUTO_CONTINUATIONS: u32 = 3;

/// The YAML's `context.panels` (and its siblings under `context:`).
#[derive(Debug, Clone, PartialEq)]
pub struct PanelsDefinition {
    /// The built-in panels shown, in any order (default: all of them).
    pub builtin: Vec<BuiltinPanel>,
    /// Files (relative to the working directory) open as panels from the start.
    pub files: Vec<String>,
    pub detach: DetachLimits,
    pub command_panels: Vec<CommandPanelDefinition>,
    pub texts: PanelTexts,
    /// How many times in a row the Spine may wake the agent for notifications without a user message
    /// (0: never).
    pub max_auto_continuations: u32,
    /// Seconds between refreshes of git status and of `git`/`gh` result panels.
    pub git_refresh_secs: u64,
    /// Repeat the system prompt after the panels: `None` does as Context Pilot (for anthropic-messages only).
    pub reinject_system_prompt: Option<bool>,
}

impl Default for PanelsDefinition {
    fn default() -> Self {
        Self {
            builtin: BuiltinPanel::ALL.to_vec(),
            files: Vec::new(),
            detach: DetachLimits::default(),
            command_panels: Vec::new(),
            texts: PanelTexts::default(),
            max_auto_continuations: DEFAULT_MAX_AUTO_CONTINUATIONS,
            git_refresh_secs: DEFAULT_GIT_REFRESH_SECS,
            reinject_system_prompt: None,
        }
    }
}
