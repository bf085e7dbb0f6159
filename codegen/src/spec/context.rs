//! `context:` in the agent YAML: how each request's context is built. `messages` is pi's pipeline (the
//! default); `panels` is Context Pilot's (built-in and file panels, detached history, command panels).

use schemars::JsonSchema;
use serde::Deserialize;

/// `context:`. Every key but `strategy` applies only with `strategy: panels`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextSpec {
    /// How each request's context is built: `messages` (pi's pipeline) or `panels` (Context Pilot's).
    /// Default: messages.
    #[serde(default)]
    pub strategy: Option<ContextStrategySpec>,
    /// The built-in panels shown, in any order. Default: all of them.
    #[serde(default)]
    pub panels: Option<Vec<BuiltinPanelSpec>>,
    /// Files open as panels from the start, relative to the agent's working directory at run time.
    #[serde(default)]
    pub files: Option<Vec<String>>,
    /// When old conversation moves into a frozen history panel: all four limits must hold.
    #[serde(default)]
    pub detach: Option<DetachSpec>,
    /// Panels whose content is a shell command's output, re-run when older than `refresh_secs`.
    #[serde(default)]
    pub command_panels: Option<Vec<CommandPanelSpec>>,
    /// How many times in a row the Spine may wake the agent for notifications without a user message
    /// (0: never). Default: 3.
    #[serde(default)]
    pub max_auto_continuations: Option<u32>,
    /// Seconds between refreshes of git status and of `git`/`gh` result panels. Default: 120.
    #[serde(default)]
    pub git_refresh_secs: Option<u64>,
    /// Repeat the system prompt after the panels. Default: as Context Pilot does, only for the
    /// anthropic-messages API.
    #[serde(default)]
    pub reinject_system_prompt: Option<bool>,
    /// The texts written around the panels; each one left out keeps Context Pilot's.
    #[serde(default)]
    pub texts: Option<PanelTextsSpec>,
}

/// A context strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ContextStrategySpec {
    /// pi's pipeline: the session's messages as they are.
    Messages,
    /// Context Pilot's pipeline: panels, a footer, the system prompt repeated, old conversation detached.
    Panels,
}

/// A built-in panel (`pi_runtime::panels::BuiltinPanel`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BuiltinPanelSpec {
    /// P1, "Todo List".
    Todo,
    /// P2, "Library".
    Library,
    /// P3, "Statistics".
    Statistics,
    /// P4, "Tools".
    Tools,
    /// P5, "Directory Tree".
    Tree,
    /// P6, "Memories".
    Memories,
    /// P7, "Spine": notifications, which may wake the agent (see `max_auto_continuations`).
    Spine,
    /// P8, "Logs".
    Logs,
    /// P9, "Scratchpad".
    Scratchpad,
    /// P10, "Git Status": `git status` of the working directory, refreshed every `git_refresh_secs` (not
    /// shown outside a repository).
    Git,
}

impl BuiltinPanelSpec {
    /// Every built-in panel, in id order.
    pub const ALL: [Self; 10] = [
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

    /// The YAML name, which is also the runtime's `BuiltinPanel::name()`.
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

    /// The runtime's variant name: `Todo`, `Library`, ...
    pub fn variant(self) -> &'static str {
        match self {
            Self::Todo => "Todo",
            Self::Library => "Library",
            Self::Statistics => "Statistics",
            Self::Tools => "Tools",
            Self::Tree => "Tree",
            Self::Memories => "Memories",
            Self::Spine => "Spine",
            Self::Logs => "Logs",
            Self::Scratchpad => "Scratchpad",
            Self::Git => "Git",
        }
    }
}

/// `context.detach`: Context Pilot's four limits; each one left out keeps its default.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DetachSpec {
    /// The fewest messages a detached chunk holds (at least 1). Default: 25.
    #[serde(default)]
    pub chunk_min_messages: Option<usize>,
    /// The fewest tokens a detached chunk holds. Default: 5000.
    #[serde(default)]
    pub chunk_min_tokens: Option<u64>,
    /// The fewest messages that stay in the live conversation. Default: 25.
    #[serde(default)]
    pub keep_min_messages: Option<usize>,
    /// The fewest tokens that stay in the live conversation. Default: 7500.
    #[serde(default)]
    pub keep_min_tokens: Option<u64>,
}

/// One command panel: a heading and a shell command whose output is the panel's content.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CommandPanelSpec {
    /// The panel's heading, unique among the command panels.
    pub name: String,
    /// Run with the agent's shell in its working directory.
    pub command: String,
    /// Seconds before the output is old enough to run the command again (at least 1). Default: 60.
    #[serde(default)]
    pub refresh_secs: Option<u64>,
    /// Seconds a run may take before it is stopped; the output so far is kept, with a note (at least 1).
    /// Default: 10.
    #[serde(default)]
    pub timeout: Option<u64>,
}

/// `context.texts`: the texts the panels pipeline writes around the panels.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PanelTextsSpec {
    /// Before the first panel.
    #[serde(default)]
    pub header: Option<String>,
    /// Under each panel's heading; must contain `{iso_time}`, which becomes the panel's last refresh.
    #[serde(default)]
    pub timestamp: Option<String>,
    /// Opens the footer; the recent messages' times and the current date and time follow it.
    #[serde(default)]
    pub footer: Option<String>,
    /// The footer's tool result.
    #[serde(default)]
    pub footer_ack: Option<String>,
    /// Before the repeated system prompt.
    #[serde(default)]
    pub reinjection: Option<String>,
    /// The assistant's answer to the repeated system prompt.
    #[serde(default)]
    pub reinjection_ack: Option<String>,
}

impl ContextSpec {
    /// Whether `strategy: panels` is set.
    pub fn uses_panels(&self) -> bool {
        self.strategy == Some(ContextStrategySpec::Panels)
    }

    /// The keys given besides `strategy`, in declaration order.
    pub fn panel_options(&self) -> Vec<&'static str> {
        [
            ("panels", self.panels.is_some()),
            ("files", self.files.is_some()),
            ("detach", self.detach.is_some()),
            ("command_panels", self.command_panels.is_some()),
            ("max_auto_continuations", self.max_auto_continuations.is_some()),
            ("git_refresh_secs", self.git_refresh_secs.is_some()),
            ("reinject_system_prompt", self.reinject_system_prompt.is_some()),
            ("texts", self.texts.is_some()),
        ]
        .into_iter()
        .filter_map(|(key, given)| given.then_some(key))
        .collect()
    }
}

impl PanelTextsSpec {
    /// The texts given, as (field name, text), in declaration order.
    pub fn given(&self) -> Vec<(&'static str, &str)> {
        [
            ("header", &self.header),
            ("timestamp", &self.timestamp),
            ("footer", &self.footer),
            ("footer_ack", &self.footer_ack),
            ("reinjection", &self.reinjection),
            ("reinjection_ack", &self.reinjection_ack),
        ]
        .into_iter()
        .filter_map(|(key, text)| text.as_deref().map(|text| (key, text)))
        .collect()
    }
}
