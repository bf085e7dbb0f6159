//! Property tests of agent YAML reading (`parse_spec`, `load_spec`, what `pi-gen check` and `build` run):
//! random text, YAML-ish lines, character edits and structural edits of the agents in agents/, random
//! bytes, and random minijinja templates (tool commands, `system_prompt.template`) never panic or hang, and
//! every error is located at a line and column of the file. Bounded for CI; `scripts/fuzz` runs more.

mod agent_files;
#[path = "../../runtime/tests/fuzz_support/mod.rs"]
mod fuzz_support;

use std::path::{Path, PathBuf};

use agent_files::agent_files;
use fuzz_support::{apply_edits, config, tricky_text, within};
use pi_codegen::{AgentSpec, SpecError, load_spec, parse_spec};
use proptest::prelude::*;
use proptest::sample::Index;
use serde_yaml::Value;

/// Every agent YAML under agents/ (agent crates included), with its text.
fn seeds() -> Vec<(PathBuf, String)> {
    agent_files().into_iter().map(|path| (path.clone(), std::fs::read_to_string(&path).expect("agent file"))).collect()
}

/// Reads `text` as the agent file `path` on a guarded thread.
fn parse_guarded(path: PathBuf, text: String) -> Result<AgentSpec, SpecError> {
    let shown = text.clone();
    within(move || format!("{shown:?}"), move || parse_spec(&path, &text))
}

/// An error must be a non-empty list of problems, each at a line and column of the file, in file order.
fn assert_located(path: &Path, text: &str, result: &Result<AgentSpec, SpecError>) -> Result<(), TestCaseError> {
    let errors = match result {
        Ok(_) => return Ok(()),
        Err(SpecError::Invalid(errors)) => errors,
        Err(other) => return Err(TestCaseError::fail(format!("not a located error: {other}"))),
    };
    prop_assert!(!errors.is_empty());
    let lines: Vec<&str> = text.split('\n').collect();
    for error in errors {
        prop_assert_eq!(&error.path, path);
        prop_assert!((1..=lines.len()).contains(&error.line), "{error}: the file has {} lines", lines.len());
        let width = lines[error.line - 1].chars().count();
        prop_assert!((1..=width + 1).contains(&error.column), "{error}: line {} has {width} characters", error.line);
        prop_assert!(!error.message.trim().is_empty(), "{error:?}");
    }
    prop_assert!(errors.windows(2).all(|pair| (pair[0].line, pair[0].column) <= (pair[1].line, pair[1].column)));
    Ok(())
}

fn check(path: PathBuf, text: String) -> Result<(), TestCaseError> {
    let result = parse_guarded(path.clone(), text.clone());
    assert_located(&path, &text, &result)
}

fn seed_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../agents/fuzz.yaml")
}

/// A YAML-ish line: indentation, keys the spec knows, list dashes, flow collections, quotes, anchors.
fn yamlish_line() -> impl Strategy<Value = String> {
    let indent = prop::sample::select(vec!["", "  ", "    ", "      ", "\t", " "]);
    let key = prop::sample::select(vec![
        "version",
        "name",
        "description",
        "config_dir",
        "env_prefix",
        "model",
        "providers",
        "system_prompt",
        "tools",
        "builtin",
        "custom",
        "command",
        "parameters",
        "skills",
        "prompts",
        "templates",
        "hooks",
        "on",
        "match",
        "commands",
        "arguments",
        "context",
        "strategy",
        "panels",
        "command_panels",
        "identity",
        "guidelines",
        "template",
        "timeout",
        "type",
        "properties",
        "<<",
        "? complex",
        "\"quoted key\"",
        "x",
    ]);
    let value = prop_oneof![
        prop::sample::select(vec![
            "",
            "1",
            "-1",
            "1.5",
            "0x10",
            "true",
            "~",
            "null",
            "[read, bash]",
            "{ a: 1 }",
            "[",
            "{",
            "|",
            ">-",
            "&a x",
            "*a",
            "!!str 5",
            "!custom x",
            "'single'",
            "\"double\"",
            "{{ path }}",
            "{% for x in y %}",
            "- item",
            "@",
            "`",
            "%",
            "#comment",
            "a: b: c",
            "\"unterminated",
            "'",
            "...",
            "---",
        ])
        .prop_map(str::to_owned),
        tricky_text(4),
    ];
    prop_oneof![
        4 => (indent.clone(), key, value.clone()).prop_map(|(indent, key, value)| format!("{indent}{key}: {value}")),
        2 => (indent.clone(), value.clone()).prop_map(|(indent, value)| format!("{indent}- {value}")),
        1 => (indent, value).prop_map(|(indent, value)| format!("{indent}{value}")),
    ]
}

/// One edit: replace a few characters at some position by a piece of YAML syntax.
fn edit() -> impl Strategy<Value = (Index, Index, String)> {
    let piece = prop_oneof![
        prop::sample::select(vec![
            ":",
            ": ",
            "#",
            "-",
            "- ",
            "|",
            ">",
            "'",
            "\"",
            "\\",
            "\n",
            "\r\n",
            "\t",
            "  ",
            "[",
            "]",
            "{",
            "}",
            ",",
            "&x",
            "*x",
            "!!binary ",
            "?",
            "~",
            "---\n",
            "...\n",
            "{{",
            "}}",
            "{%",
            "%}",
            "{#",
            "é",
            "😀",
            "\u{feff}",
            "\u{0}",
        ])
        .prop_map(str::to_owned),
        "[ -~]{1,4}",
    ];
    (any::<Index>(), any::<Index>(), piece)
}

/// Any YAML value, a few levels deep, with strings that look like what the spec holds.
fn yaml_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| Value::Number(n.into())),
        (-1e6f64..1e6).prop_map(|n| Value::Number(n.into())),
        prop::sample::select(vec![
            "read",
            "bash",
            "edit",
            "write",
            "grep",
            "find",
            "ls",
            "parallel",
            "sequential",
            "tool_call",
            "tool_result",
            "input",
            "before_agent_start",
            "object",
            "string",
            "array",
            "./hooks/audit.sh",
            "../README.md",
            "{{ x }}",
            "{{ x | nope }}",
            "{% if x %}",
            "$1 ${@:2} $ARGUMENTS",
            "(?i)\\bplan\\b",
            "(unclosed",
            "a-b",
            "",
        ])
        .prop_map(|text| Value::String(text.to_owned())),
        tricky_text(5).prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Sequence),
            prop::collection::vec(("[a-z_]{1,10}", inner), 0..4).prop_map(|pairs| {
                Value::Mapping(pairs.into_iter().map(|(key, value)| (Value::String(key), value)).collect())
            }),
        ]
    })
}

/// Every path (as map keys and list indexes) in `value`.
fn paths(value: &Value, prefix: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    out.push(prefix.clone());
    match value {
        Value::Mapping(map) => {
            for (key, item) in map {
                prefix.push(key.clone());
                paths(item, prefix, out);
                prefix.pop();
            }
        }
        Value::Sequence(items) => {
            for (index, item) in items.iter().enumerate() {
                prefix.push(Value::Number(index.into()));
                paths(item, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

fn node_mut<'a>(value: &'a mut Value, path: &[Value]) -> Option<&'a mut Value> {
    path.iter().try_fold(value, |node, segment| match (node, segment) {
        (Value::Mapping(map), key) => map.get_mut(key),
        (Value::Sequence(items), Value::Number(index)) => index.as_u64().and_then(|i| items.get_mut(i as usize)),
        _ => None,
    })
}

proptest! {
    #![proptest_config(config(128))]

    #[test]
    fn random_text_is_read_or_located(text in any::<String>()) {
        check(seed_path(), text)?;
    }

    #[test]
    fn yamlish_lines_are_read_or_located(lines in prop::collection::vec(yamlish_line(), 0..16)) {
        check(seed_path(), lines.join("\n"))?;
    }

    /// The agents in agents/ with characters replaced by YAML syntax.
    #[test]
    fn edited_agents_are_read_or_located(seed in any::<Index>(), edits in prop::collection::vec(edit(), 1..6)) {
        let seeds = seeds();
        let (path, text) = &seeds[seed.index(seeds.len())];
        check(path.clone(), apply_edits(text, edits.as_slice(), 4))?;
    }

    /// The agents in agents/ with values replaced by random ones (wrong types, unknown tools, bad regexes,
    /// templates naming unknown filters, missing files).
    #[test]
    fn restructured_agents_are_read_or_located(
        seed in any::<Index>(),
        changes in prop::collection::vec((any::<Index>(), yaml_value()), 1..5),
    ) {
        let seeds = seeds();
        let (path, text) = &seeds[seed.index(seeds.len())];
        let mut document: Value = serde_yaml::from_str(text).expect("agents/ files are YAML");
        for (at, replacement) in changes {
            let mut found = Vec::new();
            paths(&document, &mut Vec::new(), &mut found);
            if let Some(node) = node_mut(&mut document, &found[at.index(found.len())]) {
                *node = replacement;
            }
        }
        let text = serde_yaml::to_string(&document).expect("a YAML value serializes");
        check(path.clone(), text)?;
    }

    /// Random bytes as an agent file: `pi-gen check` reads it from disk.
    #[test]
    fn random_bytes_are_read_or_located(
        bytes in prop::collection::vec(any::<u8>(), 0..300),
        utf8_prefix in "[a-z: \n]{0,20}",
    ) {
        let bytes: Vec<u8> = utf8_prefix.into_bytes().into_iter().chain(bytes).collect();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let shown = text.clone();
        let (path, result) = within(move || shown, move || {
            let dir = tempfile::tempdir().expect("temp dir");
            let path = dir.path().join("agent.yaml");
            std::fs::write(&path, &bytes).expect("write");
            let result = load_spec(&path);
            (path, result)
        });
        assert_located(&path, &text, &result)?;
    }

    /// Custom tools with random command templates, and a random `system_prompt.template` file.
    #[test]
    fn random_templates_are_read_or_located(command in template_text(), prompt in template_text()) {
        let command = serde_json::to_string(&command).expect("a string encodes");
        let yaml = [
            "version: 1",
            "name: fuzz",
            "system_prompt:",
            "  template: prompt.md",
            "tools:",
            "  custom:",
            "    - name: t",
            "      description: d",
            "      parameters: { type: object, properties: { x: { type: string } } }",
            &format!("      command: {command}"),
        ]
        .join("\n");
        let shown = format!("{yaml}\n--- prompt.md ---\n{prompt}");
        let text = yaml.clone();
        let (path, result) = within(move || shown, move || {
            let dir = tempfile::tempdir().expect("temp dir");
            std::fs::write(dir.path().join("prompt.md"), prompt).expect("write the template");
            let path = dir.path().join("agent.yaml");
            let result = parse_spec(&path, &yaml);
            (path, result)
        });
        assert_located(&path, &text, &result)?;
    }
}

/// minijinja-ish text: tags, filters (real and misspelt), tests, raw blocks, comments, and shell text.
fn template_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        prop::sample::select(vec![
            "{{ x }}",
            "{{ x | upper }}",
            "{{ x | uper }}",
            "{{ x is defined }}",
            "{{ x is definned }}",
            "{%",
            "%}",
            "{{",
            "}}",
            "{#",
            "#}",
            "{% raw %}",
            "{% endraw %}",
            "{% if x %}",
            "{% endif %}",
            "{% for i in x %}",
            "{% endfor %}",
            "{% filter upper %}",
            "{% endfilter %}",
            "{{ name }}",
            "{{ tools | join(', ') }}",
            "|",
            "'",
            "\"",
            "\\",
            "${#var}",
            "$1",
            " ",
            "\n",
            "é",
            "😀",
        ])
        .prop_map(str::to_owned),
        "[ -~]{1,4}",
    ];
    prop::collection::vec(piece, 0..12).prop_map(|pieces| pieces.concat())
}

/// A file that is not UTF-8 is an error at the first bad byte (it was a "cannot read" error without a
/// place before).
#[test]
fn a_file_that_is_not_utf8_is_located_at_its_first_bad_byte() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("agent.yaml");
    std::fs::write(&path, b"version: 1\nname: caf\xE9\n").expect("write");
    match load_spec(&path) {
        Err(SpecError::Invalid(errors)) => {
            assert_eq!(errors.len(), 1, "{errors:?}");
            assert_eq!((errors[0].line, errors[0].column), (2, 10), "{errors:?}");
            assert!(errors[0].message.contains("not UTF-8"), "{errors:?}");
        }
        other => panic!("expected a located error, got {other:?}"),
    }
}

/// Aliases that expand exponentially ("billion laughs") and deep nesting end in an error, quickly.
#[test]
fn alias_bombs_and_deep_nesting_are_rejected() {
    let mut bomb = String::from("version: 1\nname: bomb\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for level in 1..12 {
        let previous = format!("*a{}", level - 1);
        bomb.push_str(&format!("a{level}: &a{level} [{}]\n", vec![previous; 10].join(", ")));
    }
    let deep = format!("version: 1\nname: deep\nx: {}{}\n", "[".repeat(10_000), "]".repeat(10_000));
    for text in [bomb, deep] {
        let result = parse_guarded(seed_path(), text.clone());
        assert!(matches!(result, Err(SpecError::Invalid(_))), "{result:?}");
    }
}

/// A syntax error at the end of a file without a final newline is on the file's last line (serde_yaml says
/// the line after it, which an editor cannot show).
#[test]
fn an_error_at_the_end_of_a_file_without_a_final_newline_is_on_its_last_line() {
    match parse_guarded(seed_path(), "version: 1\nname: {a".to_owned()) {
        Err(SpecError::Invalid(errors)) => {
            assert_eq!((errors[0].line, errors[0].column), (2, 9), "{errors:?}");
        }
        other => panic!("expected a located error, got {other:?}"),
    }
}
