//! `build_system_prompt_sections`: pi 1.5's system prompt layout: the preamble, then `<tools>`, `<rules>`,
//! `<docs>` (default base only), `<addendum>`, `<project_context>`, `<skills>` and `<cwd>`, no date.

use super::skills::{SKILLS_INTRO, SKILLS_READ_HINT, push_available_skills};
use super::system_prompt::{
    BASH_FILE_OPS_RULE, CONCISE_RULE, EDIT_RULE, FILE_PATHS_RULE, OTHER_TOOLS_NOTE, READ_RULE, WRITE_RULE, display_cwd,
    one_line,
};
use super::{ContextFile, PREAMBLE_SECTION, Skill, SystemPromptOptions, SystemPromptSections};

/// How the model loads a skill when only `bash` can read it.
const SKILLS_BASH_HINT: &str = "Load a skill's file with bash when the task matches its description.";
/// Where a skill's relative paths point.
const SKILLS_PATHS_HINT: &str = "When a skill file references a relative path, resolve it against the skill \
                                 directory (the folder holding SKILL.md) and pass absolute paths to tools.";
/// The line above the context files.
const PROJECT_CONTEXT_INTRO: &str = "Project-specific instructions and guidelines:";

/// The sections of pi 1.5's system prompt, in its order. A custom prompt (SYSTEM.md or `--system-prompt`)
/// replaces the preamble and drops `tools`, `rules` and `docs`; `addendum`, `project_context` and `skills`
/// appear only when there is something to put in them; `cwd` is always last.
pub fn build_system_prompt_sections(options: &SystemPromptOptions) -> SystemPromptSections {
    let mut sections = SystemPromptSections::new();
    match options.custom_prompt.as_deref().filter(|custom| !custom.is_empty()) {
        Some(custom) => sections.set(PREAMBLE_SECTION, custom),
        None => {
            sections.set(PREAMBLE_SECTION, options.identity.as_str());
            sections.set_wrapped("tools", &tools_section(options));
            sections.set_wrapped("rules", &rules_section(options));
            if let Some(docs) = documentation(options) {
                sections.set_wrapped("docs", docs);
            }
        }
    }
    if let Some(append) = options.append.as_deref().filter(|text| !text.is_empty()) {
        sections.set_wrapped("addendum", append);
    }
    if !options.context_files.is_empty() {
        sections.set_wrapped("project_context", &project_context(&options.context_files));
    }
    if let Some(skills) = skills_section(options) {
        sections.set_wrapped("skills", &skills);
    }
    sections.set_wrapped("cwd", &display_cwd(&options.cwd));
    sections
}

/// One `- name: snippet` line per active tool with a snippet, or `(none)`, then the note on other tools.
fn tools_section(options: &SystemPromptOptions) -> String {
    let lines: Vec<String> = options
        .tools
        .iter()
        .filter_map(|tool| {
            let snippet = one_line(&tool.snippet);
            (!snippet.is_empty()).then(|| format!("- {}: {snippet}", tool.name))
        })
        .collect();
    let list = if lines.is_empty() { "(none)".to_owned() } else { lines.join("\n") };
    format!("{list}\n\n{OTHER_TOOLS_NOTE}")
}

/// The rule bullets: the bash file-operations rule when no grep/find/ls tool is active, then each active
/// tool's rules in tool order, then the agent's guidelines, then the two that always apply. Each once.
fn rules_section(options: &SystemPromptOptions) -> String {
    let active = |name: &str| options.tools.iter().any(|tool| tool.name == name);
    let mut rules: Vec<String> = Vec::new();
    let mut add = |rule: &str| {
        let rule = rule.trim();
        if !rule.is_empty() && !rules.iter().any(|existing| existing == rule) {
            rules.push(rule.to_owned());
        }
    };
    if active("bash") && !active("grep") && !active("find") && !active("ls") {
        add(BASH_FILE_OPS_RULE);
    }
    for tool in &options.tools {
        if let Some(rule) = builtin_rule(&tool.name) {
            add(rule);
        }
        for guideline in &tool.guidelines {
            add(guideline);
        }
    }
    for guideline in &options.extra_guidelines {
        add(guideline);
    }
    add(CONCISE_RULE);
    add(FILE_PATHS_RULE);
    let lines: Vec<String> = rules.iter().map(|rule| format!("- {rule}")).collect();
    lines.join("\n")
}

/// The rule a built-in tool brings before its own guidelines (pi 1.5 keeps these with the tool).
fn builtin_rule(name: &str) -> Option<&'static str> {
    match name {
        "read" => Some(READ_RULE),
        "edit" => Some(EDIT_RULE),
        "write" => Some(WRITE_RULE),
        _ => None,
    }
}

/// The agent's documentation block without surrounding blank lines, if it has any text.
fn documentation(options: &SystemPromptOptions) -> Option<&str> {
    let docs = options.documentation.as_deref()?.trim_start_matches(['\n', '\r']).trim_end();
    (!docs.is_empty()).then_some(docs)
}

/// The intro line, then each file as a `<project_instructions path="...">` element, its content verbatim.
fn project_context(files: &[ContextFile]) -> String {
    let mut parts = vec![PROJECT_CONTEXT_INTRO.to_owned()];
    parts.extend(files.iter().map(|file| {
        format!(
            "<project_instructions path=\"{}\">\n{}\n</project_instructions>",
            file.path.to_string_lossy(),
            file.content
        )
    }));
    parts.join("\n\n")
}

/// The skills the model may load, when `read` or `bash` is active to load them and at least one skill is
/// not hidden with `disable-model-invocation`.
fn skills_section(options: &SystemPromptOptions) -> Option<String> {
    let active = |name: &str| options.tools.iter().any(|tool| tool.name == name);
    let hint = if active("read") {
        SKILLS_READ_HINT
    } else if active("bash") {
        SKILLS_BASH_HINT
    } else {
        return None;
    };
    let visible: Vec<&Skill> = options.skills.iter().filter(|skill| !skill.disable_model_invocation).collect();
    if visible.is_empty() {
        return None;
    }
    let mut lines = vec![SKILLS_INTRO.to_owned(), hint.to_owned(), SKILLS_PATHS_HINT.to_owned(), String::new()];
    push_available_skills(&mut lines, &visible);
    Some(lines.join("\n"))
}

#[cfg(test)]
#[path = "system_prompt_v15_tests.rs"]
mod tests;
