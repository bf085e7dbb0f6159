//! Checks of `context:`: options of the panels strategy given without `strategy: panels`, panels and files
//! listed twice, command panels (names, commands, intervals), limits that cannot work (`0` seconds, empty
//! detached chunks) and a timestamp text without its `{iso_time}`.

use std::collections::BTreeSet;

use crate::problem::{Problem, YamlPath};
use crate::spec::{AgentSpec, CommandPanelSpec, ContextSpec, ContextStrategySpec};

/// The placeholder the timestamp text must contain.
const ISO_TIME: &str = "{iso_time}";

/// Problems of `context`.
pub fn context_problems(spec: &AgentSpec, out: &mut Vec<Problem>) {
    let Some(context) = &spec.context else { return };
    let path = YamlPath::root().key("context");
    check_strategy(context, &path, out);
    check_panels(context, &path, out);
    check_files(context, &path, out);
    let mut names = BTreeSet::new();
    for (index, panel) in context.command_panels.iter().flatten().enumerate() {
        check_command_panel(panel, &path.key("command_panels").index(index), &mut names, out);
    }
    if context.git_refresh_secs == Some(0) {
        out.push(Problem::value(
            path.key("git_refresh_secs"),
            "`git_refresh_secs: 0` would run git before every request; use 1 or more seconds (default 120)",
        ));
    }
    if context.detach.as_ref().and_then(|detach| detach.chunk_min_messages) == Some(0) {
        out.push(Problem::value(
            path.key("detach").key("chunk_min_messages"),
            "a detached chunk holds at least one message; use 1 or more (default 25)",
        ));
    }
    if let Some(timestamp) = context.texts.as_ref().and_then(|texts| texts.timestamp.as_deref())
        && !timestamp.contains(ISO_TIME)
    {
        out.push(Problem::value(
            path.key("texts").key("timestamp"),
            format!(
                "the timestamp text has no `{ISO_TIME}`, so panels would not say when they were refreshed; add it, \
                 e.g. \"Panel automatically generated at {ISO_TIME}\""
            ),
        ));
    }
}

/// Every option but `strategy` belongs to the panels strategy.
fn check_strategy(context: &ContextSpec, path: &YamlPath, out: &mut Vec<Problem>) {
    if context.uses_panels() {
        return;
    }
    for key in context.panel_options() {
        let message = match context.strategy {
            Some(ContextStrategySpec::Messages) => format!(
                "`{key}` only applies with `strategy: panels`, and `strategy` is `messages`; set `strategy: panels` \
                 or remove `{key}`"
            ),
            _ => format!(
                "`{key}` only applies with `strategy: panels` (the default strategy is `messages`, pi's pipeline); \
                 add `strategy: panels` under `context:` or remove `{key}`"
            ),
        };
        out.push(Problem::key(path.key(key), message));
    }
}

fn check_panels(context: &ContextSpec, path: &YamlPath, out: &mut Vec<Problem>) {
    let mut seen = BTreeSet::new();
    for (index, panel) in context.panels.iter().flatten().enumerate() {
        if !seen.insert(*panel) {
            out.push(Problem::value(
                path.key("panels").index(index),
                format!("duplicate panel `{}`; list each panel once", panel.name()),
            ));
        }
    }
}

fn check_files(context: &ContextSpec, path: &YamlPath, out: &mut Vec<Problem>) {
    let mut seen = BTreeSet::new();
    for (index, file) in context.files.iter().flatten().enumerate() {
        let at = path.key("files").index(index);
        if file.trim().is_empty() {
            out.push(Problem::value(
                at,
                "the file path is empty; give a path relative to the working directory, like README.md",
            ));
        } else if !seen.insert(file.as_str()) {
            out.push(Problem::value(at, format!("duplicate file `{file}`; list each file once")));
        }
    }
}

fn check_command_panel(
    panel: &CommandPanelSpec,
    path: &YamlPath,
    names: &mut BTreeSet<String>,
    out: &mut Vec<Problem>,
) {
    if panel.name.trim().is_empty() {
        out.push(Problem::value(
            path.key("name"),
            "the panel name is empty; it is the panel's heading, like \"Open PRs\"",
        ));
    } else if !names.insert(panel.name.clone()) {
        out.push(Problem::value(
            path.key("name"),
            format!("duplicate command panel name `{}`; command panel names must be unique", panel.name),
        ));
    }
    if panel.command.trim().is_empty() {
        out.push(Problem::value(
            path.key("command"),
            "the command is empty; give the shell command whose output the panel shows",
        ));
    }
    if panel.refresh_secs == Some(0) {
        out.push(Problem::value(
            path.key("refresh_secs"),
            "`refresh_secs: 0` would run the command again before every request; use 1 or more seconds (default 60)",
        ));
    }
    if panel.timeout == Some(0) {
        out.push(Problem::value(
            path.key("timeout"),
            "`timeout: 0` would stop the command before it starts; use 1 or more seconds (default 10)",
        ));
    }
}
