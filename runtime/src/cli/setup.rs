//! Turns the definition and flags into a ready agent: model, key, tools and system prompt.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::args::CliArgs;
use super::error::CliError;
use super::model_select::select_model;
use super::models_json::load_models_json;
use super::paths::{agent_dir, expand_home, project_dir};
use crate::AgentDefinition;
use crate::agent::{Agent, AgentOptions};
use crate::ai::{ThinkingLevel, default_registry};
use crate::prompt::{CONTEXT_FILE_NAMES, PromptTool, SystemPromptOptions, build_system_prompt, load_context_files};
use crate::tools::{AgentTool, BUILTIN_TOOL_NAMES, ToolEnvironment, builtin_tool};

/// A configured agent plus what the modes need to report.
pub struct Prepared {
    pub agent: Agent,
    pub cwd: PathBuf,
}

/// Resolves everything from files, environment and flags.
pub fn prepare(definition: &AgentDefinition, args: &CliArgs) -> Result<Prepared, CliError> {
    let cwd = std::env::current_dir().map_err(|source| CliError::Read { path: ".".into(), source })?;
    let agent_dir = agent_dir(definition);
    let models_path = agent_dir.join("models.json");
    let custom = load_models_json(&models_path)?;
    let provider = args.provider.as_deref().or(definition.default_provider.as_deref());
    let pattern =
        args.model.as_deref().or(if args.provider.is_some() { None } else { definition.default_model.as_deref() });
    let choice = select_model(&custom.models, provider, pattern, &models_path.to_string_lossy())?;
    let model = choice.model;
    if choice.custom_id {
        eprintln!(
            "Warning: no model \"{}\" is configured for provider \"{}\"; sending the id as given.",
            model.id, model.provider
        );
    }
    let api_key = args
        .api_key
        .clone()
        .or_else(|| custom.resolve_key(&model.provider))
        .ok_or_else(|| CliError::NoApiKey(model.provider.clone()))?;
    let thinking = match args.thinking.as_deref() {
        Some(text) => Some(text.parse::<ThinkingLevel>().map_err(|e| CliError::Usage(e.to_string()))?),
        None => choice.thinking,
    };
    let thinking = if model.reasoning { thinking.unwrap_or_default() } else { ThinkingLevel::Off };
    let tools = select_tools(definition, args, &cwd);
    let system_prompt = system_prompt(definition, args, &agent_dir, &cwd, &tools)?;
    let agent = Agent::new(AgentOptions {
        model: Some(model),
        system_prompt,
        thinking_level: thinking,
        tools,
        api_key: Some(api_key),
        tool_execution: definition.tool_execution,
        ..AgentOptions::new(Arc::new(default_registry()))
    });
    Ok(Prepared { agent, cwd })
}

/// The active tools: `--no-tools`, else `--tools` (in the order given), else the agent's defaults.
/// Like pi, names of tools that do not exist are skipped; unlike pi, each one is reported.
fn select_tools(definition: &AgentDefinition, args: &CliArgs, cwd: &Path) -> Vec<Arc<dyn AgentTool>> {
    let environment = ToolEnvironment::new(cwd);
    let names: Vec<String> = if args.no_tools {
        Vec::new()
    } else if let Some(list) = &args.tools {
        list.iter().map(|name| name.trim().to_owned()).filter(|name| !name.is_empty()).collect()
    } else {
        definition.tools.clone()
    };
    let mut tools: Vec<Arc<dyn AgentTool>> = Vec::with_capacity(names.len());
    for name in &names {
        if tools.iter().any(|tool| tool.name() == name) {
            continue;
        }
        match builtin_tool(name, &environment) {
            Some(tool) => tools.push(tool),
            None => eprintln!(
                "Warning: unknown tool \"{name}\" ignored; available tools: {}",
                BUILTIN_TOOL_NAMES.join(", ")
            ),
        }
    }
    tools
}

fn system_prompt(
    definition: &AgentDefinition,
    args: &CliArgs,
    agent_dir: &Path,
    cwd: &Path,
    tools: &[Arc<dyn AgentTool>],
) -> Result<String, CliError> {
    let project = project_dir(definition, cwd);
    let custom_prompt = match &args.system_prompt {
        Some(value) => Some(text_or_file(value)?),
        None => first_file(&[project.join("SYSTEM.md"), agent_dir.join("SYSTEM.md")]),
    };
    let append = if args.append_system_prompt.is_empty() {
        first_file(&[project.join("APPEND_SYSTEM.md"), agent_dir.join("APPEND_SYSTEM.md")])
    } else {
        let parts: Result<Vec<String>, CliError> = args.append_system_prompt.iter().map(|v| text_or_file(v)).collect();
        Some(parts?.join("\n\n"))
    };
    let prompt_tools = tools
        .iter()
        .map(|tool| PromptTool {
            name: tool.name().to_owned(),
            snippet: tool.prompt_snippet().unwrap_or_else(|| tool.description()).to_owned(),
            guidelines: tool.prompt_guidelines().to_vec(),
        })
        .collect();
    Ok(build_system_prompt(&SystemPromptOptions {
        identity: definition.identity.clone(),
        custom_prompt,
        append,
        tools: prompt_tools,
        context_files: load_context_files(agent_dir, cwd, &CONTEXT_FILE_NAMES),
        cwd: cwd.to_path_buf(),
        ..SystemPromptOptions::default()
    }))
}

/// A flag value that names an existing file means the file's contents.
fn text_or_file(value: &str) -> Result<String, CliError> {
    let path = expand_home(Path::new(value));
    if path.is_file() {
        std::fs::read_to_string(&path).map_err(|source| CliError::Read { path, source })
    } else {
        Ok(value.to_owned())
    }
}

fn first_file(candidates: &[PathBuf]) -> Option<String> {
    candidates.iter().find_map(|path| std::fs::read_to_string(path).ok())
}
