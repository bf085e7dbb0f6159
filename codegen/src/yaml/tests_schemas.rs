//! Tests for parameter and output schemas (unknown keywords, `required` names, `null` from a comma in
//! `{ }`), tabs in the indentation, and duplicates that point at their first definition.

use std::path::Path;

use super::test_support::errors_in;

fn errors(text: &str) -> Vec<String> {
    errors_in(Path::new("agent.yaml"), text)
}

const TOOL: &str = "version: 1\nname: a\ntools:\n  custom:\n    - name: release\n      description: Release\n      command: echo {{ tag }}\n      parameters:\n";

#[test]
fn a_required_name_must_be_a_property() {
    let found = errors(&format!(
        "{TOOL}        type: object\n        properties:\n          tag: {{ type: string }}\n        required: [tag, tga, other]\n"
    ));
    assert_eq!(
        found,
        [
            "agent.yaml:12:25: tools.custom[0].parameters.required[1]: `tga` is required but not in `properties`; did \
             you mean `tag`?",
            "agent.yaml:12:30: tools.custom[0].parameters.required[2]: `other` is required but not in `properties`; \
             properties: tag",
        ]
    );
}

#[test]
fn unknown_keywords_are_located_with_the_nearest_keyword() {
    let found = errors(&format!(
        "{TOOL}        type: object\n        properties:\n          tag:\n            type: string\n            desciption: The tag\n          kind:\n            enum_values: [a, b]\n          note:\n            optional: true\n"
    ));
    assert_eq!(
        found,
        [
            "agent.yaml:13:13: tools.custom[0].parameters.properties.tag.desciption: `desciption` is not a JSON \
             Schema keyword (validators ignore it); did you mean `description`?",
            "agent.yaml:15:13: tools.custom[0].parameters.properties.kind.enum_values: `enum_values` is not a JSON \
             Schema keyword (validators ignore it); did you mean `enum`?",
            "agent.yaml:17:13: tools.custom[0].parameters.properties.note.optional: `optional` is not a JSON Schema \
             keyword (validators ignore it); a property is optional unless its name is listed in `required`",
        ]
    );
}

#[test]
fn property_names_are_not_keywords() {
    let found = errors(&format!(
        "{TOOL}        type: object\n        properties:\n          tag: {{ type: string }}\n          desciption: {{ type: string }}\n          optional: {{ type: boolean }}\n"
    ));
    assert_eq!(found, Vec::<String>::new());
}

#[test]
fn a_comma_inside_a_flow_mapping_is_explained_at_the_stray_key() {
    let found = errors(&format!(
        "{TOOL}        type: object\n        properties:\n          tag: {{ type: string, description: Optional label, e.g. rc.1 }}\n"
    ));
    assert_eq!(
        found,
        ["agent.yaml:11:61: tools.custom[0].parameters.properties.tag.e.g. rc.1: `e.g. rc.1` is a key without a \
          value: quote the description: a comma inside { } starts a new key, so the text after it became this key"]
    );
}

#[test]
fn a_property_without_a_schema_is_an_error() {
    let found = errors(&format!("{TOOL}        type: object\n        properties:\n          tag:\n"));
    assert_eq!(
        found,
        ["agent.yaml:11:11: tools.custom[0].parameters.properties.tag: `tag` has no schema (null); write `tag: { \
          type: string }` or similar; if this came from a `{ }` mapping above, a comma inside it starts a new key: \
          quote the text that has the comma"]
    );
}

#[test]
fn the_output_schema_gets_the_same_checks() {
    let found = errors(
        "version: 1\nname: a\noutput:\n  schema:\n    type: object\n    properties:\n      n: { type: integer, descripton: Count }\n    required: [m]\n",
    );
    assert_eq!(
        found,
        [
            "agent.yaml:7:27: output.schema.properties.n.descripton: `descripton` is not a JSON Schema keyword \
             (validators ignore it); did you mean `description`?",
            "agent.yaml:8:16: output.schema.required[0]: `m` is required but not in `properties`; did you mean `n`?",
        ]
    );
}

#[test]
fn a_tab_in_the_indentation_is_named() {
    let found = errors("version: 1\nname: a\ntools:\n\tbuiltin: [read]\n");
    assert_eq!(found, ["agent.yaml:4:1: a tab in the indentation; YAML is indented with spaces, not tabs"]);
    let after_spaces = errors("version: 1\nname: a\ntools:\n  builtin: [read]\n  \texecution: parallel\n");
    assert_eq!(after_spaces, ["agent.yaml:5:3: a tab in the indentation; YAML is indented with spaces, not tabs"]);
}

#[test]
fn a_duplicate_tool_name_points_at_the_first_definition() {
    let yaml = "\
version: 1
name: a
tools:
  custom:
    - name: deploy
      description: One
      command: echo one
    - name: status
      description: Two
      command: echo two
    - name: deploy
      description: Three
      command: echo three
";
    assert_eq!(
        errors(yaml),
        ["agent.yaml:11:13: tools.custom[2].name: duplicate tool name `deploy`; first defined at 5:13"]
    );
}
