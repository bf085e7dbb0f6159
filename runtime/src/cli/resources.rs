//! Skills and prompt templates for a run: discovered as pi discovers them (agent dir, `~/.agents`,
//! the project's config dir and `.agents` up to the git root) plus `--skill` / `--prompt-template`
//! paths and the `skills` / `prompts` entries of settings.json; problems are printed as warnings, never fatal.

use std::path::Path;

use super::args::CliArgs;
use super::paths::home_dir;
use super::settings::Settings;
use crate::AgentDefinition;
use crate::prompt::{
    PromptTemplate, ResourceDiagnostic, ResourceLocations, Skill, expand_prompt_template, expand_skill_command,
    load_prompt_templates, load_skills,
};

/// What a run can expand prompts with and list in the system prompt.
#[derive(Debug, Clone, Default)]
pub struct Resources {
    pub skills: Vec<Skill>,
    pub templates: Vec<PromptTemplate>,
}

impl Resources {
    /// `/skill:name args` and then `/template args` expansion of one prompt; other text is kept as typed.
    pub fn expand(&self, text: &str) -> String {
        let expanded = expand_skill_command(text, &self.skills).unwrap_or_else(|| text.to_owned());
        expand_prompt_template(&expanded, &self.templates).unwrap_or(expanded)
    }
}

/// Loads the skills and templates `args` allow, warning about each problem on stderr.
pub fn load_resources(
    definition: &AgentDefinition,
    args: &CliArgs,
    agent_dir: &Path,
    cwd: &Path,
    settings: &Settings,
) -> Resources {
    let locations = |include_defaults: bool, cli_paths: &[String], key: &str| ResourceLocations {
        config_dir_name: definition.config_dir.clone(),
        include_defaults,
        cli_paths: cli_paths.to_vec(),
        project_settings: settings.project_list(key),
        user_settings: settings.global_list(key),
        ..ResourceLocations::new(cwd, agent_dir, home_dir())
    };
    let skills = load_skills(&locations(!args.no_skills, &args.skills, "skills"));
    warn(&skills.diagnostics);
    let templates = load_prompt_templates(&locations(!args.no_prompt_templates, &args.prompt_templates, "prompts"));
    warn(&templates.diagnostics);
    Resources { skills: skills.skills, templates: templates.templates }
}

fn warn(diagnostics: &[ResourceDiagnostic]) {
    for diagnostic in diagnostics {
        eprintln!("Warning: {}", diagnostic.message());
    }
}
