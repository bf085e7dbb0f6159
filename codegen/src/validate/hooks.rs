//! Checks of `hooks:`: known events, one action that the event allows, `match` keys that name real tools
//! and arguments, patterns that compile, `transform` references to groups that exist, and command scripts
//! that exist next to the YAML.

use std::path::Path;

use crate::lower::builtin_tool_names;
use crate::problem::{Problem, YamlPath, did_you_mean};
use crate::spec::{
    AgentSpec, BUILTIN_TOOLS, HOOK_EVENTS, HookActionKind, HookSpec, MCP_TOOL_PREFIX, PatternSpec, TOOL_EVENTS,
};

/// The arguments of each built-in tool, as its parameter schema names them (`edit` also takes pi's legacy
/// `oldText`/`newText`, which it folds into `edits`).
pub const BUILTIN_ARGUMENTS: [(&str, &[&str]); 7] = [
    ("read", &["path", "offset", "limit"]),
    ("bash", &["command", "timeout"]),
    ("edit", &["path", "edits", "oldText", "newText"]),
    ("write", &["path", "content"]),
    ("grep", &["pattern", "path", "glob", "ignoreCase", "literal", "context", "limit"]),
    ("find", &["pattern", "path", "limit"]),
    ("ls", &["path", "limit"]),
];

/// The tools a hook or permission rule may name: the enabled built-ins, the custom tools and the sub-agents,
/// with their arguments.
pub(super) struct Tools {
    /// (name, arguments), enabled built-ins first.
    active: Vec<(String, Vec<String>)>,
}

impl Tools {
    pub(super) fn of(spec: &AgentSpec) -> Self {
        let builtins = builtin_tool_names(spec).into_iter().map(|name| {
            let arguments = builtin_arguments(&name);
            (name, arguments)
        });
        let custom = spec.custom_tools().iter().map(|tool| (tool.name.clone(), tool.parameter_names()));
        // A sub-agent is a tool taking `{ task }`.
        let subagents = spec.subagents.iter().map(|subagent| (subagent.name.clone(), vec!["task".to_owned()]));
        Self { active: builtins.chain(custom).chain(subagents).collect() }
    }

    fn names(&self) -> impl Iterator<Item = &str> {
        self.active.iter().map(|(name, _)| name.as_str())
    }
}

fn builtin_arguments(name: &str) -> Vec<String> {
    BUILTIN_ARGUMENTS
        .iter()
        .find(|(tool, _)| *tool == name)
        .map(|(_, arguments)| arguments.iter().map(|argument| (*argument).to_owned()).collect())
        .unwrap_or_default()
}

/// Problems of `hooks`; command scripts resolve against `spec_dir`.
pub fn hook_problems(spec: &AgentSpec, spec_dir: &Path, out: &mut Vec<Problem>) {
    let tools = Tools::of(spec);
    for (index, hook) in spec.hooks.iter().enumerate() {
        check_hook(hook, &YamlPath::root().key("hooks").index(index), &tools, spec_dir, out);
    }
}

fn check_hook(hook: &HookSpec, path: &YamlPath, tools: &Tools, spec_dir: &Path, out: &mut Vec<Problem>) {
    let event_known = HOOK_EVENTS.contains(&hook.on.as_str());
    if !event_known {
        let hint = match did_you_mean(&hook.on, HOOK_EVENTS) {
            Some(suggestion) => format!("did you mean `{suggestion}`?"),
            None => format!("pi's events: {}", HOOK_EVENTS.join(", ")),
        };
        out.push(Problem::value(path.key("on"), format!("unknown event `{}`; {hint}", hook.on)));
    }
    let actions = hook.actions();
    let Some((&action, extra)) = actions.split_first() else {
        let keys: Vec<&str> = HookActionKind::ALL.iter().map(|kind| kind.key()).collect();
        out.push(Problem::value(path.clone(), format!("a hook needs one action: {}", keys.join(", "))));
        check_patterns(hook, path, out);
        return;
    };
    for other in extra {
        out.push(Problem::key(
            path.key(other.key()),
            format!(
                "a hook has one action and this one has `{}` already; give `{}` a hook of its own",
                action.key(),
                other.key()
            ),
        ));
    }
    let fits_event = match action.event() {
        Some(event) if event_known && event != hook.on => {
            out.push(Problem::key(
                path.key(action.key()),
                format!("`{}` works on `{event}` hooks only; this hook is `on: {}`", action.key(), hook.on),
            ));
            false
        }
        _ => true,
    };
    let prompt_action = matches!(
        action,
        HookActionKind::AppendSystemPrompt | HookActionKind::ReplaceSystemPrompt | HookActionKind::InjectMessage
    );
    if hook.when.is_some() && !prompt_action {
        out.push(Problem::key(
            path.key("when"),
            "`when` goes with append_system_prompt, replace_system_prompt or inject_message; other hooks use `match`",
        ));
    }
    if hook.timeout.is_some() && action != HookActionKind::Command {
        out.push(Problem::key(path.key("timeout"), "`timeout` applies to `command` hooks"));
    }
    if fits_event {
        check_match(hook, action, event_known, path, tools, out);
    }
    check_patterns(hook, path, out);
    match action {
        HookActionKind::Block if hook.block.as_deref().is_some_and(|reason| reason.trim().is_empty()) => {
            out.push(Problem::value(path.key("block"), "the reason is empty; say why the call is refused"));
        }
        HookActionKind::Transform => check_transform(hook, path, out),
        HookActionKind::Command => check_script(hook, path, spec_dir, out),
        _ => {}
    }
}

/// The `match` keys the action needs and allows, and the tools and arguments they name.
fn check_match(
    hook: &HookSpec,
    action: HookActionKind,
    event_known: bool,
    path: &YamlPath,
    tools: &Tools,
    out: &mut Vec<Problem>,
) {
    let at = path.key("match");
    let entries = hook.matches.iter().flatten();
    match action {
        HookActionKind::Block => {
            let Some(tool) = hook.matched("tool") else {
                let location = if hook.matches.is_some() { at } else { path.clone() };
                out.push(Problem::value(
                    location,
                    "`block` needs `match: { tool: <name or pattern> }`: the tool whose calls are refused",
                ));
                return;
            };
            let arguments = entries.filter(|(key, _)| key.as_str() != "tool").map(|(key, _)| key);
            check_tool_and_arguments(tool, &at.key("tool"), arguments, &at, tools, out);
        }
        HookActionKind::Command => {
            if hook.matches.is_none() {
                return;
            }
            if event_known && !TOOL_EVENTS.contains(&hook.on.as_str()) {
                out.push(Problem::key(
                    at,
                    format!(
                        "`match` on a command hook chooses tools, and `{}` concerns none; it works on {}",
                        hook.on,
                        TOOL_EVENTS.join(", ")
                    ),
                ));
                return;
            }
            for (key, pattern) in entries {
                if key == "tool" {
                    check_tool(pattern, &at.key("tool"), tools, out);
                } else {
                    out.push(Problem::key(
                        at.key(key.clone()),
                        format!(
                            "a command hook matches only `tool`; the command reads the rest of the event on stdin \
                             (found `{key}`)"
                        ),
                    ));
                }
            }
        }
        HookActionKind::AppendSystemPrompt | HookActionKind::ReplaceSystemPrompt | HookActionKind::InjectMessage => {
            if hook.matches.is_some() {
                out.push(Problem::key(
                    at,
                    format!("`{}` hooks choose prompts with `when: <pattern>`, not `match`", action.key()),
                ));
            }
        }
        HookActionKind::Transform => {
            if hook.matched("text").is_none() {
                let location = if hook.matches.is_some() { at.clone() } else { path.clone() };
                out.push(Problem::value(
                    location,
                    "`transform` needs `match: { text: <pattern> }`: the part of the prompt it replaces",
                ));
            }
            for (key, _) in entries.filter(|(key, _)| key.as_str() != "text") {
                let hint = if did_you_mean(key, ["text"]).is_some() { "; did you mean `text`?" } else { "" };
                out.push(Problem::key(
                    at.key(key.clone()),
                    format!("`transform` matches only `text`, the prompt (found `{key}`){hint}"),
                ));
            }
        }
    }
}

/// Checks a literal tool name (at `tool_at`) and the argument names matched on it (keys under `match_at`).
pub(super) fn check_tool_and_arguments<'a>(
    tool: &PatternSpec,
    tool_at: &YamlPath,
    arguments: impl Iterator<Item = &'a String>,
    match_at: &YamlPath,
    tools: &Tools,
    out: &mut Vec<Problem>,
) {
    let Some((name, known)) = check_tool(tool, tool_at, tools, out) else { return };
    for key in arguments.filter(|key| !known.contains(key)) {
        let hint = match did_you_mean(key, known.iter().map(String::as_str)) {
            Some(suggestion) => format!("did you mean `{suggestion}`?"),
            None if known.is_empty() => format!("`{name}` takes no arguments"),
            None => format!("its arguments: {}", known.join(", ")),
        };
        out.push(Problem::key(match_at.key(key.clone()), format!("`{name}` has no argument `{key}`; {hint}")));
    }
}

/// Checks a literal tool name against the agent's tools; returns the tool's name and arguments when known.
fn check_tool(
    pattern: &PatternSpec,
    at: &YamlPath,
    tools: &Tools,
    out: &mut Vec<Problem>,
) -> Option<(String, Vec<String>)> {
    let name = pattern.literal()?;
    if let Some((name, arguments)) = tools.active.iter().find(|(tool, _)| tool == name) {
        return Some((name.clone(), arguments.clone()));
    }
    // A built-in the YAML leaves out can still be switched on with `--tools`: a guard for it stays valid.
    if BUILTIN_TOOLS.contains(&name) {
        return Some((name.to_owned(), builtin_arguments(name)));
    }
    // An MCP tool (`mcp__<server>__<tool>`) is known only at run time: the server lists its tools, and the
    // user's `mcp.json` files add servers. Neither it nor its arguments can be checked here.
    if name.starts_with(MCP_TOOL_PREFIX) {
        return None;
    }
    let at = pattern_path(pattern, at);
    let hint = match did_you_mean(name, tools.names()) {
        Some(suggestion) => format!("did you mean `{suggestion}`?"),
        None => format!("this agent's tools: {}", tools.names().collect::<Vec<_>>().join(", ")),
    };
    out.push(Problem::value(at, format!("unknown tool `{name}`; {hint}")));
    None
}

/// Where a pattern's text sits: the value itself, or the `glob` / `regex` key's value under it.
pub(super) fn pattern_path(pattern: &PatternSpec, at: &YamlPath) -> YamlPath {
    match pattern.inner_key() {
        Some(key) => at.key(key),
        None => at.clone(),
    }
}

/// Every pattern of the hook (`match` values, `when`) must compile.
fn check_patterns(hook: &HookSpec, path: &YamlPath, out: &mut Vec<Problem>) {
    let matched = hook.matches.iter().flatten().map(|(key, pattern)| (path.key("match").key(key.clone()), pattern));
    for (at, pattern) in matched.chain(hook.when.iter().map(|pattern| (path.key("when"), pattern))) {
        if let Err(message) = compile(pattern) {
            out.push(Problem::value(pattern_path(pattern, &at), message));
        }
    }
}

/// Compiles a pattern as the runtime will; the error reworded for the YAML's author.
pub(super) fn compile(pattern: &PatternSpec) -> Result<Option<regex::Regex>, String> {
    if pattern.is_regex() {
        regex::Regex::new(pattern.text())
            .map(Some)
            .map_err(|error| format!("the regex does not compile: {}", regex_error(&error)))
    } else {
        globset::GlobBuilder::new(pattern.text())
            .literal_separator(false)
            .build()
            .map(|_| None)
            .map_err(|error| format!("the glob does not compile: {}", error.kind()))
    }
}

/// regex's error on one line: its last line (`error: unclosed group`) without the ASCII-art pointer.
fn regex_error(error: &regex::Error) -> String {
    let text = error.to_string();
    let last = text.lines().rev().find(|line| !line.trim().is_empty()).unwrap_or_default();
    last.trim().strip_prefix("error: ").unwrap_or(last.trim()).to_owned()
}

/// `transform` with a regex: every `$N` / `${name}` must name a group of the regex.
fn check_transform(hook: &HookSpec, path: &YamlPath, out: &mut Vec<Problem>) {
    let (Some(replacement), Some(pattern)) = (&hook.transform, hook.matched("text")) else { return };
    let Ok(Some(regex)) = compile(pattern) else { return };
    let groups = regex.captures_len() - 1;
    let names: Vec<&str> = regex.capture_names().flatten().collect();
    for reference in group_references(replacement) {
        let message = match reference.parse::<usize>() {
            Ok(number) if number <= groups => continue,
            Ok(number) => {
                let has = match groups {
                    0 => "no groups".to_owned(),
                    1 => "1 group".to_owned(),
                    _ => format!("{groups} groups"),
                };
                format!("`${number}` refers to group {number}, but the regex has {has}")
            }
            Err(_) if names.contains(&reference.as_str()) => continue,
            Err(_) => {
                let digits: String = reference.chars().take_while(char::is_ascii_digit).collect();
                if digits.is_empty() {
                    let hint = match did_you_mean(&reference, names.iter().copied()) {
                        Some(suggestion) => format!("; did you mean `{suggestion}`?"),
                        None => String::new(),
                    };
                    format!("`${reference}` refers to a group named `{reference}`, which the regex does not have{hint}")
                } else {
                    let rest = &reference[digits.len()..];
                    format!(
                        "`${reference}` refers to a group named `{reference}`, which the regex does not have; for \
                         group {digits} followed by `{rest}`, write `${{{digits}}}{rest}`"
                    )
                }
            }
        };
        out.push(Problem::value(path.key("transform"), message));
    }
}

/// The group references of a replacement in the regex crate's syntax: `$name` (longest run of letters,
/// digits and `_`), `${name}`; `$$` is a literal `$`, and a `$` without a name stays as it is.
fn group_references(replacement: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = replacement;
    while let Some(at) = rest.find('$') {
        rest = &rest[at + 1..];
        if let Some(after) = rest.strip_prefix('$') {
            rest = after;
        } else if let Some(braced) = rest.strip_prefix('{') {
            if let Some(end) = braced.find('}') {
                found.push(braced[..end].to_owned());
                rest = &braced[end + 1..];
            }
        } else {
            let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
            if end > 0 {
                found.push(rest[..end].to_owned());
            }
            rest = &rest[end..];
        }
    }
    found
}

/// A command whose first word is `./x` or `../x` runs that file, which is compiled in: it must exist.
fn check_script(hook: &HookSpec, path: &YamlPath, spec_dir: &Path, out: &mut Vec<Problem>) {
    let Some(script) = hook.command_script() else { return };
    let full = spec_dir.join(script.strip_prefix("./").unwrap_or(script));
    let problem = match std::fs::metadata(&full) {
        Ok(metadata) if metadata.is_file() => return,
        Ok(_) => format!("{} is not a file", full.display()),
        Err(error) => format!("cannot read {} ({error})", full.display()),
    };
    out.push(Problem::value(
        path.key("command"),
        format!("{problem}; a command starting with ./ or ../ runs a file relative to the YAML file"),
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_references_follow_the_regex_crates_syntax() {
        assert_eq!(group_references("Please fix: $1"), ["1"]);
        assert_eq!(group_references("$1a ${2}b $$3 $ end ${name} $x_y!"), ["1a", "2", "name", "x_y"]);
        assert_eq!(group_references("${unclosed"), Vec::<String>::new());
    }

    /// `HOOK_EVENTS` mirrors `pi_runtime::extension::EventKind::ALL` (the library keeps its own copy because
    /// it never links the runtime; the pi-gen binary does, so this test can compare them).
    #[cfg(feature = "cli")]
    #[test]
    fn hook_events_mirror_the_runtimes_event_kinds() {
        let runtime: Vec<&str> = pi_runtime::extension::EventKind::ALL.iter().map(|kind| kind.as_str()).collect();
        assert_eq!(runtime, HOOK_EVENTS);
    }

    /// `BUILTIN_ARGUMENTS` mirrors the parameter schemas of the runtime's built-in tools (plus edit's legacy
    /// `oldText`/`newText`).
    #[cfg(feature = "cli")]
    #[test]
    fn builtin_arguments_mirror_the_runtimes_tool_schemas() {
        let env = pi_runtime::tools::ToolEnvironment::new(".");
        assert_eq!(BUILTIN_ARGUMENTS.map(|(name, _)| name), BUILTIN_TOOLS);
        for (name, arguments) in BUILTIN_ARGUMENTS {
            let tool = pi_runtime::tools::builtin_tool(name, &env).expect("a built-in tool");
            let mut declared: Vec<String> = tool.parameters()["properties"]
                .as_object()
                .map(|properties| properties.keys().cloned().collect())
                .unwrap_or_default();
            if name == "edit" {
                declared.extend(["oldText".to_owned(), "newText".to_owned()]);
            }
            declared.sort();
            let mut ours: Vec<String> = arguments.iter().map(|argument| (*argument).to_owned()).collect();
            ours.sort();
            assert_eq!(ours, declared, "arguments of {name}");
        }
    }

    #[test]
    fn regex_errors_fit_on_one_line() {
        let unclosed = String::from("(abc");
        let error = regex::Regex::new(&unclosed).err().map(|error| regex_error(&error));
        assert_eq!(error.as_deref(), Some("unclosed group"));
    }
}
