//! Checks beyond the schema: names, files, templates, tools, and everything that depends on more than
//! one field. Each problem carries the YAML path it is about.

mod commands;
mod context;
mod hooks;
mod mcp;
mod permissions;
mod resource_files;
mod schema_errors;
mod schema_keywords;
mod skill_rules;
mod subagents;
mod template_names;
mod tools;

use std::collections::BTreeSet;
use std::path::Path;

use crate::lower::system_prompt::{TEMPLATE_VARIABLES, strict_environment};
use crate::problem::{Problem, YamlPath, did_you_mean};
use crate::spec::AgentSpec;

pub use hooks::BUILTIN_ARGUMENTS;
pub use resource_files::resource_file_problems;
pub use schema_errors::{SchemaProblem, not_one_of, schema_problems, value_at};

/// Every semantic problem of a schema-valid spec; relative paths resolve against `spec_dir`.
pub fn semantic_problems(spec: &AgentSpec, spec_dir: &Path) -> Vec<Problem> {
    let mut out = Vec::new();
    let root = YamlPath::root();
    if spec.version != 1 {
        out.push(Problem::value(root.key("version"), format!("unsupported schema version {}; use 1", spec.version)));
    }
    if !crate::spec::is_binary_name(&spec.name) {
        out.push(Problem::value(
            root.key("name"),
            format!("\"{}\" cannot be a binary name; use letters, digits, '-' and '_'", spec.name),
        ));
    }
    if let Some(prefix) = &spec.env_prefix
        && (prefix.is_empty() || !prefix.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
    {
        out.push(Problem::value(
            root.key("env_prefix"),
            format!("\"{prefix}\" is not an environment variable prefix; use A-Z, 0-9 and '_'"),
        ));
    }
    if spec.model.as_ref().and_then(|model| model.thinking) == Some(crate::spec::ThinkingSpec::Max)
        && spec.pi_compat != Some(crate::spec::PiCompatSpec::V1_5)
    {
        out.push(Problem::value(
            root.key("model").key("thinking"),
            "`max` is pi 1.5's level; add `pi_compat: \"1.5\"` or use `xhigh`",
        ));
    }
    if let Some(dir) = &spec.config_dir
        && (dir.is_empty() || dir.contains('/') || dir == "." || dir == "..")
    {
        out.push(Problem::value(root.key("config_dir"), "config_dir is one directory name, like `.coder`"));
    }
    system_prompt_problems(spec, spec_dir, &mut out);
    tools::custom_tool_problems(spec, &mut out);
    resource_problems(spec, spec_dir, &mut out);
    provider_problems(spec, &mut out);
    hooks::hook_problems(spec, spec_dir, &mut out);
    commands::command_problems(spec, spec_dir, &mut out);
    context::context_problems(spec, &mut out);
    mcp::mcp_problems(spec, &mut out);
    permissions::permission_problems(spec, &mut out);
    permissions::fallback_problems(spec, &mut out);
    if let Some(output) = &spec.output {
        tools::check_json_schema(&output.schema, &root.key("output").key("schema"), &mut out);
    }
    subagents::subagent_problems(spec, &mut out);
    if let Some(model) = spec.compaction.as_ref().and_then(|compaction| compaction.model.as_ref())
        && model.split_once('/').is_none_or(|(provider, id)| provider.is_empty() || id.is_empty())
    {
        out.push(Problem::value(
            root.key("compaction").key("model"),
            format!("\"{model}\" is not `provider/id`, e.g. `anthropic/claude-haiku-4-5`"),
        ));
    }
    out
}

fn system_prompt_problems(spec: &AgentSpec, spec_dir: &Path, out: &mut Vec<Problem>) {
    let Some(prompt) = &spec.system_prompt else { return };
    let path = YamlPath::root().key("system_prompt");
    if prompt.identity.is_some() && prompt.template.is_some() {
        out.push(Problem::key(
            path.key("template"),
            "`template` replaces the whole prompt, `identity` only its first paragraph; keep one of them",
        ));
    }
    if let Some(template) = &prompt.template {
        let at = path.key("template");
        match std::fs::read_to_string(spec_dir.join(template)) {
            Err(error) => out.push(missing_file(at, template, spec_dir, &error)),
            Ok(source) => template_problems(spec, &source, at, out),
        }
    }
    for (index, name) in prompt.context_files.iter().flatten().enumerate() {
        if name.is_empty() || name.contains('/') {
            out.push(Problem::value(
                path.key("context_files").index(index),
                "a context file is a file name, like AGENTS.md",
            ));
        }
    }
}

fn template_problems(spec: &AgentSpec, source: &str, at: YamlPath, out: &mut Vec<Problem>) {
    let env = strict_environment();
    let template = match env.template_from_str(source) {
        Ok(template) => template,
        Err(error) => {
            let line = error.line().map(|line| format!(" at line {line}")).unwrap_or_default();
            out.push(Problem::value(at, format!("the template does not parse{line}: {error}")));
            return;
        }
    };
    let mut unknown: Vec<String> = template
        .undeclared_variables(false)
        .into_iter()
        .filter(|name| !TEMPLATE_VARIABLES.contains(&name.as_str()))
        .collect();
    unknown.sort();
    for name in unknown {
        let hint = did_you_mean(&name, TEMPLATE_VARIABLES)
            .map(|suggestion| format!("did you mean `{suggestion}`?"))
            .unwrap_or_else(|| format!("available: {}", TEMPLATE_VARIABLES.join(", ")));
        out.push(Problem::value(at.clone(), format!("the template uses `{name}`, which is never defined; {hint}")));
    }
    if out.is_empty()
        && let Err(error) = crate::lower::system_prompt::render_text(spec, source)
    {
        out.push(Problem::value(at, format!("the template does not render: {error}")));
    }
}

fn missing_file(at: YamlPath, name: &str, spec_dir: &Path, error: &std::io::Error) -> Problem {
    let full = spec_dir.join(name);
    Problem::value(at, format!("cannot read {} ({error}); paths are relative to the YAML file", full.display()))
}

fn resource_problems(spec: &AgentSpec, spec_dir: &Path, out: &mut Vec<Problem>) {
    let dirs = spec
        .skills
        .iter()
        .flat_map(|skills| {
            skills
                .dirs
                .iter()
                .enumerate()
                .map(|(index, dir)| (YamlPath::root().key("skills").key("dirs").index(index), dir))
        })
        .chain(spec.prompts.iter().flat_map(|prompts| {
            prompts
                .dirs
                .iter()
                .enumerate()
                .map(|(index, dir)| (YamlPath::root().key("prompts").key("dirs").index(index), dir))
        }));
    for (path, dir) in dirs {
        let full = spec_dir.join(dir);
        if !full.is_dir() {
            out.push(Problem::value(
                path,
                format!("{} is not a directory; paths are relative to the YAML file", full.display()),
            ));
        }
    }
    let mut names = BTreeSet::new();
    for (index, template) in spec.prompts.iter().flat_map(|prompts| &prompts.templates).enumerate() {
        let path = YamlPath::root().key("prompts").key("templates").index(index).key("name");
        let valid = !template.name.is_empty()
            && template.name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'));
        if !valid {
            out.push(Problem::value(
                path,
                format!("\"{}\" cannot be a command name; use letters, digits, '-', '_', '.' or ':'", template.name),
            ));
        } else if !names.insert(template.name.clone()) {
            out.push(Problem::value(path, format!("duplicate template name `{}`", template.name)));
        }
    }
}

fn provider_problems(spec: &AgentSpec, out: &mut Vec<Problem>) {
    for (name, provider) in &spec.providers {
        let path = YamlPath::root().key("providers").key(name.clone());
        if let Some(key) = &provider.api_key {
            let variable = !key.is_empty()
                && key.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                && !key.starts_with(|c: char| c.is_ascii_digit());
            if !variable && !key.starts_with('!') {
                // The value itself is never repeated: it may be a real key.
                out.push(Problem::value(
                    path.key("api_key"),
                    "api_key must name an environment variable (like OPENAI_API_KEY) or be a `!command` that prints \
                     the key; a literal key would be compiled into the binary",
                ));
            }
        }
        let mut ids = BTreeSet::new();
        for (index, model) in provider.models.iter().enumerate() {
            if !ids.insert(model.id.clone()) {
                out.push(Problem::value(
                    path.key("models").index(index).key("id"),
                    format!("duplicate model id `{}`", model.id),
                ));
            }
        }
        if !provider.models.is_empty()
            && provider.base_url.is_none()
            && provider.models.iter().any(|m| m.base_url.is_none())
        {
            out.push(Problem::value(path.clone(), "a provider with its own models needs `base_url`"));
        }
        if !provider.models.is_empty() && provider.api.is_none() && provider.models.iter().any(|m| m.api.is_none()) {
            out.push(Problem::value(
                path.clone(),
                "a provider with its own models needs `api` (anthropic-messages, openai-completions, openai-responses, google-generative-ai, google-vertex, bedrock-converse-stream or openai-codex-responses)",
            ));
        }
    }
}
