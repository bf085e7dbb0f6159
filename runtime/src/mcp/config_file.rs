//! The user's MCP servers: `mcp.json` in the agent directory and in the project config directory, in the
//! format the MCP ecosystem and pi use (`{"mcpServers": {"name": {"command", "args", "env", "cwd"} |
//! {"url", "headers"}}}`), merged over the servers the agent's YAML declares, by name.
//!
//! A bad file or entry never stops the agent: it is skipped and reported as `<path>: <problem>`.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{McpDefinition, McpOrigin, McpServerDefinition, McpServerEntry, McpTransport};

/// The servers of one run, and what was wrong with the files.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct McpServers {
    pub servers: Vec<McpServerEntry>,
    pub problems: Vec<String>,
}

/// The YAML's servers, then `<agent dir>/mcp.json`, then `<project dir>/mcp.json`: an entry replaces the
/// server of the same name, and a project entry without `command`, `url` or `type` only switches an earlier
/// server on or off. `project_dir` is `None` for a folder whose files are not used (pi 1.5's project trust).
pub fn load_servers(yaml: &McpDefinition, agent_dir: &Path, project_dir: Option<&Path>) -> McpServers {
    let mut merged = McpServers {
        servers: yaml
            .servers
            .iter()
            .map(|definition| McpServerEntry { definition: definition.clone(), origin: McpOrigin::Agent })
            .collect(),
        problems: Vec::new(),
    };
    for path in [Some(agent_dir.join("mcp.json")), project_dir.map(|dir| dir.join("mcp.json"))].into_iter().flatten() {
        match std::fs::read_to_string(&path) {
            Ok(text) => merge_file(&mut merged, &path, &text),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => merged.problems.push(format!("{}: cannot be read: {error}", path.display())),
        }
    }
    merged
}

/// Where each file is looked for, for messages.
pub fn config_paths(agent_dir: &Path, project_dir: &Path) -> [PathBuf; 2] {
    [agent_dir.join("mcp.json"), project_dir.join("mcp.json")]
}

fn merge_file(merged: &mut McpServers, path: &Path, text: &str) {
    let at = path.display();
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let root: Value = match serde_json::from_str(text) {
        Ok(root) => root,
        Err(error) => {
            let message = error.to_string();
            let message = message.split(" at line ").next().unwrap_or(&message);
            merged.problems.push(format!("{at}:{}:{}: not valid JSON: {message}", error.line(), error.column()));
            return;
        }
    };
    let servers = match root.as_object().map(|root| root.get("mcpServers")) {
        Some(None) => return,
        Some(Some(Value::Object(servers))) => servers,
        _ => {
            merged
                .problems
                .push(format!("{at}: expected an object whose \"mcpServers\" maps server names to settings"));
            return;
        }
    };
    for (name, value) in servers {
        match parse_entry(name, value) {
            Ok(Entry::Server(definition)) => add_server(merged, path, *definition),
            Ok(Entry::Switch(enabled)) => match merged.servers.iter_mut().find(|entry| entry.definition.name == *name) {
                Some(entry) => {
                    if let Some(enabled) = enabled {
                        entry.definition.enabled = enabled;
                    }
                }
                None => merged.problems.push(format!(
                    "{at}: server \"{name}\" needs \"command\" (stdio) or \"url\" (streamable HTTP); without them an entry can only switch an existing server on or off"
                )),
            },
            Err(problem) => merged.problems.push(format!("{at}: server \"{name}\": {problem}")),
        }
    }
}

fn add_server(merged: &mut McpServers, path: &Path, definition: McpServerDefinition) {
    let origin = McpOrigin::File(path.to_path_buf());
    if let Some(entry) = merged.servers.iter_mut().find(|entry| entry.definition.name == definition.name) {
        *entry = McpServerEntry { definition, origin };
        return;
    }
    let key = super::naming::sanitize(&definition.name);
    if let Some(other) = merged.servers.iter().find(|entry| super::naming::sanitize(&entry.definition.name) == key) {
        merged.problems.push(format!(
            "{}: server \"{}\" is skipped: its tools would be named like those of \"{}\" (`-` and `_` are the same in tool names)",
            path.display(),
            definition.name,
            other.definition.name
        ));
        return;
    }
    merged.servers.push(McpServerEntry { definition, origin });
}

enum Entry {
    Server(Box<McpServerDefinition>),
    /// An entry with neither `command` nor `url` nor `type`: `enabled` for a server declared earlier.
    Switch(Option<bool>),
}

fn parse_entry(name: &str, value: &Value) -> Result<Entry, String> {
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        return Err("the name may only hold letters, digits, `_` and `-`".into());
    }
    let Value::Object(fields) = value else { return Err("expected an object of settings".into()) };
    let enabled = optional_bool(fields, "enabled")?;
    let description = optional_string(fields, "description")?;
    let timeout_ms = match fields.get("timeout") {
        None => super::DEFAULT_CALL_TIMEOUT_MS,
        Some(Value::Number(secs)) if secs.as_f64().is_some_and(|secs| secs > 0.0 && secs.is_finite()) => {
            (secs.as_f64().unwrap_or_default() * 1000.0).round().max(1.0) as u64
        }
        Some(_) => return Err("\"timeout\" must be a positive number of seconds".into()),
    };
    let kind = optional_string(fields, "type")?;
    let exposure = optional_string(fields, "exposure")?;
    if let Some(exposure) = &exposure
        && !matches!(exposure.as_str(), "codemode" | "codemode-deferred" | "deferred" | "direct" | "hidden")
    {
        return Err("\"exposure\" must be one of \"direct\", \"hidden\", \"codemode\", \"deferred\"".into());
    }
    let url = optional_string(fields, "url")?;
    let command = optional_string(fields, "command")?;
    let transport = match (kind.as_deref(), url, command) {
        (Some("sse"), _, _) => {
            return Err("the legacy SSE transport is not supported; give the server's streamable HTTP URL".into());
        }
        (Some(other), _, _) if !matches!(other, "stdio" | "http" | "streamable-http") => {
            return Err("\"type\" must be \"stdio\", \"http\" or \"streamable-http\"".into());
        }
        (None | Some("http" | "streamable-http"), Some(url), _) => {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err("\"url\" must be an http:// or https:// URL".into());
            }
            McpTransport::Http { url, headers: string_map(fields, "headers")? }
        }
        (None | Some("stdio"), _, Some(command)) => {
            if command.trim().is_empty() {
                return Err("\"command\" is empty".into());
            }
            McpTransport::Stdio {
                command,
                args: string_list(fields, "args")?.unwrap_or_default(),
                env: string_map(fields, "env")?,
                cwd: optional_string(fields, "cwd")?,
            }
        }
        (None, None, None) => return Ok(Entry::Switch(enabled)),
        _ => return Err("give \"command\" (a stdio server) or \"url\" (a streamable HTTP server)".into()),
    };
    let mut definition = McpServerDefinition::new(name, transport);
    definition.enabled = enabled.unwrap_or(true);
    definition.description = description;
    definition.timeout_ms = timeout_ms;
    definition.required = optional_bool(fields, "required")?.unwrap_or(false);
    definition.tools = string_list(fields, "tools")?;
    definition.exclude = string_list(fields, "exclude")?.unwrap_or_default();
    if exposure.as_deref() == Some("hidden") {
        definition.tools = Some(Vec::new());
    }
    Ok(Entry::Server(Box::new(definition)))
}

fn optional_bool(fields: &Map<String, Value>, key: &str) -> Result<Option<bool>, String> {
    match fields.get(key) {
        None => Ok(None),
        Some(Value::Bool(value)) => Ok(Some(*value)),
        Some(_) => Err(format!("\"{key}\" must be true or false")),
    }
}

fn optional_string(fields: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match fields.get(key) {
        None => Ok(None),
        Some(Value::String(value)) => Ok(Some(value.clone())),
        Some(_) => Err(format!("\"{key}\" must be a string")),
    }
}

fn string_list(fields: &Map<String, Value>, key: &str) -> Result<Option<Vec<String>>, String> {
    match fields.get(key) {
        None => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| item.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .map(Some)
            .ok_or_else(|| format!("\"{key}\" must be an array of strings")),
        Some(_) => Err(format!("\"{key}\" must be an array of strings")),
    }
}

fn string_map(fields: &Map<String, Value>, key: &str) -> Result<Vec<(String, String)>, String> {
    match fields.get(key) {
        None => Ok(Vec::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(name, value)| value.as_str().map(|value| (name.clone(), value.to_owned())))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| format!("\"{key}\" must map names to strings")),
        Some(_) => Err(format!("\"{key}\" must map names to strings")),
    }
}
