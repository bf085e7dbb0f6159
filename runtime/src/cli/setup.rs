//! Turns the definition and flags into a ready agent: model, key, tools and system prompt.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::args::CliArgs;
use super::custom_tools::{build_custom_tools, select_tools};
use super::error::CliError;
use super::oauth_keys::OAuthKeyring;
use super::paths::{agent_dir, expand_home, project_dir};
use super::resolve::{resolve_summary_model, resolve_with_session};
use super::resources::{Resources, load_resources};
use super::run_defaults::RunDefaults;
use super::session_select::open_session;
use super::settings::Settings;
use crate::AgentDefinition;
use crate::agent::{Agent, AgentOptions};
use crate::agent_session::SessionSettings;
use crate::ai::oauth::OAuthServer;
use crate::ai::{Model, ProviderRegistry, ProviderRetry, default_registry};
use crate::extension::{ExtensionContext, ExtensionRunner, Extensions, declarative::hook_extensions};
use crate::panels::{PanelsExtension, library_entries};
use crate::prompt::{SystemPromptBuilder, SystemPromptOptions, load_context_files};
use crate::protocol::PiCompat;
use crate::session::{SessionManager, coding_agent_convert_to_llm};
use crate::tools::{AgentTool, ToolEnvironment};

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
    /// The extensions: Rust ones first, then the YAML's hooks.
    pub extensions: Arc<ExtensionRunner>,
    /// Rebuilds the system prompt when the active tools change.
    pub prompt_builder: SystemPromptBuilder,
    pub cwd: PathBuf,
    /// The agent directory (settings, sessions, auth).
    pub agent_dir: PathBuf,
    /// The scoped models' patterns (`--models`, else `enabledModels`), for model cycling.
    pub model_scope: Vec<String>,
    /// Where commands run (the user's own `bash` over RPC): shell, command prefix, bin dir.
    pub tool_env: ToolEnvironment,
    /// The MCP servers (already starting), if the run has any.
    pub mcp: Option<super::mcp::McpRun>,
    /// The pi release this run reproduces (`--pi-compat`, else settings `piCompat`, else the YAML's).
    pub pi_compat: PiCompat,
    /// The subscription logins of auth.json, renewed before requests when they expire.
    pub oauth: Arc<OAuthKeyring>,
    /// The fallback models (`--fallback-model`, then the YAML's `model.fallbacks`), if any.
    pub fallbacks: Option<crate::agent_session::FallbackChain>,
    /// The schema the final answer must match (the YAML's `output.schema`).
    pub output_schema: Option<crate::agent_session::OutputSchema>,
}

/// Resolves everything from files, environment and flags, in the current directory.
pub fn prepare(
    definition: &AgentDefinition,
    args: &CliArgs,
    rust_tools: Vec<Arc<dyn AgentTool>>,
    extensions: Extensions,
) -> Result<Prepared, CliError> {
    let cwd = std::env::current_dir().map_err(|source| CliError::Read { path: ".".into(), source })?;
    prepare_in(definition, args, rust_tools, extensions, &cwd, &agent_dir(definition))
}

/// [`prepare`] for a given working directory and agent directory.
pub(super) fn prepare_in(
    definition: &AgentDefinition,
    args: &CliArgs,
    rust_tools: Vec<Arc<dyn AgentTool>>,
    extensions: Extensions,
    cwd: &Path,
    agent_dir: &Path,
) -> Result<Prepared, CliError> {
    let placement = Placement::top_level(definition, cwd, agent_dir);
    prepare_with(definition, args, rust_tools, extensions, placement)
}

/// Where an agent runs: the top-level agent of the command line, or a sub-agent inside another one.
pub(super) struct Placement {
    pub cwd: PathBuf,
    pub agent_dir: PathBuf,
    /// The session to use; `None`: the one the flags choose.
    pub session: Option<SessionManager>,
    /// The model, key and thinking level to use; `None`: chosen from flags, session, settings and defaults.
    pub model: Option<super::resolve::ResolvedModel>,
    /// Where this agent sits among sub-agents (the top-level agent: depth 0).
    pub scope: super::subagents::SubagentScope,
}

impl Placement {
    fn top_level(definition: &AgentDefinition, cwd: &Path, agent_dir: &Path) -> Self {
        Self {
            cwd: cwd.to_path_buf(),
            agent_dir: agent_dir.to_path_buf(),
            session: None,
            model: None,
            scope: super::subagents::SubagentScope::top_level(definition),
        }
    }
}

/// Prepares `definition` for `placement`: [`prepare_in`] for the top-level agent, and what a sub-agent tool
/// runs for its agent.
pub(super) fn prepare_with(
    definition: &AgentDefinition,
    args: &CliArgs,
    rust_tools: Vec<Arc<dyn AgentTool>>,
    mut extensions: Extensions,
    placement: Placement,
) -> Result<Prepared, CliError> {
    let Placement { cwd, agent_dir, session: given_session, model: given_model, scope } = placement;
    let (cwd, agent_dir) = (cwd.as_path(), agent_dir.as_path());
    let top_level = scope.depth == 0;
    // MCP servers start first, so they start while the rest is read.
    let mcp = super::mcp::start_servers(definition, args, agent_dir, cwd);
    let project = args.uses_project_files().then(|| project_dir(definition, cwd));
    let (settings, problems) = Settings::load(agent_dir, project.as_deref());
    for problem in problems {
        eprintln!("Warning: {problem}");
    }
    let (defaults, warnings) = RunDefaults::new(definition, &settings, args.pi_compat);
    let pi_compat = defaults.pi_compat;
    let mut environment = tool_environment(cwd, agent_dir, &settings);
    environment.pi_compat = pi_compat;
    // Startup errors in the agent's own tools come before anything is written.
    let mut custom_tools = build_custom_tools(definition, rust_tools, &environment)?;
    let parent_link = super::subagents::ParentLink::default();
    custom_tools.extend(super::subagents::subagent_tools(
        definition,
        args,
        pi_compat,
        &scope,
        &parent_link,
        cwd,
        agent_dir,
    ));
    let (tools, tool_warnings) = select_tools(definition, args, &environment, custom_tools);
    extensions.extend(yaml_hooks(definition, agent_dir, &environment)?);
    // The panels strategy builds the request last, so the YAML's `context` hooks see the plain conversation.
    let panels = definition.context.uses_panels().then(|| {
        let panels = PanelsExtension::new(definition.context.panels.clone(), Vec::new(), environment.clone());
        let core = panels.core();
        extensions.push(panels);
        core
    });
    if let Some(run) = &mcp {
        extensions.push(super::mcp::McpCommand { manager: run.manager.clone(), problems: run.problems.clone() });
    }
    // Permissions come last, so they judge the arguments that will run (after hooks changed them).
    if let Some(permissions) =
        super::permissions::permissions_extension(definition, args, &settings, agent_dir, project.as_deref())?
    {
        extensions.push(permissions);
    }
    let extensions = Arc::new(ExtensionRunner::new(extensions, ExtensionContext::detached(cwd)));
    for warning in warnings.iter().chain(&tool_warnings) {
        eprintln!("Warning: {warning}");
    }
    let mut session = match given_session {
        Some(session) => session,
        None => open_session(definition, args, agent_dir, cwd)?,
    };
    // pi 1.5's `--name`: a `session_info` entry now (before the model's), also when the name is unchanged.
    if let Some(name) = &args.name {
        session.append_session_info(name)?;
    }
    for warning in session.take_warnings() {
        eprintln!("Warning: {warning}");
    }
    let resolved = match given_model {
        Some(resolved) => resolved,
        None => resolve_with_session(definition, args, agent_dir, &settings, &session)?,
    };
    let registry = match &args.record {
        // One recorder per process: a sub-agent's responses join its parent's, in the order they end.
        Some(path) => crate::ai::record::ResponseRecorder::shared(path)?.wrap(&default_registry()),
        None => default_registry(),
    };
    let registry = Arc::new(registry);
    let api_key = resolved.api_key.clone();
    let env = |name: &str| std::env::var(name).ok();
    let overridden = args.api_key.is_some().then(|| resolved.model.provider.clone());
    let oauth = Arc::new(OAuthKeyring::load(&agent_dir.join("auth.json"), OAuthServer::from_env(&env), overridden));
    let summary_model = resolve_summary_model(definition, args, agent_dir, &settings);
    let resources = load_resources(definition, args, agent_dir, cwd, &settings);
    if let Some(mut core) = panels.as_ref().and_then(|core| core.try_lock().ok()) {
        core.library = library_entries(&resources.skills, &resources.templates, &resources.commands);
    }
    let prompt = prompt_builder(definition, args, agent_dir, cwd, &resources, pi_compat, top_level)?;
    let system_prompt = prompt.build(&tools);
    let output_schema = output_schema(definition)?;
    let agent = Agent::new(AgentOptions {
        model: Some(resolved.model),
        system_prompt,
        thinking_level: resolved.thinking,
        tools,
        api_key: Some(resolved.api_key),
        get_api_key: Some(oauth.lookup()),
        tool_execution: definition.tool_execution,
        temperature: definition.temperature,
        max_tokens: definition.max_tokens,
        response_schema: output_schema.as_ref().map(crate::agent_session::OutputSchema::schema),
        steering_mode: defaults.steering_mode,
        follow_up_mode: defaults.follow_up_mode,
        idle_timeout: stream_idle_timeout(|name| std::env::var(name).ok()),
        provider_retry: provider_retry(settings.value("retry")),
        thinking_budgets: crate::ai::ThinkingBudgets::from_settings(settings.value("thinkingBudgets")),
        convert_to_llm: Some(coding_agent_convert_to_llm()),
        pi_compat,
        user_agent: pi_compat.is_v1_5().then(|| user_agent(definition)),
        ..AgentOptions::new(registry.clone())
    });
    parent_link.attach(&agent, &extensions);
    let session_settings = session_settings(definition, &settings);
    let fallbacks = super::fallbacks::fallback_chain(definition, args, agent_dir, &settings, &agent.state());
    Ok(Prepared {
        agent,
        resources,
        summary_model,
        session,
        session_settings,
        registry,
        api_key,
        extensions,
        prompt_builder: prompt,
        cwd: cwd.to_path_buf(),
        agent_dir: agent_dir.to_path_buf(),
        model_scope: super::model_scope::scope_patterns(args.models.as_deref(), &settings),
        tool_env: environment.clone(),
        mcp,
        pi_compat,
        oauth,
        fallbacks,
        output_schema,
    })
}

/// The YAML's output schema, compiled (`pi-gen` checked it; a hand-made definition may still be wrong).
fn output_schema(definition: &AgentDefinition) -> Result<Option<crate::agent_session::OutputSchema>, CliError> {
    let Some(text) = definition.output_schema.as_deref() else { return Ok(None) };
    let schema = serde_json::from_str(text).map_err(|error| CliError::OutputSchema(error.to_string()))?;
    crate::agent_session::OutputSchema::new(schema).map(Some).map_err(CliError::OutputSchema)
}

/// The session's retry and compaction settings: the YAML's, with settings.json's fields over them.
pub(super) fn session_settings(definition: &AgentDefinition, settings: &Settings) -> SessionSettings {
    SessionSettings {
        retry: definition.retry.with_settings(settings.value("retry")),
        compaction: definition.compaction.with_settings(settings.value("compaction")),
    }
}

/// The extensions the YAML's `hooks:` describe; scripts they name are run from the unpacked resources, with
/// the shell the bash tool uses.
fn yaml_hooks(
    definition: &AgentDefinition,
    agent_dir: &Path,
    environment: &ToolEnvironment,
) -> Result<Extensions, CliError> {
    if definition.hooks.is_empty() {
        return Ok(Extensions::new());
    }
    let resources_dir = super::embedded::unpack_embedded(agent_dir, &definition.name, &definition.resources);
    let shell = environment.shell_path.as_deref();
    hook_extensions(&definition.hooks, resources_dir.as_deref(), shell).map_err(CliError::Hooks)
}

/// pi's `retry.provider` settings (`timeoutMs`, `maxRetries`, `maxRetryDelayMs`; an old `retry.maxDelayMs`
/// stands for `maxRetryDelayMs` when that is not set, as pi migrates it). Values that are not whole
/// numbers are ignored.
pub(super) fn provider_retry(retry: Option<&serde_json::Value>) -> ProviderRetry {
    let Some(retry) = retry else { return ProviderRetry::default() };
    let provider = retry.get("provider");
    let whole = |key: &str| provider.and_then(|provider| provider.get(key)).and_then(serde_json::Value::as_u64);
    let millis = |ms: u64| std::time::Duration::from_millis(ms);
    ProviderRetry {
        timeout: whole("timeoutMs").filter(|ms| *ms > 0).map(millis),
        max_retries: whole("maxRetries").map(|n| u32::try_from(n).unwrap_or(u32::MAX)),
        max_retry_delay: whole("maxRetryDelayMs")
            .or_else(|| retry.get("maxDelayMs").and_then(serde_json::Value::as_u64))
            .map(millis),
    }
}

/// Environment variable: how long a model stream may stay silent before the request fails
/// (milliseconds; the default is the vendor SDKs' ten minutes).
pub const STREAM_IDLE_TIMEOUT_ENV: &str = "PI_GEN_STREAM_IDLE_TIMEOUT_MS";

/// The stream idle timeout from the environment, if set to a positive whole number of milliseconds.
/// pi 1.5's `user-agent`: `<agent>/<version> (<os>; <arch>)`, with Node's names for the OS and the CPU.
pub(super) fn user_agent(definition: &AgentDefinition) -> String {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        "x86" => "ia32",
        other => other,
    };
    format!("{}/{} ({os}; {arch})", definition.name, definition.version)
}

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

/// Where the built-in tools work: the working directory, the shell settings, and the agent directory's
/// `bin/` in front of `PATH` (where pi keeps the helper binaries it installs).
fn tool_environment(cwd: &Path, agent_dir: &Path, settings: &Settings) -> ToolEnvironment {
    let mut environment = ToolEnvironment::new(cwd);
    environment.shell_path = settings.string("shellPath").filter(|path| !path.is_empty()).map(PathBuf::from);
    environment.command_prefix = settings.string("shellCommandPrefix").map(str::to_owned);
    environment.bin_dir = Some(agent_dir.join("bin"));
    environment
}

/// The system prompt's inputs other than the tools: the base (`--system-prompt`, else SYSTEM.md of the
/// project or agent directory, else the agent's `system_prompt`, else the default), the appended text (the
/// agent's `append_system_prompt`, then `--append-system-prompt` or APPEND_SYSTEM.md, joined by a blank
/// line), context files (the agent's file names), skills and the agent's own prompt settings.
pub(super) fn prompt_builder(
    definition: &AgentDefinition,
    args: &CliArgs,
    agent_dir: &Path,
    cwd: &Path,
    resources: &Resources,
    pi_compat: PiCompat,
    user_prompt_files: bool,
) -> Result<SystemPromptBuilder, CliError> {
    // The project's file comes first, in a folder whose files are used.
    let candidates = |name: &str| -> Vec<PathBuf> {
        let project = args.uses_project_files().then(|| project_dir(definition, cwd).join(name));
        project.into_iter().chain([agent_dir.join(name)]).collect()
    };
    // A sub-agent's prompt is its YAML's own: the SYSTEM.md and APPEND_SYSTEM.md files are the parent's.
    let candidates = |name: &str| if user_prompt_files { candidates(name) } else { Vec::new() };
    let custom_prompt = match &args.system_prompt {
        Some(value) => Some(text_or_file(value)?),
        None => first_file(&candidates("SYSTEM.md")).or_else(|| definition.system_prompt.clone()),
    };
    let user_append = if args.append_system_prompt.is_empty() {
        first_file(&candidates("APPEND_SYSTEM.md"))
    } else {
        let parts: Result<Vec<String>, CliError> = args.append_system_prompt.iter().map(|v| text_or_file(v)).collect();
        Some(parts?.join("\n\n"))
    };
    let output_section = definition
        .output_schema
        .as_deref()
        .and_then(|text| serde_json::from_str(text).ok())
        .map(|schema| crate::agent_session::OutputSchema::prompt_section(&schema));
    let append_parts: Vec<String> = [definition.append_system_prompt.clone(), output_section, user_append]
        .into_iter()
        .flatten()
        .filter(|text| !text.trim().is_empty())
        .collect();
    let context_names: Vec<&str> = definition.context_file_names.iter().map(String::as_str).collect();
    Ok(SystemPromptBuilder::new(SystemPromptOptions {
        identity: definition.identity.clone(),
        extra_guidelines: definition.guidelines.clone(),
        documentation: definition.documentation.clone(),
        custom_prompt,
        append: (!append_parts.is_empty()).then(|| append_parts.join("\n\n")),
        context_files: if args.no_context_files || context_names.is_empty() {
            Vec::new()
        } else {
            load_context_files(agent_dir, cwd, &context_names)
        },
        skills: resources.skills.clone(),
        tools_selected: args.tools.is_some() || args.no_tools,
        cwd: cwd.to_path_buf(),
        date_line: definition.date_line,
        pi_compat,
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
#[path = "setup_tests.rs"]
mod tests;
