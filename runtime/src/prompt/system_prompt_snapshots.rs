//! Snapshots (insta) of whole system prompts built from the real built-in tools: several tool sets,
//! with and without SYSTEM.md, APPEND_SYSTEM.md, context files and skills. Review a changed prompt
//! with `cargo insta review` (or accept it with `INSTA_UPDATE=always`).

use std::path::PathBuf;

use super::{ContextFile, PromptTool, SystemPromptOptions, build_system_prompt};
use crate::prompt::{DEFAULT_IDENTITY, ResourceSource, Skill};
use crate::tools::{ToolEnvironment, builtin_tool};

/// The prompt entries of the built-in tools called `names`, as the CLI makes them.
pub(in crate::prompt) fn tools(names: &[&str]) -> Vec<PromptTool> {
    let env = ToolEnvironment::new("/work/project");
    names
        .iter()
        .filter_map(|name| builtin_tool(name, &env))
        .map(|tool| PromptTool {
            name: tool.name().to_owned(),
            snippet: tool.prompt_snippet().unwrap_or_else(|| tool.description()).to_owned(),
            guidelines: tool.prompt_guidelines().to_vec(),
        })
        .collect()
}

/// pi 0.73's options for the built-in tools `names`, in a fixed place and on a fixed date.
pub(in crate::prompt) fn options(names: &[&str]) -> SystemPromptOptions {
    SystemPromptOptions {
        identity: DEFAULT_IDENTITY.to_owned(),
        tools: tools(names),
        tools_selected: true,
        cwd: PathBuf::from("/work/project"),
        date: Some("2026-11-23".to_owned()),
        ..SystemPromptOptions::default()
    }
}

fn context_files() -> Vec<ContextFile> {
    vec![
        ContextFile { path: PathBuf::from("/home/dev/.pi/agent/AGENTS.md"), content: "Prefer small diffs.".to_owned() },
        ContextFile {
            path: PathBuf::from("/work/project/CLAUDE.md"),
            content: "Run `make test` before you finish.".to_owned(),
        },
    ]
}

fn skills() -> Vec<Skill> {
    let skill = |name: &str, description: &str, hidden: bool| Skill {
        name: name.to_owned(),
        description: description.to_owned(),
        file_path: PathBuf::from(format!("/work/project/.pi/skills/{name}/SKILL.md")),
        base_dir: PathBuf::from(format!("/work/project/.pi/skills/{name}")),
        disable_model_invocation: hidden,
        source: ResourceSource::Project,
    };
    vec![
        skill("release-notes", "Draft release notes from <commits> & tags", false),
        skill("deploy", "Deploy to production (humans only)", true),
    ]
}

#[test]
fn default_tools() {
    insta::assert_snapshot!(build_system_prompt(&options(&["read", "bash", "edit", "write"])));
}

#[test]
fn all_seven_tools() {
    insta::assert_snapshot!(build_system_prompt(&options(&["read", "bash", "edit", "write", "grep", "find", "ls"])));
}

#[test]
fn read_only_explorer() {
    insta::assert_snapshot!(build_system_prompt(&options(&["read", "grep", "find", "ls"])));
}

#[test]
fn no_tools() {
    insta::assert_snapshot!(build_system_prompt(&options(&[])));
}

#[test]
fn append_context_files_and_skills() {
    let prompt = build_system_prompt(&SystemPromptOptions {
        append: Some("Always answer in British English.".to_owned()),
        context_files: context_files(),
        skills: skills(),
        ..options(&["read", "bash", "edit", "write"])
    });
    insta::assert_snapshot!(prompt);
}

#[test]
fn skills_need_the_read_tool() {
    let prompt = build_system_prompt(&SystemPromptOptions { skills: skills(), ..options(&["bash"]) });
    assert!(!prompt.contains("<available_skills>"), "{prompt}");
    insta::assert_snapshot!(prompt);
}

#[test]
fn system_md_replaces_the_base() {
    let prompt = build_system_prompt(&SystemPromptOptions {
        custom_prompt: Some("You are the release bot. Only touch CHANGELOG.md.".to_owned()),
        append: Some("Sign every entry.".to_owned()),
        context_files: context_files(),
        skills: skills(),
        ..options(&["read", "edit"])
    });
    insta::assert_snapshot!(prompt);
}

#[test]
fn system_md_without_a_tool_choice_still_lists_skills() {
    let prompt = build_system_prompt(&SystemPromptOptions {
        custom_prompt: Some("Custom base.".to_owned()),
        skills: skills(),
        tools_selected: false,
        ..options(&["bash"])
    });
    assert!(prompt.contains("<name>release-notes</name>"), "{prompt}");
    insta::assert_snapshot!(prompt);
}
