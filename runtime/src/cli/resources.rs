//! Skills and prompt templates for a run: discovered as pi discovers them (agent dir, `~/.agents`,
//! the project's config dir and `.agents` up to the git root) plus `--skill` / `--prompt-template`
//! paths and the `skills` / `prompts` entries of settings.json, then the agent's own (compiled into the
//! binary, unpacked on first use); problems are printed as warnings, never fatal.

use std::path::{Path, PathBuf};

use super::args::CliArgs;
use super::embedded::{resource_dir, unpack_embedded};
use super::paths::home_dir;
use super::settings::Settings;
use super::yaml_commands::expand_prompt_command;
use crate::AgentDefinition;
use crate::definition::CommandDefinition;
use crate::prompt::{
    DiagnosticKind, PromptTemplate, ResourceDiagnostic, ResourceLocations, Skill, expand_prompt_template,
    expand_skill_command, load_prompt_templates, load_skills,
};

/// What a run can expand prompts with and list in the system prompt.
#[derive(Debug, Clone, Default)]
pub struct Resources {
    pub skills: Vec<Skill>,
    pub templates: Vec<PromptTemplate>,
    /// The YAML's `commands:` (not affected by `--no-prompt-templates`).
    pub commands: Vec<CommandDefinition>,
}

impl Resources {
    /// What expands the prompts of a session with these resources.
    pub fn into_expander(self) -> crate::agent_session::PromptExpander {
        std::sync::Arc::new(move |text: &str| self.expand(text))
    }

    /// `/skill:name args`, then the YAML's `prompt:` commands, then `/template args` expansion of one prompt;
    /// other text is kept as typed.
    pub fn expand(&self, text: &str) -> String {
        let expanded = expand_skill_command(text, &self.skills).unwrap_or_else(|| text.to_owned());
        if let Some(Ok(prompt)) = expand_prompt_command(&self.commands, &expanded) {
            return prompt;
        }
        expand_prompt_template(&expanded, &self.templates).unwrap_or(expanded)
    }
}

/// Loads the skills and templates `args` allow, warning about each problem on stderr. The agent's own
/// skill and template directories come after all others (the user's win name collisions) and are left out
/// by `--no-skills` / `--no-prompt-templates` like the discovered ones.
pub fn load_resources(
    definition: &AgentDefinition,
    args: &CliArgs,
    agent_dir: &Path,
    cwd: &Path,
    settings: &Settings,
) -> Resources {
    let (resources, warnings) = collect_resources(definition, args, agent_dir, cwd, settings);
    for warning in warnings {
        eprintln!("Warning: {warning}");
    }
    resources
}

/// [`load_resources`] with the problems returned instead of printed (the interactive mode shows them).
pub fn collect_resources(
    definition: &AgentDefinition,
    args: &CliArgs,
    agent_dir: &Path,
    cwd: &Path,
    settings: &Settings,
) -> (Resources, Vec<String>) {
    let mut warnings = Vec::new();
    let embedded = &definition.resources;
    let wants_skills = !args.no_skills && !embedded.skill_dirs.is_empty();
    let wants_templates = !args.no_prompt_templates && !embedded.prompt_dirs.is_empty();
    let root =
        if wants_skills || wants_templates { unpack_embedded(agent_dir, &definition.name, embedded) } else { None };
    let mut agent_paths = |dirs: &[String]| -> Vec<PathBuf> {
        let Some(root) = &root else { return Vec::new() };
        dirs.iter()
            .filter_map(|dir| {
                let path = resource_dir(root, dir);
                if path.is_none() {
                    warnings
                        .push(format!("the agent's resource directory \"{dir}\" leaves its unpack directory; ignored"));
                }
                path
            })
            .collect()
    };
    let mut locations = |include_defaults: bool, cli_paths: &[String], key: &str, dirs: &[String]| ResourceLocations {
        config_dir_name: definition.config_dir.clone(),
        include_defaults,
        cli_paths: cli_paths.to_vec(),
        project_settings: settings.project_list(key),
        user_settings: settings.global_list(key),
        agent_paths: if include_defaults { agent_paths(dirs) } else { Vec::new() },
        include_project: args.uses_project_files(),
        ..ResourceLocations::new(cwd, agent_dir, home_dir())
    };
    let skill_locations = locations(!args.no_skills, &args.skills, "skills", &embedded.skill_dirs);
    let template_locations =
        locations(!args.no_prompt_templates, &args.prompt_templates, "prompts", &embedded.prompt_dirs);
    let skills = load_skills(&skill_locations);
    let templates = load_prompt_templates(&template_locations);
    let diagnostics = skills.diagnostics.iter().chain(&templates.diagnostics);
    warnings.extend(diagnostics.map(|diagnostic| located_warning(diagnostic, root.as_deref(), &embedded.source_dirs)));
    let resources =
        Resources { skills: skills.skills, templates: templates.templates, commands: definition.commands.clone() };
    (resources, warnings)
}

/// `path: message`, where a file unpacked from the binary is named as its author wrote it
/// (`skills/review/SKILL.md`, not `<agent dir>/embedded/<name>-<hash>/skills/0/review/SKILL.md`).
fn located_warning(diagnostic: &ResourceDiagnostic, root: Option<&Path>, source_dirs: &[(String, String)]) -> String {
    let shown = |path: &Path| -> PathBuf {
        let authored = root.and_then(|root| {
            source_dirs.iter().find_map(|(dir, source)| {
                let rest = path.strip_prefix(resource_dir(root, dir)?).ok()?;
                Some(Path::new(source).join(rest))
            })
        });
        authored.unwrap_or_else(|| path.to_path_buf())
    };
    let mut kind = diagnostic.kind.clone();
    if let DiagnosticKind::Collision { winner, .. } = &mut kind {
        *winner = shown(winner);
    }
    format!("{}: {kind}", shown(&diagnostic.path).display())
}

#[cfg(test)]
#[path = "resources_tests.rs"]
mod tests;
