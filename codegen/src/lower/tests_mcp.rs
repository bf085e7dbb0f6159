//! Tests of lowering `mcp:`: a stdio and an HTTP server spelt out with the runtime's defaults for what the
//! YAML leaves out, `Default::default()` without the section, and the spec's documented default timeout
//! agreeing with the runtime's.

use super::test_support::main_rs_of;

const M: &str = "::pi_runtime::mcp::";

#[test]
fn without_an_mcp_section_the_definition_takes_the_default() {
    let source = main_rs_of("version: 1\nname: a\n");
    assert!(source.contains("mcp:::core::default::Default::default(),"), "{source}");
    let empty = main_rs_of("version: 1\nname: a\nmcp: { servers: [] }\n");
    assert!(empty.contains(&format!("mcp:{M}McpDefinition{{servers:vec![],}},")), "{empty}");
}

#[test]
fn a_bare_stdio_server_takes_the_runtimes_defaults() {
    let source = main_rs_of("version: 1\nname: a\nmcp:\n  servers:\n    - { name: files, command: [srv] }\n");
    let expected = format!(
        "{M}McpServerDefinition{{name:\"files\".to_owned(),transport:{M}McpTransport::Stdio{{\
         command:\"srv\".to_owned(),args:vec![],env:vec![],cwd:::core::option::Option::None,}},\
         tools:::core::option::Option::None,exclude:vec![],timeout_ms:{M}DEFAULT_CALL_TIMEOUT_MS,\
         required:false,enabled:true,description:::core::option::Option::None,}}"
    );
    assert!(source.contains(&expected), "{source}");
}

#[test]
fn every_server_option_reaches_the_definition() {
    let yaml = "\
version: 1
name: a
mcp:
  servers:
    - name: files
      command: [npx, -y, \"@modelcontextprotocol/server-filesystem\", \".\"]
      env: { ZED: \"1\", API_TOKEN: \"${MY_TOKEN}\" }
      cwd: ~/work
      tools: [read_file, list_dir]
      timeout: 0.5
      required: true
      enabled: false
      description: Reads project files
    - name: search
      url: https://search.example/mcp
      headers: { X-Trace: \"on\", Authorization: \"Bearer ${SEARCH_TOKEN}\" }
      exclude: [delete_index]
      timeout: 90
";
    let source = main_rs_of(yaml);
    let expected = [
        format!(
            "mcp:{M}McpDefinition{{servers:vec![{M}McpServerDefinition{{name:\"files\".to_owned(),\
             transport:{M}McpTransport::Stdio{{command:\"npx\".to_owned(),args:vec![\"-y\".to_owned(),\
             \"@modelcontextprotocol/server-filesystem\".to_owned(),\".\".to_owned()],\
             env:vec![(\"ZED\".to_owned(),\"1\".to_owned()),(\"API_TOKEN\".to_owned(),\"${{MY_TOKEN}}\".to_owned())],\
             cwd:::core::option::Option::Some(\"~/work\".to_owned()),}},"
        ),
        "tools:::core::option::Option::Some(vec![\"read_file\".to_owned(),\"list_dir\".to_owned()]),exclude:vec![],\
         timeout_ms:500u64,required:true,enabled:false,\
         description:::core::option::Option::Some(\"Readsprojectfiles\".to_owned()),}"
            .to_owned(),
        format!(
            "{M}McpServerDefinition{{name:\"search\".to_owned(),transport:{M}McpTransport::Http{{\
             url:\"https://search.example/mcp\".to_owned(),headers:vec![(\"X-Trace\".to_owned(),\"on\".to_owned()),\
             (\"Authorization\".to_owned(),\"Bearer${{SEARCH_TOKEN}}\".to_owned())]}},\
             tools:::core::option::Option::None,exclude:vec![\"delete_index\".to_owned()],timeout_ms:90000u64,\
             required:false,enabled:true,description:::core::option::Option::None,}}],}},"
        ),
    ];
    for part in expected {
        assert!(source.contains(&part), "expected {part}\n in {source}");
    }
}

/// The default timeout the spec documents (and validation hints at) is the runtime's, and a server the YAML
/// leaves at its defaults equals the runtime's `McpServerDefinition::new` (the library never links the
/// runtime; the pi-gen binary does, so this test can compare them).
#[cfg(feature = "cli")]
#[test]
fn the_documented_defaults_mirror_the_runtime() {
    use pi_runtime::mcp::{DEFAULT_CALL_TIMEOUT_MS, McpServerDefinition, McpTransport};
    assert_eq!(crate::spec::DEFAULT_MCP_TIMEOUT_SECS * 1000, DEFAULT_CALL_TIMEOUT_MS);
    let transport = McpTransport::Http { url: "https://a".to_owned(), headers: Vec::new() };
    let defaults = McpServerDefinition::new("a", transport);
    assert_eq!(
        (defaults.tools, defaults.exclude.len(), defaults.required, defaults.enabled, defaults.description),
        (None, 0, false, true, None)
    );
}
