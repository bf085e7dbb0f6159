//! Lowering of `permissions:` to `pi_runtime::permissions::PermissionsDefinition`, each rule spelt out with
//! its name (`permissions.rules[N]` unless the YAML names it).

use proc_macro2::TokenStream;
use quote::quote;

use super::hooks::pattern_tokens;
use super::option_string;
use crate::spec::{AgentSpec, PermissionActionSpec};

fn action_tokens(module: &TokenStream, action: PermissionActionSpec) -> TokenStream {
    match action {
        PermissionActionSpec::Allow => quote!(#module::PermissionAction::Allow),
        PermissionActionSpec::Ask => quote!(#module::PermissionAction::Ask),
        PermissionActionSpec::Deny => quote!(#module::PermissionAction::Deny),
    }
}

/// The `PermissionsDefinition` expression: `Default::default()` (allow everything) without `permissions:`.
pub(super) fn permissions_tokens(spec: &AgentSpec, runtime: &TokenStream) -> TokenStream {
    let Some(permissions) = &spec.permissions else { return quote!(::core::default::Default::default()) };
    let module = quote!(#runtime::permissions);
    let default = action_tokens(&module, permissions.default.unwrap_or(PermissionActionSpec::Allow));
    let rules = permissions.rules.iter().enumerate().map(|(index, rule)| {
        let name = rule.name.clone().unwrap_or_else(|| format!("permissions.rules[{index}]"));
        let tool = pattern_tokens(runtime, &rule.tool);
        let arguments = rule.argument_patterns().map(|(argument, pattern)| {
            let pattern = pattern_tokens(runtime, pattern);
            quote!(#runtime::extension::ArgumentPattern { argument: #argument.to_owned(), pattern: #pattern })
        });
        let action = action_tokens(&module, rule.action);
        let reason = option_string(rule.reason.as_deref());
        quote! {
            #module::PermissionRule {
                name: #name.to_owned(),
                tool: #tool,
                arguments: vec![#(#arguments),*],
                action: #action,
                reason: #reason,
            }
        }
    });
    quote! {
        #module::PermissionsDefinition { default: #default, rules: vec![#(#rules),*] }
    }
}
