//! The active tools of a run: the selected built-ins followed by the agent's custom tools (YAML
//! `tools.custom`) in YAML order. Command tools are built from their templates; Rust tools are the
//! implementations handed to [`crate::cli::run_with_tools`], matched by name. A declared Rust tool without an
//! implementation, an implementation nobody declared, or a tool that cannot be built stops the run at
//! startup.

use std::sync::Arc;

use serde_json::Value;

use super::args::CliArgs;
use super::error::CliError;
use crate::AgentDefinition;
use crate::definition::{CustomToolDefinition, CustomToolHandler};
use crate::tools::{
    AgentTool, BUILTIN_TOOL_NAMES, CommandTool, ToolContext, ToolEnvironment, ToolFuture, builtin_tool,
};

/// Builds every custom tool of `definition`, in YAML order.
pub fn build_custom_tools(
    definition: &AgentDefinition,
    rust_tools: Vec<Arc<dyn AgentTool>>,
    environment: &ToolEnvironment,
) -> Result<Vec<Arc<dyn AgentTool>>, CliError> {
    let declared = &definition.custom_tools;
    for (index, tool) in declared.iter().enumerate() {
        if declared[..index].iter().any(|earlier| earlier.name == tool.name) {
            return Err(CliError::DuplicateCustomTool(tool.name.clone()));
        }
    }
    let mut implementations: Vec<Option<Arc<dyn AgentTool>>> = Vec::with_capacity(rust_tools.len());
    for tool in rust_tools {
        let name = tool.name().to_owned();
        if implementations.iter().flatten().any(|existing| existing.name() == name) {
            return Err(CliError::DuplicateCustomTool(name));
        }
        if !declared.iter().any(|d| d.name == name && matches!(d.handler, CustomToolHandler::Rust)) {
            return Err(CliError::RustToolUndeclared(name));
        }
        implementations.push(Some(tool));
    }
    let mut tools: Vec<Arc<dyn AgentTool>> = Vec::with_capacity(declared.len());
    for declaration in declared {
        let tool: Arc<dyn AgentTool> = match &declaration.handler {
            CustomToolHandler::Rust => {
                let slot =
                    implementations.iter_mut().find(|slot| slot.as_ref().is_some_and(|t| t.name() == declaration.name));
                let implementation =
                    slot.and_then(Option::take).ok_or_else(|| CliError::RustToolMissing(declaration.name.clone()))?;
                Arc::new(DeclaredTool::new(declaration, implementation)?)
            }
            CustomToolHandler::Command { .. } => Arc::new(
                CommandTool::new(declaration, environment.clone())
                    .map_err(|error| CliError::CustomTool { name: declaration.name.clone(), message: error.message })?,
            ),
        };
        tools.push(tool);
    }
    Ok(tools)
}

/// What `--tools` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolList {
    /// No `--tools`: the defaults.
    Defaults,
    /// Only these tools: names (in the order given) and patterns (`*` matches any run of characters).
    Only(Vec<String>),
    /// The defaults with `-name` entries removed and `+name` entries added (exact names only).
    Change { add: Vec<String>, remove: Vec<String> },
}

/// Reads `--tools` entries (blank ones ignored): names and patterns, or only `+name`/`-name` changes; mixing
/// the two, or a pattern after `+`/`-`, is an error text.
pub fn tool_list(entries: Option<&[String]>) -> Result<ToolList, String> {
    let Some(entries) = entries else { return Ok(ToolList::Defaults) };
    let entries: Vec<&str> = entries.iter().map(|entry| entry.trim()).filter(|entry| !entry.is_empty()).collect();
    let changes = entries.iter().filter(|entry| entry.starts_with(['+', '-'])).count();
    if changes == 0 {
        return Ok(ToolList::Only(entries.into_iter().map(str::to_owned).collect()));
    }
    if changes < entries.len() {
        return Err("--tools: give either tool names (a list of the tools to use) or +name/-name entries (changes \
                    to the default tools), not both"
            .to_owned());
    }
    let (mut add, mut remove) = (Vec::new(), Vec::new());
    for entry in entries {
        let (sign, name) = entry.split_at(1);
        let name = name.trim();
        if name.is_empty() || name.contains('*') {
            return Err(format!("--tools: `{entry}`: +name and -name entries take a tool's exact name, not a pattern"));
        }
        if sign == "+" { add.push(name.to_owned()) } else { remove.push(name.to_owned()) }
    }
    Ok(ToolList::Change { add, remove })
}

/// Whether `name` matches `pattern`, where `*` stands for any run of characters (and nothing else is special).
pub fn tool_pattern_matches(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = name.strip_prefix(first) else { return false };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else { return rest.is_empty() };
    for part in middle {
        match rest.find(part) {
            Some(index) => rest = &rest[index + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Whether `--exclude-tools` turns the tool `name` off (built-in, custom or MCP).
pub fn tool_excluded(args: &CliArgs, name: &str) -> bool {
    args.exclude_tools
        .iter()
        .flatten()
        .map(|entry| entry.trim())
        .any(|entry| !entry.is_empty() && tool_pattern_matches(entry, name))
}

/// The active tools and a warning for each unknown name in `--tools`.
///
/// Built-ins: none under `--no-tools`; the `--tools` names that are built-ins (in the order given), then the
/// built-ins its patterns match (in the usual order); the agent's defaults without the `-name` and with the
/// `+name` entries; else the agent's defaults. A built-in whose name a custom tool takes is left out (the
/// custom tool replaces it). Custom tools follow in YAML order: all of them, unless `--tools` names or
/// matches at least one custom tool (then only those) or removes some with `-name` (pi's extension tools
/// likewise stay active under a built-in-only `--tools`). Last, `--exclude-tools` turns off every tool it
/// names or matches.
pub fn select_tools(
    definition: &AgentDefinition,
    args: &CliArgs,
    environment: &ToolEnvironment,
    custom: Vec<Arc<dyn AgentTool>>,
) -> (Vec<Arc<dyn AgentTool>>, Vec<String>) {
    let is_custom = |name: &str| custom.iter().any(|tool| tool.name() == name);
    let mut warnings = Vec::new();
    let list = tool_list(args.tools.as_deref()).unwrap_or_else(|error| {
        warnings.push(error);
        ToolList::Defaults
    });
    let named: Vec<&String> = match &list {
        ToolList::Defaults => Vec::new(),
        ToolList::Only(entries) => entries.iter().filter(|entry| !entry.contains('*')).collect(),
        ToolList::Change { add, remove } => add.iter().chain(remove).collect(),
    };
    for name in named {
        // `mcp__` entries name MCP tools (or patterns of them), which arrive later.
        if !BUILTIN_TOOL_NAMES.contains(&name.as_str()) && !is_custom(name) && !name.starts_with("mcp__") {
            let mut available: Vec<&str> = BUILTIN_TOOL_NAMES.to_vec();
            available.extend(custom.iter().map(|tool| tool.name()));
            warnings.push(format!("unknown tool \"{name}\" ignored; available tools: {}", available.join(", ")));
        }
    }
    let defaults = || if args.no_tools { Vec::new() } else { definition.tools.clone() };
    let builtin_names: Vec<String> = match &list {
        ToolList::Defaults => defaults(),
        ToolList::Only(_) if args.no_tools => Vec::new(),
        ToolList::Only(entries) => {
            let (patterns, mut names): (Vec<&String>, Vec<String>) = (
                entries.iter().filter(|entry| entry.contains('*')).collect(),
                entries.iter().filter(|entry| !entry.contains('*')).cloned().collect(),
            );
            let matched =
                BUILTIN_TOOL_NAMES.iter().filter(|name| patterns.iter().any(|p| tool_pattern_matches(p, name)));
            names.extend(matched.map(|name| (*name).to_owned()));
            names
        }
        ToolList::Change { add, remove } => {
            let mut names = defaults();
            names.retain(|name| !remove.contains(name));
            names.extend(add.iter().filter(|name| BUILTIN_TOOL_NAMES.contains(&name.as_str())).cloned());
            names
        }
    };
    let mut tools: Vec<Arc<dyn AgentTool>> = Vec::with_capacity(builtin_names.len() + custom.len());
    for name in &builtin_names {
        if is_custom(name) || tools.iter().any(|tool| tool.name() == name) {
            continue;
        }
        match builtin_tool(name, environment) {
            Some(tool) => tools.push(tool),
            // Unknown `--tools` names were reported above; the agent's own list is checked at build time.
            None if !matches!(list, ToolList::Defaults) => {}
            None => warnings
                .push(format!("unknown tool \"{name}\" ignored; available tools: {}", BUILTIN_TOOL_NAMES.join(", "))),
        }
    }
    let listed = |name: &str| match &list {
        ToolList::Only(entries) => entries.iter().any(|e| !e.starts_with("mcp__") && tool_pattern_matches(e, name)),
        _ => false,
    };
    let filter_custom = custom.iter().any(|tool| listed(tool.name()));
    let custom_wanted = |name: &str| match &list {
        ToolList::Only(_) => !filter_custom || listed(name),
        ToolList::Change { remove, .. } => !remove.iter().any(|removed| removed == name),
        _ => true,
    };
    tools.extend(custom.iter().filter(|tool| custom_wanted(tool.name())).cloned());
    tools.retain(|tool| !tool_excluded(args, tool.name()));
    (tools, warnings)
}

/// A Rust tool as the YAML declares it: name, label, description, parameters and prompt text come from the
/// declaration; argument preparation and execution from the implementation.
struct DeclaredTool {
    declaration: CustomToolDefinition,
    parameters: Value,
    implementation: Arc<dyn AgentTool>,
}

impl DeclaredTool {
    fn new(declaration: &CustomToolDefinition, implementation: Arc<dyn AgentTool>) -> Result<Self, CliError> {
        let parameters = if declaration.parameters.trim().is_empty() {
            implementation.parameters().clone()
        } else {
            serde_json::from_str(&declaration.parameters).map_err(|error| CliError::CustomTool {
                name: declaration.name.clone(),
                message: format!("Custom tool \"{}\": parameters are not valid JSON: {error}", declaration.name),
            })?
        };
        Ok(Self { declaration: declaration.clone(), parameters, implementation })
    }
}

impl AgentTool for DeclaredTool {
    fn name(&self) -> &str {
        &self.declaration.name
    }

    fn label(&self) -> &str {
        if self.declaration.label.is_empty() { &self.declaration.name } else { &self.declaration.label }
    }

    fn description(&self) -> &str {
        &self.declaration.description
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn prompt_snippet(&self) -> Option<&str> {
        self.declaration.prompt_snippet.as_deref()
    }

    fn prompt_guidelines(&self) -> &[String] {
        &self.declaration.prompt_guidelines
    }

    fn prepare_arguments(&self, args: Value) -> Value {
        self.implementation.prepare_arguments(args)
    }

    fn execute(&self, args: Value, ctx: ToolContext) -> ToolFuture<'_> {
        self.implementation.execute(args, ctx)
    }
}

#[cfg(test)]
#[path = "custom_tools_tests.rs"]
mod tests;
