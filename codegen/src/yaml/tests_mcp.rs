//! Tests of `mcp:` validation: a stdio and an HTTP server read into the spec (env and headers in YAML
//! order), and every mistake (names, transports, options of the other transport, tool lists, timeouts)
//! located at `file:line:col` with its YAML path and a hint.

use std::path::Path;

use super::test_support::{assert_errors, errors_in};
use super::*;

/// The errors of an agent whose `mcp:` section is `mcp` (its first line is line 4).
fn mcp_errors(mcp: &str) -> Vec<String> {
    errors_in(Path::new("agent.yaml"), &format!("version: 1\nname: a\nmcp:\n{mcp}"))
}

const FULL: &str = "\
version: 1
name: a
mcp:
  servers:
    - name: files
      command: [npx, -y, \"@modelcontextprotocol/server-filesystem\", \".\"]
      env: { ZED: \"1\", API_TOKEN: \"${MY_TOKEN}\", ALPHA: two }
      cwd: ~/somewhere
      tools: [read_file, list_dir]
      timeout: 0.5
      required: true
      enabled: false
      description: Reads project files
    - name: search-web
      url: https://search.example/mcp
      headers: { X-Trace: \"on\", Authorization: \"Bearer ${SEARCH_TOKEN}\" }
      exclude: [delete_index]
";

#[test]
fn a_stdio_and_an_http_server_are_read_with_every_option() {
    let spec = parse_spec(Path::new("a.yaml"), FULL).expect("valid");
    let servers = spec.mcp.expect("mcp").servers;
    assert_eq!(servers.len(), 2);
    let files = &servers[0];
    assert_eq!(files.command.as_ref().map(Vec::len), Some(4));
    let env: Vec<(&str, &str)> =
        files.env.iter().flatten().map(|(name, value)| (name.as_str(), value.as_str())).collect();
    assert_eq!(env, [("ZED", "1"), ("API_TOKEN", "${MY_TOKEN}"), ("ALPHA", "two")]);
    assert_eq!(files.cwd.as_deref(), Some("~/somewhere"));
    assert_eq!(files.tools, Some(vec!["read_file".to_owned(), "list_dir".to_owned()]));
    assert_eq!(
        (files.timeout, files.timeout_ms(), files.required, files.enabled),
        (Some(0.5), Some(500), Some(true), Some(false))
    );
    let search = &servers[1];
    assert_eq!(search.url.as_deref(), Some("https://search.example/mcp"));
    let headers: Vec<&str> = search.headers.iter().flatten().map(|(name, _)| name.as_str()).collect();
    assert_eq!(headers, ["X-Trace", "Authorization"]);
    assert_eq!((search.tools.as_ref(), search.exclude.as_deref()), (None, Some(&["delete_index".to_owned()][..])));
    assert_eq!((search.timeout_ms(), search.required, search.enabled), (None, None, None));
}

#[test]
fn an_empty_server_list_is_valid_and_servers_is_required() {
    let spec = parse_spec(Path::new("a.yaml"), "version: 1\nname: a\nmcp: { servers: [] }\n").expect("valid");
    assert_eq!(spec.mcp.map(|mcp| mcp.servers.len()), Some(0));
    assert_errors(&mcp_errors("  {}\n"), &["agent.yaml:4:3: mcp: missing required key `servers`"]);
    assert_errors(&mcp_errors("  - name: x\n"), &["agent.yaml:4:3: mcp: expected a mapping, found a list"]);
}

#[test]
fn unknown_keys_and_wrong_types_are_located() {
    let found = mcp_errors(
        "  server: []
  servers:
    - { name: a, comand: [x] }
    - { name: b, url: 'http://b', headers: { X: 1 }, timeout: soon }
",
    );
    assert_errors(
        &found,
        &[
            "agent.yaml:4:3: mcp.server: unknown key `server`; did you mean `servers`?",
            // `comand` is set aside, so the server has neither `command` nor `url` left.
            "agent.yaml:6:7: mcp.servers[0]: server `a` needs `command: [program, args...]`",
            "agent.yaml:6:18: mcp.servers[0].comand: unknown key `comand`; did you mean `command`?",
            "agent.yaml:7:49: mcp.servers[1].headers.X: expected text, found the number 1",
            "agent.yaml:7:63: mcp.servers[1].timeout: expected a number, found the text \"soon\"",
        ],
    );
}

#[test]
fn server_names_are_valid_unique_and_give_distinct_tool_names() {
    let found = mcp_errors(
        "  servers:
    - { name: a-b, url: 'https://a' }
    - { name: '', url: 'https://a' }
    - { name: 'my server', url: 'https://a' }
    - { name: a-b, url: 'https://a' }
    - { name: a_b, url: 'https://a' }
",
    );
    assert_errors(
        &found,
        &[
            "agent.yaml:6:15: mcp.servers[1].name: the server name is empty; it names the server's tools \
             (`mcp__<name>__<tool>`), like `files`",
            "agent.yaml:7:15: mcp.servers[2].name: \"my server\" cannot be an MCP server name; use letters, digits, \
             '_' and '-'",
            "agent.yaml:8:15: mcp.servers[3].name: duplicate server name `a-b`; MCP server names must be unique; first defined at 5:15",
            "agent.yaml:9:15: mcp.servers[4].name: the servers `a-b` and `a_b` would give their tools the same \
             names (`mcp__a_b__<tool>`: '-' becomes '_'); rename one of them; first defined at 5:15",
        ],
    );
    let found = mcp_errors("  servers:\n    - { url: 'https://a' }\n");
    assert_errors(&found, &["agent.yaml:5:7: mcp.servers[0]: missing required key `name`"]);
}

#[test]
fn a_server_has_exactly_one_of_command_and_url() {
    let found = mcp_errors(
        "  servers:
    - { name: both, command: [srv], url: 'https://a' }
    - { name: neither, tools: [x] }
",
    );
    assert_errors(
        &found,
        &[
            "agent.yaml:5:37: mcp.servers[0].url: a server is reached either by `command` (a program started as a \
             child process, stdio) or by `url` (streamable HTTP), not both; keep one of them",
            "agent.yaml:6:7: mcp.servers[1]: server `neither` needs `command: [program, args...]` (a program \
             started as a child process, e.g. [npx, -y, \"@modelcontextprotocol/server-filesystem\", \".\"]) or \
             `url: https://...` (a streamable HTTP server)",
        ],
    );
}

#[test]
fn commands_and_urls_must_be_usable() {
    let found = mcp_errors(
        "  servers:
    - { name: a, command: [] }
    - { name: b, command: ['', x] }
    - { name: c, url: 'ftp://c' }
    - { name: d, url: 'https://' }
    - { name: e, url: 'HTTP://f/mcp' }
    - { name: g, command: ls }
",
    );
    assert_errors(
        &found,
        &[
            "agent.yaml:5:27: mcp.servers[0].command: the command is empty; give the program, then its arguments, \
             e.g. [npx, -y",
            "agent.yaml:6:28: mcp.servers[1].command[0]: the program is empty; the command's first item is the \
             program to start, like `npx`",
            "agent.yaml:7:23: mcp.servers[2].url: \"ftp://c\" is not an HTTP URL; give the server's http:// or \
             https:// address",
            "agent.yaml:8:23: mcp.servers[3].url: \"https://\" is not an HTTP URL",
            // The text is set aside, so the server has neither `command` nor `url` left.
            "agent.yaml:10:7: mcp.servers[5]: server `g` needs `command: [program, args...]`",
            "agent.yaml:10:27: mcp.servers[5].command: expected a list, found the text \"ls\"",
        ],
    );
}

#[test]
fn options_of_the_other_transport_are_refused() {
    let found = mcp_errors(
        "  servers:
    - name: local
      command: [srv]
      headers: { Authorization: 'Bearer ${T}' }
    - name: remote
      url: https://r
      env: { A: b }
      cwd: /tmp
",
    );
    assert_errors(
        &found,
        &[
            "agent.yaml:7:7: mcp.servers[0].headers: `headers` goes with `url:` (an HTTP server); a `command:` \
             server takes `env:` instead",
            "agent.yaml:10:7: mcp.servers[1].env: `env` goes with `command:` (a server started as a child process); \
             a `url:` server runs elsewhere and takes `headers:` instead",
            "agent.yaml:11:7: mcp.servers[1].cwd: `cwd` goes with `command:`",
        ],
    );
}

#[test]
fn tool_lists_take_something_once_and_not_both() {
    let found = mcp_errors(
        "  servers:
    - { name: a, command: [srv], tools: [x], exclude: [y] }
    - { name: b, command: [srv], tools: [] }
    - { name: c, command: [srv], tools: [x, '', x] }
    - { name: d, command: [srv], exclude: [y, y] }
",
    );
    assert_errors(
        &found,
        &[
            "agent.yaml:5:46: mcp.servers[0].exclude: `tools` takes only the tools it lists and `exclude` leaves \
             tools out; give one of them",
            "agent.yaml:6:41: mcp.servers[1].tools: `tools: []` takes none of the server's tools; list the tools to \
             take, or leave `tools` out to take all of them (to turn the server off, `enabled: false`)",
            "agent.yaml:7:45: mcp.servers[2].tools[1]: the tool name is empty",
            "agent.yaml:7:49: mcp.servers[2].tools[2]: duplicate tool `x`; list each tool once",
            "agent.yaml:8:47: mcp.servers[3].exclude[1]: duplicate tool `y`; list each tool once",
        ],
    );
}

#[test]
fn timeouts_must_be_more_than_zero() {
    let found = mcp_errors(
        "  servers:
    - { name: a, command: [srv], timeout: 0 }
    - { name: b, command: [srv], timeout: -2 }
    - { name: c, command: [srv], timeout: 0.0001 }
    - { name: d, command: [srv], timeout: 0.001 }
    - { name: e, command: [srv], timeout: 90 }
",
    );
    assert_errors(
        &found,
        &[
            "agent.yaml:5:43: mcp.servers[0].timeout: `timeout: 0` would stop every tool call before it starts; \
             give the seconds one call may take, more than 0 (fractions allowed, e.g. 0.5; default 60)",
            "agent.yaml:6:43: mcp.servers[1].timeout: `timeout: -2` would stop every tool call",
            "agent.yaml:7:43: mcp.servers[2].timeout: `timeout: 0.0001` would stop every tool call",
        ],
    );
}

#[test]
fn hooks_may_name_mcp_tools_which_are_known_only_at_run_time() {
    let yaml = "\
version: 1
name: a
mcp:
  servers:
    - { name: files, command: [srv] }
hooks:
  - on: tool_call
    match: { tool: mcp__files__write_file, path: '*.lock' }
    block: lock files are generated
  - on: tool_result
    match: { tool: mcp_files_write }
    command: ./missing.sh
";
    let found = errors_in(Path::new("agent.yaml"), yaml);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].starts_with("agent.yaml:11:20: hooks[1].match.tool: unknown tool `mcp_files_write`"), "{found:?}");
}
