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

/// The active tools and a warning for each unknown name in `--tools`.
///
/// Built-ins: none under `--no-tools`, the `--tools` names that are built-ins (in the order given), else the
/// agent's defaults; a built-in whose name a custom tool takes is left out (the custom tool replaces it).
/// Custom tools follow in YAML order: all of them, unless `--tools` names at least one custom tool, in which
/// case only the named ones (pi's extension tools likewise stay active under a built-in-only `--tools`).
pub fn select_tools(
    definition: &AgentDefinition,
    args: &CliArgs,
    environment: &ToolEnvironment,
    custom: Vec<Arc<dyn AgentTool>>,
) -> (Vec<Arc<dyn AgentTool>>, Vec<String>) {
    let listed: Option<Vec<String>> = args
        .tools
        .as_ref()
        .map(|list| list.iter().map(|name| name.trim().to_owned()).filter(|name| !name.is_empty()).collect());
    let is_custom = |name: &str| custom.iter().any(|tool| tool.name() == name);
    let mut warnings = Vec::new();
    if let Some(list) = &listed {
        for name in list {
            // `mcp__` entries name MCP tools (or patterns of them), which arrive later.
            if !BUILTIN_TOOL_NAMES.contains(&name.as_str()) && !is_custom(name) && !name.starts_with("mcp__") {
                let mut available: Vec<&str> = BUILTIN_TOOL_NAMES.to_vec();
                available.extend(custom.iter().map(|tool| tool.name()));
                warnings.push(format!("unknown tool \"{name}\" ignored; available tools: {}", available.join(", ")));
            }
        }
    }
    let builtin_names: Vec<String> =
        if args.no_tools { Vec::new() } else { listed.clone().unwrap_or_else(|| definition.tools.clone()) };
    let filter_custom = listed.as_ref().is_some_and(|list| list.iter().any(|name| is_custom(name)));
    let mut tools: Vec<Arc<dyn AgentTool>> = Vec::with_capacity(builtin_names.len() + custom.len());
    for name in &builtin_names {
        if is_custom(name) || tools.iter().any(|tool| tool.name() == name) {
            continue;
        }
        match builtin_tool(name, environment) {
            Some(tool) => tools.push(tool),
            // Unknown `--tools` names were reported above; the agent's own list is checked at build time.
            None if listed.is_some() => {}
            None => warnings
                .push(format!("unknown tool \"{name}\" ignored; available tools: {}", BUILTIN_TOOL_NAMES.join(", "))),
        }
    }
    let wanted = |tool: &Arc<dyn AgentTool>| {
        !filter_custom || listed.as_ref().is_some_and(|list| list.iter().any(|name| name == tool.name()))
    };
    tools.extend(custom.into_iter().filter(wanted));
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
