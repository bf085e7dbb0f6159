//! Lowering of `handler: rust` tools for `#[agent]`: argument structs, the trait users implement, and the
//! glue that turns their implementation into runtime tools.

mod args;
pub mod names;

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use super::{LowerContext, definition_tokens};
use crate::error::SpecError;
use crate::spec::{AgentSpec, CustomToolSpec, HandlerSpec};

/// `<Agent>Tools`: the trait with one method per `handler: rust` tool.
pub fn trait_ident(agent: &Ident) -> Ident {
    format_ident!("{}Tools", agent)
}

/// `<CamelName>Args`: the argument struct of tool `name`.
pub fn args_ident(name: &str) -> Ident {
    format_ident!("{}Args", names::camel_case(name))
}

/// The trait method implementing tool `name`.
pub fn method_ident(name: &str) -> Ident {
    names::snake_ident(name)
}

/// The tools of `spec` implemented in Rust, in YAML order.
pub fn rust_tools(spec: &AgentSpec) -> Vec<&CustomToolSpec> {
    spec.custom_tools().iter().filter(|tool| tool.handler == Some(HandlerSpec::Rust)).collect()
}

/// Everything `#[agent]` adds next to the struct `agent`: `include_bytes!` of the YAML and every file it
/// references (so editing them rebuilds), `definition()` and `run()`, and [`rust_tools_tokens`].
pub fn agent_tokens(spec: &AgentSpec, ctx: &LowerContext, agent: &Ident) -> Result<TokenStream, SpecError> {
    let definition = definition_tokens(spec, ctx)?;
    let mut files = vec![ctx.spec_path.clone()];
    files.extend(super::resources::referenced_files(spec, ctx));
    let includes = files.iter().map(|path| {
        let path = path.to_string_lossy();
        quote!(
            const _: &[u8] = ::core::include_bytes!(#path);
        )
    });
    let body = agent_impl(spec, ctx, agent, &definition);
    Ok(quote! {
        #(#includes)*
        #body
    })
}

/// `impl <agent> { definition(), run() }` around a given definition expression, then the tool glue.
pub fn agent_impl(spec: &AgentSpec, ctx: &LowerContext, agent: &Ident, definition: &TokenStream) -> TokenStream {
    let runtime = &ctx.runtime;
    let file = file_name(ctx);
    let definition_doc = format!(" The agent as `{file}` describes it.");
    let run = if rust_tools(spec).is_empty() {
        quote! {
            /// Runs the agent's command line (pi's flags and modes); returns the process exit code.
            pub fn run(self) -> ::std::process::ExitCode {
                #runtime::cli::run(Self::definition())
            }

            /// [`Self::run`] with extensions written in Rust; they run before the YAML's hooks, in order.
            pub fn run_with_extensions(self, extensions: #runtime::extension::Extensions) -> ::std::process::ExitCode {
                #runtime::cli::run_with_extensions(Self::definition(), ::std::vec::Vec::new(), extensions)
            }
        }
    } else {
        quote! {
            /// Runs the agent's command line (pi's flags and modes), its Rust tools backed by this value;
            /// returns the process exit code.
            pub fn run(self) -> ::std::process::ExitCode {
                #runtime::cli::run_with_tools(Self::definition(), Self::rust_tools(::std::sync::Arc::new(self)))
            }

            /// [`Self::run`] with extensions written in Rust; they run before the YAML's hooks, in order.
            pub fn run_with_extensions(self, extensions: #runtime::extension::Extensions) -> ::std::process::ExitCode {
                let tools = Self::rust_tools(::std::sync::Arc::new(self));
                #runtime::cli::run_with_extensions(Self::definition(), tools, extensions)
            }
        }
    };
    let tools = rust_tools_tokens(spec, ctx, agent);
    quote! {
        impl #agent {
            #[doc = #definition_doc]
            pub fn definition() -> #runtime::AgentDefinition {
                #definition
            }

            #run
        }

        #tools
    }
}

/// For every `handler: rust` tool an argument struct; the trait `<Agent>Tools` with one async method per
/// tool; and `<Agent>::rust_tools`, which wraps the implementation as runtime tools. `rust_tools` is the
/// one place that requires `<Agent>: <Agent>Tools`, and as an ordinary (non-generic) method its body is
/// always checked: a missing implementation is a compile error even if `run` is never called. Empty when
/// the agent has no Rust tools.
pub fn rust_tools_tokens(spec: &AgentSpec, ctx: &LowerContext, agent: &Ident) -> TokenStream {
    let tools = rust_tools(spec);
    if tools.is_empty() {
        return TokenStream::new();
    }
    let runtime = &ctx.runtime;
    if let Some(error) = name_clash(&tools) {
        return quote!(::core::compile_error!(#error););
    }
    let structs = tools.iter().map(|tool| args::args_struct(runtime, tool, &args_ident(&tool.name)));
    let trait_tokens = trait_tokens(spec, ctx, agent, &tools);
    let glue = glue_tokens(ctx, agent, &tools);
    quote! {
        #(#structs)*
        #trait_tokens
        #glue
    }
}

fn trait_tokens(spec: &AgentSpec, ctx: &LowerContext, agent: &Ident, tools: &[&CustomToolSpec]) -> TokenStream {
    let runtime = &ctx.runtime;
    let trait_name = trait_ident(agent);
    // on_unimplemented treats `{...}` as a placeholder; names of tools cannot hold braces, file names can.
    let file: String = file_name(ctx).chars().filter(|c| *c != '{' && *c != '}').collect();
    let tool_list = tools.iter().map(|tool| format!("`{}`", tool.name)).collect::<Vec<_>>().join(", ");
    let message = format!("`{{Self}}` does not implement the Rust tools of agent `{}` ({tool_list})", spec.name);
    let label = format!("add `impl {trait_name} for {agent}` with one async method per tool: {tool_list}");
    let note = format!("{file} declares {tool_list} with `handler: rust`; `{trait_name}` has one method for each");
    let trait_doc = format!(" The tools `{file}` declares with `handler: rust`: implement each one as an `async fn`.");
    let methods = tools.iter().map(|tool| {
        let method = method_ident(&tool.name);
        let args = args_ident(&tool.name);
        let doc = format!(" `{}`: {}", tool.name, tool.description);
        quote! {
            #[doc = #doc]
            fn #method(
                &self,
                args: #args,
                ctx: #runtime::tools::ToolContext,
            ) -> impl ::core::future::Future<
                Output = ::core::result::Result<#runtime::protocol::AgentToolResult, #runtime::tools::ToolError>,
            > + ::core::marker::Send;
        }
    });
    quote! {
        #[doc = #trait_doc]
        #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
        pub trait #trait_name: ::core::marker::Send + ::core::marker::Sync + 'static {
            #(#methods)*
        }
    }
}

fn glue_tokens(ctx: &LowerContext, agent: &Ident, tools: &[&CustomToolSpec]) -> TokenStream {
    let runtime = &ctx.runtime;
    let trait_name = trait_ident(agent);
    let support = quote!(#runtime::macro_support);
    let callers = tools.iter().map(|tool| {
        let name = &tool.name;
        let method = method_ident(name);
        let caller = format_ident!("call_{}", names::unraw(&method));
        let args = args_ident(name);
        quote! {
            fn #caller<A: #trait_name>(
                agent: &A,
                args: #support::serde_json::Value,
                ctx: #runtime::tools::ToolContext,
            ) -> #runtime::tools::ToolFuture<'_> {
                ::std::boxed::Box::pin(async move {
                    let args = #support::parse_args::<#args>(#name, args)?;
                    <A as #trait_name>::#method(agent, args, ctx).await
                })
            }
        }
    });
    let constructors = tools.iter().map(|tool| {
        let name = &tool.name;
        let caller = format_ident!("call_{}", names::unraw(&method_ident(name)));
        let label = tool.label.clone().unwrap_or_else(|| tool.name.clone());
        let description = &tool.description;
        let parameters = tool.parameters_schema().to_string();
        let snippet = match &tool.prompt_snippet {
            Some(text) => quote!(::core::option::Option::Some(#text)),
            None => quote!(::core::option::Option::None),
        };
        let guidelines = &tool.prompt_guidelines;
        quote! {
            #support::rust_tool(
                #support::RustToolInfo {
                    name: #name,
                    label: #label,
                    description: #description,
                    parameters: #parameters,
                    prompt_snippet: #snippet,
                    prompt_guidelines: &[#(#guidelines),*],
                },
                ::std::sync::Arc::clone(&agent),
                #caller::<A>,
            )
        }
    });
    let doc = format!(" The Rust tools, each backed by this value's `{trait_name}` method of the same name.");
    quote! {
        impl #agent {
            #[doc = #doc]
            pub fn rust_tools(
                self: ::std::sync::Arc<Self>,
            ) -> ::std::vec::Vec<::std::sync::Arc<dyn #runtime::tools::AgentTool>> {
                #(#callers)*
                fn tools<A: #trait_name>(
                    agent: ::std::sync::Arc<A>,
                ) -> ::std::vec::Vec<::std::sync::Arc<dyn #runtime::tools::AgentTool>> {
                    ::std::vec::Vec::from([#(#constructors),*])
                }
                tools::<#agent>(self)
            }
        }
    }
}

/// Two tools whose names give the same method or struct name cannot both be Rust tools.
fn name_clash(tools: &[&CustomToolSpec]) -> Option<String> {
    for (index, tool) in tools.iter().enumerate() {
        for earlier in &tools[..index] {
            if method_ident(&earlier.name) == method_ident(&tool.name)
                || args_ident(&earlier.name) == args_ident(&tool.name)
            {
                return Some(format!(
                    "tools `{}` and `{}` both become `{}`/`{}`; rename one of them",
                    earlier.name,
                    tool.name,
                    method_ident(&tool.name),
                    args_ident(&tool.name)
                ));
            }
        }
    }
    None
}

fn file_name(ctx: &LowerContext) -> String {
    ctx.spec_path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_else(|| "the YAML".to_owned())
}

#[cfg(test)]
mod tests;
