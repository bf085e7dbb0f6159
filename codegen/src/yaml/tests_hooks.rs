//! Tests of `hooks:` validation: every mistake located at `file:line:col` with its YAML path, all of them
//! in one run.

use std::path::Path;

use super::test_support::{assert_errors, errors_in};
use super::*;
use crate::spec::{InjectMessageSpec, PatternSpec};

/// The errors of an agent whose `hooks:` list is `hooks` (its first entry on line 4).
fn hook_errors(hooks: &str) -> Vec<String> {
    errors_in(Path::new("agent.yaml"), &format!("version: 1\nname: a\nhooks:\n{hooks}"))
}

/// One hook of every kind, with the agent's own tools to match.
const ALL_KINDS: &str = "\
version: 1
name: a
tools:
  builtin: [read, bash]
  custom:
    - name: deploy
      description: Deploy
      parameters: { type: object, properties: { target: { type: string } } }
      command: echo {{ target }}
hooks:
  - on: tool_call
    name: no-rm
    match: { tool: bash, command: \"rm -rf *\" }
    block: destructive command refused
  - on: tool_call
    match: { tool: deploy, target: { regex: \"^prod\" } }
    block: no production deploys
  - on: tool_result
    command: echo '{}'
    timeout: 10
    match: { tool: \"b*\" }
  - on: before_agent_start
    append_system_prompt: Plan before you edit.
    when: \"*plan*\"
  - on: before_agent_start
    replace_system_prompt: You are terse.
    when: { regex: \"(?i)terse\" }
  - on: before_agent_start
    inject_message: { content: Remember X, custom_type: reminder, display: true }
  - on: before_agent_start
    inject_message: Remember Y
  - on: input
    match: { text: { regex: \"^/fix (?P<what>.*)$\" } }
    transform: \"Please fix: $1 (${what}), $$5\"
  - on: input
    match: { text: \"/short*\" }
    transform: Be brief. $5 stays literal
  - on: session_start
    command: echo started
";

#[test]
fn every_kind_of_hook_parses() {
    let spec = parse_spec(Path::new("agent.yaml"), ALL_KINDS).expect("valid");
    assert_eq!(spec.hooks.len(), 10);
    let block = &spec.hooks[0];
    assert_eq!((block.on.as_str(), block.name.as_deref()), ("tool_call", Some("no-rm")));
    assert_eq!(block.matched("command"), Some(&PatternSpec::Glob("rm -rf *".to_owned())));
    assert!(spec.hooks[1].matched("target").is_some_and(PatternSpec::is_regex));
    assert_eq!(spec.hooks[2].timeout, Some(10));
    assert_eq!(
        spec.hooks[5].inject_message.as_ref().map(InjectMessageSpec::parts),
        Some(("reminder", "Remember X", true))
    );
    assert_eq!(
        spec.hooks[6].inject_message.as_ref().map(InjectMessageSpec::parts),
        Some(("hook", "Remember Y", false))
    );
    assert_eq!(spec.hooks[8].transform.as_deref(), Some("Be brief. $5 stays literal"));
}

#[test]
fn unknown_events_are_located_with_a_suggestion() {
    let found =
        hook_errors("  - on: tool_cal\n    match: { tool: bash }\n    block: no\n  - on: banana\n    command: echo\n");
    assert_errors(
        &found,
        &[
            "agent.yaml:4:9: hooks[0].on: unknown event `tool_cal`; did you mean `tool_call`?",
            "agent.yaml:7:9: hooks[1].on: unknown event `banana`; pi's events: input, before_agent_start, context,",
        ],
    );
}

#[test]
fn each_action_works_on_its_own_event() {
    let found = hook_errors(
        "  - on: input\n    match: { tool: bash }\n    block: no\n  - on: tool_call\n    append_system_prompt: x\n  \
         - on: before_agent_start\n    transform: x\n  - on: agent_end\n    inject_message: x\n  - on: turn_end\n    \
         command: echo ok\n  - on: tool_call\n    replace_system_prompt: x\n",
    );
    assert_errors(
        &found,
        &[
            "agent.yaml:6:5: hooks[0].block: `block` works on `tool_call` hooks only; this hook is `on: input`",
            "agent.yaml:8:5: hooks[1].append_system_prompt: `append_system_prompt` works on `before_agent_start` hooks only",
            "agent.yaml:10:5: hooks[2].transform: `transform` works on `input` hooks only",
            "agent.yaml:12:5: hooks[3].inject_message: `inject_message` works on `before_agent_start` hooks only",
            "agent.yaml:16:5: hooks[5].replace_system_prompt: `replace_system_prompt` works on `before_agent_start` hooks only",
        ],
    );
}

#[test]
fn a_hook_has_exactly_one_action() {
    let found = hook_errors(
        "  - on: tool_call\n    match: { tool: bash }\n  - on: tool_call\n    match: { tool: bash }\n    block: no\n    \
         command: ./x.sh\n    transform: y\n",
    );
    assert_errors(
        &found,
        &[
            "agent.yaml:4:5: hooks[0]: a hook needs one action: block, command, append_system_prompt, \
             replace_system_prompt, inject_message, transform",
            "agent.yaml:9:5: hooks[1].command: a hook has one action and this one has `block` already; give `command` \
             a hook of its own",
            "agent.yaml:10:5: hooks[1].transform: a hook has one action and this one has `block` already",
        ],
    );
}

#[test]
fn block_needs_a_known_tool_and_its_real_arguments() {
    let yaml = "\
version: 1
name: a
tools:
  builtin: [read, bash]
  custom:
    - { name: deploy, description: Deploy, parameters: { type: object, properties: { target: { type: string } } }, command: echo }
    - { name: ping, description: Ping, command: echo }
hooks:
  - on: tool_call
    block: no
  - on: tool_call
    match: { tool: bash, comand: \"rm *\" }
    block: no
  - on: tool_call
    match: { tool: deploy, targte: prod }
    block: no
  - on: tool_call
    match: { tool: bsh }
    block: no
  - on: tool_call
    match: { tool: grep, pattern: x, ignorecase: \"true\" }
    block: no
  - on: tool_call
    match: { tool: \"*\", anything: x }
    block: no
  - on: tool_call
    match: { tool: { glob: reed }, paht: x }
    block: no
  - on: tool_call
    match: {}
    block: no
  - on: tool_call
    match: { tool: ping, host: x }
    block: \"  \"
  - on: tool_call
    match: { tool: { regex: \"^(read|bash)$\" }, whatever: x }
    block: no
  - on: tool_call
    match: { tool: zzz }
    block: no
";
    let found = errors_in(Path::new("agent.yaml"), yaml);
    assert_errors(
        &found,
        &[
            "agent.yaml:9:5: hooks[0]: `block` needs `match: { tool: <name or pattern> }`: the tool whose calls are refused",
            "agent.yaml:12:26: hooks[1].match.comand: `bash` has no argument `comand`; did you mean `command`?",
            "agent.yaml:15:28: hooks[2].match.targte: `deploy` has no argument `targte`; did you mean `target`?",
            "agent.yaml:18:20: hooks[3].match.tool: unknown tool `bsh`; did you mean `bash`?",
            "agent.yaml:21:38: hooks[4].match.ignorecase: `grep` has no argument `ignorecase`; did you mean `ignoreCase`?",
            "agent.yaml:27:28: hooks[6].match.tool.glob: unknown tool `reed`; did you mean `read`?",
            "agent.yaml:30:12: hooks[7].match: `block` needs `match: { tool: <name or pattern> }`",
            "agent.yaml:33:26: hooks[8].match.host: `ping` has no argument `host`; `ping` takes no arguments",
            "agent.yaml:34:12: hooks[8].block: the reason is empty",
            "agent.yaml:39:20: hooks[10].match.tool: unknown tool `zzz`; this agent's tools: read, bash, deploy, ping",
        ],
    );
}

#[test]
fn patterns_must_compile() {
    let found = hook_errors(
        "  - on: tool_call\n    match: { tool: \"[a\" }\n    block: no\n  - on: before_agent_start\n    \
         append_system_prompt: x\n    when: { regex: \"(a\" }\n  - on: tool_call\n    match: { tool: bash, command: \
         { regx: \"rm\" } }\n    block: no\n  - on: before_agent_start\n    inject_message: { contnt: x }\n",
    );
    assert_errors(
        &found,
        &[
            "agent.yaml:5:20: hooks[0].match.tool: the glob does not compile: unclosed character class; missing ']'",
            "agent.yaml:9:20: hooks[1].when.regex: the regex does not compile: unclosed group",
            "agent.yaml:11:35: hooks[2].match.command: expected text, `{ glob: ... }` or `{ regex: ... }`, found a \
             mapping; did you mean `regex`?",
            // The schema error drops the only action, so the hook has none left: both are reported.
            "agent.yaml:13:5: hooks[3]: a hook needs one action",
            "agent.yaml:14:21: hooks[3].inject_message: expected text or a mapping of content, custom_type, display, \
             found a mapping; did you mean `content`?",
        ],
    );
}

#[test]
fn transform_may_only_refer_to_groups_the_regex_has() {
    let found = hook_errors(
        "  - on: input\n    match: { text: { regex: \"^/fix (.*)$\" } }\n    transform: \"Please fix: $2\"\n  \
         - on: input\n    match: { text: { regex: \"^/fix (?P<what>.*)$\" } }\n    transform: \"$1a ${wat}\"\n  \
         - on: input\n    match: { text: \"/fix *\" }\n    transform: $9 is literal for a glob\n  \
         - on: input\n    transform: x\n  - on: input\n    match: { text: y, tool: bash, txt: z }\n    transform: y\n",
    );
    assert_errors(
        &found,
        &[
            "agent.yaml:6:16: hooks[0].transform: `$2` refers to group 2, but the regex has 1 group",
            "agent.yaml:9:16: hooks[1].transform: `$1a` refers to a group named `1a`, which the regex does not have; \
             for group 1 followed by `a`, write `${1}a`",
            "agent.yaml:9:16: hooks[1].transform: `$wat` refers to a group named `wat`, which the regex does not \
             have; did you mean `what`?",
            "agent.yaml:13:5: hooks[3]: `transform` needs `match: { text: <pattern> }`",
            "agent.yaml:16:23: hooks[4].match.tool: `transform` matches only `text`, the prompt (found `tool`)",
            "agent.yaml:16:35: hooks[4].match.txt: `transform` matches only `text`, the prompt (found `txt`); did you \
             mean `text`?",
        ],
    );
}

#[test]
fn command_hooks_check_their_script_timeout_and_match() {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = dir.path().join("agent");
    std::fs::create_dir_all(agent.join("hooks")).expect("mkdir");
    std::fs::create_dir_all(dir.path().join("scripts")).expect("mkdir");
    std::fs::write(agent.join("hooks/guard.sh"), "#!/bin/sh\necho '{}'\n").expect("write");
    let yaml = "\
version: 1
name: a
hooks:
  - on: tool_call
    command: ./missing.sh --flag
    match: { tool: bash, command: x }
  - on: session_start
    command: echo hi
    match: { tool: bash }
    timeout: 0
  - on: input
    command: ../scripts
    when: x
  - on: input
    transform: x
    match: { text: y }
    timeout: 5
  - on: before_agent_start
    append_system_prompt: x
    match: { text: y }
  - on: tool_execution_end
    command: ./hooks/guard.sh --verbose
    match: { tool: read }
    timeout: 3
";
    let file = agent.join("a.yaml");
    let found = errors_in(&file, yaml);
    let prefix = file.display().to_string();
    let expected = [
        ":5:14: hooks[0].command: cannot read ",
        ":6:26: hooks[0].match.command: a command hook matches only `tool`; the command reads the rest of the event \
         on stdin",
        ":9:5: hooks[1].match: `match` on a command hook chooses tools, and `session_start` concerns none; it works \
         on tool_call, tool_result, tool_execution_start, tool_execution_update, tool_execution_end",
        ":10:14: hooks[1].timeout: 0 is less than the minimum of 1",
        ":12:14: hooks[2].command: ",
        ":13:5: hooks[2].when: `when` goes with append_system_prompt, replace_system_prompt or inject_message",
        ":17:5: hooks[3].timeout: `timeout` applies to `command` hooks",
        ":20:5: hooks[4].match: `append_system_prompt` hooks choose prompts with `when: <pattern>`, not `match`",
    ];
    let expected: Vec<String> = expected.iter().map(|line| format!("{prefix}{line}")).collect();
    assert_errors(&found, &expected.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(found[0].contains("missing.sh") && found[0].contains("relative to the YAML file"), "{found:?}");
    assert!(found[4].contains("scripts is not a file"), "{found:?}");
}

#[test]
fn many_hook_mistakes_are_reported_in_one_run() {
    let yaml = "\
version: 1
name: a
tools:
  builtin: [read, bash]
hooks:
  - on: tool_cal
    match: { tool: bash }
    block: no
  - on: tool_call
    match: { tool: bash, comand: x }
    block: no
  - on: input
    append_system_prompt: x
  - on: input
    match: { text: { regex: \"(\" } }
    transform: y
  - on: tool_call
    blok: no
  - on: before_agent_start
    replace_system_prompt: x
    when: \"[\"
  - on: input
    match: { text: { regex: \"a(b)\" } }
    transform: $3
  - on: turn_end
    command: echo
    timeout: 0
";
    let found = errors_in(Path::new("agent.yaml"), yaml);
    assert_errors(
        &found,
        &[
            "agent.yaml:6:9: hooks[0].on: unknown event `tool_cal`; did you mean `tool_call`?",
            "agent.yaml:10:26: hooks[1].match.comand: `bash` has no argument `comand`; did you mean `command`?",
            "agent.yaml:13:5: hooks[2].append_system_prompt: `append_system_prompt` works on `before_agent_start` hooks only",
            "agent.yaml:15:29: hooks[3].match.text.regex: the regex does not compile",
            "agent.yaml:17:5: hooks[4]: a hook needs one action",
            "agent.yaml:18:5: hooks[4].blok: unknown key `blok`; did you mean `block`?",
            "agent.yaml:21:11: hooks[5].when: the glob does not compile",
            "agent.yaml:24:16: hooks[6].transform: `$3` refers to group 3, but the regex has 1 group",
            "agent.yaml:27:14: hooks[7].timeout: 0 is less than the minimum of 1",
        ],
    );
}
