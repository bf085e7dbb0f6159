//! Tests of `subagents:`: the sub-agents' files read into the spec (recursively), and every mistake located:
//! names (format, built-in and custom clashes, duplicates) and a missing file in the parent, a cycle and a
//! too deep chain where they close, and a sub-agent's own problems in its own file.

use std::path::Path;

use super::test_support::assert_errors;
use super::*;

/// Writes `files` (name, text) into a fresh directory.
fn agents(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).expect("write");
    }
    dir
}

/// The errors of loading `name` in `dir`, each as `file:line:col: message` with the file's name only.
fn errors_of(dir: &Path, name: &str) -> Vec<String> {
    match load_spec(&dir.join(name)) {
        Ok(_) => Vec::new(),
        Err(SpecError::Invalid(list)) => list
            .iter()
            .map(|error| {
                let file = error.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                format!("{file}:{}:{}: {}", error.line, error.column, error.message)
            })
            .collect(),
        Err(other) => vec![other.to_string()],
    }
}

const SCOUT: &str = "version: 1\nname: scout\ndescription: Reads code\ntools: { builtin: [read, grep] }\n";

#[test]
fn sub_agents_are_read_with_their_own_sub_agents() {
    let dir = agents(&[
        (
            "lead.yaml",
            "version: 1\nname: lead\nsubagents:\n  - { name: explore, path: scout.yaml }\n  - name: plan\n    path: planner.yaml\n    description: Plans the work\nmax_subagent_depth: 2\n",
        ),
        ("scout.yaml", SCOUT),
        ("planner.yaml", "version: 1\nname: planner\nsubagents:\n  - { name: look, path: scout.yaml }\n"),
    ]);
    let spec = load_spec(&dir.path().join("lead.yaml")).expect("valid");
    let names: Vec<(&str, &str)> =
        spec.loaded_subagents.iter().map(|sub| (sub.name.as_str(), sub.description.as_str())).collect();
    assert_eq!(names, [("explore", "Reads code"), ("plan", "Plans the work")]);
    assert_eq!(spec.loaded_subagents[0].spec.name, "scout");
    assert!(spec.loaded_subagents[0].spec_path.ends_with("scout.yaml"));
    let planner = &spec.loaded_subagents[1].spec;
    assert_eq!(planner.loaded_subagents.len(), 1);
    assert_eq!(planner.loaded_subagents[0].description, "Reads code");
    assert_eq!(spec.max_subagent_depth, Some(2));
}

#[test]
fn tool_names_must_be_valid_free_and_unique() {
    let parent = "\
version: 1
name: lead
tools:
  custom:
    - { name: deploy, description: Deploys, command: ./deploy.sh }
subagents:
  - name: read
    path: scout.yaml
  - name: deploy
    path: scout.yaml
  - name: \"two words\"
    path: scout.yaml
  - name: explore
    path: scout.yaml
  - name: explore
    path: scout.yaml
";
    let dir = agents(&[("lead.yaml", parent), ("scout.yaml", SCOUT)]);
    assert_errors(
        &errors_of(dir.path(), "lead.yaml"),
        &[
            "lead.yaml:7:11: subagents[0].name: `read` is a built-in tool; give the sub-agent another name",
            "lead.yaml:9:11: subagents[1].name: `deploy` is also a custom tool (tools.custom); give the sub-agent another name; first defined at 5:15",
            "lead.yaml:11:11: subagents[2].name: \"two words\" cannot be a tool name; use 1 to 64 letters, digits, '_' or '-'",
            "lead.yaml:15:11: subagents[4].name: duplicate sub-agent name `explore`; each one is a tool of its own; first defined at 13:11",
        ],
    );
}

#[test]
fn a_missing_file_is_named_with_its_full_path() {
    let dir = agents(&[("lead.yaml", "version: 1\nname: lead\nsubagents:\n  - name: explore\n    path: gone.yaml\n")]);
    let errors = errors_of(dir.path(), "lead.yaml");
    let gone = dir.path().join("gone.yaml");
    assert_errors(
        &errors,
        &[&format!("lead.yaml:5:11: subagents[0].path: cannot read {} (No such file or directory", gone.display())],
    );
    assert!(errors[0].ends_with("; paths are relative to the YAML file"), "{errors:?}");
    std::fs::create_dir(dir.path().join("gone.yaml")).expect("mkdir");
    assert_eq!(
        errors_of(dir.path(), "lead.yaml"),
        [format!(
            "lead.yaml:5:11: subagents[0].path: {} is not a file; `path` names another agent YAML",
            gone.display()
        )]
    );
}

#[test]
fn a_cycle_is_reported_with_its_chain_where_it_closes() {
    let dir = agents(&[
        ("a.yaml", "version: 1\nname: a\nsubagents:\n  - { name: b, path: b.yaml }\n"),
        ("b.yaml", "version: 1\nname: b\nsubagents:\n  - { name: back, path: ./a.yaml }\n"),
        ("self.yaml", "version: 1\nname: me\nsubagents:\n  - { name: again, path: self.yaml }\n"),
    ]);
    assert_eq!(
        errors_of(dir.path(), "a.yaml"),
        ["b.yaml:4:25: subagents[0].path: sub-agent cycle: a.yaml → b.yaml → a.yaml; an agent cannot reach itself \
          through its sub-agents"]
    );
    assert_eq!(
        errors_of(dir.path(), "self.yaml"),
        ["self.yaml:4:26: subagents[0].path: sub-agent cycle: self.yaml → self.yaml; an agent cannot reach itself \
          through its sub-agents"]
    );
}

#[test]
fn a_chain_deeper_than_the_root_allows_is_an_error() {
    let link =
        |name: &str, next: &str| format!("version: 1\nname: {name}\nsubagents:\n  - {{ name: next, path: {next} }}\n");
    let root = "version: 1\nname: root\nmax_subagent_depth: 2\nsubagents:\n  - { name: next, path: one.yaml }\n";
    let (one, two) = (link("one", "two.yaml"), link("two", "three.yaml"));
    let dir = agents(&[("root.yaml", root), ("one.yaml", &one), ("two.yaml", &two), ("three.yaml", SCOUT)]);
    assert_eq!(
        errors_of(dir.path(), "root.yaml"),
        [
            "two.yaml:4:25: subagents[0].path: sub-agents nest 3 deep here (root.yaml → one.yaml → two.yaml → three.yaml), \
          deeper than max_subagent_depth (2)"
        ]
    );
    // The default allows three levels.
    let default_root = "version: 1\nname: root\nsubagents:\n  - { name: next, path: one.yaml }\n";
    std::fs::write(dir.path().join("root.yaml"), default_root).expect("write");
    assert_eq!(errors_of(dir.path(), "root.yaml"), Vec::<String>::new());
}

#[test]
fn a_sub_agents_own_problems_are_located_in_its_file() {
    let dir = agents(&[
        ("lead.yaml", "version: 1\nname: lead\nnmae: typo\nsubagents:\n  - { name: explore, path: scout.yaml }\n"),
        ("scout.yaml", "version: 1\nname: scout\ntools:\n  builtin: [read, grpe]\n"),
    ]);
    assert_eq!(
        errors_of(dir.path(), "lead.yaml"),
        [
            "lead.yaml:3:1: nmae: unknown key `nmae`; did you mean `name`?",
            "scout.yaml:4:19: tools.builtin[1]: `grpe` is not allowed here; did you mean `grep`?"
        ]
    );
}

#[test]
fn a_sub_agent_cannot_have_rust_tools() {
    let dir = agents(&[
        ("lead.yaml", "version: 1\nname: lead\nsubagents:\n  - { name: explore, path: notes.yaml }\n"),
        (
            "notes.yaml",
            "version: 1\nname: notes\ntools:\n  custom:\n    - { name: add_note, description: d, handler: rust }\n",
        ),
    ]);
    assert_eq!(
        errors_of(dir.path(), "lead.yaml"),
        ["lead.yaml:4:28: subagents[0].path: the sub-agent has tools implemented in Rust (add_note); a sub-agent's \
          tools need a `command`"]
    );
}

#[test]
fn the_depth_must_be_positive() {
    let dir = agents(&[("lead.yaml", "version: 1\nname: lead\nmax_subagent_depth: 0\n")]);
    let errors = errors_of(dir.path(), "lead.yaml");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].starts_with("lead.yaml:3:21: max_subagent_depth: "), "{errors:?}");
}

#[test]
fn permission_rules_and_hooks_may_name_sub_agent_tools_and_their_task() {
    let dir = agents(&[
        (
            "lead.yaml",
            "version: 1\nname: lead\nsubagents:\n  - { name: explore, path: scout.yaml }\npermissions:\n  rules:\n    \
             - { tool: explore, match: { task: \"*secret*\" }, action: deny }\n    - { tool: explore, match: { job: x }, action: ask }\n",
        ),
        ("scout.yaml", SCOUT),
    ]);
    let found = errors_of(dir.path(), "lead.yaml");
    assert_errors(
        &found,
        &["lead.yaml:8:33: permissions.rules[1].match.job: `explore` has no argument `job`; its arguments: task"],
    );
}
