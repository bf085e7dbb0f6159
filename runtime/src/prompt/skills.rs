//! Skills: reading one `SKILL.md` (or root-level `*.md`) file with its frontmatter checks, the
//! `<available_skills>` block of the system prompt, and `/skill:name args` expansion.

use std::path::{Path, PathBuf};

use thiserror::Error;

use super::frontmatter::{FrontmatterError, FrontmatterValue, js_trim, parse_frontmatter, strip_frontmatter};
use super::resources::{DiagnosticKind, ResourceDiagnostic, ResourceSource, js_length};

/// The longest name the Agent Skills spec allows (UTF-16 units, as pi counts).
pub const MAX_SKILL_NAME_LENGTH: usize = 64;
/// The longest description the Agent Skills spec allows.
pub const MAX_SKILL_DESCRIPTION_LENGTH: usize = 1024;

/// A loaded skill: what the system prompt lists and `/skill:name` expands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    /// The markdown file (`.../name/SKILL.md` or a root-level `name.md`).
    pub file_path: PathBuf,
    /// The directory holding the file; relative references in the skill resolve against it.
    pub base_dir: PathBuf,
    /// `disable-model-invocation: true`: left out of the system prompt, still usable as `/skill:name`.
    pub disable_model_invocation: bool,
    pub source: ResourceSource,
}

/// Loaded skills (first of each name) and everything worth reporting.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillLoad {
    pub skills: Vec<Skill>,
    pub diagnostics: Vec<ResourceDiagnostic>,
}

/// Reads one skill file. The name defaults to the directory holding the file; a missing description
/// means no skill (with a diagnostic); name and description rule violations are warnings only.
pub fn load_skill_file(path: &Path, source: ResourceSource) -> (Option<Skill>, Vec<ResourceDiagnostic>) {
    let mut diagnostics = Vec::new();
    let warn = |kind: DiagnosticKind| ResourceDiagnostic::new(kind, path);
    let content = match std::fs::read(path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(error) => return (None, vec![warn(DiagnosticKind::Unreadable { reason: error.to_string() })]),
    };
    let frontmatter = match parse_frontmatter(&content) {
        Ok(frontmatter) => frontmatter,
        Err(error) => return (None, vec![warn(DiagnosticKind::InvalidFrontmatter { reason: error.to_string() })]),
    };
    let base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let directory_name = base_dir.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();

    let description = match frontmatter.get("description") {
        Some(FrontmatterValue::String(text)) if !js_trim(text).is_empty() => Some(text.clone()),
        Some(FrontmatterValue::String(_)) | None => None,
        Some(value) if !value.is_truthy() => None,
        Some(_) => return (None, vec![warn(DiagnosticKind::InvalidField { field: "description".to_owned() })]),
    };
    match &description {
        None => diagnostics.push(warn(DiagnosticKind::MissingDescription)),
        Some(text) if js_length(text) > MAX_SKILL_DESCRIPTION_LENGTH => {
            diagnostics.push(warn(DiagnosticKind::DescriptionTooLong { length: js_length(text) }));
        }
        Some(_) => {}
    }

    let name = match frontmatter.get("name") {
        Some(FrontmatterValue::String(text)) if !text.is_empty() => text.clone(),
        Some(value) if value.is_truthy() => {
            diagnostics.push(warn(DiagnosticKind::InvalidField { field: "name".to_owned() }));
            return (None, diagnostics);
        }
        _ => directory_name.clone(),
    };
    diagnostics.extend(name_problems(&name, &directory_name).into_iter().map(warn));

    let Some(description) = description else {
        return (None, diagnostics);
    };
    let skill = Skill {
        name,
        description,
        file_path: path.to_path_buf(),
        base_dir,
        disable_model_invocation: frontmatter.flag("disable-model-invocation"),
        source,
    };
    (Some(skill), diagnostics)
}

/// The Agent Skills naming rules pi warns about, in pi's order.
fn name_problems(name: &str, directory_name: &str) -> Vec<DiagnosticKind> {
    let mut problems = Vec::new();
    if name != directory_name {
        problems.push(DiagnosticKind::NameMismatch { name: name.to_owned(), directory: directory_name.to_owned() });
    }
    let length = js_length(name);
    if length > MAX_SKILL_NAME_LENGTH {
        problems.push(DiagnosticKind::NameTooLong { length });
    }
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
        problems.push(DiagnosticKind::NameInvalidCharacters);
    }
    if name.starts_with('-') || name.ends_with('-') {
        problems.push(DiagnosticKind::NameHyphenAtEdge);
    }
    if name.contains("--") {
        problems.push(DiagnosticKind::NameConsecutiveHyphens);
    }
    problems
}

/// The skills block of the system prompt (starting with a blank line), or "" when every skill is
/// hidden with `disable-model-invocation`.
pub fn format_skills_for_prompt(skills: &[Skill]) -> String {
    let visible: Vec<&Skill> = skills.iter().filter(|skill| !skill.disable_model_invocation).collect();
    if visible.is_empty() {
        return String::new();
    }
    let mut lines: Vec<String> = vec![
        format!("\n\n{SKILLS_INTRO}"),
        SKILLS_READ_HINT.to_owned(),
        "When a skill file references a relative path, resolve it against the skill directory.".to_owned(),
        String::new(),
    ];
    push_available_skills(&mut lines, &visible);
    lines.join("\n")
}

/// The first line of the skills block.
pub(super) const SKILLS_INTRO: &str = "The following skills provide specialized instructions for specific tasks.";
/// How the model loads a skill when the `read` tool is active.
pub(super) const SKILLS_READ_HINT: &str =
    "Use the read tool to load a skill's file when the task matches its description.";

/// Appends the `<available_skills>` element listing `visible`, one line per entry.
pub(super) fn push_available_skills(lines: &mut Vec<String>, visible: &[&Skill]) {
    lines.push("<available_skills>".to_owned());
    for skill in visible {
        lines.push("  <skill>".to_owned());
        lines.push(format!("    <name>{}</name>", escape_xml(&skill.name)));
        lines.push(format!("    <description>{}</description>", escape_xml(&skill.description)));
        lines.push(format!("    <location>{}</location>", escape_xml(&skill.file_path.to_string_lossy())));
        lines.push("  </skill>".to_owned());
    }
    lines.push("</available_skills>".to_owned());
}

/// Escapes `& < > " '` for XML text.
pub fn escape_xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            _ => out.push(c),
        }
    }
    out
}

/// `/skill:name args` could not be expanded because the skill file is unreadable now.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SkillExpansionError {
    #[error("cannot read skill file {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("skill file {path}: {source}")]
    Frontmatter { path: PathBuf, source: FrontmatterError },
}

/// Expands `/skill:name args` into the skill's body wrapped in a `<skill>` element, followed by the
/// arguments. `Ok(None)` when the text is not a skill command or names no loaded skill (the text is
/// then sent as typed).
pub fn try_expand_skill_command(text: &str, skills: &[Skill]) -> Result<Option<String>, SkillExpansionError> {
    let Some(command) = text.strip_prefix("/skill:") else {
        return Ok(None);
    };
    let (name, args) = match command.split_once(' ') {
        Some((name, rest)) => (name, js_trim(rest)),
        None => (command, ""),
    };
    let Some(skill) = skills.iter().find(|skill| skill.name == name) else {
        return Ok(None);
    };
    let bytes = std::fs::read(&skill.file_path)
        .map_err(|source| SkillExpansionError::Read { path: skill.file_path.clone(), source })?;
    let content = String::from_utf8_lossy(&bytes);
    let body = strip_frontmatter(&content)
        .map_err(|source| SkillExpansionError::Frontmatter { path: skill.file_path.clone(), source })?;
    let mut block = format!(
        "<skill name=\"{}\" location=\"{}\">\nReferences are relative to {}.\n\n{}\n</skill>",
        skill.name,
        skill.file_path.to_string_lossy(),
        skill.base_dir.to_string_lossy(),
        js_trim(&body)
    );
    if !args.is_empty() {
        block.push_str("\n\n");
        block.push_str(args);
    }
    Ok(Some(block))
}

/// [`try_expand_skill_command`] with an unreadable skill file treated like an unknown skill.
pub fn expand_skill_command(text: &str, skills: &[Skill]) -> Option<String> {
    try_expand_skill_command(text, skills).ok().flatten()
}
