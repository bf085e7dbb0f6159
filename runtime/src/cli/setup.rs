//! Turns the definition and flags into a ready agent: model, key, tools and system prompt.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::args::CliArgs;
use super::auth::{AuthFile, KeySources};
use super::config_value::{EnvLookup, process_env};
use super::error::CliError;
use super::model_select::{ModelRequest, ModelSource, select_model};
use super::models_json::load_models_json;
use super::paths::{agent_dir, expand_home, project_dir};
use super::registry::ModelRegistry;
use super::resources::{Resources, load_resources};
use super::session_select::open_session;
use super::settings::Settings;
use crate::AgentDefinition;
use crate::agent::{Agent, AgentOptions};
use crate::agent_session::SessionSettings;
use crate::ai::ProviderRegistry;
use crate::ai::catalog::{api_key_env_vars, clamp_thinking_level};
use crate::ai::{Model, ThinkingLevel, default_registry};
use crate::prompt::{CONTEXT_FILE_NAMES, SystemPromptBuilder, SystemPromptOptions, load_context_files};
use crate::session::{SessionManager, coding_agent_convert_to_llm};
use crate::tools::{AgentTool, BUILTIN_TOOL_NAMES, ToolEnvironment, builtin_tool};

/// pi's thinking level when nothing sets one (clamped to what the model supports).
pub const DEFAULT_THINKING_LEVEL: ThinkingLevel = ThinkingLevel::Medium;

/// A configured agent plus what the modes need to report.
pub struct Prepared {
    pub agent: Agent,
    /// Skills and prompt templates that expand the prompts of this run.
    pub resources: Resources,
    /// The session this run continues or starts.
    pub session: SessionManager,
    pub session_settings: SessionSettings,
    /// The providers, for the session's own model calls (compaction summaries).
    pub registry: Arc<ProviderRegistry>,
    pub api_key: String,
    /// The agent's own summary model (YAML `compaction.model`) and its key, when it has one.
    pub summary_model: Option<(Model, String)>,
}

/// The YAML's `compaction.model` (`provider/id`) with its key; a model that cannot be used is reported and
/// the agent's model writes the summaries instead.
fn resolve_summary_model(definition: &AgentDefinition, args: &CliArgs, agent_dir: &Path) -> Option<(Model, String)> {
    let wanted = definition.summary_model.as_deref()?;
    let Some((provider, id)) = wanted.split_once('/') else {
        eprintln!("Warning: compaction model \"{wanted}\" is not provider/id; summaries use the agent's model");
        return None;
    };
    let request = CliArgs {
        provider: Some(provider.to_owned()),
        model: Some(id.to_owned()),
        api_key: None,
        thinking: None,
        ..args.clone()
    };
    match resolve_model(definition, &request, agent_dir, &process_env) {
        Ok(resolved) => Some((resolved.model, resolved.api_key)),
        Err(error) => {
            eprintln!("Warning: cannot use compaction model \"{wanted}\" ({error}); summaries use the agent's model");
            None
        }
    }
}

/// Resolves everything from files, environment and flags.
pub fn prepare(definition: &AgentDefinition, args: &CliArgs) -> Result<Prepared, CliError> {
    let cwd = std::env::current_dir().map_err(|source| CliError::Read { path: ".".into(), source })?;
    let agent_dir = agent_dir(definition);
    let session = open_session(definition, args, &agent_dir, &cwd)?;
    let resolved = resolve_with_session(definition, args, &agent_dir, &session)?;
    let (settings, problems) = Settings::load(&agent_dir, &project_dir(definition, &cwd));
    for problem in problems {
        eprintln!("Warning: {problem}");
    }
    let registry = Arc::new(default_registry());
    let api_key = resolved.api_key.clone();
    let summary_model = resolve_summary_model(definition, args, &agent_dir);
    let tools = select_tools(definition, args, &tool_environment(&cwd, &agent_dir, &settings));
    let resources = load_resources(definition, args, &agent_dir, &cwd, &settings);
    let prompt = prompt_builder(definition, args, &agent_dir, &cwd, &resources)?;
    let system_prompt = prompt.build(&tools);
    let agent = Agent::new(AgentOptions {
        model: Some(resolved.model),
        system_prompt,
        thinking_level: resolved.thinking,
        tools,
        api_key: Some(resolved.api_key),
        tool_execution: definition.tool_execution,
        idle_timeout: stream_idle_timeout(|name| std::env::var(name).ok()),
        convert_to_llm: Some(coding_agent_convert_to_llm()),
        ..AgentOptions::new(registry.clone())
    });
    let session_settings = SessionSettings {
        retry: definition.retry.with_settings(settings.value("retry")),
        compaction: definition.compaction.with_settings(settings.value("compaction")),
    };
    Ok(Prepared { agent, resources, summary_model, session, session_settings, registry, api_key })
}

/// The model and thinking level: a continued session's own (unless flags name others), else as
/// [`resolve_model`] picks. A session model that can no longer be used is reported and replaced.
fn resolve_with_session(
    definition: &AgentDefinition,
    args: &CliArgs,
    agent_dir: &Path,
    session: &SessionManager,
) -> Result<ResolvedModel, CliError> {
    if session.entries().is_empty() {
        return resolve_model(definition, args, agent_dir, &process_env);
    }
    let context = session.context();
    let mut restored = args.clone();
    if args.model.is_none()
        && args.provider.is_none()
        && let Some((provider, model)) = &context.model
    {
        restored.provider = Some(provider.clone());
        restored.model = Some(model.clone());
    }
    if args.thinking.is_none() {
        restored.thinking = Some(context.thinking_level.clone());
    }
    match resolve_model(definition, &restored, agent_dir, &process_env) {
        Ok(resolved) => Ok(resolved),
        Err(error) if args.model.is_none() && args.provider.is_none() => {
            eprintln!("Warning: cannot use the session's model ({error}); choosing another");
            let thinking_only = CliArgs { thinking: restored.thinking, ..args.clone() };
            resolve_model(definition, &thinking_only, agent_dir, &process_env)
        }
        Err(error) => Err(error),
    }
}

/// Environment variable: how long a model stream may stay silent before the request fails
/// (milliseconds; the default is the vendor SDKs' ten minutes).
pub const STREAM_IDLE_TIMEOUT_ENV: &str = "PI_GEN_STREAM_IDLE_TIMEOUT_MS";

/// The stream idle timeout from the environment, if set to a positive whole number of milliseconds.
fn stream_idle_timeout(env: impl Fn(&str) -> Option<String>) -> Option<std::time::Duration> {
    let value = env(STREAM_IDLE_TIMEOUT_ENV)?;
    match value.trim().parse::<u64>() {
        Ok(ms) if ms > 0 => Some(std::time::Duration::from_millis(ms)),
        _ => {
            eprintln!("Warning: {STREAM_IDLE_TIMEOUT_ENV}={value:?} is not a positive number of milliseconds; ignored");
            None
        }
    }
}

/// The model to run, its key (with models.json headers applied to the model) and thinking level.
#[derive(Debug, Clone)]
pub struct ResolvedModel {
    pub model: Model,
    pub api_key: String,
    pub thinking: ThinkingLevel,
}

/// Chooses the model from flags, the agent's defaults and the configured keys, then finds its key
/// (`--api-key`, auth.json, environment, models.json) and the thinking level (`--thinking`, a
/// `:<level>` suffix, else medium; clamped to the model). Warnings go to stderr.
pub fn resolve_model(
    definition: &AgentDefinition,
    args: &CliArgs,
    agent_dir: &Path,
    env: EnvLookup<'_>,
) -> Result<ResolvedModel, CliError> {
    let registry = ModelRegistry::new(load_models_json(&agent_dir.join("models.json"))?);
    let auth_path = agent_dir.join("auth.json");
    let auth = AuthFile::load_or_create(&auth_path);
    let mut keys =
        KeySources { runtime: None, auth: &auth, env, models_json_keys: registry.models_json_keys(), auth_path };
    let request = ModelRequest {
        agent_dir,
        provider: args.provider.as_deref(),
        model: args.model.as_deref(),
        default_provider: definition.default_provider.as_deref(),
        default_model: definition.default_model.as_deref(),
    };
    let choice = select_model(&registry, &|provider| keys.has_auth(provider), &request)?;
    for warning in &choice.warnings {
        eprintln!("Warning: {warning}");
    }
    let mut model = choice.model;
    if let Some(key) = &args.api_key {
        // Like pi: a key given on the command line needs a model named for it.
        if choice.source == ModelSource::FirstAvailable {
            return Err(CliError::ApiKeyWithoutModel);
        }
        keys.runtime = Some((model.provider.clone(), key.clone()));
    }
    let api_key = keys.api_key(&model.provider)?.ok_or_else(|| CliError::NoApiKey {
        provider: model.provider.clone(),
        env_vars: api_key_env_vars(&model.provider).iter().map(|name| (*name).to_owned()).collect(),
        auth_path: keys.auth_path.clone(),
    })?;
    model.headers = registry.request_headers(&model, Some(&api_key), env)?;
    let requested = match args.thinking.as_deref().map(str::parse::<ThinkingLevel>) {
        Some(Ok(level)) => Some(level),
        Some(Err(error)) => {
            eprintln!("Warning: {error}; ignoring --thinking");
            None
        }
        None => None,
    };
    let level = requested.or(choice.thinking).unwrap_or(DEFAULT_THINKING_LEVEL);
    let thinking = clamp_thinking_level(&model, choice.thinking_level_map.as_ref(), level);
    Ok(ResolvedModel { model, api_key, thinking })
}

/// Where the built-in tools work: the working directory, the shell settings, and the agent directory's
/// `bin/` in front of `PATH` (where pi keeps the helper binaries it installs).
fn tool_environment(cwd: &Path, agent_dir: &Path, settings: &Settings) -> ToolEnvironment {
    let mut environment = ToolEnvironment::new(cwd);
    environment.shell_path = settings.string("shellPath").filter(|path| !path.is_empty()).map(PathBuf::from);
    environment.command_prefix = settings.string("shellCommandPrefix").map(str::to_owned);
    environment.bin_dir = Some(agent_dir.join("bin"));
    environment
}

/// The active tools: `--no-tools`, else `--tools` (in the order given), else the agent's defaults.
/// Like pi, names of tools that do not exist are skipped; unlike pi, each one is reported.
fn select_tools(
    definition: &AgentDefinition,
    args: &CliArgs,
    environment: &ToolEnvironment,
) -> Vec<Arc<dyn AgentTool>> {
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
        match builtin_tool(name, environment) {
            Some(tool) => tools.push(tool),
            None => eprintln!(
                "Warning: unknown tool \"{name}\" ignored; available tools: {}",
                BUILTIN_TOOL_NAMES.join(", ")
            ),
        }
    }
    tools
}

/// The system prompt's inputs other than the tools: SYSTEM.md or `--system-prompt`, APPEND_SYSTEM.md or
/// `--append-system-prompt`, context files, skills and the agent's own prompt settings.
fn prompt_builder(
    definition: &AgentDefinition,
    args: &CliArgs,
    agent_dir: &Path,
    cwd: &Path,
    resources: &Resources,
) -> Result<SystemPromptBuilder, CliError> {
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
    Ok(SystemPromptBuilder::new(SystemPromptOptions {
        identity: definition.identity.clone(),
        extra_guidelines: definition.guidelines.clone(),
        documentation: definition.documentation.clone(),
        custom_prompt,
        append,
        context_files: if args.no_context_files {
            Vec::new()
        } else {
            load_context_files(agent_dir, cwd, &CONTEXT_FILE_NAMES)
        },
        skills: resources.skills.clone(),
        tools_selected: args.tools.is_some() || args.no_tools,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_idle_timeout_comes_from_the_environment_when_valid() {
        let env = |value: &'static str| move |name: &str| (name == STREAM_IDLE_TIMEOUT_ENV).then(|| value.to_owned());
        assert_eq!(stream_idle_timeout(env("1500")), Some(std::time::Duration::from_millis(1500)));
        assert_eq!(stream_idle_timeout(env("0")), None);
        assert_eq!(stream_idle_timeout(env("soon")), None);
        assert_eq!(stream_idle_timeout(|_| None), None);
    }
}
