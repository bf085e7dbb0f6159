//! Reading the files `subagents:` names: each one is a full agent YAML, read and checked like the parent
//! (its own problems are located in its own file), then its sub-agents in turn. A chain that comes back to
//! a file already on it is a cycle; one longer than the root's `max_subagent_depth` is too deep.

use std::path::{Path, PathBuf};

use crate::error::{Located, SpecError};
use crate::problem::{Problem, YamlPath};
use crate::spec::{AgentSpec, DEFAULT_MAX_SUBAGENT_DEPTH, HandlerSpec, LoadedSubagent};

/// Where a file sits in the tree of agents being read.
#[derive(Debug, Clone, Default)]
pub(super) struct Chain {
    /// The files above this one, root first (canonical paths).
    pub ancestors: Vec<PathBuf>,
    /// The root's `max_subagent_depth`; `None` while reading the root itself.
    pub limit: Option<u32>,
}

/// The file's path as cycles compare it: canonical when it exists, else absolute.
pub(super) fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).or_else(|_| std::path::absolute(path)).unwrap_or_else(|_| path.to_path_buf())
}

/// Reads every sub-agent of `spec` (the file at `path`) into `spec.loaded_subagents`. Problems of the
/// `subagents:` entries themselves go to `problems`; those inside a sub-agent's file, already located
/// there, to `nested`.
pub(super) fn load_subagents(
    spec: &mut AgentSpec,
    path: &Path,
    chain: &Chain,
    problems: &mut Vec<Problem>,
    nested: &mut Vec<Located>,
) {
    if spec.subagents.is_empty() {
        return;
    }
    let limit = chain.limit.or(spec.max_subagent_depth).unwrap_or(DEFAULT_MAX_SUBAGENT_DEPTH);
    let here = canonical(path);
    let mut on_chain = chain.ancestors.clone();
    on_chain.push(here);
    let spec_dir = path.parent().unwrap_or_else(|| Path::new(""));
    let mut loaded = Vec::new();
    for (index, entry) in spec.subagents.iter().enumerate() {
        let at = YamlPath::root().key("subagents").index(index).key("path");
        let file = spec_dir.join(&entry.path);
        let target = canonical(&file);
        if let Some(start) = on_chain.iter().position(|seen| *seen == target) {
            let names = chain_names(&on_chain[start..], &target);
            problems.push(Problem::value(
                at,
                format!("sub-agent cycle: {names}; an agent cannot reach itself through its sub-agents"),
            ));
            continue;
        }
        // The root is at depth 0, its sub-agents at 1.
        let depth = on_chain.len();
        if u32::try_from(depth).unwrap_or(u32::MAX) > limit {
            let names = chain_names(&on_chain, &target);
            problems.push(Problem::value(
                at,
                format!("sub-agents nest {depth} deep here ({names}), deeper than max_subagent_depth ({limit})"),
            ));
            continue;
        }
        if file.exists() && !file.is_file() {
            let message = format!("{} is not a file; `path` names another agent YAML", file.display());
            problems.push(Problem::value(at, message));
            continue;
        }
        let bytes = match std::fs::read(&file) {
            Ok(bytes) => bytes,
            Err(error) => {
                let message = format!("cannot read {} ({error}); paths are relative to the YAML file", file.display());
                problems.push(Problem::value(at, message));
                continue;
            }
        };
        let text = match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(error) => {
                if let SpecError::Invalid(located) = super::not_utf8(&file, error.as_bytes(), error.utf8_error()) {
                    nested.extend(located);
                }
                continue;
            }
        };
        let child_chain = Chain { ancestors: on_chain.clone(), limit: Some(limit) };
        match super::parse_in_chain(&file, &text, &child_chain) {
            Err(SpecError::Invalid(located)) => nested.extend(located),
            Err(other) => problems.push(Problem::value(at, other.to_string())),
            Ok(child) => {
                let rust_tools: Vec<&str> = child
                    .custom_tools()
                    .iter()
                    .filter(|tool| tool.handler == Some(HandlerSpec::Rust))
                    .map(|tool| tool.name.as_str())
                    .collect();
                if !rust_tools.is_empty() {
                    problems.push(Problem::value(
                        at,
                        format!(
                            "the sub-agent has tools implemented in Rust ({}); a sub-agent's tools need a `command`",
                            rust_tools.join(", ")
                        ),
                    ));
                    continue;
                }
                let description = entry
                    .description
                    .clone()
                    .or_else(|| child.description.clone())
                    .filter(|text| !text.trim().is_empty())
                    .unwrap_or_else(|| format!("Runs the {} agent on a task and answers with its result", child.name));
                let spec_path = std::path::absolute(&file).unwrap_or(file);
                loaded.push(LoadedSubagent { name: entry.name.clone(), description, spec_path, spec: Box::new(child) });
            }
        }
    }
    spec.loaded_subagents = loaded;
}

/// `a.yaml → b.yaml → a.yaml`: the files' names along the chain, then the next one.
fn chain_names(chain: &[PathBuf], next: &Path) -> String {
    let name =
        |path: &Path| path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into());
    chain.iter().map(|path| name(path)).chain([name(next)]).collect::<Vec<_>>().join(" → ")
}
