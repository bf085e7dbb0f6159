//! Tests of the `handler: rust` lowering: snapshots of the generated code and its parts.

use std::path::Path;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::*;
use crate::yaml::parse_spec;

const NOTES: &str = r#"
version: 1
name: notes
tools:
  builtin: [read]
  custom:
    - name: add_note
      label: Add note
      description: Store a note
      prompt_snippet: Store a short note
      prompt_guidelines: [Keep notes short]
      parameters:
        type: object
        properties:
          text: { type: string, description: The note itself }
          tags: { type: array, items: { type: string } }
          priority: { type: integer }
          dueDate: { type: [string, "null"] }
        required: [text, dueDate]
      handler: rust
    - name: list-notes
      description: List the notes
      handler: rust
    - name: run_tests
      description: Run the tests
      command: cargo test
"#;

fn spec(yaml: &str) -> AgentSpec {
    match parse_spec(Path::new("notes.yaml"), yaml) {
        Ok(spec) => spec,
        Err(error) => panic!("invalid test YAML: {error}"),
    }
}

fn ctx() -> LowerContext {
    LowerContext::new(Path::new("/agents/notes/notes.yaml"))
}

fn pretty(tokens: TokenStream) -> String {
    match syn::parse2::<syn::File>(tokens) {
        Ok(file) => prettyplease::unparse(&file),
        Err(error) => panic!("generated code does not parse: {error}"),
    }
}

fn squash(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

#[test]
fn generated_code_for_an_agent_with_rust_tools() {
    let agent = format_ident!("Notes");
    let tokens = agent_impl(&spec(NOTES), &ctx(), &agent, &quote!(::core::todo!("definition")));
    insta::assert_snapshot!("notes_agent", pretty(tokens));
}

#[test]
fn an_agent_without_rust_tools_runs_the_plain_cli() {
    let yaml = "version: 1\nname: plain\ntools:\n  custom:\n    - { name: t, description: d, command: 'true' }\n";
    let agent = format_ident!("Plain");
    assert!(rust_tools_tokens(&spec(yaml), &ctx(), &agent).is_empty());
    let code = squash(&pretty(agent_impl(&spec(yaml), &ctx(), &agent, &quote!(::core::todo!()))));
    assert!(code.contains("::pi_runtime::cli::run(Self::definition())"), "{code}");
    assert!(!code.contains("run_with_tools"), "{code}");
    assert!(!code.contains("trait"), "{code}");
}

#[test]
fn argument_fields_follow_the_schema() {
    let code = squash(&pretty(rust_tools_tokens(&spec(NOTES), &ctx(), &format_ident!("Notes"))));
    for field in [
        "///Thenoteitselfpubtext:::std::string::String,",
        "#[serde(default)]pubtags:::core::option::Option<::std::vec::Vec<::std::string::String>>,",
        "#[serde(default)]pubpriority:::core::option::Option<i64>,",
        "#[serde(rename=\"dueDate\",default)]pubdue_date:::core::option::Option<::std::string::String>,",
        "pubstructListNotesArgs{}",
    ] {
        assert!(code.contains(field), "missing {field} in {code}");
    }
    assert!(!code.contains("RunTestsArgs"), "command tools get no struct: {code}");
    assert!(!code.contains("fnrun_tests"), "command tools get no method: {code}");
}

#[test]
fn odd_schemas_map_to_json_values_and_raw_identifiers() {
    let yaml = r#"
version: 1
name: odd
tools:
  custom:
    - name: t
      description: d
      handler: rust
      parameters:
        type: object
        properties:
          type: { type: string }
          self: { type: number }
          config: { type: object }
          anything: {}
          mixed: { type: [string, integer] }
          flags: { type: array, items: { type: boolean } }
          loose: { type: array }
          choice: { enum: [a, b] }
        required: [type, self, config, anything, mixed, flags, loose, choice]
"#;
    let code = squash(&pretty(rust_tools_tokens(&spec(yaml), &ctx(), &format_ident!("Odd"))));
    let value = "::pi_runtime::macro_support::serde_json::Value";
    for field in [
        "pubr#type:::std::string::String,".to_owned(),
        "#[serde(rename=\"self\")]pubself_:f64,".to_owned(),
        format!("pubconfig:{value},"),
        format!("pubanything:{value},"),
        format!("pubmixed:{value},"),
        "pubflags:::std::vec::Vec<bool>,".to_owned(),
        format!("publoose:::std::vec::Vec<{value}>,"),
        "pubchoice:::std::string::String,".to_owned(),
    ] {
        assert!(code.contains(&field), "missing {field} in {code}");
    }
}

#[test]
fn the_runtime_path_reaches_serde_and_every_runtime_item() {
    let mut ctx = ctx();
    ctx.runtime = quote!(::engine);
    let code = squash(&pretty(rust_tools_tokens(&spec(NOTES), &ctx, &format_ident!("Notes"))));
    assert!(code.contains("#[serde(crate=\"::engine::macro_support::serde\")]"), "{code}");
    assert!(code.contains("::engine::macro_support::serde::Deserialize"), "{code}");
    assert!(!code.contains("pi_runtime"), "{code}");
    ctx.runtime = quote!(crate);
    let code = squash(&pretty(rust_tools_tokens(&spec(NOTES), &ctx, &format_ident!("Notes"))));
    assert!(code.contains("#[serde(crate=\"crate::macro_support::serde\")]"), "{code}");
}

#[test]
fn the_missing_impl_message_names_the_agent_and_its_tools() {
    let code = pretty(rust_tools_tokens(&spec(NOTES), &ctx(), &format_ident!("Notes")));
    let expected =
        "message = \"`{Self}` does not implement the Rust tools of agent `notes` (`add_note`, `list-notes`)\"";
    assert!(code.contains(expected), "{code}");
    assert!(code.contains("tools::<Notes>(self)"), "{code}");
}

#[test]
fn tools_whose_names_collide_in_rust_are_a_compile_error() {
    let yaml = "version: 1\nname: c\ntools:\n  custom:\n    - { name: add-note, description: d, handler: rust }\n    - { name: add_note, description: d, handler: rust }\n";
    let code = rust_tools_tokens(&spec(yaml), &ctx(), &format_ident!("C")).to_string();
    assert!(code.starts_with(":: core :: compile_error !"), "{code}");
    assert!(code.contains("tools `add-note` and `add_note` both become `add_note`/`AddNoteArgs`"), "{code}");
}

#[test]
fn the_yaml_and_the_files_it_references_are_included() {
    let dir = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(error) => panic!("tempdir: {error}"),
    };
    let yaml_path = dir.path().join("notes.yaml");
    let template = dir.path().join("system.md");
    if let Err(error) = std::fs::write(&template, "You keep notes for {{ name }}.") {
        panic!("write: {error}");
    }
    let yaml = "version: 1\nname: notes\nsystem_prompt:\n  template: system.md\n";
    let spec = match parse_spec(&yaml_path, yaml) {
        Ok(spec) => spec,
        Err(error) => panic!("invalid: {error}"),
    };
    let tokens = match agent_tokens(&spec, &LowerContext::new(&yaml_path), &format_ident!("Notes")) {
        Ok(tokens) => tokens,
        Err(error) => panic!("lowering failed: {error}"),
    };
    let code = pretty(tokens);
    let include = |path: &Path| format!("const _: &[u8] = ::core::include_bytes!({:?});", path.to_string_lossy());
    assert!(code.contains(&include(&yaml_path)), "{code}");
    assert!(code.contains(&include(&template)), "{code}");
    assert!(code.contains("You keep notes for notes."), "{code}");
}
