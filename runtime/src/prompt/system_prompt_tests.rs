//! Tests for the system prompt's structure and adaptive guidelines.

use super::*;

fn builtin(names: &[&str]) -> Vec<PromptTool> {
    names.iter().map(|name| PromptTool::new(*name, format!("{name} snippet"))).collect()
}

fn options(tools: &[&str]) -> SystemPromptOptions {
    SystemPromptOptions {
        identity: "You are a test agent.".to_owned(),
        tools: builtin(tools),
        cwd: PathBuf::from("/work/project"),
        date: Some("2026-11-23".to_owned()),
        ..SystemPromptOptions::default()
    }
}

#[test]
fn default_prompt_for_the_four_builtin_tools() {
    let prompt = build_system_prompt(&options(&["read", "bash", "edit", "write"]));
    let expected = "You are a test agent.

Available tools:
- read: read snippet
- bash: bash snippet
- edit: edit snippet
- write: write snippet

In addition to the tools above, you may have access to other custom tools depending on the project.

Guidelines:
- Use bash for file operations like ls, rg, find
- Use read to examine files before editing. You must use this tool instead of cat or sed.
- Use edit for precise changes (old text must match exactly)
- Use write only for new files or complete rewrites
- When summarizing your actions, output plain text directly
- Be concise in your responses
- Show file paths clearly when working with files
Current date: 2026-11-23
Current working directory: /work/project";
    assert_eq!(prompt, expected);
}

#[test]
fn only_active_tools_are_listed_and_guidelines_follow_them() {
    let prompt = build_system_prompt(&options(&["read"]));
    assert!(prompt.contains("Available tools:\n- read: read snippet\n\n"));
    assert!(!prompt.contains("- bash:"));
    assert!(!prompt.contains("Use bash"));
    assert!(!prompt.contains("Use edit"));
    assert!(prompt.contains(
        "Guidelines:\n- Use read to look at files rather than cat or sed\n- Be concise in your responses\n- Show file paths clearly"
    ));
}

#[test]
fn no_tools_lists_none() {
    let prompt = build_system_prompt(&options(&[]));
    assert!(prompt.contains("Available tools:\n(none)\n\n"));
}

#[test]
fn explorer_tools_change_the_bash_guideline() {
    let prompt = build_system_prompt(&options(&["bash", "ls"]));
    assert!(prompt.contains("- Prefer grep/find/ls tools over bash for file exploration\n"));
    assert!(!prompt.contains("Use bash for file operations"));
}

#[test]
fn tool_and_agent_guidelines_are_deduplicated_and_ordered() {
    let mut opts = options(&["write"]);
    opts.tools[0].guidelines = vec!["Keep files small".to_owned(), "Be concise in your responses".to_owned()];
    opts.extra_guidelines = vec!["Keep files small".to_owned(), "Prefer small diffs".to_owned()];
    let prompt = build_system_prompt(&opts);
    let guidelines = prompt.split("Guidelines:\n").nth(1).and_then(|rest| rest.split("\nCurrent date").next());
    assert_eq!(
        guidelines,
        Some(
            "- Use write only for new files or complete rewrites
- When summarizing your actions, output plain text directly
- Keep files small
- Be concise in your responses
- Prefer small diffs
- Show file paths clearly when working with files"
        )
    );
}

#[test]
fn snippets_are_collapsed_to_one_line() {
    let mut opts = options(&[]);
    opts.tools = vec![PromptTool::new("deploy", "Deploy the app\n  to   staging")];
    assert!(build_system_prompt(&opts).contains("- deploy: Deploy the app to staging\n"));
}

#[test]
fn custom_prompt_append_and_context_files_keep_pi_order() {
    let mut opts = options(&["read"]);
    opts.custom_prompt = Some("Custom base.".to_owned());
    opts.append = Some("Appended.".to_owned());
    opts.context_files = vec![ContextFile { path: PathBuf::from("/work/AGENTS.md"), content: "Rules.".to_owned() }];
    let prompt = build_system_prompt(&opts);
    assert_eq!(
        prompt,
        "Custom base.\n\nAppended.\n\n# Project Context\n\nProject-specific instructions and guidelines:\n\n## /work/AGENTS.md\n\nRules.\n\n\nCurrent date: 2026-11-23\nCurrent working directory: /work/project"
    );
}

#[test]
fn date_defaults_to_today_in_iso_form() {
    let mut opts = options(&[]);
    opts.date = None;
    let prompt = build_system_prompt(&opts);
    let date_line = prompt.lines().find(|line| line.starts_with("Current date: ")).unwrap_or_default();
    let date = &date_line["Current date: ".len()..];
    assert_eq!(date.len(), 10, "{date_line}");
    assert!(chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d").is_ok(), "{date_line}");
    assert!(prompt.ends_with("Current working directory: /work/project"));
}
