//! Reading and merging `mcp.json` files over the YAML's servers.

use std::path::Path;

use super::config_file::load_servers;
use super::{McpDefinition, McpOrigin, McpServerDefinition, McpTransport};

fn write(dir: &Path, text: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("mcp.json"), text).unwrap();
}

fn yaml_server(name: &str) -> McpServerDefinition {
    McpServerDefinition::new(
        name,
        McpTransport::Stdio { command: "yaml-server".into(), args: vec![], env: vec![], cwd: None },
    )
}

#[test]
fn user_and_project_files_merge_over_the_yaml_by_name() {
    let root = tempfile::tempdir().unwrap();
    let (agent, project) = (root.path().join("agent"), root.path().join("work/.pi"));
    write(
        &agent,
        r#"{"mcpServers": {
            "files": {"command": "npx", "args": ["-y", "fs"], "env": {"TOKEN": "${T}"}, "cwd": "~/x", "timeout": 1.5},
            "web": {"url": "https://example.invalid/mcp", "headers": {"Authorization": "Bearer $KEY"}, "description": "Search"},
            "off": {"command": "off-server", "enabled": false}
        }}"#,
    );
    write(
        &project,
        r#"{"mcpServers": {"web": {"type": "http", "url": "http://127.0.0.1:9/mcp"}, "off": {"enabled": true}}}"#,
    );
    let yaml = McpDefinition { servers: vec![yaml_server("files"), yaml_server("kept")] };
    let loaded = load_servers(&yaml, &agent, Some(&project));
    assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
    let names: Vec<&str> = loaded.servers.iter().map(|entry| entry.definition.name.as_str()).collect();
    assert_eq!(names, ["files", "kept", "web", "off"]);

    let files = &loaded.servers[0];
    assert_eq!(files.origin, McpOrigin::File(agent.join("mcp.json")));
    assert_eq!(files.definition.timeout_ms, 1500);
    assert_eq!(
        files.definition.transport,
        McpTransport::Stdio {
            command: "npx".into(),
            args: vec!["-y".into(), "fs".into()],
            env: vec![("TOKEN".into(), "${T}".into())],
            cwd: Some("~/x".into()),
        }
    );
    assert_eq!(loaded.servers[1].origin, McpOrigin::Agent);
    let web = &loaded.servers[2];
    assert_eq!(web.origin, McpOrigin::File(project.join("mcp.json")));
    assert_eq!(web.definition.transport, McpTransport::Http { url: "http://127.0.0.1:9/mcp".into(), headers: vec![] });
    assert_eq!(web.definition.description, None, "a project entry replaces the whole user entry");
    let off = &loaded.servers[3];
    assert!(off.definition.enabled, "the project switched it on");
    assert_eq!(off.origin, McpOrigin::File(agent.join("mcp.json")));
}

#[test]
fn bad_files_and_entries_are_reported_and_skipped() {
    let root = tempfile::tempdir().unwrap();
    let (agent, project) = (root.path().join("agent"), root.path().join(".pi"));
    write(
        &agent,
        r#"{"mcpServers": {
            "bad.name": {"command": "x"},
            "nothing": {},
            "sse": {"type": "sse", "url": "http://127.0.0.1/sse"},
            "slow": {"command": "x", "timeout": 0},
            "ftp": {"url": "ftp://host"},
            "argsbad": {"command": "x", "args": "not a list"},
            "envbad": {"command": "x", "env": {"A": 1}},
            "dup-name": {"command": "x"},
            "dup_name": {"command": "y"},
            "good": {"command": "ok", "exposure": "direct"}
        }}"#,
    );
    write(&project, "{\n  \"mcpServers\": {,\n}");
    let loaded = load_servers(&McpDefinition::default(), &agent, Some(&project));
    let names: Vec<&str> = loaded.servers.iter().map(|entry| entry.definition.name.as_str()).collect();
    assert_eq!(names, ["dup-name", "good"]);
    let problems = loaded.problems.join("\n");
    for expected in [
        "server \"bad.name\": the name may only hold",
        "server \"nothing\" needs \"command\"",
        "server \"sse\": the legacy SSE transport",
        "server \"slow\": \"timeout\" must be a positive number",
        "server \"ftp\": \"url\" must be an http",
        "server \"argsbad\": \"args\" must be an array of strings",
        "server \"envbad\": \"env\" must map names to strings",
        "server \"dup_name\" is skipped",
    ] {
        assert!(problems.contains(expected), "missing {expected:?} in:\n{problems}");
    }
    let json_error = format!("{}:2:", project.join("mcp.json").display());
    assert!(problems.contains(&json_error), "the JSON error is located: {problems}");
    assert_eq!(loaded.problems.len(), 9, "{problems}");
}

#[test]
fn hidden_servers_offer_no_tools_and_filters_are_read() {
    let root = tempfile::tempdir().unwrap();
    let agent = root.path().join("agent");
    write(
        &agent,
        r#"{"mcpServers": {"h": {"command": "x", "exposure": "hidden"}, "f": {"command": "x", "tools": ["a"], "exclude": ["b"], "required": true}}}"#,
    );
    let loaded = load_servers(&McpDefinition::default(), &agent, Some(&root.path().join("none")));
    assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
    assert!(!loaded.servers[0].definition.takes_tool("anything"));
    let filtered = &loaded.servers[1].definition;
    assert!(filtered.required && filtered.takes_tool("a") && !filtered.takes_tool("b") && !filtered.takes_tool("c"));
}
