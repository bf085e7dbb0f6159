//! `build_system_prompt`: assembles the default prompt (or a custom replacement) in pi's section order
//! (pi 0.73's flat layout here; pi 1.5's tagged sections in `system_prompt_v15`).

use std::path::{Path, PathBuf};

use crate::protocol::PiCompat;

/// One active tool as the system prompt lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptTool {
    pub name: String,
    /// The one-line summary after `- name:`; newlines are collapsed.
    pub snippet: String,
    /// Extra guidelines the tool contributes.
    pub guidelines: Vec<String>,
}

impl PromptTool {
    pub fn new(name: impl Into<String>, snippet: impl Into<String>) -> Self {
        Self { name: name.into(), snippet: snippet.into(), guidelines: Vec::new() }
    }
}

/// A project context file (AGENTS.md / CLAUDE.md) and its content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextFile {
    pub path: PathBuf,
    pub content: String,
}

/// Everything the system prompt depends on.
#[derive(Debug, Clone, Default)]
pub struct SystemPromptOptions {
    /// First paragraph of the default prompt.
    pub identity: String,
    /// Replaces the whole default base (SYSTEM.md or `--system-prompt`).
    pub custom_prompt: Option<String>,
    /// Appended after the base (APPEND_SYSTEM.md or `--append-system-prompt`).
    pub append: Option<String>,
    /// Active tools, in order.
    pub tools: Vec<PromptTool>,
    /// Guidelines the agent definition adds after the tool-derived ones.
    pub extra_guidelines: Vec<String>,
    /// An optional documentation block, placed after the guidelines.
    pub documentation: Option<String>,
    pub context_files: Vec<ContextFile>,
    /// Skills listed for the model (only when `read` is active; see [`SystemPromptOptions::tools_selected`]).
    pub skills: Vec<super::Skill>,
    /// Whether the tool set was chosen explicitly. With a custom prompt and no explicit choice, pi 0.73 lists
    /// skills even when `read` is not among the tools (pi 1.5 lists them whenever `read` or `bash` is).
    pub tools_selected: bool,
    /// Working directory shown on the last line.
    pub cwd: PathBuf,
    /// The date (and time) text of the date line; `None` uses now. pi 1.5's prompt has no date.
    pub date: Option<String>,
    /// pi's `Current date:` line or the seeds' `Current date and time:` line.
    pub date_line: super::DateLine,
    /// Which pi release's prompt layout to build: 0.73's flat text (the default) or 1.5's sections.
    pub pi_compat: PiCompat,
}

/// Rule bullets shared by both layouts.
pub(super) const BASH_FILE_OPS_RULE: &str = "Use bash for file operations like ls, rg, find";
pub(super) const READ_RULE: &str = "Use read to look at files rather than cat or sed";
pub(super) const EDIT_RULE: &str = "Use edit for precise changes (old text must match exactly)";
pub(super) const WRITE_RULE: &str = "Use write only for new files or complete rewrites";
pub(super) const CONCISE_RULE: &str = "Be concise in your responses";
pub(super) const FILE_PATHS_RULE: &str = "Show file paths clearly when working with files";
/// The sentence after the tool list.
pub(super) const OTHER_TOOLS_NOTE: &str =
    "In addition to the tools above, you may have access to other custom tools depending on the project.";

/// Builds the system prompt text. At [`PiCompat::V1_5`] it is the text of
/// [`build_system_prompt_sections`](super::build_system_prompt_sections).
pub fn build_system_prompt(options: &SystemPromptOptions) -> String {
    if options.pi_compat.is_v1_5() {
        return super::build_system_prompt_sections(options).text();
    }
    let mut prompt = match &options.custom_prompt {
        Some(custom) => custom.clone(),
        None => default_base(options),
    };
    if let Some(append) = options.append.as_deref().filter(|text| !text.trim().is_empty()) {
        prompt.push_str("\n\n");
        prompt.push_str(append);
    }
    push_context_files(&mut prompt, &options.context_files);
    let read_active = options.tools.iter().any(|tool| tool.name == "read");
    let list_skills = read_active || (options.custom_prompt.is_some() && !options.tools_selected);
    if list_skills {
        prompt.push_str(&super::format_skills_for_prompt(&options.skills));
    }
    prompt.push('\n');
    prompt.push_str(&options.date_line.line(options.date.as_deref()));
    prompt.push_str("\nCurrent working directory: ");
    prompt.push_str(&display_cwd(&options.cwd));
    prompt
}

fn default_base(options: &SystemPromptOptions) -> String {
    let mut base = String::with_capacity(2048);
    base.push_str(&options.identity);
    base.push_str("\n\nAvailable tools:\n");
    if options.tools.is_empty() {
        base.push_str("(none)");
    } else {
        let lines: Vec<String> =
            options.tools.iter().map(|tool| format!("- {}: {}", tool.name, one_line(&tool.snippet))).collect();
        base.push_str(&lines.join("\n"));
    }
    base.push_str("\n\n");
    base.push_str(OTHER_TOOLS_NOTE);
    base.push_str("\n\nGuidelines:\n");
    let lines: Vec<String> = guidelines(options).iter().map(|line| format!("- {line}")).collect();
    base.push_str(&lines.join("\n"));
    if let Some(documentation) = options.documentation.as_deref().filter(|text| !text.trim().is_empty()) {
        base.push_str("\n\n");
        base.push_str(documentation.trim_end());
    }
    base
}

/// The guideline bullets: tool-derived first, then the tools' own, then the agent's, then the two
/// that always apply. Each appears once.
fn guidelines(options: &SystemPromptOptions) -> Vec<String> {
    let active = |name: &str| options.tools.iter().any(|tool| tool.name == name);
    let has_bash = active("bash");
    let has_explorer = active("grep") || active("find") || active("ls");
    let mut lines: Vec<String> = Vec::new();
    let mut add = |line: &str| {
        let line = line.trim();
        if !line.is_empty() && !lines.iter().any(|existing| existing == line) {
            lines.push(line.to_owned());
        }
    };
    if has_bash && !has_explorer {
        add(BASH_FILE_OPS_RULE);
    } else if has_bash {
        add("Prefer grep/find/ls tools over bash for file exploration");
    }
    if active("read") && active("edit") {
        add("Use read to examine files before editing. You must use this tool instead of cat or sed.");
    } else if active("read") {
        // pi 0.73 gives read this guideline of its own, so read-only agents get it too.
        add(READ_RULE);
    }
    if active("edit") {
        add(EDIT_RULE);
    }
    if active("write") {
        add(WRITE_RULE);
    }
    if active("edit") || active("write") {
        add("When summarizing your actions, output plain text directly");
    }
    for tool in &options.tools {
        for guideline in &tool.guidelines {
            add(guideline);
        }
    }
    for guideline in &options.extra_guidelines {
        add(guideline);
    }
    add(CONCISE_RULE);
    add(FILE_PATHS_RULE);
    lines
}

fn push_context_files(prompt: &mut String, files: &[ContextFile]) {
    if files.is_empty() {
        return;
    }
    prompt.push_str("\n\n# Project Context\n\nProject-specific instructions and guidelines:\n\n");
    for file in files {
        prompt.push_str("## ");
        prompt.push_str(&file.path.to_string_lossy());
        prompt.push_str("\n\n");
        prompt.push_str(&file.content);
        prompt.push_str("\n\n");
    }
}

pub(super) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub(super) fn display_cwd(cwd: &Path) -> String {
    cwd.to_string_lossy().replace('\\', "/")
}

#[cfg(test)]
#[path = "system_prompt_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "system_prompt_snapshots.rs"]
pub(super) mod snapshots;
