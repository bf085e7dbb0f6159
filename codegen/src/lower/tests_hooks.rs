//! Tests of lowering `hooks:`: each action becomes its `HookAction`, and command scripts are embedded
//! (executable bit kept, names kept apart, tracked for rebuilds).

use std::path::{Path, PathBuf};

use super::*;
use crate::yaml::parse_spec;

/// The text without whitespace, so assertions do not depend on how prettyplease wraps lines.
fn squash(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// The definition expression of the agent `yaml`, written as `<dir>/agent/a.yaml`.
fn definition(dir: &Path, yaml: &str) -> String {
    let file = dir.join("agent/a.yaml");
    std::fs::create_dir_all(dir.join("agent")).expect("mkdir");
    std::fs::write(&file, yaml).expect("write");
    let spec = crate::yaml::load_spec(&file).expect("valid");
    squash(&definition_tokens(&spec, &LowerContext::new(&file)).expect("lowers").to_string())
}

fn write_script(path: &Path, executable: bool) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, "#!/bin/sh\necho '{}'\n").expect("write");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = if executable { 0o755 } else { 0o644 };
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
    }
}

const RT: &str = "::pi_runtime::extension::";

#[test]
fn every_action_lowers_to_its_hook_action() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_script(&dir.path().join("agent/hooks/guard.sh"), true);
    let yaml = "\
version: 1
name: a
tools:
  builtin: [read, bash]
hooks:
  - on: tool_call
    name: no-rm
    match: { tool: bash, command: \"rm -rf *\" }
    block: destructive command refused
  - on: tool_call
    command: ./hooks/guard.sh --strict
    timeout: 10
    match: { tool: { regex: \"^ba\" } }
  - on: before_agent_start
    append_system_prompt: Plan before you edit.
    when: \"*plan*\"
  - on: before_agent_start
    replace_system_prompt: You are terse.
  - on: before_agent_start
    inject_message: { content: Remember X, custom_type: reminder }
  - on: before_agent_start
    inject_message: Remember Y
  - on: input
    match: { text: { regex: \"^/fix (.*)$\" } }
    transform: \"Please fix: $1\"
  - on: session_start
    command: echo started
";
    let source = definition(dir.path(), yaml);
    let expected = [
        format!(
            "{RT}HookDefinition{{name:\"no-rm\".to_owned(),action:{RT}HookAction::BlockToolCall{{tool:{RT}TextPattern::Glob(\"bash\".to_owned()),arguments:vec![{RT}ArgumentPattern{{argument:\"command\".to_owned(),pattern:{RT}TextPattern::Glob(\"rm-rf*\".to_owned())}}],reason:\"destructivecommandrefused\".to_owned(),}}}}"
        ),
        format!(
            "{RT}HookDefinition{{name:\"hooks[1]\".to_owned(),action:{RT}HookAction::Command{{event:\"tool_call\".to_owned(),command:\"./hooks/guard.sh--strict\".to_owned(),timeout_secs:::core::option::Option::Some(10u64),tool:::core::option::Option::Some({RT}TextPattern::Regex(\"^ba\".to_owned())),script:::core::option::Option::Some(\"hooks/guard.sh\".to_owned()),}}}}"
        ),
        format!(
            "{RT}HookAction::AppendSystemPrompt{{text:\"Planbeforeyouedit.\".to_owned(),when:::core::option::Option::Some({RT}TextPattern::Glob(\"*plan*\".to_owned()))}}"
        ),
        format!(
            "{RT}HookAction::ReplaceSystemPrompt{{text:\"Youareterse.\".to_owned(),when:::core::option::Option::None}}"
        ),
        format!(
            "{RT}HookAction::InjectMessage{{custom_type:\"reminder\".to_owned(),content:\"RememberX\".to_owned(),display:false,when:::core::option::Option::None,}}"
        ),
        format!(
            "{RT}HookAction::InjectMessage{{custom_type:\"hook\".to_owned(),content:\"RememberY\".to_owned(),display:false,"
        ),
        format!(
            "{RT}HookAction::TransformInput{{pattern:{RT}TextPattern::Regex(\"^/fix(.*)$\".to_owned()),replacement:\"Pleasefix:$1\".to_owned()}}"
        ),
        format!(
            "{RT}HookAction::Command{{event:\"session_start\".to_owned(),command:\"echostarted\".to_owned(),timeout_secs:::core::option::Option::None,tool:::core::option::Option::None,script:::core::option::Option::None,}}"
        ),
    ];
    for want in expected {
        assert!(source.contains(&want), "expected {want}\n in {source}");
    }
    assert!(source.contains("path:\"hooks/guard.sh\".to_owned()"), "{source}");
}

#[test]
fn agents_without_hooks_get_an_empty_list() {
    let spec = parse_spec(Path::new("a.yaml"), "version: 1\nname: a\n").expect("valid");
    let source =
        squash(&definition_tokens(&spec, &LowerContext::new(Path::new("a.yaml"))).expect("lowers").to_string());
    assert!(source.contains("hooks:::std::vec::Vec::new()"), "{source}");
}

/// The embedded files of a definition, as (path, executable) in order.
fn embedded(source: &str) -> Vec<(String, bool)> {
    source
        .split("EmbeddedFile{path:\"")
        .skip(1)
        .map(|rest| {
            let path = rest.split('"').next().unwrap_or_default().to_owned();
            let executable = rest.split("executable:").nth(1).is_some_and(|flag| flag.starts_with("true"));
            (path, executable)
        })
        .collect()
}

#[test]
fn scripts_are_embedded_once_under_distinct_names_with_their_exec_bit() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_script(&dir.path().join("agent/hooks/guard.sh"), true);
    write_script(&dir.path().join("shared/guard.sh"), false);
    let yaml = "\
version: 1
name: a
hooks:
  - { on: tool_call, command: ./hooks/guard.sh }
  - { on: tool_result, command: ../shared/guard.sh x }
  - { on: agent_end, command: hooks/../hooks/guard.sh }
  - { on: agent_start, command: ./hooks/../hooks/guard.sh }
";
    let source = definition(dir.path(), yaml);
    #[cfg(unix)]
    let expected = vec![("hooks/guard.sh".to_owned(), true), ("hooks/2-guard.sh".to_owned(), false)];
    #[cfg(not(unix))]
    let expected = vec![("hooks/guard.sh".to_owned(), false), ("hooks/2-guard.sh".to_owned(), false)];
    assert_eq!(embedded(&source), expected, "{source}");
    let scripts: Vec<&str> =
        source.split("script:").skip(1).map(|rest| rest.split(",}").next().unwrap_or_default()).collect();
    assert_eq!(
        scripts,
        [
            "::core::option::Option::Some(\"hooks/guard.sh\".to_owned())",
            "::core::option::Option::Some(\"hooks/2-guard.sh\".to_owned())",
            // Not `./`: a word the shell looks up on PATH, nothing to embed.
            "::core::option::Option::None",
            "::core::option::Option::Some(\"hooks/guard.sh\".to_owned())",
        ]
    );
    assert!(source.contains("skill_dirs:vec![],prompt_dirs:vec![]"), "{source}");
}

#[test]
fn scripts_are_tracked_for_rebuilds_and_change_the_unpack_hash() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("agent/guard.sh");
    write_script(&script, true);
    let yaml = "version: 1\nname: a\nhooks:\n  - { on: tool_call, command: ./guard.sh }\n";
    let file = dir.path().join("agent/a.yaml");
    let first = definition(dir.path(), yaml);
    let spec = crate::yaml::load_spec(&file).expect("valid");
    let tracked: Vec<PathBuf> = referenced_files(&spec, &LowerContext::new(&file));
    assert!(tracked.iter().any(|path| path.ends_with("agent/guard.sh")), "{tracked:?}");
    let hash = |source: &str| source.split("hash:\"").nth(1).and_then(|rest| rest.split('"').next()).map(str::to_owned);
    write_script(&script, false);
    let second = definition(dir.path(), yaml);
    #[cfg(unix)]
    assert_ne!(hash(&first), hash(&second), "the exec bit is part of the hash");
    std::fs::write(&script, "#!/bin/sh\nexit 1\n").expect("write");
    assert_ne!(hash(&second), hash(&definition(dir.path(), yaml)));
}
