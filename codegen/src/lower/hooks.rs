//! Lowering of `hooks:` to `Vec<HookDefinition>`, and the command scripts they run, which are embedded
//! with the agent's other resources under `hooks/`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use proc_macro2::TokenStream;
use quote::quote;

use super::{LowerContext, option_string, option_tokens};
use crate::spec::{AgentSpec, HookActionKind, HookSpec, PatternSpec};

/// For each hook, in order, the script its command names (`./x.sh`, relative to the YAML) as (path among
/// the embedded resources, file on disk); `None` for hooks that run no such script. The embedded path is
/// `hooks/<file name>`, or `hooks/<n>-<file name>` when another script already has that name; a script
/// named by several hooks is embedded once.
pub fn hook_scripts(spec: &AgentSpec, ctx: &LowerContext) -> Vec<Option<(String, PathBuf)>> {
    let base = ctx.spec_dir();
    let mut claimed: BTreeMap<String, PathBuf> = BTreeMap::new();
    spec.hooks
        .iter()
        .map(|hook| {
            let script = hook.command_script()?;
            let joined = base.join(script);
            let source = std::path::absolute(&joined).unwrap_or(joined);
            let identity = source.canonicalize().unwrap_or_else(|_| source.clone());
            let file_name = source.file_name()?.to_string_lossy().into_owned();
            let candidates =
                std::iter::once(format!("hooks/{file_name}")).chain((2..).map(|n| format!("hooks/{n}-{file_name}")));
            for candidate in candidates {
                match claimed.get(&candidate) {
                    Some(owner) if *owner == identity => return Some((candidate, source)),
                    Some(_) => continue,
                    None => {
                        claimed.insert(candidate.clone(), identity);
                        return Some((candidate, source));
                    }
                }
            }
            None
        })
        .collect()
}

pub(super) fn pattern_tokens(runtime: &TokenStream, pattern: &PatternSpec) -> TokenStream {
    let text = pattern.text();
    if pattern.is_regex() {
        quote!(#runtime::extension::TextPattern::Regex(#text.to_owned()))
    } else {
        quote!(#runtime::extension::TextPattern::Glob(#text.to_owned()))
    }
}

fn option_pattern(runtime: &TokenStream, pattern: Option<&PatternSpec>) -> TokenStream {
    option_tokens(pattern.map(|pattern| pattern_tokens(runtime, pattern)))
}

/// A `match` entry, or the glob `*` (matching everything) where a validated spec always has one.
fn required_pattern(runtime: &TokenStream, hook: &HookSpec, key: &str) -> TokenStream {
    match hook.matched(key) {
        Some(pattern) => pattern_tokens(runtime, pattern),
        None => quote!(#runtime::extension::TextPattern::Glob("*".to_owned())),
    }
}

fn action_tokens(runtime: &TokenStream, hook: &HookSpec, script: Option<&str>) -> Option<TokenStream> {
    let action = *hook.actions().first()?;
    let when = option_pattern(runtime, hook.when.as_ref());
    let tokens = match action {
        HookActionKind::Block => {
            let tool = required_pattern(runtime, hook, "tool");
            let arguments =
                hook.matches.iter().flatten().filter(|(key, _)| key.as_str() != "tool").map(|(argument, pattern)| {
                    let pattern = pattern_tokens(runtime, pattern);
                    quote!(#runtime::extension::ArgumentPattern { argument: #argument.to_owned(), pattern: #pattern })
                });
            let reason = hook.block.clone().unwrap_or_default();
            quote! {
                #runtime::extension::HookAction::BlockToolCall {
                    tool: #tool,
                    arguments: vec![#(#arguments),*],
                    reason: #reason.to_owned(),
                }
            }
        }
        HookActionKind::Command => {
            let event = &hook.on;
            let command = hook.command.clone().unwrap_or_default();
            let timeout = option_tokens(hook.timeout);
            let tool = option_pattern(runtime, hook.matched("tool"));
            let script = option_string(script);
            quote! {
                #runtime::extension::HookAction::Command {
                    event: #event.to_owned(),
                    command: #command.to_owned(),
                    timeout_secs: #timeout,
                    tool: #tool,
                    script: #script,
                }
            }
        }
        HookActionKind::AppendSystemPrompt => {
            let text = hook.append_system_prompt.clone().unwrap_or_default();
            quote!(#runtime::extension::HookAction::AppendSystemPrompt { text: #text.to_owned(), when: #when })
        }
        HookActionKind::ReplaceSystemPrompt => {
            let text = hook.replace_system_prompt.clone().unwrap_or_default();
            quote!(#runtime::extension::HookAction::ReplaceSystemPrompt { text: #text.to_owned(), when: #when })
        }
        HookActionKind::InjectMessage => {
            let (custom_type, content, display) = hook.inject_message.as_ref()?.parts();
            quote! {
                #runtime::extension::HookAction::InjectMessage {
                    custom_type: #custom_type.to_owned(),
                    content: #content.to_owned(),
                    display: #display,
                    when: #when,
                }
            }
        }
        HookActionKind::Transform => {
            let pattern = required_pattern(runtime, hook, "text");
            let replacement = hook.transform.clone().unwrap_or_default();
            quote! {
                #runtime::extension::HookAction::TransformInput { pattern: #pattern, replacement: #replacement.to_owned() }
            }
        }
    };
    Some(tokens)
}

/// The `Vec<HookDefinition>` expression (a hook without an action, which validation refuses, is left out).
pub(super) fn hooks_tokens(spec: &AgentSpec, ctx: &LowerContext) -> TokenStream {
    let runtime = &ctx.runtime;
    if spec.hooks.is_empty() {
        return quote!(::std::vec::Vec::new());
    }
    let scripts = hook_scripts(spec, ctx);
    let hooks = spec.hooks.iter().enumerate().filter_map(|(index, hook)| {
        let script = scripts.get(index).and_then(Option::as_ref).map(|(embedded, _)| embedded.as_str());
        let action = action_tokens(runtime, hook, script)?;
        let name = hook.name.clone().unwrap_or_else(|| format!("hooks[{index}]"));
        Some(quote!(#runtime::extension::HookDefinition { name: #name.to_owned(), action: #action }))
    });
    quote!(vec![#(#hooks),*])
}
