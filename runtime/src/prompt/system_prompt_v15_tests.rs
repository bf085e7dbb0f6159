//! Tests and insta snapshots of pi 1.5's sectioned system prompt, built from the real built-in tools:
//! default, context files, skills, append, custom prompt, no tools, read-only and custom tools.

use std::path::PathBuf;

use super::*;
use crate::prompt::{DEFAULT_IDENTITY, InvalidSectionName, PromptTool, ResourceSource, build_system_prompt};
use crate::protocol::PiCompat;

/// The 0.73 snapshots' options, at level 1.5.
fn options(names: &[&str]) -> SystemPromptOptions {
    SystemPromptOptions { pi_compat: PiCompat::V1_5, ..crate::prompt::system_prompt::snapshots::options(names) }
}

const DEFAULT_TOOLS: [&str; 4] = ["read", "bash", "edit", "write"];

fn context_files() -> Vec<ContextFile> {
    vec![
        ContextFile {
            path: PathBuf::from("/home/dev/.pi/agent/AGENTS.md"),
            content: "Prefer small diffs.\n".to_owned(),
        },
        ContextFile { path: PathBuf::from("/work/project/CLAUDE.md"), content: "Run `make test` first.".to_owned() },
    ]
}

fn skills() -> Vec<Skill> {
    let skill = |name: &str, description: &str, hidden: bool| Skill {
        name: name.to_owned(),
        description: description.to_owned(),
        file_path: PathBuf::from(format!("/home/dev/.pi/agent/skills/{name}/SKILL.md")),
        base_dir: PathBuf::from(format!("/home/dev/.pi/agent/skills/{name}")),
        disable_model_invocation: hidden,
        source: ResourceSource::User,
    };
    vec![
        skill("release-notes", "Draft release notes from <commits> & tags", false),
        skill("deploy", "Humans only", true),
    ]
}

fn keys(sections: &SystemPromptSections) -> Vec<&str> {
    sections.keys().collect()
}

/// The sections' text, checked against `build_system_prompt` at 1.5.
fn text(options: &SystemPromptOptions) -> String {
    let text = build_system_prompt_sections(options).text();
    assert_eq!(build_system_prompt(options), text);
    text
}

#[test]
fn default() {
    let opts = options(&DEFAULT_TOOLS);
    let sections = build_system_prompt_sections(&opts);
    assert_eq!(keys(&sections), ["preamble", "tools", "rules", "cwd"]);
    assert_eq!(sections.get("preamble"), Some(DEFAULT_IDENTITY));
    assert_eq!(sections.get("cwd"), Some("<cwd>\n/work/project\n</cwd>"));
    let text = text(&opts);
    assert!(!text.contains("Current date") && !text.contains("2026-11-23"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn default_with_documentation() {
    let opts = SystemPromptOptions {
        documentation: Some(
            "\nAgent documentation: /opt/agent/README.md\n- Read it when asked about the agent.\n\n".into(),
        ),
        ..options(&DEFAULT_TOOLS)
    };
    let sections = build_system_prompt_sections(&opts);
    assert_eq!(keys(&sections), ["preamble", "tools", "rules", "docs", "cwd"]);
    assert_eq!(
        sections.get("docs"),
        Some("<docs>\nAgent documentation: /opt/agent/README.md\n- Read it when asked about the agent.\n</docs>")
    );
    let blank = SystemPromptOptions { documentation: Some(" \n".into()), ..options(&DEFAULT_TOOLS) };
    assert_eq!(build_system_prompt_sections(&blank).get("docs"), None);
}

#[test]
fn context_files_section() {
    let opts = SystemPromptOptions { context_files: context_files(), ..options(&DEFAULT_TOOLS) };
    let sections = build_system_prompt_sections(&opts);
    assert_eq!(keys(&sections), ["preamble", "tools", "rules", "project_context", "cwd"]);
    assert_eq!(
        sections.get("project_context"),
        Some(
            "<project_context>\nProject-specific instructions and guidelines:\n\n\
             <project_instructions path=\"/home/dev/.pi/agent/AGENTS.md\">\nPrefer small diffs.\n\n</project_instructions>\n\n\
             <project_instructions path=\"/work/project/CLAUDE.md\">\nRun `make test` first.\n</project_instructions>\n\
             </project_context>"
        )
    );
    insta::assert_snapshot!(text(&opts));
}

#[test]
fn skills_section_with_read() {
    let opts = SystemPromptOptions { skills: skills(), ..options(&DEFAULT_TOOLS) };
    let sections = build_system_prompt_sections(&opts);
    assert_eq!(keys(&sections), ["preamble", "tools", "rules", "skills", "cwd"]);
    let skills = sections.get("skills").unwrap_or_default();
    assert!(skills.starts_with("<skills>\nThe following skills"), "{skills}");
    assert!(skills.ends_with("</available_skills>\n</skills>") && !skills.contains("<name>deploy</name>"), "{skills}");
    insta::assert_snapshot!(text(&opts));
}

#[test]
fn skills_need_read_or_bash() {
    let with =
        |names: &[&str]| build_system_prompt_sections(&SystemPromptOptions { skills: skills(), ..options(names) });
    let bash_only = with(&["bash"]);
    assert!(bash_only.get("skills").is_some_and(|text| text.contains("with bash")), "{bash_only:?}");
    assert_eq!(with(&["grep", "ls"]).get("skills"), None);
    assert_eq!(with(&[]).get("skills"), None);
    // 0.73's exception for a custom prompt without a tool choice is gone at 1.5.
    let custom = SystemPromptOptions {
        custom_prompt: Some("Custom base.".into()),
        tools_selected: false,
        skills: skills(),
        ..options(&["grep"])
    };
    assert_eq!(keys(&build_system_prompt_sections(&custom)), ["preamble", "cwd"]);
    // Only hidden skills: no section.
    let hidden = SystemPromptOptions { skills: skills()[1..].to_vec(), ..options(&DEFAULT_TOOLS) };
    assert_eq!(build_system_prompt_sections(&hidden).get("skills"), None);
}

#[test]
fn append() {
    let opts = SystemPromptOptions {
        append: Some("Always answer in British English.\n\nSecond append.".to_owned()),
        ..options(&DEFAULT_TOOLS)
    };
    let sections = build_system_prompt_sections(&opts);
    assert_eq!(keys(&sections), ["preamble", "tools", "rules", "addendum", "cwd"]);
    assert_eq!(
        sections.get("addendum"),
        Some("<addendum>\nAlways answer in British English.\n\nSecond append.\n</addendum>")
    );
    insta::assert_snapshot!(text(&opts));
}

#[test]
fn custom_prompt() {
    let opts = SystemPromptOptions {
        custom_prompt: Some("You are the release bot.\n".to_owned()),
        append: Some("Sign every entry.".to_owned()),
        documentation: Some("Agent docs.".to_owned()),
        context_files: context_files(),
        skills: skills(),
        ..options(&DEFAULT_TOOLS)
    };
    let sections = build_system_prompt_sections(&opts);
    assert_eq!(keys(&sections), ["preamble", "addendum", "project_context", "skills", "cwd"]);
    assert_eq!(sections.get("preamble"), Some("You are the release bot.\n"));
    insta::assert_snapshot!(text(&opts));
}

#[test]
fn empty_custom_prompt_keeps_the_default_base() {
    let opts = SystemPromptOptions { custom_prompt: Some(String::new()), ..options(&DEFAULT_TOOLS) };
    assert_eq!(keys(&build_system_prompt_sections(&opts)), ["preamble", "tools", "rules", "cwd"]);
}

#[test]
fn no_tools() {
    let opts = options(&[]);
    let sections = build_system_prompt_sections(&opts);
    assert_eq!(
        sections.get("tools"),
        Some(
            "<tools>\n(none)\n\nIn addition to the tools above, you may have access to other custom tools depending on \
             the project.\n</tools>"
        )
    );
    assert_eq!(
        sections.get("rules"),
        Some("<rules>\n- Be concise in your responses\n- Show file paths clearly when working with files\n</rules>")
    );
    insta::assert_snapshot!(text(&opts));
}

#[test]
fn read_only() {
    let opts = options(&["read"]);
    let sections = build_system_prompt_sections(&opts);
    assert_eq!(
        sections.get("rules"),
        Some(
            "<rules>\n- Use read to look at files rather than cat or sed\n- Be concise in your responses\n\
             - Show file paths clearly when working with files\n</rules>"
        )
    );
    insta::assert_snapshot!(text(&opts));
}

#[test]
fn explorer_tools_drop_the_bash_rule_and_keep_the_given_order() {
    let opts = options(&["ls", "grep", "read", "find", "bash"]);
    let sections = build_system_prompt_sections(&opts);
    let tools = sections.get("tools").unwrap_or_default();
    let names: Vec<&str> = tools.lines().filter_map(|line| line.strip_prefix("- ")?.split(':').next()).collect();
    assert_eq!(names, ["ls", "grep", "read", "find", "bash"]);
    let rules = sections.get("rules").unwrap_or_default();
    assert!(!rules.contains("Use bash for file operations") && !rules.contains("Prefer grep"), "{rules}");
    insta::assert_snapshot!(text(&opts));
}

#[test]
fn custom_tools_with_snippets_and_guidelines() {
    let mut opts = options(&["read"]);
    let mut deploy = PromptTool::new("deploy", "Deploy the app\n  to   staging");
    deploy.guidelines = vec!["Use deploy only when asked".into(), "Be concise in your responses".into()];
    let mut silent = PromptTool::new("silent", " ");
    silent.guidelines = vec!["Use silent rarely".into()];
    opts.tools.extend([deploy, silent]);
    opts.extra_guidelines = vec!["Prefer small diffs".into(), "Use deploy only when asked".into()];
    let sections = build_system_prompt_sections(&opts);
    assert_eq!(
        sections.get("tools"),
        Some(
            "<tools>\n- read: Read file contents\n- deploy: Deploy the app to staging\n\nIn addition to the tools \
             above, you may have access to other custom tools depending on the project.\n</tools>"
        )
    );
    assert_eq!(
        sections.get("rules"),
        Some(
            "<rules>\n- Use read to look at files rather than cat or sed\n- Use deploy only when asked\n\
             - Be concise in your responses\n- Use silent rarely\n- Prefer small diffs\n\
             - Show file paths clearly when working with files\n</rules>"
        )
    );
}

#[test]
fn sections_join_and_serialize_in_order() {
    let sections = build_system_prompt_sections(&SystemPromptOptions {
        append: Some("Extra.".into()),
        skills: skills(),
        ..options(&DEFAULT_TOOLS)
    });
    let json = serde_json::to_string(&sections).unwrap_or_default();
    let positions: Vec<usize> = ["\"preamble\"", "\"tools\"", "\"rules\"", "\"addendum\"", "\"skills\"", "\"cwd\""]
        .iter()
        .filter_map(|key| json.find(key))
        .collect();
    assert_eq!(positions.len(), 6, "{json}");
    assert!(positions.windows(2).all(|pair| pair[0] < pair[1]), "{json}");
    assert_eq!(serde_json::to_value(&sections).ok(), Some(sections.to_json()));
    let back: SystemPromptSections = serde_json::from_str(&json).unwrap_or_default();
    assert_eq!(back, sections);
    let parts: Vec<&str> = sections.iter().map(|(_, text)| text).collect();
    assert_eq!(sections.text(), parts.join("\n\n"));
}

#[test]
fn text_skips_empty_sections() {
    let sections: SystemPromptSections = [("preamble", ""), ("cwd", "<cwd>\n/w\n</cwd>")].into_iter().collect();
    assert_eq!(sections.text(), "<cwd>\n/w\n</cwd>");
}

#[test]
fn custom_sections_follow_pi_rules() {
    let mut sections = build_system_prompt_sections(&options(&["read"]));
    assert_eq!(sections.set_custom("preamble", "x"), Err(InvalidSectionName("preamble".into())));
    assert!(sections.set_custom("Bad", "x").is_err() && sections.set_custom("", "x").is_err());
    assert!(sections.set_custom("1st", "x").is_err());
    assert_eq!(sections.set_custom("team_notes-2", "Ship on Fridays."), Ok(()));
    assert_eq!(sections.set_custom("ignored", ""), Ok(()));
    assert_eq!(sections.set_custom("tools", "- only: this"), Ok(()));
    assert_eq!(keys(&sections), ["preamble", "tools", "rules", "cwd", "team_notes-2"]);
    assert_eq!(sections.get("tools"), Some("<tools>\n- only: this\n</tools>"));
    assert_eq!(sections.get("team_notes-2"), Some("<team_notes-2>\nShip on Fridays.\n</team_notes-2>"));
    assert_eq!(sections.remove("team_notes-2").as_deref(), Some("<team_notes-2>\nShip on Fridays.\n</team_notes-2>"));
    assert_eq!(sections.len(), 4);
}

#[test]
fn the_default_level_keeps_the_flat_prompt() {
    let opts = SystemPromptOptions { pi_compat: PiCompat::V0_73, ..options(&DEFAULT_TOOLS) };
    let prompt = build_system_prompt(&opts);
    assert!(prompt.contains("\n\nAvailable tools:\n") && prompt.contains("Current date: 2026-11-23"), "{prompt}");
    assert_eq!(SystemPromptOptions::default().pi_compat, PiCompat::V0_73);
}
