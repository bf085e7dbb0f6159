//! `system_prompt.template`: a minijinja file rendered at build time into the agent's base prompt.

use minijinja::{Environment, UndefinedBehavior, context};

use super::{LowerContext, builtin_tool_names};
use crate::error::SpecError;
use crate::spec::AgentSpec;

/// The variables a system prompt template may use.
pub const TEMPLATE_VARIABLES: [&str; 6] =
    ["name", "description", "tools", "custom_tools", "guidelines", "documentation"];

/// A minijinja environment for build-time templates: strict about undefined values, keeps newlines.
pub fn strict_environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_keep_trailing_newline(true);
    env
}

/// Renders `source` (the template's text) with the spec's values.
pub fn render_text(spec: &AgentSpec, source: &str) -> Result<String, minijinja::Error> {
    let env = strict_environment();
    let prompt = spec.system_prompt.as_ref();
    let custom_tools: Vec<_> = spec
        .custom_tools()
        .iter()
        .map(|tool| {
            context! {
                name => &tool.name,
                description => &tool.description,
                prompt_snippet => tool.prompt_snippet.as_deref().unwrap_or(&tool.description),
            }
        })
        .collect();
    let values = context! {
        name => &spec.name,
        description => spec.description.as_deref().unwrap_or(""),
        tools => builtin_tool_names(spec),
        custom_tools => custom_tools,
        guidelines => prompt.map(|prompt| prompt.guidelines.clone()).unwrap_or_default(),
        documentation => prompt.and_then(|prompt| prompt.documentation.clone()).unwrap_or_default(),
    };
    env.render_str(source, values)
}

/// The rendered template, or `None` when the YAML names none.
pub fn render(spec: &AgentSpec, ctx: &LowerContext) -> Result<Option<String>, SpecError> {
    let Some(template) = spec.system_prompt.as_ref().and_then(|prompt| prompt.template.as_ref()) else {
        return Ok(None);
    };
    let path = ctx.spec_dir().join(template);
    let source = std::fs::read_to_string(&path).map_err(|source| SpecError::Read { path: path.clone(), source })?;
    render_text(spec, &source)
        .map(Some)
        .map_err(|error| SpecError::Template { name: path.display().to_string(), message: error.to_string() })
}
