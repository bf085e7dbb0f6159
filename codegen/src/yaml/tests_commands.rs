//! Tests of `commands:` validation: every mistake located at `file:line:col` with its YAML path, all of them
//! in one run, and a valid list read into the spec.

use std::path::Path;

use super::test_support::{assert_errors, errors_in};
use super::*;

/// The errors of an agent whose `commands:` list is `commands` (its first entry on line 6).
fn command_errors(commands: &str) -> Vec<String> {
    let head = "version: 1\nname: a\nprompts:\n  templates: [{ name: review, content: Review. }]\ncommands:\n";
    errors_in(Path::new("agent.yaml"), &format!("{head}{commands}"))
}

#[test]
fn both_kinds_of_command_are_read_with_their_options() {
    let yaml = "\
version: 1
name: a
commands:
  - name: focus
    description: Review one file
    prompt: Review $1. ${@:2}
    arguments:
      - { name: file, description: The file, required: true }
      - { name: focus }
  - name: git:status
    description: Show the status
    command: git status --short -- \"$@\"
    timeout: 10
  - { name: diff, description: Send the diff, command: git diff, send: true }
";
    let spec = parse_spec(Path::new("a.yaml"), yaml).expect("valid");
    assert_eq!(spec.commands.len(), 3);
    let focus = &spec.commands[0];
    assert_eq!(focus.prompt.as_deref(), Some("Review $1. ${@:2}"));
    assert!(focus.arguments[0].is_required() && !focus.arguments[1].is_required());
    assert_eq!((spec.commands[1].timeout, spec.commands[1].send), (Some(10), None));
    assert_eq!(spec.commands[2].send, Some(true));
}

#[test]
fn unknown_keys_and_wrong_types_are_located_with_suggestions() {
    let found = command_errors("  - name: x\n    descripton: X\n    prompt: Go\n");
    assert_errors(
        &found,
        &[
            "agent.yaml:6:5: commands[0]: missing required key `description`",
            "agent.yaml:7:5: commands[0].descripton: unknown key `descripton`; did you mean `description`?",
        ],
    );
    let found = command_errors("  - { name: x, description: X, command: ls, send: yes please }\n");
    assert_errors(
        &found,
        &["agent.yaml:6:51: commands[0].send: expected true or false, found the text \"yes please\""],
    );
    let found =
        command_errors("  - { name: x, description: X, prompt: $1, arguments: [{ name: a, requird: true }] }\n");
    assert_errors(
        &found,
        &["agent.yaml:6:67: commands[0].arguments[0].requird: unknown key `requird`; did you mean `required`?"],
    );
}

#[test]
fn names_must_be_valid_unique_and_free() {
    let found = command_errors(
        "  - { name: Fix, description: X, prompt: Go }
  - { name: model, description: X, prompt: Go }
  - { name: review, description: X, prompt: Go }
  - { name: skill:lint, description: X, prompt: Go }
  - { name: go, description: X, prompt: Go }
  - { name: go, description: X, prompt: Go }
  - { name: -x, description: X, prompt: Go }
",
    );
    assert_errors(
        &found,
        &[
            "agent.yaml:6:13: commands[0].name: \"Fix\" cannot be a command name (`fix`?); use lowercase letters",
            "agent.yaml:7:13: commands[1].name: `/model` is a built-in command of the interactive mode",
            "agent.yaml:8:13: commands[2].name: the prompt template `review` (under `prompts`) has this name already",
            "agent.yaml:9:13: commands[3].name: `/skill:lint` would shadow a skill",
            "agent.yaml:11:13: commands[5].name: duplicate command name `go`",
            "agent.yaml:12:13: commands[6].name: \"-x\" cannot be a command name;",
        ],
    );
}

#[test]
fn a_template_file_in_a_prompts_dir_is_a_collision_too() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("prompts")).expect("mkdir");
    std::fs::write(dir.path().join("prompts/ship.md"), "Ship it").expect("write");
    let yaml = "version: 1\nname: a\nprompts: { dirs: [prompts] }\ncommands:\n  - { name: ship, description: X, command: ls }\n";
    let found = errors_in(&dir.path().join("a.yaml"), yaml);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].ends_with(
            "commands[0].name: the prompt template `ship` (under `prompts`) has this name already; rename one of them"
        ),
        "{found:?}"
    );
}

#[test]
fn a_command_has_exactly_one_action_and_only_its_options() {
    let found = command_errors(
        "  - { name: a, description: X }
  - { name: b, description: X, prompt: Go, command: ls }
  - { name: c, description: X, prompt: Go, send: true, timeout: 5 }
  - { name: d, description: ' ', command: ' ' }
",
    );
    assert_errors(
        &found,
        &[
            "agent.yaml:6:5: commands[0]: command `a` needs `prompt: <text for the model>` or `command: <shell command>`",
            "agent.yaml:7:44: commands[1].command: a command has either `prompt` (text for the model) or `command`",
            "agent.yaml:8:44: commands[2].send: `send` goes with `command:`",
            "agent.yaml:8:56: commands[2].timeout: `timeout` goes with `command:`",
            "agent.yaml:9:29: commands[3].description: the description is empty",
            "agent.yaml:9:43: commands[3].command: the command is empty",
        ],
    );
}

#[test]
fn arguments_are_positional_and_placeholders_must_refer_to_them() {
    let found = command_errors(
        "  - name: a
    description: X
    prompt: Use $1, $4, $0 and ${@:5} but not $ARGUMENT
    arguments: [{ name: first, required: false }, { name: second, required: true }, { name: first }]
  - { name: b, description: X, prompt: 'Free $7 and ${@:9}' }
  - { name: c, description: X, prompt: 'Rest: ${@:2}', arguments: [{ name: only }] }
",
    );
    assert_errors(
        &found,
        &[
            "agent.yaml:8:13: commands[0].prompt: the prompt uses `$ARGUMENT`; did you mean `$ARGUMENTS`?",
            "agent.yaml:8:13: commands[0].prompt: the prompt uses `$4`, but the command declares 3 arguments (first, second, first); declare it under `arguments`",
            "agent.yaml:8:13: commands[0].prompt: the prompt uses `$0`, but the command declares 3 arguments (first, second, first); arguments start at `$1`",
            "agent.yaml:8:13: commands[0].prompt: the prompt uses `${@:5}`, which starts after the 3 arguments (first, second, first) and the rest of the line (`${@:4}`)",
            "agent.yaml:9:77: commands[0].arguments[1].required: arguments are positional: the required `second` cannot follow the optional `first`",
            "agent.yaml:9:93: commands[0].arguments[2].name: duplicate argument `first`",
        ],
    );
}
