//! Settings commands on a session that runs on Temporal: the model, the thinking level, the session's name
//! and a compaction. Each arrives as the workflow's `command` update, waits until no step is under way, and
//! runs as one activity that opens the session, carries the command out as RPC mode would (pi-runtime's
//! [`run_step_command`]), and appends what it wrote. A model or thinking change also changes the flags of
//! the session's later steps, which the workflow keeps (and carries across continue-as-new).

use pi_runtime::cli::rpc::{RpcCommand, model_json};
use pi_runtime::cli::{run_step_command, step_models};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use pi_runtime::session::session_text;

use super::activities::StepTarget;
use super::step_host::{OpenStep, StepError, StepHost};
use crate::store::{SessionLines, SessionStore};

/// A settings command, as the API tier sends it to the workflow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum SessionCommand {
    SetModel {
        provider: String,
        model_id: String,
    },
    CycleModel,
    SetThinkingLevel {
        level: String,
    },
    CycleThinkingLevel,
    SetSessionName {
        name: String,
    },
    Compact {
        custom_instructions: Option<String>,
    },
    /// Continues as a new session cut before user message `entry_id` (stored under a new id).
    Fork {
        entry_id: String,
    },
    /// Continues as a new session holding the whole branch.
    Clone,
}

impl SessionCommand {
    /// The settings command among `command`, if it is one.
    pub fn from_rpc(command: &RpcCommand) -> Option<Self> {
        Some(match command {
            RpcCommand::SetModel { provider, model_id } => {
                Self::SetModel { provider: provider.clone(), model_id: model_id.clone() }
            }
            RpcCommand::CycleModel => Self::CycleModel,
            RpcCommand::SetThinkingLevel { level } => Self::SetThinkingLevel { level: level.clone() },
            RpcCommand::CycleThinkingLevel => Self::CycleThinkingLevel,
            RpcCommand::SetSessionName { name } => Self::SetSessionName { name: name.clone() },
            RpcCommand::Compact { custom_instructions } => {
                Self::Compact { custom_instructions: custom_instructions.clone() }
            }
            RpcCommand::Fork { entry_id } => Self::Fork { entry_id: entry_id.clone() },
            RpcCommand::Clone => Self::Clone,
            _ => return None,
        })
    }

    fn into_rpc(self) -> RpcCommand {
        match self {
            Self::SetModel { provider, model_id } => RpcCommand::SetModel { provider, model_id },
            Self::CycleModel => RpcCommand::CycleModel,
            Self::SetThinkingLevel { level } => RpcCommand::SetThinkingLevel { level },
            Self::CycleThinkingLevel => RpcCommand::CycleThinkingLevel,
            Self::SetSessionName { name } => RpcCommand::SetSessionName { name },
            Self::Compact { custom_instructions } => RpcCommand::Compact { custom_instructions },
            Self::Fork { entry_id } => RpcCommand::Fork { entry_id },
            Self::Clone => RpcCommand::Clone,
        }
    }

    /// Whether what runs must stop first (as pi's compaction, fork and clone abort the run).
    pub fn stops_the_run(&self) -> bool {
        matches!(self, Self::Compact { .. } | Self::Fork { .. } | Self::Clone)
    }

    /// Whether the command may change the model or the thinking level (and so the later steps' flags).
    fn changes_the_model(&self) -> bool {
        matches!(
            self,
            Self::SetModel { .. } | Self::CycleModel | Self::SetThinkingLevel { .. } | Self::CycleThinkingLevel
        )
    }
}

/// The command activity's input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandStep {
    pub target: StepTarget,
    pub command: SessionCommand,
}

/// What a command did: its reply's data or its error, and what the session's later steps run with.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandDone {
    /// The reply's data (`null` when the command has none).
    #[serde(default)]
    pub data: Value,
    /// Why the command failed (pi's reply error); `None` when it succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The flags of the session's later steps, when the command changed them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argv: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<ModelSettings>,
    /// The new session a fork or a clone made (stored already).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked: Option<String>,
}

impl CommandDone {
    pub fn failed(error: impl std::fmt::Display) -> Self {
        Self { error: Some(error.to_string()), ..Self::default() }
    }
}

/// The model (as pi prints it) and the thinking level a session is at, for its state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelSettings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<Value>,
    pub thinking_level: String,
}

impl ModelSettings {
    /// The settings an opened session is at.
    pub fn of(open: &OpenStep) -> Self {
        let agent = open.session.agent();
        Self { model: agent.model().as_ref().map(model_json), thinking_level: agent.thinking_level().as_str().into() }
    }
}

/// Carries `step`'s command out on the opened session. The worker's settings file is left alone: a choice
/// made for one session is not every session's default here.
pub async fn run_command(host: &StepHost, open: &OpenStep, step: CommandStep) -> Result<CommandDone, StepError> {
    let session = &open.session;
    session.set_preference_store(None);
    let cwd = std::path::PathBuf::from(&open.stored.header.cwd);
    let models = step_models(&host.definition, step.target.argv.clone(), &cwd, session)
        .map_err(|error| StepError::Open { session: step.target.session_id.clone(), message: error.to_string() })?;
    let changes_the_model = step.command.changes_the_model();
    let emit = open.session_events();
    let done = match run_step_command(session, &models, step.command.into_rpc(), emit).await {
        Ok(data) => CommandDone { data, ..CommandDone::default() },
        Err(error) => return Ok(CommandDone::failed(error)),
    };
    let forked = store_fork(host, open, &step.target.session_id).await?;
    let settings = ModelSettings::of(open);
    let argv = changes_the_model.then(|| {
        let model = session.agent().model().map(|model| (model.provider, model.id));
        pinned_argv(&step.target.argv, model, &settings.thinking_level)
    });
    Ok(CommandDone { argv, settings: Some(settings), forked, ..done })
}

/// After a fork or a clone the opened session is a new one, written beside the working copy: it is stored
/// under its id (its header naming the parent session's id, as there is no parent file) and its file
/// removed. Returns the new id; `None` when the session is still `parent`.
async fn store_fork(host: &StepHost, open: &OpenStep, parent: &str) -> Result<Option<String>, StepError> {
    let (id, text, file) = {
        let manager = open.session.manager();
        if manager.session_id() == parent {
            return Ok(None);
        }
        let mut header = manager.header().clone();
        header.parent_session = Some(parent.to_owned());
        let text = session_text(&header, manager.entries())
            .map_err(|error| StepError::Step { session: parent.to_owned(), message: error.to_string() })?;
        (manager.session_id().to_owned(), text, manager.path().map(std::path::Path::to_path_buf))
    };
    host.store.import(&SessionLines::parse(&text)?).await?;
    if let Some(file) = file {
        let _ = std::fs::remove_file(file);
    }
    Ok(Some(id))
}

/// `argv` with the model and thinking level named explicitly (any earlier `--provider`, `--model` and
/// `--thinking` taken out), so that every later step opens the session as the command left it.
fn pinned_argv(argv: &[String], model: Option<(String, String)>, thinking_level: &str) -> Vec<String> {
    const REPLACED: [&str; 3] = ["--provider", "--model", "--thinking"];
    let mut pinned = Vec::with_capacity(argv.len() + 6);
    let mut flags = argv.iter();
    while let Some(flag) = flags.next() {
        if REPLACED.contains(&flag.as_str()) {
            flags.next();
        } else if !REPLACED.iter().any(|name| flag.strip_prefix(name).is_some_and(|rest| rest.starts_with('='))) {
            pinned.push(flag.clone());
        }
    }
    if let Some((provider, id)) = model {
        pinned.extend(["--provider".to_owned(), provider, "--model".to_owned(), id]);
    }
    pinned.extend(["--thinking".to_owned(), thinking_level.to_owned()]);
    pinned
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(words: &[&str]) -> Vec<String> {
        words.iter().map(|word| (*word).to_owned()).collect()
    }

    #[test]
    fn pinned_flags_replace_the_model_and_thinking_flags_and_keep_the_rest() {
        let argv = strings(&["--provider", "a", "--model=x", "--tools", "read", "--thinking", "high", "--no-skills"]);
        let pinned = pinned_argv(&argv, Some(("mock".into(), "m".into())), "off");
        assert_eq!(
            pinned,
            strings(&["--tools", "read", "--no-skills", "--provider", "mock", "--model", "m", "--thinking", "off"])
        );
        assert_eq!(
            pinned_argv(&strings(&["--models", "a,b"]), None, "low"),
            strings(&["--models", "a,b", "--thinking", "low"])
        );
    }

    #[test]
    fn only_settings_commands_go_to_a_step() {
        let set = RpcCommand::SetModel { provider: "p".into(), model_id: "m".into() };
        let command = SessionCommand::from_rpc(&set).expect("a settings command");
        assert!(command.changes_the_model());
        assert_eq!(command.clone().into_rpc(), set);
        assert!(SessionCommand::from_rpc(&RpcCommand::GetMessages).is_none());
        let compact = SessionCommand::Compact { custom_instructions: None };
        assert!(!compact.changes_the_model());
        let json = serde_json::to_value(&compact).expect("json");
        assert_eq!(json, serde_json::json!({"type": "compact", "custom_instructions": null}));
    }
}
