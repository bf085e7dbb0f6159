//! All YAML reading lives here: an agent file becomes an [`AgentSpec`], or every problem in it, each
//! located as `file:line:column: yaml.path: message`.
//!
//! The steps: serde_yaml parses the text (syntax errors stop here); the document is checked against the
//! JSON Schema generated from the spec types; nodes that break it are set aside so the rest can still be
//! read into the typed spec and checked for semantic problems (files, names, templates). Problems are
//! located at the end, by asking serde_yaml where each path's node starts.

mod convert;
mod locate;
mod subagents;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::error::{Located, SpecError};
use crate::problem::{Problem, Segment, Target, YamlPath};
use crate::spec::AgentSpec;
use crate::validate::{resource_file_problems, schema_problems, semantic_problems};

pub use locate::locate;

/// Reads and validates the agent file at `path`. A file that is not UTF-8 is an error located at its
/// first invalid byte.
pub fn load_spec(path: &Path) -> Result<AgentSpec, SpecError> {
    let bytes = std::fs::read(path).map_err(|source| SpecError::Read { path: path.to_path_buf(), source })?;
    let text = String::from_utf8(bytes).map_err(|error| not_utf8(path, error.as_bytes(), error.utf8_error()))?;
    parse_spec(path, &text)
}

/// The error for a file that is not UTF-8, at the line and column (in characters) of its first bad byte.
fn not_utf8(path: &Path, bytes: &[u8], error: std::str::Utf8Error) -> SpecError {
    let valid = String::from_utf8_lossy(&bytes[..error.valid_up_to()]);
    let line = valid.matches('\n').count() + 1;
    let column = valid.rsplit('\n').next().map_or(0, |last| last.chars().count()) + 1;
    let byte = bytes.get(error.valid_up_to()).copied().unwrap_or_default();
    let message = format!("the file is not UTF-8 text (byte 0x{byte:02X}); save it as UTF-8");
    SpecError::Invalid(vec![Located::new(path, line, column, message)])
}

/// Parses agent YAML `text` (named `path` in errors; relative paths inside resolve against its directory).
/// Sub-agents named in `subagents:` are read too (relative to `path`), each problem in one of their files
/// located in that file.
pub fn parse_spec(path: &Path, text: &str) -> Result<AgentSpec, SpecError> {
    parse_in_chain(path, text, &subagents::Chain::default())
}

/// [`parse_spec`] for a file at `chain`'s place in a tree of sub-agents.
fn parse_in_chain(path: &Path, text: &str, chain: &subagents::Chain) -> Result<AgentSpec, SpecError> {
    let document: serde_yaml::Value = serde_yaml::from_str(text).map_err(|error| {
        let message = error.to_string();
        let error_line = error.location().map_or(usize::MAX, |at| at.line());
        if let Some((line, column)) = tab_indent_position(text, error_line) {
            let message = "a tab in the indentation; YAML is indented with spaces, not tabs";
            return SpecError::Invalid(vec![Located::new(path, line, column, message)]);
        }
        let (line, column) = duplicate_key_position(text, &message)
            .or_else(|| error.location().map(|at| within_text(text, at.line(), at.column())))
            .unwrap_or((1, 1));
        SpecError::Invalid(vec![Located::new(path, line, column, syntax_message(&message))])
    })?;
    if document.is_null() {
        let message = "the file is empty; an agent needs at least `version: 1` and `name: <binary name>`";
        return Err(SpecError::Invalid(vec![Located::new(path, 1, 1, message)]));
    }
    let mut problems = Vec::new();
    let json = convert::to_json(&document, &YamlPath::root(), &mut problems);
    let schema = schema_problems(&json);
    let repairable = schema.iter().all(|found| found.remove.is_some());
    let removals: Vec<YamlPath> = schema.iter().filter_map(|found| found.remove.clone()).collect();
    problems.extend(schema.into_iter().map(|found| found.problem));
    let mut spec = if repairable { repaired_spec(&json, &removals) } else { None };
    let mut nested = Vec::new();
    if let Some((spec, removed)) = &mut spec {
        let spec_dir = path.parent().unwrap_or_else(|| Path::new(""));
        let mut semantic = semantic_problems(spec, spec_dir);
        nested.extend(resource_file_problems(spec, spec_dir, &mut semantic));
        subagents::load_subagents(spec, path, chain, &mut semantic, &mut nested);
        problems.extend(semantic.into_iter().map(|problem| restore_indexes(problem, removed)));
    } else if problems.is_empty() {
        // The schema accepted what serde did not: report it rather than fail silently.
        if let Err(error) = serde_json::from_value::<AgentSpec>(json) {
            problems.push(Problem::value(YamlPath::root(), error.to_string()));
        }
    }
    let spec = spec.map(|(spec, _)| spec);
    match spec {
        Some(spec) if problems.is_empty() && nested.is_empty() => Ok(spec),
        _ => {
            let mut located = locate_all(path, text, problems);
            located.extend(nested);
            Err(SpecError::Invalid(located))
        }
    }
}

/// The spec read from `json` without the nodes at `removals`: first dropping just those nodes, then, if a
/// required field went with them, the whole list items (a custom tool, a model) they sit in.
fn repaired_spec(json: &Value, removals: &[YamlPath]) -> Option<(AgentSpec, BTreeMap<YamlPath, Vec<usize>>)> {
    let item_level: Vec<YamlPath> = removals
        .iter()
        .map(|path| match path.0.iter().rposition(|segment| matches!(segment, Segment::Index(_))) {
            Some(last_index) => YamlPath(path.0[..=last_index].to_vec()),
            None => path.clone(),
        })
        .collect();
    for attempt in [removals.to_vec(), item_level] {
        let mut candidate = json.clone();
        let removed = remove_all(&mut candidate, attempt);
        if let Ok(spec) = serde_json::from_value::<AgentSpec>(candidate) {
            return Some((spec, removed));
        }
    }
    None
}

/// The first tab in a line's leading white space, up to the line of a syntax error (serde_yaml's own
/// message for it is cryptic).
fn tab_indent_position(text: &str, error_line: usize) -> Option<(usize, usize)> {
    text.split('\n').take(error_line).enumerate().find_map(|(index, line)| {
        let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
        line[..indent].find('\t').map(|tab| (index + 1, tab + 1))
    })
}

/// serde_yaml reports a duplicate key without a position: the key's second occurrence.
fn duplicate_key_position(text: &str, message: &str) -> Option<(usize, usize)> {
    let key = message.split("duplicate entry with key \"").nth(1)?.split('"').next()?;
    let mut seen = 0;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start().trim_start_matches("- ");
        let bare = trimmed.strip_prefix(key).is_some_and(|rest| rest.trim_start().starts_with(':'));
        let quoted = trimmed.strip_prefix(&format!("\"{key}\"")).is_some_and(|rest| rest.trim_start().starts_with(':'));
        if bare || quoted {
            seen += 1;
            if seen == 2 {
                return Some((index + 1, line.len() - trimmed.len() + 1));
            }
        }
    }
    None
}

/// Problems in file order, each with its line and column; the same message at the same place once.
fn locate_all(path: &Path, text: &str, problems: Vec<Problem>) -> Vec<Located> {
    let mut located: Vec<Located> = problems
        .into_iter()
        .map(|problem| {
            let (line, column) = locate(text, &problem.path, problem.target);
            let (line, column) = within_text(text, line, column);
            let first = problem.first.as_ref().map(|first| {
                let (line, column) = locate(text, first, Target::Value);
                format!("; first defined at {line}:{column}")
            });
            let message = format!("{}: {}{}", problem.path, problem.message, first.unwrap_or_default());
            Located::new(path, line, column, message)
        })
        .collect();
    located.sort_by_key(|error| (error.line, error.column));
    located.dedup();
    located
}

/// `line:column` moved onto the text: serde_yaml places an error at the end of a file without a final
/// newline on the line after the last one, which an editor cannot show.
fn within_text(text: &str, line: usize, column: usize) -> (usize, usize) {
    let lines: Vec<&str> = text.split('\n').collect();
    let width = |line: usize| lines.get(line - 1).map_or(0, |text| text.chars().count());
    if line > lines.len() {
        return (lines.len(), width(lines.len()) + 1);
    }
    let line = line.max(1);
    (line, column.clamp(1, width(line) + 1))
}

/// serde_yaml's message without its trailing " at line X column Y" (the location is printed in front).
fn syntax_message(message: &str) -> String {
    let trimmed = match message.find(" at line ") {
        Some(index) => &message[..index],
        None => message,
    };
    format!("YAML syntax: {trimmed}")
}

/// Removes the nodes at `paths` (deepest and last first, so earlier removals do not shift later ones).
/// Returns, per list, the indexes taken out of it, to map later problems back to the original positions.
fn remove_all(json: &mut Value, mut paths: Vec<YamlPath>) -> BTreeMap<YamlPath, Vec<usize>> {
    paths.sort();
    paths.dedup();
    let mut removed: BTreeMap<YamlPath, Vec<usize>> = BTreeMap::new();
    for path in paths.into_iter().rev() {
        let Some((last, parent)) = path.0.split_last() else { continue };
        let parent = YamlPath(parent.to_vec());
        let Some(node) = node_mut(json, &parent) else { continue };
        match (node, last) {
            (Value::Object(object), Segment::Key(key)) => {
                object.remove(key);
            }
            (Value::Array(items), Segment::Index(index)) if *index < items.len() => {
                items.remove(*index);
                removed.entry(parent).or_default().push(*index);
            }
            _ => {}
        }
    }
    for indexes in removed.values_mut() {
        indexes.sort_unstable();
    }
    removed
}

fn node_mut<'a>(json: &'a mut Value, path: &YamlPath) -> Option<&'a mut Value> {
    path.0.iter().try_fold(json, |node, segment| match segment {
        Segment::Key(key) => node.get_mut(key.as_str()),
        Segment::Index(index) => node.get_mut(*index),
    })
}

/// A problem found after removals, with list indexes mapped back to the file's own.
fn restore_indexes(mut problem: Problem, removed: &BTreeMap<YamlPath, Vec<usize>>) -> Problem {
    if removed.is_empty() {
        return problem;
    }
    problem.path = original_path(&problem.path, removed);
    problem.first = problem.first.map(|first| original_path(&first, removed));
    problem
}

/// `path` in the file before the nodes in `removed` were taken out.
fn original_path(path: &YamlPath, removed: &BTreeMap<YamlPath, Vec<usize>>) -> YamlPath {
    let mut original = YamlPath::root();
    for segment in &path.0 {
        let segment = match segment {
            Segment::Index(index) => {
                let mut mapped = *index;
                for taken in removed.get(&original).into_iter().flatten() {
                    if *taken <= mapped {
                        mapped += 1;
                    }
                }
                Segment::Index(mapped)
            }
            key => key.clone(),
        };
        original.0.push(segment);
    }
    original
}

#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_commands;
#[cfg(test)]
mod tests_context;
#[cfg(test)]
mod tests_hooks;
#[cfg(test)]
mod tests_mcp;
#[cfg(test)]
mod tests_permissions;
#[cfg(test)]
mod tests_resources;
#[cfg(test)]
mod tests_schemas;
#[cfg(test)]
mod tests_subagents;
