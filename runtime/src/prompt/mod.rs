//! The system prompt: identity, tools, guidelines, context, date and working directory (pi 0.73's flat
//! text, or pi 1.5's named sections).

mod context_files;
mod date_line;
mod frontmatter;
mod ignore_rules;
mod resources;
mod skill_discovery;
mod skills;
mod system_prompt;
mod system_prompt_sections;
mod system_prompt_v15;
mod templates;
mod tool_prompt;

#[cfg(test)]
mod tests_frontmatter;
#[cfg(test)]
mod tests_ignore;
#[cfg(test)]
mod tests_skills;
#[cfg(test)]
mod tests_templates;

pub use context_files::{CONTEXT_FILE_NAMES, load_context_files};
pub use date_line::DateLine;

pub use frontmatter::{
    Frontmatter, FrontmatterError, FrontmatterValue, parse_frontmatter, split_frontmatter, strip_frontmatter,
};
pub use resources::{DiagnosticKind, ResourceDiagnostic, ResourceLocations, ResourceSource};
pub use skill_discovery::{SKILL_FILE_NAME, load_skills, load_skills_from_dir};
pub use skills::{
    MAX_SKILL_DESCRIPTION_LENGTH, MAX_SKILL_NAME_LENGTH, Skill, SkillExpansionError, SkillLoad, escape_xml,
    expand_skill_command, format_skills_for_prompt, load_skill_file, try_expand_skill_command,
};
pub use system_prompt::{ContextFile, PromptTool, SystemPromptOptions, build_system_prompt};
pub use system_prompt_sections::{InvalidSectionName, PREAMBLE_SECTION, SystemPromptSections, wrap_section};
pub use system_prompt_v15::build_system_prompt_sections;
pub use templates::{
    PromptTemplate, PromptTemplateLoad, expand_prompt_template, load_prompt_template_file, load_prompt_templates,
    load_prompt_templates_from_dir, parse_command_args, substitute_args,
};
pub use tool_prompt::{SystemPromptBuilder, prompt_tools};

/// The identity line of the default system prompt (our wording; agents override it in YAML).
pub const DEFAULT_IDENTITY: &str = "You are an expert coding assistant working inside pi, a coding agent harness. You help users by reading files, running commands, editing code, and writing new files.";
