//! Lowering of `mcp:` to `pi_runtime::mcp::McpDefinition`: each server spelt out field by field, with the
//! runtime's defaults (all tools, its call timeout, optional, enabled) for whatever the YAML leaves out.

use proc_macro2::TokenStream;
use quote::quote;

use super::{option_string, option_tokens};
use crate::spec::{AgentSpec, McpServerSpec};

/// The `McpDefinition` expression: `Default::default()` without an `mcp:` section.
pub(super) fn mcp_tokens(spec: &AgentSpec, runtime: &TokenStream) -> TokenStream {
    let Some(mcp) = &spec.mcp else { return quote!(::core::default::Default::default()) };
    let module = quote!(#runtime::mcp);
    let servers = mcp.servers.iter().map(|server| server_tokens(server, &module));
    quote! {
        #module::McpDefinition { servers: vec![#(#servers),*] }
    }
}

fn server_tokens(server: &McpServerSpec, module: &TokenStream) -> TokenStream {
    let name = &server.name;
    let transport = transport_tokens(server, module);
    let tools = option_tokens(server.tools.as_ref().map(|tools| quote!(vec![#(#tools.to_owned()),*])));
    let exclude = server.exclude.iter().flatten();
    let timeout_ms = match server.timeout_ms() {
        Some(ms) => quote!(#ms),
        None => quote!(#module::DEFAULT_CALL_TIMEOUT_MS),
    };
    let required = server.required.unwrap_or(false);
    let enabled = server.enabled.unwrap_or(true);
    let description = option_string(server.description.as_deref());
    quote! {
        #module::McpServerDefinition {
            name: #name.to_owned(),
            transport: #transport,
            tools: #tools,
            exclude: vec![#(#exclude.to_owned()),*],
            timeout_ms: #timeout_ms,
            required: #required,
            enabled: #enabled,
            description: #description,
        }
    }
}

/// `Stdio` for a `command` (its first item the program, the rest its arguments), else `Http` for the `url`.
fn transport_tokens(server: &McpServerSpec, module: &TokenStream) -> TokenStream {
    match (&server.command, &server.url) {
        (Some(command), _) => {
            let (program, args) = command.split_first().map_or(("", &[][..]), |(first, rest)| (first.as_str(), rest));
            let env = pairs_tokens(server.env.as_deref());
            let cwd = option_string(server.cwd.as_deref());
            quote! {
                #module::McpTransport::Stdio {
                    command: #program.to_owned(),
                    args: vec![#(#args.to_owned()),*],
                    env: #env,
                    cwd: #cwd,
                }
            }
        }
        (None, url) => {
            let url = url.as_deref().unwrap_or_default();
            let headers = pairs_tokens(server.headers.as_deref());
            quote! {
                #module::McpTransport::Http { url: #url.to_owned(), headers: #headers }
            }
        }
    }
}

/// `vec![(name, value), ...]` in YAML order.
fn pairs_tokens(pairs: Option<&[(String, String)]>) -> TokenStream {
    let pairs = pairs.unwrap_or_default().iter().map(|(name, value)| quote!((#name.to_owned(), #value.to_owned())));
    quote!(vec![#(#pairs),*])
}
