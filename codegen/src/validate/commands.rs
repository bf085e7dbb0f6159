//! Checks of `commands:`: names (format, duplicates, collisions with the YAML's prompt templates, skill
//! commands and the interactive built-ins), exactly one action, options that go with that action, the
//! declared arguments, and prompt placeholders that refer to declared arguments.

use std::collections::BTreeSet;
use std::path::Path;

use regex::Regex;

use crate::problem::{Problem, YamlPath, did_you_mean};
use crate::spec::{AgentSpec, BUILTIN_COMMANDS, CommandSpec, is_command_name};

/// Problems of `commands`; prompt-template directories resolve against `spec_dir`.
pub fn command_problems(spec: &AgentSpec, spec_dir: &Path, out: &mut Vec<Problem>) {
    if spec.commands.is_empty() {
        return;
    }
    let templates = template_names(spec, spec_dir);
    let mut seen = BTreeSet::new();
    for (index, command) in spec.commands.iter().enumerate() {
        let path = YamlPath::root().key("commands").index(index);
        check_name(command, &path.key("name"), &templates, &mut seen, out);
        if command.description.trim().is_empty() {
            out.push(Problem::value(path.key("description"), "the description is empty; say what the command does"));
        }
        check_action(command, &path, out);
        check_arguments(command, &path, out);
    }
}

/// The names of the YAML's prompt templates: inline ones and the `*.md` files of `prompts.dirs`.
fn template_names(spec: &AgentSpec, spec_dir: &Path) -> BTreeSet<String> {
    let Some(prompts) = &spec.prompts else { return BTreeSet::new() };
    let mut names: BTreeSet<String> = prompts.templates.iter().map(|template| template.name.clone()).collect();
    for dir in &prompts.dirs {
        let Ok(entries) = std::fs::read_dir(spec_dir.join(dir)) else { continue };
        for entry in entries.filter_map(Result::ok) {
            let file_name = entry.file_name().to_string_lossy().into_owned();
            if let Some(stem) = file_name.strip_suffix(".md").filter(|_| !file_name.starts_with('.'))
                && entry.path().is_file()
            {
                names.insert(stem.to_owned());
            }
        }
    }
    names
}

fn check_name(
    command: &CommandSpec,
    at: &YamlPath,
    templates: &BTreeSet<String>,
    seen: &mut BTreeSet<String>,
    out: &mut Vec<Problem>,
) {
    let name = &command.name;
    let problem = if !is_command_name(name) {
        let lower = name.to_lowercase();
        let free = is_command_name(&lower) && !BUILTIN_COMMANDS.contains(&lower.as_str());
        let hint = if lower != *name && free { format!(" (`{lower}`?)") } else { String::new() };
        format!(
            "\"{name}\" cannot be a command name{hint}; use lowercase letters, digits, '-', '_' and ':', starting \
             with a letter or digit"
        )
    } else if BUILTIN_COMMANDS.contains(&name.as_str()) {
        format!("`/{name}` is a built-in command of the interactive mode; give this command another name")
    } else if name.starts_with("skill:") {
        format!("`/{name}` would shadow a skill: `/skill:<name>` runs the skill <name>; drop the `skill:` prefix")
    } else if templates.contains(name) {
        format!("the prompt template `{name}` (under `prompts`) has this name already; rename one of them")
    } else if !seen.insert(name.clone()) {
        format!("duplicate command name `{name}`; command names must be unique")
    } else {
        return;
    };
    out.push(Problem::value(at.clone(), problem));
}

fn check_action(command: &CommandSpec, path: &YamlPath, out: &mut Vec<Problem>) {
    match (&command.prompt, &command.command) {
        (Some(_), Some(_)) => out.push(Problem::key(
            path.key("command"),
            "a command has either `prompt` (text for the model) or `command` (a shell command), not both",
        )),
        (None, None) => out.push(Problem::value(
            path.clone(),
            format!("command `{}` needs `prompt: <text for the model>` or `command: <shell command>`", command.name),
        )),
        (Some(prompt), None) => {
            for key in ["send", "timeout"] {
                let given = if key == "send" { command.send.is_some() } else { command.timeout.is_some() };
                if given {
                    out.push(Problem::key(
                        path.key(key),
                        format!("`{key}` goes with `command:`; a `prompt:` command always sends its text"),
                    ));
                }
            }
            if prompt.trim().is_empty() {
                out.push(Problem::value(path.key("prompt"), "the prompt is empty"));
            } else {
                check_placeholders(command, prompt, &path.key("prompt"), out);
            }
        }
        (None, Some(shell)) if shell.trim().is_empty() => {
            out.push(Problem::value(path.key("command"), "the command is empty"));
        }
        (None, Some(_)) => {}
    }
}

fn check_arguments(command: &CommandSpec, path: &YamlPath, out: &mut Vec<Problem>) {
    let mut names = BTreeSet::new();
    let mut optional_before: Option<&str> = None;
    for (index, argument) in command.arguments.iter().enumerate() {
        let at = path.key("arguments").index(index);
        let name = &argument.name;
        let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'));
        if !valid {
            out.push(Problem::value(
                at.key("name"),
                format!("\"{name}\" cannot be an argument name; use letters, digits, '-' and '_'"),
            ));
        } else if !names.insert(name.clone()) {
            out.push(Problem::value(at.key("name"), format!("duplicate argument `{name}`")));
        }
        match optional_before {
            Some(optional) if argument.is_required() => out.push(Problem::value(
                at.key("required"),
                format!(
                    "arguments are positional: the required `{name}` cannot follow the optional `{optional}`; put \
                     required arguments first"
                ),
            )),
            None if !argument.is_required() => optional_before = Some(name),
            _ => {}
        }
    }
}

/// A misspelt `$ARGUMENTS`; with `arguments` declared, also: the prompt's `$N` must be one of them, and `${@:N}` may start at most just
/// after them (the rest of the line). Without `arguments`, any placeholder is allowed, as in a template.
fn check_placeholders(command: &CommandSpec, prompt: &str, at: &YamlPath, out: &mut Vec<Problem>) {
    if let Some(word) = misspelt_arguments(prompt) {
        out.push(Problem::value(at.clone(), format!("the prompt uses `{word}`; did you mean `$ARGUMENTS`?")));
    }
    let declared = command.arguments.len();
    if declared == 0 {
        return;
    }
    let names: Vec<&str> = command.arguments.iter().map(|argument| argument.name.as_str()).collect();
    let listed = format!("{declared} argument{} ({})", if declared == 1 { "" } else { "s" }, names.join(", "));
    let (Ok(positional), Ok(slice)) = (Regex::new(r"\$([0-9]+)"), Regex::new(r"\$\{@:([0-9]+)(?::[0-9]+)?\}")) else {
        return;
    };
    let mut reported = BTreeSet::new();
    for captures in positional.captures_iter(prompt) {
        let text = &captures[0];
        let index = captures[1].parse::<usize>().unwrap_or(usize::MAX);
        if (index == 0 || index > declared) && reported.insert(text.to_owned()) {
            let hint = if index == 0 { "; arguments start at `$1`" } else { "; declare it under `arguments`" };
            out.push(Problem::value(
                at.clone(),
                format!("the prompt uses `{text}`, but the command declares {listed}{hint}"),
            ));
        }
    }
    for captures in slice.captures_iter(prompt) {
        let text = &captures[0];
        let start = captures[1].parse::<usize>().unwrap_or(usize::MAX);
        if start > declared + 1 && reported.insert(text.to_owned()) {
            out.push(Problem::value(
                at.clone(),
                format!(
                    "the prompt uses `{text}`, which starts after the {listed} and the rest of the line \
                     (`${{@:{}}}`); declare more arguments",
                    declared + 1
                ),
            ));
        }
    }
}

/// A `$WORD` that looks like a misspelt `$ARGUMENTS` (pi leaves it as typed).
fn misspelt_arguments(prompt: &str) -> Option<String> {
    let word = Regex::new(r"\$([A-Z][A-Z_]*)").ok()?;
    word.captures_iter(prompt).find_map(|captures| {
        let name = &captures[1];
        (name != "ARGUMENTS" && did_you_mean(name, ["ARGUMENTS"]).is_some()).then(|| format!("${name}"))
    })
}
