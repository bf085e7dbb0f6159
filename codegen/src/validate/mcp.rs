//! Checks of `mcp:`: server names (format, duplicates, names whose tools would collide), exactly one of
//! `command` and `url` with the options that go with it, tool lists that take nothing or repeat a tool, and
//! timeouts that cannot work.

use std::collections::{BTreeMap, BTreeSet};

use crate::problem::{Problem, YamlPath};
use crate::spec::{AgentSpec, DEFAULT_MCP_TIMEOUT_SECS, McpServerSpec, is_mcp_server_name, mcp_tool_prefix_key};

/// An example stdio command, for hints.
const EXAMPLE_COMMAND: &str = "[npx, -y, \"@modelcontextprotocol/server-filesystem\", \".\"]";

/// Problems of `mcp`.
pub fn mcp_problems(spec: &AgentSpec, out: &mut Vec<Problem>) {
    let Some(mcp) = &spec.mcp else { return };
    let path = YamlPath::root().key("mcp").key("servers");
    // Tool-name prefix -> the first server name that gives it.
    let mut prefixes: BTreeMap<String, (&str, YamlPath)> = BTreeMap::new();
    for (index, server) in mcp.servers.iter().enumerate() {
        let at = path.index(index);
        check_name(server, &at.key("name"), &mut prefixes, out);
        check_transport(server, &at, out);
        check_tools(server, &at, out);
        if let Some(secs) = server.timeout
            && server.timeout_ms().is_none_or(|ms| ms == 0)
        {
            out.push(Problem::value(
                at.key("timeout"),
                format!(
                    "`timeout: {secs}` would stop every tool call before it starts; give the seconds one call may \
                     take, more than 0 (fractions allowed, e.g. 0.5; default {DEFAULT_MCP_TIMEOUT_SECS})"
                ),
            ));
        }
    }
}

fn check_name<'a>(
    server: &'a McpServerSpec,
    at: &YamlPath,
    prefixes: &mut BTreeMap<String, (&'a str, YamlPath)>,
    out: &mut Vec<Problem>,
) {
    let name = server.name.as_str();
    let message = if name.is_empty() {
        "the server name is empty; it names the server's tools (`mcp__<name>__<tool>`), like `files`".to_owned()
    } else if !is_mcp_server_name(name) {
        format!("\"{name}\" cannot be an MCP server name; use letters, digits, '_' and '-'")
    } else {
        let key = mcp_tool_prefix_key(name);
        let Some((first, first_at)) = prefixes.get(&key) else {
            prefixes.insert(key, (name, at.clone()));
            return;
        };
        let message = if *first == name {
            format!("duplicate server name `{name}`; MCP server names must be unique")
        } else {
            format!(
                "the servers `{first}` and `{name}` would give their tools the same names (`mcp__{key}__<tool>`: \
                 '-' becomes '_'); rename one of them"
            )
        };
        out.push(Problem::value(at.clone(), message).first_defined_at(first_at.clone()));
        return;
    };
    out.push(Problem::value(at.clone(), message));
}

/// Exactly one of `command` and `url`, each with its own options.
fn check_transport(server: &McpServerSpec, at: &YamlPath, out: &mut Vec<Problem>) {
    match (&server.command, &server.url) {
        (Some(_), Some(_)) => out.push(Problem::key(
            at.key("url"),
            "a server is reached either by `command` (a program started as a child process, stdio) or by `url` \
             (streamable HTTP), not both; keep one of them",
        )),
        (None, None) => out.push(Problem::value(
            at.clone(),
            format!(
                "server `{}` needs `command: [program, args...]` (a program started as a child process, e.g. \
                 {EXAMPLE_COMMAND}) or `url: https://...` (a streamable HTTP server)",
                server.name
            ),
        )),
        (Some(command), None) => {
            match command.first() {
                None => out.push(Problem::value(
                    at.key("command"),
                    format!("the command is empty; give the program, then its arguments, e.g. {EXAMPLE_COMMAND}"),
                )),
                Some(program) if program.trim().is_empty() => out.push(Problem::value(
                    at.key("command").index(0),
                    "the program is empty; the command's first item is the program to start, like `npx`",
                )),
                Some(_) => {}
            }
            if server.headers.is_some() {
                out.push(Problem::key(
                    at.key("headers"),
                    "`headers` goes with `url:` (an HTTP server); a `command:` server takes `env:` instead",
                ));
            }
        }
        (None, Some(url)) => {
            if !is_http_url(url) {
                out.push(Problem::value(
                    at.key("url"),
                    format!("\"{url}\" is not an HTTP URL; give the server's http:// or https:// address"),
                ));
            }
            for (key, given) in [("env", server.env.is_some()), ("cwd", server.cwd.is_some())] {
                if given {
                    out.push(Problem::key(
                        at.key(key),
                        format!(
                            "`{key}` goes with `command:` (a server started as a child process); a `url:` server \
                             runs elsewhere and takes `headers:` instead"
                        ),
                    ));
                }
            }
        }
    }
}

/// `http://` or `https://` (the URL is used as written: as in pi, only `env` and `headers` values name
/// environment variables).
fn is_http_url(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    let rest = lower.strip_prefix("https://").or_else(|| lower.strip_prefix("http://"));
    rest.is_some_and(|rest| !rest.is_empty())
}

fn check_tools(server: &McpServerSpec, at: &YamlPath, out: &mut Vec<Problem>) {
    if server.tools.is_some() && server.exclude.is_some() {
        out.push(Problem::key(
            at.key("exclude"),
            "`tools` takes only the tools it lists and `exclude` leaves tools out; give one of them",
        ));
    }
    if server.tools.as_ref().is_some_and(Vec::is_empty) {
        out.push(Problem::value(
            at.key("tools"),
            "`tools: []` takes none of the server's tools; list the tools to take, or leave `tools` out to take \
             all of them (to turn the server off, `enabled: false`)",
        ));
    }
    for (key, list) in [("tools", &server.tools), ("exclude", &server.exclude)] {
        let mut seen = BTreeSet::new();
        for (index, tool) in list.iter().flatten().enumerate() {
            let item = at.key(key).index(index);
            if tool.trim().is_empty() {
                out.push(Problem::value(item, "the tool name is empty; give the server's own name for the tool"));
            } else if !seen.insert(tool.as_str()) {
                out.push(Problem::value(item, format!("duplicate tool `{tool}`; list each tool once")));
            }
        }
    }
}
