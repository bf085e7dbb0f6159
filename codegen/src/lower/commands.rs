//! Lowering of `commands:` to `Vec<CommandDefinition>`: name, description, arguments and the action.

use proc_macro2::TokenStream;
use quote::quote;

use super::{option_string, option_tokens};
use crate::spec::{AgentSpec, CommandSpec};

fn action_tokens(runtime: &TokenStream, command: &CommandSpec) -> TokenStream {
    match (&command.prompt, &command.command) {
        (Some(template), _) => quote!(#runtime::CommandAction::Prompt { template: #template.to_owned() }),
        (None, shell) => {
            let shell = shell.clone().unwrap_or_default();
            let send = command.send.unwrap_or(false);
            let timeout = option_tokens(command.timeout);
            quote!(#runtime::CommandAction::Shell { command: #shell.to_owned(), send: #send, timeout_secs: #timeout })
        }
    }
}

/// The `Vec<CommandDefinition>` expression.
pub(super) fn commands_tokens(spec: &AgentSpec, runtime: &TokenStream) -> TokenStream {
    if spec.commands.is_empty() {
        return quote!(::std::vec::Vec::new());
    }
    let commands = spec.commands.iter().map(|command| {
        let name = &command.name;
        let description = &command.description;
        let arguments = command.arguments.iter().map(|argument| {
            let name = &argument.name;
            let description = option_string(argument.description.as_deref());
            let required = argument.is_required();
            quote! {
                #runtime::CommandArgument { name: #name.to_owned(), description: #description, required: #required }
            }
        });
        let action = action_tokens(runtime, command);
        quote! {
            #runtime::CommandDefinition {
                name: #name.to_owned(),
                description: #description.to_owned(),
                arguments: vec![#(#arguments),*],
                action: #action,
            }
        }
    });
    quote!(vec![#(#commands),*])
}
