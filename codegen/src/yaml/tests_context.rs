//! Tests of `context:` validation: a full panels section read into the spec, and every mistake (options
//! without `strategy: panels`, unknown panels and keys, repeats, limits that cannot work) located at
//! `file:line:col` with its YAML path and a hint.

use std::path::Path;

use super::test_support::{assert_errors, errors_in};
use super::*;
use crate::spec::{BuiltinPanelSpec, ContextStrategySpec};

/// The errors of an agent whose `context:` section is `context` (its first line is line 4).
fn context_errors(context: &str) -> Vec<String> {
    errors_in(Path::new("agent.yaml"), &format!("version: 1\nname: a\ncontext:\n{context}"))
}

const FULL: &str = "\
version: 1
name: pilot
context:
  strategy: panels
  panels: [todo, tree, git]
  files: [README.md, src/main.rs]
  detach:
    chunk_min_messages: 10
    chunk_min_tokens: 2000
    keep_min_messages: 0
    keep_min_tokens: 3000
  command_panels:
    - { name: \"Open PRs\", command: \"gh pr list\", refresh_secs: 300, timeout: 20 }
    - { name: Disk, command: df -h }
  max_auto_continuations: 0
  git_refresh_secs: 30
  reinject_system_prompt: false
  texts:
    header: Panels follow.
    timestamp: \"as of {iso_time}\"
    footer: End of panels.
    footer_ack: OK.
    reinjection: \"Again:\\n\\n\"
    reinjection_ack: Understood.
";

#[test]
fn a_full_panels_section_is_read_with_every_option() {
    let spec = parse_spec(Path::new("pilot.yaml"), FULL).expect("valid");
    let context = spec.context.expect("context");
    assert!(context.uses_panels());
    assert_eq!(context.panels, Some(vec![BuiltinPanelSpec::Todo, BuiltinPanelSpec::Tree, BuiltinPanelSpec::Git]));
    assert_eq!(context.files, Some(vec!["README.md".to_owned(), "src/main.rs".to_owned()]));
    let detach = context.detach.expect("detach");
    assert_eq!(
        (detach.chunk_min_messages, detach.chunk_min_tokens, detach.keep_min_messages, detach.keep_min_tokens),
        (Some(10), Some(2000), Some(0), Some(3000))
    );
    let commands = context.command_panels.expect("command panels");
    assert_eq!(
        (commands[0].name.as_str(), commands[0].refresh_secs, commands[0].timeout),
        ("Open PRs", Some(300), Some(20))
    );
    assert_eq!((commands[1].command.as_str(), commands[1].refresh_secs, commands[1].timeout), ("df -h", None, None));
    assert_eq!((context.max_auto_continuations, context.git_refresh_secs), (Some(0), Some(30)));
    assert_eq!(context.reinject_system_prompt, Some(false));
    let texts = context.texts.expect("texts");
    assert_eq!(texts.timestamp.as_deref(), Some("as of {iso_time}"));
    assert_eq!(texts.given().len(), 6);
}

#[test]
fn a_bare_strategy_is_enough_and_messages_is_the_default() {
    let spec = parse_spec(Path::new("a.yaml"), "version: 1\nname: a\ncontext: { strategy: panels }\n").expect("valid");
    let context = spec.context.expect("context");
    assert!(context.uses_panels() && context.panel_options().is_empty());
    let spec =
        parse_spec(Path::new("a.yaml"), "version: 1\nname: a\ncontext: { strategy: messages }\n").expect("valid");
    assert_eq!(spec.context.and_then(|context| context.strategy), Some(ContextStrategySpec::Messages));
    let spec = parse_spec(Path::new("a.yaml"), "version: 1\nname: a\n").expect("valid");
    assert!(spec.context.is_none());
}

#[test]
fn panels_options_need_the_panels_strategy() {
    let found = context_errors("  panels: [todo]\n  files: [README.md]\n");
    assert_errors(
        &found,
        &[
            "agent.yaml:4:3: context.panels: `panels` only applies with `strategy: panels` (the default strategy is \
             `messages`, pi's pipeline); add `strategy: panels` under `context:` or remove `panels`",
            "agent.yaml:5:3: context.files: `files` only applies with `strategy: panels`",
        ],
    );
    let found = context_errors("  strategy: messages\n  detach: { keep_min_tokens: 1 }\n  texts: { footer: x }\n");
    assert_errors(
        &found,
        &[
            "agent.yaml:5:3: context.detach: `detach` only applies with `strategy: panels`, and `strategy` is \
             `messages`; set `strategy: panels` or remove `detach`",
            "agent.yaml:6:3: context.texts: `texts` only applies with `strategy: panels`, and `strategy` is `messages`",
        ],
    );
}

#[test]
fn an_unknown_panel_or_strategy_names_the_valid_ones() {
    let found = context_errors("  strategy: panels\n  panels: [todo, scrachpad, clock]\n");
    assert_errors(
        &found,
        &[
            "agent.yaml:5:18: context.panels[1]: `scrachpad` is not allowed here; did you mean `scratchpad`?",
            "agent.yaml:5:29: context.panels[2]: `clock` is not allowed here; expected one of: todo, library, \
             statistics, tools, tree, memories, spine, logs, scratchpad, git",
        ],
    );
    let found = context_errors("  strategy: panel\n");
    assert_errors(&found, &["agent.yaml:4:13: context.strategy: `panel` is not allowed here; did you mean `panels`?"]);
}

#[test]
fn unknown_keys_and_wrong_types_under_context_are_located() {
    let found = context_errors("  strategy: panels\n  file: [a.md]\n  detach: { chunk_min_message: 3 }\n");
    assert_errors(
        &found,
        &[
            "agent.yaml:5:3: context.file: unknown key `file`; did you mean `files`?",
            "agent.yaml:6:13: context.detach.chunk_min_message: unknown key `chunk_min_message`; did you mean \
             `chunk_min_messages`?",
        ],
    );
    let found = context_errors("  strategy: panels\n  command_panels:\n    - { name: x, comand: ls }\n");
    assert_errors(
        &found,
        &[
            "agent.yaml:6:7: context.command_panels[0]: missing required key `command`",
            "agent.yaml:6:18: context.command_panels[0].comand: unknown key `comand`; did you mean `command`?",
        ],
    );
    let found =
        context_errors("  strategy: panels\n  max_auto_continuations: -1\n  reinject_system_prompt: sometimes\n");
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].starts_with("agent.yaml:5:27: context.max_auto_continuations: "), "{found:?}");
    assert_eq!(
        found[1],
        "agent.yaml:6:27: context.reinject_system_prompt: expected true or false, found the text \"sometimes\""
    );
}

#[test]
fn panels_files_and_command_panels_are_listed_once_and_usable() {
    let found = context_errors(
        "  strategy: panels
  panels: [todo, git, todo]
  files: [a.md, '', a.md]
  command_panels:
    - { name: PRs, command: gh pr list }
    - { name: PRs, command: ' ' }
    - { name: '', command: ls, refresh_secs: 0, timeout: 0 }
",
    );
    assert_errors(
        &found,
        &[
            "agent.yaml:5:23: context.panels[2]: duplicate panel `todo`; list each panel once",
            "agent.yaml:6:17: context.files[1]: the file path is empty; give a path relative to the working directory",
            "agent.yaml:6:21: context.files[2]: duplicate file `a.md`; list each file once",
            "agent.yaml:9:15: context.command_panels[1].name: duplicate command panel name `PRs`; command panel names \
             must be unique",
            "agent.yaml:9:29: context.command_panels[1].command: the command is empty; give the shell command",
            "agent.yaml:10:15: context.command_panels[2].name: the panel name is empty; it is the panel's heading",
            "agent.yaml:10:46: context.command_panels[2].refresh_secs: `refresh_secs: 0` would run the command again \
             before every request; use 1 or more seconds (default 60)",
            "agent.yaml:10:58: context.command_panels[2].timeout: `timeout: 0` would stop the command before it \
             starts; use 1 or more seconds (default 10)",
        ],
    );
}

#[test]
fn limits_and_texts_that_cannot_work_are_refused() {
    let found = context_errors(
        "  strategy: panels
  git_refresh_secs: 0
  detach: { chunk_min_messages: 0, keep_min_messages: 0, chunk_min_tokens: 0, keep_min_tokens: 0 }
  texts:
    timestamp: Refreshed at {time}
",
    );
    assert_errors(
        &found,
        &[
            "agent.yaml:5:21: context.git_refresh_secs: `git_refresh_secs: 0` would run git before every request",
            "agent.yaml:6:33: context.detach.chunk_min_messages: a detached chunk holds at least one message; use 1 \
             or more (default 25)",
            "agent.yaml:8:16: context.texts.timestamp: the timestamp text has no `{iso_time}`, so panels would not \
             say when they were refreshed; add it, e.g. \"Panel automatically generated at {iso_time}\"",
        ],
    );
}
