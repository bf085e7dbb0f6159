//! The run's permissions: settings.json's rules and default over the YAML's, as one extension that judges
//! every tool call.

use std::path::Path;

use super::args::{CliArgs, OutputMode};
use super::error::CliError;
use super::settings::Settings;
use crate::AgentDefinition;
use crate::permissions::{ApprovalDialog, Permissions, PermissionsExtension, rules_from_settings};

/// The permissions of this run: settings.json's rules (the project's, then the agent directory's) before the
/// YAML's, and the settings' `default` over the YAML's. `None` when every call is allowed anyway.
pub(super) fn permissions_extension(
    definition: &AgentDefinition,
    args: &CliArgs,
    settings: &Settings,
    agent_dir: &Path,
    project: Option<&Path>,
) -> Result<Option<PermissionsExtension>, CliError> {
    let mut default = definition.permissions.default;
    let mut rules = Vec::new();
    let files = [
        (project.map(|dir| dir.join("settings.json")), settings.project_value("permissions")),
        (Some(agent_dir.join("settings.json")), settings.global_value("permissions")),
    ];
    let mut file_default = None;
    for (path, value) in files {
        let (Some(path), Some(value)) = (path, value) else { continue };
        let (chosen, file_rules, problems) = rules_from_settings(value, &path.display().to_string());
        for problem in problems {
            eprintln!("Warning: {problem}");
        }
        file_default = file_default.or(chosen);
        rules.extend(file_rules);
    }
    if let Some(chosen) = file_default {
        default = chosen;
    }
    rules.extend(definition.permissions.rules.iter().cloned());
    let permissions = Permissions::new(default, &rules).map_err(CliError::Permissions)?;
    if permissions.allows_everything() {
        return Ok(None);
    }
    let dialog = if args.mode == Some(OutputMode::Rpc) { ApprovalDialog::Confirm } else { ApprovalDialog::Select };
    Ok(Some(PermissionsExtension::new(permissions, args.approve_all, dialog)))
}
