//! Tests of `permissions:`, `model.fallbacks` and `output:`: a valid spec parses and lowers; each mistake is located at
//! `file:line:col` with its YAML path.

use std::path::Path;

use super::test_support::{assert_errors, errors_in};
use super::*;
use crate::spec::PermissionActionSpec;

const VALID: &str = "\
version: 1
name: a
model:
  fallbacks: [openai/gpt-5-mini, \"anthropic/claude-haiku-4-5:low\"]
permissions:
  default: ask
  rules:
    - name: no-push
      tool: bash
      match: { command: { regex: \"\\\\bgit push\\\\b\" } }
      action: deny
      reason: Pushing is for people.
    - tool: \"mcp__*\"
      action: allow
    - tool: read
      action: allow
";

#[test]
fn permissions_and_fallbacks_parse_and_lower() {
    let spec = parse_spec(Path::new("agent.yaml"), VALID).expect("valid");
    let permissions = spec.permissions.as_ref().expect("permissions");
    assert_eq!(permissions.default, Some(PermissionActionSpec::Ask));
    assert_eq!(permissions.rules.len(), 3);
    assert_eq!(permissions.rules[0].action, PermissionActionSpec::Deny);
    let ctx = crate::lower::LowerContext::new(Path::new("agent.yaml"));
    let code = crate::lower::definition_tokens(&spec, &ctx).expect("lowers").to_string();
    assert!(code.contains("PermissionAction :: Ask"), "{code}");
    assert!(code.contains("\"no-push\""), "{code}");
    assert!(code.contains("\"permissions.rules[1]\""), "the unnamed rule is named by its place: {code}");
    assert!(code.contains("\"anthropic/claude-haiku-4-5:low\""), "{code}");
}

#[test]
fn rules_name_real_tools_and_arguments_with_patterns_that_compile() {
    let found = errors_in(
        Path::new("agent.yaml"),
        "version: 1\nname: a\npermissions:\n  rules:\n    - tool: bsh\n      action: deny\n    - tool: bash\n      \
         match: { comand: ls }\n      action: ask\n    - tool: { regex: \"(\" }\n      action: deny\n    - tool: read\n      \
         action: maybe\n",
    );
    assert_errors(
        &found,
        &[
            "agent.yaml:5:13: permissions.rules[0].tool: unknown tool `bsh`; did you mean `bash`?",
            "agent.yaml:8:16: permissions.rules[1].match.comand: `bash` has no argument `comand`; did you mean `command`?",
            "agent.yaml:10:22: permissions.rules[2].tool.regex: the regex does not compile",
            "agent.yaml:13:15: permissions.rules[3].action:",
        ],
    );
}

#[test]
fn names_are_unique_and_reasons_say_something() {
    let found = errors_in(
        Path::new("agent.yaml"),
        "version: 1\nname: a\npermissions:\n  rules:\n    - { name: r, tool: bash, action: deny, reason: \" \" }\n    \
         - { name: r, tool: read, action: allow }\n",
    );
    assert_errors(
        &found,
        &[
            "agent.yaml:5:52: permissions.rules[0].reason: the reason is empty",
            "agent.yaml:6:15: permissions.rules[1].name: permissions.rules[0] is named `r` already",
        ],
    );
}

#[test]
fn fallbacks_are_provider_slash_id() {
    let found = errors_in(
        Path::new("agent.yaml"),
        "version: 1\nname: a\nmodel:\n  fallbacks:\n    - gpt-5-mini\n    - openai/gpt-5:max\n",
    );
    assert_errors(
        &found,
        &[
            "agent.yaml:5:7: model.fallbacks[0]: \"gpt-5-mini\" is not `provider/id` with an optional `:<thinking>`",
            "agent.yaml:6:7: model.fallbacks[1]: `max` is pi 1.5's level",
        ],
    );
}

#[test]
fn the_output_schema_must_be_a_json_schema() {
    let found = errors_in(
        Path::new("agent.yaml"),
        "version: 1\nname: a\noutput:\n  schema:\n    type: object\n    properties:\n      n: { type: integr }\n",
    );
    assert_errors(&found, &["agent.yaml:7:18: output.schema.properties.n.type: not a JSON Schema type:"]);
    let spec = parse_spec(Path::new("agent.yaml"), "version: 1\nname: a\noutput:\n  schema: { type: array }\n")
        .expect("valid");
    let ctx = crate::lower::LowerContext::new(Path::new("agent.yaml"));
    let code = crate::lower::definition_tokens(&spec, &ctx).expect("lowers").to_string();
    assert!(code.contains(r#"output_schema : :: core :: option :: Option :: Some ("{\"type\":\"array\"}""#), "{code}");
}
