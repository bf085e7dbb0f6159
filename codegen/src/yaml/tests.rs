//! Tests for YAML parsing and located errors.

use std::path::Path;

use super::test_support::errors_in;
use super::*;
use crate::spec::{BuiltinTool, ExecutionSpec};

const PI: &str = "version: 1
name: pi
config_dir: .pi
env_prefix: PI_CODING_AGENT
tools:
  builtin: [read, bash, edit, write]
  execution: parallel
";

fn errors(text: &str) -> Vec<String> {
    errors_in(Path::new("agent.yaml"), text)
}

#[test]
fn parses_the_pi_agent() {
    let spec = parse_spec(Path::new("pi.yaml"), PI).expect("valid");
    assert_eq!(spec.name, "pi");
    assert_eq!(spec.config_dir(), ".pi");
    assert_eq!(spec.agent_dir_env(), "PI_CODING_AGENT_DIR");
    let tools = spec.tools.expect("tools");
    assert_eq!(
        tools.builtin.expect("builtin"),
        vec![BuiltinTool::Read, BuiltinTool::Bash, BuiltinTool::Edit, BuiltinTool::Write]
    );
    assert_eq!(tools.execution, Some(ExecutionSpec::Parallel));
}

#[test]
fn defaults_derive_from_the_name() {
    let spec = parse_spec(Path::new("a.yaml"), "version: 1\nname: my-coder\n").expect("valid");
    assert_eq!(spec.config_dir(), ".my-coder");
    assert_eq!(spec.agent_dir_env(), "MY_CODER_AGENT_DIR");
}

#[test]
fn an_unknown_key_is_located_at_the_key_with_a_suggestion() {
    let found = errors("version: 1\nname: pi\ntool: []\n");
    assert_eq!(found, ["agent.yaml:3:1: tool: unknown key `tool`; did you mean `tools`?"]);
    let nested = errors("version: 1\nname: pi\nmodel:\n  provider: x\n  thinkin: high\n");
    assert_eq!(nested, ["agent.yaml:5:3: model.thinkin: unknown key `thinkin`; did you mean `thinking`?"]);
    let stranger = errors("version: 1\nname: pi\nretry: { enabled: true, banana: 1 }\n");
    assert_eq!(stranger.len(), 1, "{stranger:?}");
    assert!(
        stranger[0].starts_with("agent.yaml:3:25: retry.banana: unknown key `banana`; expected one of: enabled,"),
        "{stranger:?}"
    );
}

#[test]
fn type_and_value_errors_say_what_was_expected_and_found() {
    let found = errors("version: 1\nname: pi\ntools:\n  builtin: read\n");
    assert_eq!(found, ["agent.yaml:4:12: tools.builtin: expected a list, found the text \"read\""]);
    let level = errors("version: 1\nname: pi\nmodel: { thinking: hihg }\n");
    assert_eq!(level, ["agent.yaml:3:20: model.thinking: `hihg` is not allowed here; did you mean `high`?"]);
    let tool = errors("version: 1\nname: pi\ntools:\n  builtin: [read, grepp]\n");
    assert_eq!(tool, ["agent.yaml:4:19: tools.builtin[1]: `grepp` is not allowed here; did you mean `grep`?"]);
}

#[test]
fn five_distinct_mistakes_give_five_located_errors_in_one_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let yaml = "\
version: 1
name: checker
modle: { id: x }
tools:
  builtin: [read, bsh]
  execution: fast
  custom:
    - name: run_tests
      description: Run the tests
      parameters: { type: object, properties: { filter: { type: string } } }
      command: cargo test {{ filtr }}
    - name: run_tests
      description: Again
      command: echo
skills:
  dirs: [missing-skills]
";
    let file = dir.path().join("checker.yaml");
    let found = errors_in(&file, yaml);
    let shown = found.join("\n");
    let prefix = file.display().to_string();
    let expected = [
        ":3:1: modle: unknown key `modle`; did you mean `model`?",
        ":5:19: tools.builtin[1]: `bsh` is not allowed here; did you mean `bash`?",
        ":6:14: tools.execution: `fast` is not allowed here; expected one of: sequential, parallel",
        ":11:16: tools.custom[0].command: the command uses `filtr`, which is not a parameter of the tool; did you mean `filter`?",
        ":12:13: tools.custom[1].name: duplicate tool name `run_tests`; first defined at 8:13",
        ":16:10: skills.dirs[0]: ",
    ];
    assert_eq!(found.len(), expected.len(), "{shown}");
    for (line, want) in found.iter().zip(expected) {
        assert!(line.starts_with(&format!("{prefix}{want}")), "expected {want}\n in {shown}");
    }
    assert!(shown.contains("missing-skills is not a directory"), "{shown}");
}

#[test]
fn semantic_problems_after_a_removed_list_item_keep_their_original_index() {
    let yaml = "version: 1\nname: a\ntools:\n  custom:\n    - name: 5\n      description: [bad]\n      command: x\n    - name: read\n      description: clash\n      command: echo\n";
    let found = errors(yaml);
    assert!(
        found.iter().any(|line| line.starts_with("agent.yaml:6:20: tools.custom[0].description: expected text")),
        "{found:?}"
    );
    assert!(
        found.iter().any(|line| line.starts_with("agent.yaml:8:13: tools.custom[1].name: `read` is a built-in tool")),
        "{found:?}"
    );
}

#[test]
fn custom_tool_schemas_and_handlers_are_checked() {
    let bad_schema = "version: 1\nname: a\ntools:\n  custom:\n    - name: t\n      description: d\n      parameters: { type: object, properties: { n: { type: integr } } }\n      command: echo {{ n }}\n";
    let found = errors(bad_schema);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("agent.yaml:7:60: tools.custom[0].parameters.properties.n.type: not a JSON Schema type: `integr` is not allowed here; did you mean `integer`?"), "{found:?}");
    let both = "version: 1\nname: a\ntools:\n  custom:\n    - { name: t, description: d, command: echo, handler: rust }\n    - { name: u, description: d }\n";
    let found = errors(both);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].contains("tools.custom[0].handler: a tool has either `command` or `handler: rust`"), "{found:?}");
    assert!(found[1].contains("tools.custom[1]: tool `u` needs `command"), "{found:?}");
    let quoted = "version: 1\nname: a\ntools:\n  custom:\n    - name: t\n      description: d\n      parameters: { type: object, properties: { x: { type: string } } }\n      command: echo '{{ x }}'\n";
    assert!(errors(quoted)[0].contains("is inside quotes"), "{:?}", errors(quoted));
    let broken = "version: 1\nname: a\ntools:\n  custom:\n    - { name: t, description: d, command: 'echo {{ x' }\n";
    assert!(errors(broken)[0].contains("the command template does not parse"), "{:?}", errors(broken));
}

#[test]
fn command_templates_may_use_builtin_functions_but_not_unknown_filters_or_tests() {
    let tool = |command: &str| {
        format!(
            "version: 1\nname: a\ntools:\n  custom:\n    - name: t\n      description: d\n      \
             parameters: {{ type: object, properties: {{ n: {{ type: integer }}, w: {{ type: string }} }} }}\n      \
             command: \"{command}\"\n"
        )
    };
    let fine = tool("{% for i in range(n) %}{{ w | upper }}{% endfor %}{% if w is defined %}x{% endif %}");
    assert_eq!(errors(&fine), Vec::<String>::new());
    let found = errors(&tool("echo {{ w | uper }} {% if n is od %}odd{% endif %}"));
    assert_eq!(
        found,
        [
            "agent.yaml:8:16: tools.custom[0].command: the command uses the filter `uper`, which does not exist; \
             did you mean `upper`?",
            "agent.yaml:8:16: tools.custom[0].command: the command uses the test `od`, which does not exist; \
             did you mean `odd`?",
        ]
    );
}

#[test]
fn system_prompt_templates_may_use_only_known_variables() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("system.md.j2"), "You are {{ name }}. {{ tols }}").expect("write");
    let yaml = "version: 1\nname: a\nsystem_prompt:\n  template: system.md.j2\n";
    let found = errors_in(&dir.path().join("a.yaml"), yaml);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].ends_with(
            "system_prompt.template: the template uses `tols`, which is never defined; did you mean `tools`?"
        ),
        "{found:?}"
    );
    std::fs::write(dir.path().join("system.md.j2"), "You are {{ name }} with {{ tools | join(', ') }}.")
        .expect("write");
    parse_spec(&dir.path().join("a.yaml"), yaml).expect("valid template");
}

#[test]
fn syntax_errors_are_located() {
    let found = errors("version: 1\nname: [pi\n");
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("agent.yaml:3:1: YAML syntax:"), "{found:?}");
    let duplicate = errors("version: 1\nname: a\nname: b\n");
    assert!(
        duplicate[0].starts_with("agent.yaml:3:1: YAML syntax: ") && duplicate[0].contains("duplicate"),
        "{duplicate:?}"
    );
}

#[test]
fn missing_required_keys_are_reported() {
    assert_eq!(errors("version: 1\n"), ["agent.yaml:1:1: (top level): missing required key `name`"]);
    assert!(errors("")[0].contains("the file is empty"));
}

#[test]
fn garbage_never_panics() {
    let samples = [
        "",
        ":",
        "[",
        "version: [1",
        "\u{0}",
        "name: pi\nversion: x",
        "- 1\n- 2",
        "? [a]\n: b",
        "!!binary aGk=",
        "version: 1\nname: a\nproviders: { x: { models: [ { id: 1 } ] } }",
        "&a [*a]",
        "version: .nan\nname: a",
    ];
    for text in samples {
        assert!(!errors(text).is_empty(), "{text:?} should be rejected");
    }
}

/// Mutates a real agent file hundreds of ways (deleted spans, stray YAML punctuation, duplicated and
/// swapped lines): every result is a spec or located errors inside the file, never a panic.
#[test]
fn mutated_agent_files_never_panic_and_stay_located() {
    let original = include_str!("../../../agents/reviewer.yaml");
    let lines = original.lines().count();
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |bound: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % bound.max(1) as u64) as usize
    };
    let noise =
        [":", "-", "[", "]", "{", "}", "#", "&a", "*a", "!!str", "|", ">", "'", "\"", "\n", "  ", "\t", "0x1f", "? "];
    for _ in 0..1500 {
        let mut text: Vec<char> = original.chars().collect();
        for _ in 0..1 + next(3) {
            match next(4) {
                0 => {
                    let start = next(text.len());
                    let end = (start + 1 + next(12)).min(text.len());
                    text.drain(start..end);
                }
                1 => {
                    let at = next(text.len());
                    text.splice(at..at, noise[next(noise.len())].chars());
                }
                _ => {
                    let mut all: Vec<String> = text.iter().collect::<String>().lines().map(str::to_owned).collect();
                    if all.len() > 2 {
                        let (a, b) = (next(all.len()), next(all.len()));
                        if next(2) == 0 { all.swap(a, b) } else { all.insert(a, all[b].clone()) }
                    }
                    text = (all.join("\n") + "\n").chars().collect();
                }
            }
        }
        let mutated: String = text.into_iter().collect();
        if let Err(SpecError::Invalid(errors)) = parse_spec(Path::new("agents/reviewer.yaml"), &mutated) {
            assert!(!errors.is_empty());
            for error in errors {
                assert!(error.line >= 1 && error.line <= lines + 40, "{error} in\n{mutated}");
                assert!(error.column >= 1, "{error}");
            }
        }
    }
}

#[test]
fn a_literal_api_key_is_refused_without_being_repeated() {
    let provider = |key: &str| {
        format!(
            "version: 1\nname: a\nproviders:\n  local:\n    base_url: http://127.0.0.1:1/v1\n    api: openai-completions\n    api_key: \"{key}\"\n    models: [ {{ id: m }} ]\n"
        )
    };
    let found = errors(&provider("sk-live-abc123secret"));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("agent.yaml:7:14: providers.local.api_key: api_key must name an environment variable"),
        "{found:?}"
    );
    assert!(!found[0].contains("sk-live"), "the key must not be echoed: {found:?}");
    assert!(errors(&provider("LOCAL_API_KEY")).is_empty());
    assert!(errors(&provider("!pass show local")).is_empty());
}
