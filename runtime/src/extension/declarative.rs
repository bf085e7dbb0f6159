//! Declarative hooks: each [`HookDefinition`] of the agent's YAML becomes one built-in extension (block a
//! tool call, change the system prompt, inject a message, rewrite the input, or run a command hook).

use std::path::Path;

use regex::Regex;
use serde_json::Value;

use super::api::{EventKind, EventSet, Extension, HookResult};
use super::command_hook::CommandHook;
use super::context::ExtensionContext;
use super::events::{BeforeAgentStartEvent, InputEvent, ToolCallEvent};
use super::hook_definition::{HookAction, HookDefinition, TextPattern};
use super::results::{BeforeAgentStartResult, ExtensionMessage, InputAction, ToolCallDecision};
use super::runner::Extensions;
use crate::protocol::MessageContent;

/// A compiled [`TextPattern`]: a glob matched against the whole text (`*` and `?` match any character,
/// `/` and newlines included), or a regular expression found anywhere in it.
#[derive(Debug, Clone)]
pub enum TextMatcher {
    /// The glob translated to an anchored regex (see [`glob_to_regex`]).
    Glob(Regex),
    Regex(Regex),
}

impl TextMatcher {
    /// Compiles `pattern`; the error says which pattern is invalid and why.
    pub fn new(pattern: &TextPattern) -> Result<Self, String> {
        match pattern {
            TextPattern::Glob(glob) => glob_to_regex(glob)
                .and_then(|regex| Regex::new(&regex).map_err(|error| error.to_string()))
                .map(Self::Glob)
                .map_err(|error| format!("invalid glob `{glob}`: {error}")),
            TextPattern::Regex(regex) => {
                Regex::new(regex).map(Self::Regex).map_err(|error| format!("invalid regex `{regex}`: {error}"))
            }
        }
    }

    /// Whether the pattern matches `text` (a glob: all of it; a regex: any part of it).
    pub fn is_match(&self, text: &str) -> bool {
        match self {
            Self::Glob(regex) | Self::Regex(regex) => regex.is_match(text),
        }
    }
}

/// Translates a glob to a regex matching the whole text, in Unicode characters: `*` (and `**`) any run of
/// characters, `?` one character (both across `/` and newlines), `[abc]`, `[a-z]`, `[!abc]` / `[^abc]` a
/// character class, `{a,b}` alternatives (nestable), `\c` the character `c` itself.
pub fn glob_to_regex(glob: &str) -> Result<String, String> {
    let mut regex = String::from("(?s)\\A(?:");
    let mut chars = glob.chars().peekable();
    let mut open_braces = 0usize;
    while let Some(c) = chars.next() {
        match c {
            '*' => {
                while chars.next_if_eq(&'*').is_some() {}
                regex.push_str(".*");
            }
            '?' => regex.push('.'),
            '\\' => match chars.next() {
                Some(escaped) => push_literal(&mut regex, escaped),
                None => return Err("dangling `\\` at the end".to_owned()),
            },
            '[' => push_class(&mut regex, &mut chars)?,
            '{' => {
                open_braces += 1;
                regex.push_str("(?:");
            }
            ',' if open_braces > 0 => regex.push('|'),
            '}' if open_braces > 0 => {
                open_braces -= 1;
                regex.push(')');
            }
            other => push_literal(&mut regex, other),
        }
    }
    if open_braces > 0 {
        return Err("unclosed `{`".to_owned());
    }
    regex.push_str(")\\z");
    Ok(regex)
}

fn push_literal(regex: &mut String, c: char) {
    let mut buffer = [0u8; 4];
    regex.push_str(&regex::escape(c.encode_utf8(&mut buffer)));
}

/// A `[...]` class (the `[` already read): `!` or `^` first negates, a `]` first is literal, `a-z` is a range.
fn push_class(regex: &mut String, chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Result<(), String> {
    regex.push('[');
    if chars.next_if(|c| *c == '!' || *c == '^').is_some() {
        regex.push('^');
    }
    let mut first = true;
    loop {
        match chars.next() {
            None => return Err("unclosed `[`".to_owned()),
            Some(']') if !first => break,
            Some(c) => {
                push_literal(regex, c);
                if chars.peek() == Some(&'-') {
                    let mut lookahead = chars.clone();
                    lookahead.next();
                    if let Some(end) = lookahead.next().filter(|end| *end != ']') {
                        if end < c {
                            return Err(format!("invalid range `{c}-{end}`"));
                        }
                        regex.push('-');
                        push_literal(regex, end);
                        *chars = lookahead;
                    }
                }
            }
        }
        first = false;
    }
    regex.push(']');
    Ok(())
}

/// One extension per hook, in the order given. `resources_dir` is where command hooks find the agent's
/// bundled files; `shell` runs their commands instead of bash (settings `shellPath`). The error names the
/// hook whose pattern (or command) is invalid.
pub fn hook_extensions(
    hooks: &[HookDefinition],
    resources_dir: Option<&Path>,
    shell: Option<&Path>,
) -> Result<Extensions, String> {
    let mut extensions = Extensions::new();
    for definition in hooks {
        push_hook(&mut extensions, definition, resources_dir, shell)?;
    }
    Ok(extensions)
}

/// Builds the extension of one hook and appends it to `extensions`.
fn push_hook(
    extensions: &mut Extensions,
    definition: &HookDefinition,
    resources_dir: Option<&Path>,
    shell: Option<&Path>,
) -> Result<(), String> {
    let name = definition.name.clone();
    let compile = |pattern: &TextPattern| TextMatcher::new(pattern).map_err(|error| format!("hook `{name}`: {error}"));
    let compile_when = |when: &Option<TextPattern>| when.as_ref().map(compile).transpose();
    match &definition.action {
        HookAction::BlockToolCall { tool, arguments, reason } => {
            let arguments = arguments
                .iter()
                .map(|argument| Ok((argument.argument.clone(), compile(&argument.pattern)?)))
                .collect::<Result<Vec<_>, String>>()?;
            extensions.push(BlockToolCallHook { tool: compile(tool)?, arguments, reason: reason.clone(), name });
        }
        HookAction::AppendSystemPrompt { text, when } => extensions.push(PromptHook {
            when: compile_when(when)?,
            effect: PromptEffect::AppendSystemPrompt(text.clone()),
            name,
        }),
        HookAction::ReplaceSystemPrompt { text, when } => extensions.push(PromptHook {
            when: compile_when(when)?,
            effect: PromptEffect::ReplaceSystemPrompt(text.clone()),
            name,
        }),
        HookAction::InjectMessage { custom_type, content, display, when } => extensions.push(PromptHook {
            when: compile_when(when)?,
            effect: PromptEffect::InjectMessage {
                custom_type: custom_type.clone(),
                content: content.clone(),
                display: *display,
            },
            name,
        }),
        HookAction::TransformInput { pattern, replacement } => {
            extensions.push(TransformInputHook { pattern: compile(pattern)?, replacement: replacement.clone(), name });
        }
        HookAction::Command { .. } => extensions.push(CommandHook::new(definition, resources_dir)?.with_shell(shell)),
    }
    Ok(())
}

/// The text of a tool-call argument as patterns see it: strings as they are, anything else as compact JSON.
pub fn argument_text(value: &Value) -> std::borrow::Cow<'_, str> {
    match value {
        Value::String(text) => std::borrow::Cow::Borrowed(text),
        other => std::borrow::Cow::Owned(other.to_string()),
    }
}

/// `BlockToolCall`: refuses calls of a matching tool whose listed arguments all match.
struct BlockToolCallHook {
    name: String,
    tool: TextMatcher,
    arguments: Vec<(String, TextMatcher)>,
    reason: String,
}

impl BlockToolCallHook {
    fn matches(&self, event: &ToolCallEvent) -> bool {
        self.tool.is_match(&event.tool_name)
            && self.arguments.iter().all(|(argument, pattern)| {
                event.input.get(argument).is_some_and(|value| pattern.is_match(&argument_text(value)))
            })
    }
}

impl Extension for BlockToolCallHook {
    fn name(&self) -> &str {
        &self.name
    }

    fn subscriptions(&self) -> EventSet {
        EventSet::of(&[EventKind::ToolCall])
    }

    async fn tool_call(&self, event: &ToolCallEvent, _ctx: &ExtensionContext) -> HookResult<ToolCallDecision> {
        Ok(if self.matches(event) { ToolCallDecision::block(self.reason.clone()) } else { ToolCallDecision::Allow })
    }
}

/// What a `before_agent_start` hook does to a prompt that matches.
enum PromptEffect {
    AppendSystemPrompt(String),
    ReplaceSystemPrompt(String),
    InjectMessage { custom_type: String, content: String, display: bool },
}

/// `AppendSystemPrompt`, `ReplaceSystemPrompt` and `InjectMessage`: act on prompts matching `when` (all
/// prompts when absent).
struct PromptHook {
    name: String,
    when: Option<TextMatcher>,
    effect: PromptEffect,
}

impl Extension for PromptHook {
    fn name(&self) -> &str {
        &self.name
    }

    fn subscriptions(&self) -> EventSet {
        EventSet::of(&[EventKind::BeforeAgentStart])
    }

    async fn before_agent_start(
        &self,
        event: &BeforeAgentStartEvent,
        _ctx: &ExtensionContext,
    ) -> HookResult<BeforeAgentStartResult> {
        if self.when.as_ref().is_some_and(|when| !when.is_match(&event.prompt)) {
            return Ok(BeforeAgentStartResult::default());
        }
        Ok(match &self.effect {
            PromptEffect::AppendSystemPrompt(text) => BeforeAgentStartResult {
                system_prompt: Some(format!("{}\n\n{}", event.system_prompt, text)),
                ..BeforeAgentStartResult::default()
            },
            PromptEffect::ReplaceSystemPrompt(text) => {
                BeforeAgentStartResult { system_prompt: Some(text.clone()), ..BeforeAgentStartResult::default() }
            }
            PromptEffect::InjectMessage { custom_type, content, display } => BeforeAgentStartResult {
                message: Some(ExtensionMessage {
                    custom_type: custom_type.clone(),
                    content: MessageContent::Text(content.clone()),
                    display: *display,
                    details: None,
                }),
                ..BeforeAgentStartResult::default()
            },
        })
    }
}

/// `TransformInput`: a regex replaces every match (with `$1` / `${name}` expansion); a glob that matches
/// the whole prompt replaces it with the replacement as written.
struct TransformInputHook {
    name: String,
    pattern: TextMatcher,
    replacement: String,
}

impl TransformInputHook {
    fn transform(&self, text: &str) -> Option<String> {
        match &self.pattern {
            TextMatcher::Regex(regex) => {
                regex.is_match(text).then(|| regex.replace_all(text, self.replacement.as_str()).into_owned())
            }
            TextMatcher::Glob(glob) => glob.is_match(text).then(|| self.replacement.clone()),
        }
    }
}

impl Extension for TransformInputHook {
    fn name(&self) -> &str {
        &self.name
    }

    fn subscriptions(&self) -> EventSet {
        EventSet::of(&[EventKind::Input])
    }

    async fn input(&self, event: &InputEvent, _ctx: &ExtensionContext) -> HookResult<InputAction> {
        Ok(match self.transform(&event.text) {
            Some(text) => InputAction::Transform { text, images: None },
            None => InputAction::Continue,
        })
    }
}

#[cfg(test)]
#[path = "declarative_tests.rs"]
mod tests;
