//! A session file opened with everything a command-line run sets up (flags, project trust, model and key,
//! tools, extensions, hooks, MCP), for a driver that runs the loop one step at a time somewhere else: the
//! activities of a Temporal worker open the session, carry out one step (or one settings command) and close
//! it again.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::error::CliError;
use super::fork_commands::{clone_data, fork_data};
use super::model_catalog::ModelCatalog;
use super::model_controls::ModelControls;
use super::model_scope::scope_patterns;
use super::rpc::RpcCommand;
use super::settings::Settings;
use super::{agent_dir, parse_args, project_dir, project_trust, setup};
use crate::AgentDefinition;
use crate::agent_session::{AgentSession, NOTHING_TO_COMPACT, SessionEventSink};
use crate::extension::{Extensions, ModelSelectSource};
use crate::protocol::SessionOnlyEvent;
use crate::tools::AgentTool;

/// Opens the session `argv` names (`--session <file>`, among the agent's other flags) in `cwd`;
/// session-only events go to `emit`.
pub async fn open_step_session(
    definition: &AgentDefinition,
    argv: Vec<String>,
    cwd: &Path,
    rust_tools: Vec<Arc<dyn AgentTool>>,
    extensions: Extensions,
    emit: SessionEventSink,
) -> Result<AgentSession, CliError> {
    let mut args = parse_args(definition, argv).map_err(|error| CliError::Usage(error.to_string()))?;
    project_trust::decide_in(definition, &mut args, None, cwd);
    let agent_dir = agent_dir(definition);
    let prepared = setup::prepare_in(definition, &args, rust_tools, extensions, cwd, &agent_dir)?;
    super::modes::open_session(prepared, emit).await
}

/// The models a session opened for a step may switch to (for [`run_step_command`]).
pub struct StepModels(ModelCatalog);

/// Loads the models the session opened with `argv` in `cwd` may switch to: the agent's and models.json's,
/// with the keys configured, scoped as `--models` or settings' `enabledModels` say.
pub fn step_models(
    definition: &AgentDefinition,
    argv: Vec<String>,
    cwd: &Path,
    session: &AgentSession,
) -> Result<StepModels, CliError> {
    let args = parse_args(definition, argv).map_err(|error| CliError::Usage(error.to_string()))?;
    let agent_dir = agent_dir(definition);
    let project = args.uses_project_files().then(|| project_dir(definition, cwd));
    let (settings, _) = Settings::load(&agent_dir, project.as_deref());
    let start_provider = session.agent().model().map(|model| model.provider);
    let catalog = ModelCatalog::load(definition, &agent_dir, args.api_key.as_deref(), start_provider.as_deref())?
        .with_pi_compat(session.agent().pi_compat())
        .with_scope(&scope_patterns(args.models.as_deref(), &settings));
    Ok(StepModels(catalog))
}

/// Carries out one of the session's settings commands (model, thinking level, name, compaction, fork, clone)
/// on a session opened for a step, as RPC mode does; returns the reply's data (`null` when it has none) or
/// its error. After a fork or a clone the session is the new one (its manager's header and entries).
/// Its events (`thinking_level_changed`, `session_info_changed`, the compaction's) go to `emit`.
pub async fn run_step_command(
    session: &AgentSession,
    models: &StepModels,
    command: RpcCommand,
    emit: SessionEventSink,
) -> Result<Value, String> {
    let controls = ModelControls { session, models: &models.0, emit: Box::new(|event| emit(event)) };
    match command {
        RpcCommand::SetModel { provider, model_id } => {
            Ok(controls.switch_model(&provider, &model_id, ModelSelectSource::Set).await?.0)
        }
        RpcCommand::CycleModel => controls.cycle_model().await,
        RpcCommand::SetThinkingLevel { level } => controls.set_thinking_level(&level).map(|()| Value::Null),
        RpcCommand::CycleThinkingLevel => controls.cycle_thinking_level(),
        RpcCommand::SetSessionName { name } => {
            session.set_session_name(&name).map_err(|error| error.to_string())?;
            emit(&SessionOnlyEvent::SessionInfoChanged { name: name.trim().to_owned() });
            Ok(Value::Null)
        }
        RpcCommand::Compact { custom_instructions } => match session.compact_now(custom_instructions.as_deref()).await?
        {
            Some(result) => Ok(result),
            None => Err(NOTHING_TO_COMPACT.to_owned()),
        },
        RpcCommand::Fork { entry_id } => fork_data(session, &entry_id).await,
        RpcCommand::Clone => clone_data(session).await,
        _ => Err("this command is not one a step carries out".to_owned()),
    }
}
