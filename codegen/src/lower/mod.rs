//! Lowering: an [`AgentSpec`] becomes Rust tokens: the `AgentDefinition` expression, embedded files, and
//! the generated binary's `main.rs`.

mod commands;
mod context;
mod hooks;
mod mcp;
mod permissions;
mod resources;
pub mod rust_tools;
pub mod system_prompt;

use std::path::{Path, PathBuf};

use proc_macro2::TokenStream;
use quote::quote;

use crate::error::SpecError;
use crate::spec::{
    AgentSpec, DEFAULT_TOOLS, ExecutionSpec, HandlerSpec, PiCompatSpec, QueueModeSpec, ThinkingSpec, models_json,
};

pub use hooks::hook_scripts;
pub use resources::{EmbeddedFiles, EmbeddedSource, embedded_files, referenced_files};

/// What lowering needs besides the spec.
#[derive(Debug, Clone)]
pub struct LowerContext {
    /// The path generated code names the runtime crate by, e.g. `::pi_runtime`.
    pub runtime: TokenStream,
    /// The YAML file; relative paths in it resolve against its directory. Absolute, so `include_bytes!`
    /// works from any crate.
    pub spec_path: PathBuf,
}

impl LowerContext {
    pub fn new(spec_path: &Path) -> Self {
        let absolute = std::path::absolute(spec_path).unwrap_or_else(|_| spec_path.to_path_buf());
        Self { runtime: quote!(::pi_runtime), spec_path: absolute }
    }

    /// The directory relative paths in the YAML start from.
    pub fn spec_dir(&self) -> PathBuf {
        self.spec_path.parent().map(Path::to_path_buf).unwrap_or_default()
    }
}

fn option_string(value: Option<&str>) -> TokenStream {
    match value {
        Some(text) => quote!(::core::option::Option::Some(#text.to_owned())),
        None => quote!(::core::option::Option::None),
    }
}

fn option_tokens<T: quote::ToTokens>(value: Option<T>) -> TokenStream {
    match value {
        Some(value) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    }
}

fn queue_mode(runtime: &TokenStream, mode: Option<QueueModeSpec>) -> TokenStream {
    match mode {
        Some(QueueModeSpec::All) => quote!(#runtime::agent::QueueMode::All),
        Some(QueueModeSpec::OneAtATime) | None => quote!(#runtime::agent::QueueMode::OneAtATime),
    }
}

fn date_line(runtime: &TokenStream, line: Option<crate::spec::DateLineSpec>) -> TokenStream {
    match line {
        Some(crate::spec::DateLineSpec::DateTime) => quote!(#runtime::prompt::DateLine::DateTime),
        Some(crate::spec::DateLineSpec::Date) | None => quote!(#runtime::prompt::DateLine::Date),
    }
}

fn thinking(runtime: &TokenStream, level: Option<ThinkingSpec>) -> TokenStream {
    let variant = level.map(|level| match level {
        ThinkingSpec::Off => quote!(Off),
        ThinkingSpec::Minimal => quote!(Minimal),
        ThinkingSpec::Low => quote!(Low),
        ThinkingSpec::Medium => quote!(Medium),
        ThinkingSpec::High => quote!(High),
        ThinkingSpec::Xhigh => quote!(Xhigh),
        ThinkingSpec::Max => quote!(Max),
    });
    option_tokens(variant.map(|variant| quote!(#runtime::ai::ThinkingLevel::#variant)))
}

/// The active built-in tools, by name.
pub fn builtin_tool_names(spec: &AgentSpec) -> Vec<String> {
    match spec.tools.as_ref().and_then(|tools| tools.builtin.as_ref()) {
        Some(list) => list.iter().map(|tool| tool.name().to_owned()).collect(),
        None => DEFAULT_TOOLS.iter().map(|tool| (*tool).to_owned()).collect(),
    }
}

fn custom_tools_tokens(spec: &AgentSpec, runtime: &TokenStream) -> TokenStream {
    let tools = spec.custom_tools().iter().map(|tool| {
        let name = &tool.name;
        let label = tool.label.clone().unwrap_or_else(|| tool.name.clone());
        let description = &tool.description;
        let snippet = option_string(tool.prompt_snippet.as_deref());
        let guidelines = &tool.prompt_guidelines;
        let parameters = tool.parameters_schema().to_string();
        let handler = match (&tool.command, tool.handler) {
            (_, Some(HandlerSpec::Rust)) => quote!(#runtime::CustomToolHandler::Rust),
            (command, None) => {
                let template = command.clone().unwrap_or_default();
                let timeout = option_tokens(tool.timeout);
                quote!(#runtime::CustomToolHandler::Command { template: #template.to_owned(), timeout_secs: #timeout })
            }
        };
        quote! {
            #runtime::CustomToolDefinition {
                name: #name.to_owned(),
                label: #label.to_owned(),
                description: #description.to_owned(),
                prompt_snippet: #snippet,
                prompt_guidelines: vec![#(#guidelines.to_owned()),*],
                parameters: #parameters.to_owned(),
                handler: #handler,
            }
        }
    });
    quote!(vec![#(#tools),*])
}

/// Tokens of an expression that builds the agent's `AgentDefinition`, with every referenced file embedded.
pub fn definition_tokens(spec: &AgentSpec, ctx: &LowerContext) -> Result<TokenStream, SpecError> {
    let runtime = &ctx.runtime;
    let name = &spec.name;
    let description = spec.description.clone().unwrap_or_default();
    let config_dir = spec.config_dir();
    let agent_dir_env = spec.agent_dir_env();
    let tools = builtin_tool_names(spec);
    let execution = match spec.tools.as_ref().and_then(|tools| tools.execution) {
        Some(ExecutionSpec::Sequential) => quote!(#runtime::ToolExecutionMode::Sequential),
        Some(ExecutionSpec::Parallel) | None => quote!(#runtime::ToolExecutionMode::Parallel),
    };
    let prompt = spec.system_prompt.as_ref();
    let identity = match prompt.and_then(|prompt| prompt.identity.clone()) {
        Some(identity) => quote!(#identity.to_owned()),
        None => quote!(#runtime::prompt::DEFAULT_IDENTITY.to_owned()),
    };
    let guidelines = prompt.map(|prompt| prompt.guidelines.clone()).unwrap_or_default();
    let documentation = option_string(prompt.and_then(|prompt| prompt.documentation.as_deref()));
    let template = system_prompt::render(spec, ctx)?;
    let system_prompt = option_string(template.as_deref());
    let append = option_string(prompt.and_then(|prompt| prompt.append.as_deref()));
    let context_file_names = match prompt.and_then(|prompt| prompt.context_files.clone()) {
        Some(names) => quote!(vec![#(#names.to_owned()),*]),
        None => quote!(#runtime::prompt::CONTEXT_FILE_NAMES.iter().map(|name| (*name).to_owned()).collect()),
    };
    let compaction = spec.compaction.as_ref();
    let compaction_enabled = compaction.and_then(|c| c.enabled).unwrap_or(true);
    let reserve_tokens = compaction.and_then(|c| c.reserve_tokens).unwrap_or(16_384);
    let keep_recent_tokens = compaction.and_then(|c| c.keep_recent_tokens).unwrap_or(20_000);
    let summary_model = option_string(compaction.and_then(|c| c.model.as_deref()));
    let retry = spec.retry.as_ref();
    let retry_enabled = retry.and_then(|r| r.enabled).unwrap_or(true);
    let max_retries = retry.and_then(|r| r.max_retries).unwrap_or(3);
    let base_delay_ms = retry.and_then(|r| r.base_delay_ms).unwrap_or(2000);
    let max_delay_ms = retry.and_then(|r| r.max_delay_ms).unwrap_or(60_000);
    let model = spec.model.as_ref();
    let default_provider = option_string(model.and_then(|m| m.provider.as_deref()));
    let default_model = option_string(model.and_then(|m| m.id.as_deref()));
    let thinking = thinking(runtime, model.and_then(|m| m.thinking));
    let temperature = option_tokens(model.and_then(|m| m.temperature));
    let max_tokens = option_tokens(model.and_then(|m| m.max_tokens));
    let models_json = option_string(models_json(&spec.providers).as_deref());
    let resources = resources::resources_tokens(spec, ctx)?;
    let custom_tools = custom_tools_tokens(spec, runtime);
    let hooks = hooks::hooks_tokens(spec, ctx);
    let commands = commands::commands_tokens(spec, runtime);
    let context = context::context_tokens(spec, runtime);
    let mcp = mcp::mcp_tokens(spec, runtime);
    let permissions = permissions::permissions_tokens(spec, runtime);
    let fallback_models = model.map(|m| m.fallbacks.clone()).unwrap_or_default();
    let output_schema = option_string(spec.output.as_ref().map(|output| output.schema.to_string()).as_deref());
    let session = spec.session.as_ref();
    let session_enabled = session.and_then(|s| s.enabled).unwrap_or(true);
    let session_dir = option_string(session.and_then(|s| s.dir.as_deref()));
    let pi_compat = match spec.pi_compat {
        Some(PiCompatSpec::V1_5) => quote!(#runtime::protocol::PiCompat::V1_5),
        Some(PiCompatSpec::V0_73) | None => quote!(#runtime::protocol::PiCompat::V0_73),
    };
    let subagents = subagents_tokens(spec, ctx)?;
    let max_subagent_depth = spec.max_subagent_depth.unwrap_or(crate::spec::DEFAULT_MAX_SUBAGENT_DEPTH);
    let steering_mode = queue_mode(runtime, spec.steering_mode);
    let date_line = date_line(runtime, spec.system_prompt.as_ref().and_then(|prompt| prompt.date_line));
    let follow_up_mode = queue_mode(runtime, spec.follow_up_mode);
    Ok(quote! {
        #runtime::AgentDefinition {
            name: #name.to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            description: #description.to_owned(),
            config_dir: #config_dir.to_owned(),
            agent_dir_env: #agent_dir_env.to_owned(),
            identity: #identity,
            guidelines: vec![#(#guidelines.to_owned()),*],
            documentation: #documentation,
            tools: vec![#(#tools.to_owned()),*],
            tool_execution: #execution,
            pi_compat: #pi_compat,
            default_provider: #default_provider,
            default_model: #default_model,
            compaction: #runtime::compaction::CompactionSettings {
                enabled: #compaction_enabled,
                reserve_tokens: #reserve_tokens,
                keep_recent_tokens: #keep_recent_tokens,
            },
            summary_model: #summary_model,
            retry: #runtime::agent_session::RetrySettings {
                enabled: #retry_enabled,
                max_retries: #max_retries,
                base_delay_ms: #base_delay_ms,
                max_delay_ms: #max_delay_ms,
            },
            thinking: #thinking,
            temperature: #temperature,
            max_tokens: #max_tokens,
            models_json: #models_json,
            system_prompt: #system_prompt,
            append_system_prompt: #append,
            context_file_names: #context_file_names,
            date_line: #date_line,
            resources: #resources,
            custom_tools: #custom_tools,
            session: #runtime::SessionDefaults { enabled: #session_enabled, dir: #session_dir },
            hooks: #hooks,
            steering_mode: #steering_mode,
            follow_up_mode: #follow_up_mode,
            commands: #commands,
            context: #context,
            mcp: #mcp,
            permissions: #permissions,
            fallback_models: vec![#(#fallback_models.to_owned()),*],
            output_schema: #output_schema,
            subagents: #subagents,
            max_subagent_depth: #max_subagent_depth,
        }
    })
}

/// The sub-agents' definitions, each lowered from its own file (its resources relative to it).
fn subagents_tokens(spec: &AgentSpec, ctx: &LowerContext) -> Result<TokenStream, SpecError> {
    let runtime = &ctx.runtime;
    let mut entries = Vec::with_capacity(spec.loaded_subagents.len());
    for subagent in &spec.loaded_subagents {
        let child = LowerContext { runtime: runtime.clone(), spec_path: subagent.spec_path.clone() };
        let definition = definition_tokens(&subagent.spec, &child)?;
        let name = &subagent.name;
        let description = &subagent.description;
        entries.push(quote! {
            #runtime::SubagentDefinition {
                name: #name.to_owned(),
                description: #description.to_owned(),
                definition: ::std::boxed::Box::new(#definition),
            }
        });
    }
    Ok(quote!(vec![#(#entries),*]))
}

/// The complete, formatted `main.rs` of the generated crate.
pub fn main_rs(spec: &AgentSpec, ctx: &LowerContext) -> Result<String, SpecError> {
    let definition = definition_tokens(spec, ctx)?;
    let source_name = ctx.spec_path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let tokens = quote! {
        #[cfg(not(feature = "temporal"))]
        fn main() -> ::std::process::ExitCode {
            ::pi_runtime::cli::run(definition())
        }

        /// Built with `--features temporal`: the scale-out commands come first.
        #[cfg(feature = "temporal")]
        fn main() -> ::std::process::ExitCode {
            ::pi_temporal::cli::run(definition())
        }

        /// The agent as its YAML file describes it.
        fn definition() -> ::pi_runtime::AgentDefinition {
            #definition
        }
    };
    let file: syn::File = syn::parse2(tokens).map_err(|error| SpecError::Generated(error.to_string()))?;
    let header = format!("//! Generated by pi-gen from {source_name}. Do not edit: change the YAML and rebuild.\n\n");
    Ok(header + &prettyplease::unparse(&file))
}

#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_context;
#[cfg(test)]
mod tests_hooks;
#[cfg(test)]
mod tests_mcp;
