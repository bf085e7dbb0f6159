//! All YAML reading lives here: parsing an agent file into [`AgentSpec`] with located errors.

use std::path::Path;

use crate::error::{Located, SpecError};
use crate::spec::{AgentSpec, BUILTIN_TOOLS};

/// Reads and validates the agent file at `path`.
pub fn load_spec(path: &Path) -> Result<AgentSpec, SpecError> {
    let text = std::fs::read_to_string(path).map_err(|source| SpecError::Read { path: path.to_path_buf(), source })?;
    parse_spec(path, &text)
}

/// Parses agent YAML `text` (named `path` in errors) and checks what serde cannot.
pub fn parse_spec(path: &Path, text: &str) -> Result<AgentSpec, SpecError> {
    let spec: AgentSpec = serde_yaml::from_str(text).map_err(|error| {
        let (line, column) = error.location().map(|at| (at.line(), at.column())).unwrap_or((1, 1));
        SpecError::Invalid(vec![Located::new(path, line, column, strip_location(&error.to_string()))])
    })?;
    let errors = validate(path, text, &spec);
    if errors.is_empty() { Ok(spec) } else { Err(SpecError::Invalid(errors)) }
}

fn validate(path: &Path, text: &str, spec: &AgentSpec) -> Vec<Located> {
    let mut errors = Vec::new();
    let at = |key: &str| find_key(text, key);
    if spec.version != 1 {
        let (line, column) = at("version");
        errors.push(Located::new(
            path,
            line,
            column,
            format!("version: unsupported schema version {}; use 1", spec.version),
        ));
    }
    if spec.name.is_empty()
        || !spec.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        || spec.name.starts_with('-')
    {
        let (line, column) = at("name");
        errors.push(Located::new(
            path,
            line,
            column,
            format!("name: \"{}\" cannot be a binary name; use letters, digits, '-' and '_'", spec.name),
        ));
    }
    if let Some(builtin) = spec.tools.as_ref().and_then(|tools| tools.builtin.as_ref()) {
        for (index, tool) in builtin.iter().enumerate() {
            if !BUILTIN_TOOLS.contains(&tool.as_str()) {
                let (line, column) = find_value(text, tool).unwrap_or_else(|| at("builtin"));
                errors.push(Located::new(
                    path,
                    line,
                    column,
                    format!(
                        "tools.builtin[{index}]: unknown tool \"{tool}\"; built-in tools are {}",
                        BUILTIN_TOOLS.join(", ")
                    ),
                ));
            }
        }
    }
    errors
}

/// serde_norway appends " at line X column Y"; the location is reported in front instead.
fn strip_location(message: &str) -> String {
    match message.find(" at line ") {
        Some(index) => message[..index].to_owned(),
        None => message.to_owned(),
    }
}

/// Line and column (1-based) of the first `key:` in `text`.
fn find_key(text: &str, key: &str) -> (usize, usize) {
    let needle = format!("{key}:");
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with(&needle) {
            return (index + 1, line.len() - trimmed.len() + 1);
        }
    }
    (1, 1)
}

fn find_value(text: &str, value: &str) -> Option<(usize, usize)> {
    text.lines().enumerate().find_map(|(index, line)| {
        let column = line.find(value)?;
        let before = line[..column].chars().last();
        let after = line[column + value.len()..].chars().next();
        let bounded = |c: Option<char>| c.is_none_or(|c| !c.is_ascii_alphanumeric() && c != '_');
        (bounded(before) && bounded(after)).then_some((index + 1, column + 1))
    })
}

#[cfg(test)]
#[path = "yaml_tests.rs"]
mod tests;
