//! A session file opened with everything a command-line run sets up (flags, project trust, model and key,
//! tools, extensions, hooks, MCP), for a driver that runs the loop one step at a time somewhere else: the
//! activities of a Temporal worker open the session, carry out one step and close it again.

use std::path::Path;
use std::sync::Arc;

use super::error::CliError;
use super::{agent_dir, parse_args, project_trust, setup};
use crate::AgentDefinition;
use crate::agent_session::{AgentSession, SessionEventSink};
use crate::extension::Extensions;
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
