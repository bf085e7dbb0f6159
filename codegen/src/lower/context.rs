//! Lowering of `context:` to `pi_runtime::panels::ContextDefinition`: the strategy and, spelt out field by
//! field, the panels settings, with the runtime's own defaults for whatever the YAML leaves out.

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use super::option_tokens;
use crate::spec::{AgentSpec, ContextSpec, ContextStrategySpec, DetachSpec, PanelTextsSpec};

/// The fields of `DetachLimits`: with all of them given, `..Default::default()` would be needless.
const DETACH_LIMITS: usize = 4;
/// The fields of `PanelTexts`.
const PANEL_TEXTS: usize = 6;

/// The `ContextDefinition` expression: `Default::default()` without a `context:` section.
pub(super) fn context_tokens(spec: &AgentSpec, runtime: &TokenStream) -> TokenStream {
    let Some(context) = &spec.context else { return quote!(::core::default::Default::default()) };
    let panels = quote!(#runtime::panels);
    let strategy = match context.strategy {
        Some(ContextStrategySpec::Panels) => quote!(#panels::ContextStrategy::Panels),
        Some(ContextStrategySpec::Messages) | None => quote!(#panels::ContextStrategy::Messages),
    };
    let builtin = builtin_tokens(context, &panels);
    let files = context.files.iter().flatten();
    let detach = detach_tokens(context.detach.as_ref(), &panels);
    let command_panels = context.command_panels.iter().flatten().map(|panel| {
        let name = &panel.name;
        let command = &panel.command;
        let refresh_secs = match panel.refresh_secs {
            Some(secs) => quote!(#secs),
            None => quote!(#panels::DEFAULT_COMMAND_REFRESH_SECS),
        };
        let timeout_secs = match panel.timeout {
            Some(secs) => quote!(#secs),
            None => quote!(#panels::DEFAULT_COMMAND_TIMEOUT_SECS),
        };
        quote! {
            #panels::CommandPanelDefinition {
                name: #name.to_owned(),
                command: #command.to_owned(),
                refresh_secs: #refresh_secs,
                timeout_secs: #timeout_secs,
            }
        }
    });
    let texts = texts_tokens(context.texts.as_ref(), &panels);
    let max_auto_continuations = match context.max_auto_continuations {
        Some(count) => quote!(#count),
        None => quote!(#panels::DEFAULT_MAX_AUTO_CONTINUATIONS),
    };
    let git_refresh_secs = match context.git_refresh_secs {
        Some(secs) => quote!(#secs),
        None => quote!(#panels::DEFAULT_GIT_REFRESH_SECS),
    };
    let reinject_system_prompt = option_tokens(context.reinject_system_prompt);
    quote! {
        #panels::ContextDefinition {
            strategy: #strategy,
            panels: #panels::PanelsDefinition {
                builtin: #builtin,
                files: vec![#(#files.to_owned()),*],
                detach: #detach,
                command_panels: vec![#(#command_panels),*],
                texts: #texts,
                max_auto_continuations: #max_auto_continuations,
                git_refresh_secs: #git_refresh_secs,
                reinject_system_prompt: #reinject_system_prompt,
            },
        }
    }
}

/// The built-in panels listed, or all of them.
fn builtin_tokens(context: &ContextSpec, panels: &TokenStream) -> TokenStream {
    let Some(list) = &context.panels else { return quote!(#panels::BuiltinPanel::ALL.to_vec()) };
    let variants = list.iter().map(|panel| Ident::new(panel.variant(), Span::call_site()));
    quote!(vec![#(#panels::BuiltinPanel::#variants),*])
}

/// `DetachLimits` with the limits given, the rest (if any) from its `Default`.
fn detach_tokens(detach: Option<&DetachSpec>, panels: &TokenStream) -> TokenStream {
    let given: Vec<TokenStream> = detach
        .map(|detach| {
            let DetachSpec { chunk_min_messages, chunk_min_tokens, keep_min_messages, keep_min_tokens } = detach;
            [
                chunk_min_messages.map(|count| quote!(chunk_min_messages: #count)),
                chunk_min_tokens.map(|tokens| quote!(chunk_min_tokens: #tokens)),
                keep_min_messages.map(|count| quote!(keep_min_messages: #count)),
                keep_min_tokens.map(|tokens| quote!(keep_min_tokens: #tokens)),
            ]
            .into_iter()
            .flatten()
            .collect()
        })
        .unwrap_or_default();
    match given.len() {
        0 => quote!(#panels::DetachLimits::default()),
        DETACH_LIMITS => quote!(#panels::DetachLimits { #(#given,)* }),
        _ => quote!(#panels::DetachLimits { #(#given,)* ..#panels::DetachLimits::default() }),
    }
}

/// `PanelTexts` with the texts given, the rest (if any) from its `Default`.
fn texts_tokens(texts: Option<&PanelTextsSpec>, panels: &TokenStream) -> TokenStream {
    let given = texts.map(PanelTextsSpec::given).unwrap_or_default();
    let count = given.len();
    let fields = given.into_iter().map(|(field, text)| {
        let field = Ident::new(field, Span::call_site());
        quote!(#field: #text.to_owned())
    });
    match count {
        0 => quote!(#panels::PanelTexts::default()),
        PANEL_TEXTS => quote!(#panels::PanelTexts { #(#fields,)* }),
        _ => quote!(#panels::PanelTexts { #(#fields,)* ..#panels::PanelTexts::default() }),
    }
}
