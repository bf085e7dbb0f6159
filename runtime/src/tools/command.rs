//! The custom command tool: a YAML-declared tool whose handler is a minijinja command template, rendered
//! with shell-quoted arguments and run by the bash tool's executor.
//!
//! Every value a template prints is quoted for POSIX `sh` (strings in single quotes, arrays as one quoted
//! word per element, objects as quoted JSON, absent values as nothing) unless the template opts out with
//! `{{ x | safe }}` or an `{% autoescape false %}` block. Placeholders must not be put inside quotes by the
//! template itself: `'{{ x }}'` would close the template's quotes around the quoted value.

use std::fmt::Write as _;

use minijinja::value::{Kwargs, ValueKind};
use minijinja::{AutoEscape, Environment, Error, ErrorKind, Output, State, UndefinedBehavior};
use serde_json::Value;

use super::bash::{RunOptions, execute_in_shell};
use super::{AgentTool, ToolContext, ToolEnvironment, ToolError, ToolFuture};
use crate::definition::{CustomToolDefinition, CustomToolHandler};

/// The name of the auto-escape mode the template environment uses.
const SHELL_ESCAPE: &str = "sh";
/// Longest value exported as a `TOOL_ARG_<NAME>` variable, in bytes (Linux caps one variable at 128 KiB).
pub(crate) const MAX_ENV_VALUE: usize = 64 * 1024;

/// Runs a custom tool's command template.
pub struct CommandTool {
    name: String,
    label: String,
    description: String,
    prompt_snippet: Option<String>,
    prompt_guidelines: Vec<String>,
    parameters: Value,
    templates: Environment<'static>,
    timeout_secs: Option<u64>,
    env: ToolEnvironment,
}

impl std::fmt::Debug for CommandTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandTool").field("name", &self.name).field("timeout_secs", &self.timeout_secs).finish()
    }
}

impl CommandTool {
    /// Builds the tool for a `Command` handler: parses the parameters schema and compiles the template.
    pub fn new(definition: &CustomToolDefinition, env: ToolEnvironment) -> Result<CommandTool, ToolError> {
        let name = &definition.name;
        let (template, timeout_secs) = match &definition.handler {
            CustomToolHandler::Command { template, timeout_secs } => (template, *timeout_secs),
            CustomToolHandler::Rust => {
                return Err(ToolError::new(format!(
                    "Custom tool \"{name}\" is implemented in Rust; it has no command template to run"
                )));
            }
        };
        let parameters: Value = serde_json::from_str(&definition.parameters)
            .map_err(|e| ToolError::new(format!("Custom tool \"{name}\": parameters are not valid JSON: {e}")))?;
        if !parameters.is_object() {
            return Err(ToolError::new(format!(
                "Custom tool \"{name}\": parameters must be a JSON Schema object, got {parameters}"
            )));
        }
        if let Err(e) = jsonschema::validator_for(&parameters) {
            return Err(ToolError::new(format!("Custom tool \"{name}\": invalid parameters JSON Schema: {e}")));
        }
        let templates = template_environment(name, template).map_err(|e| {
            ToolError::new(format!("Custom tool \"{name}\": invalid command template: {}", describe(&e)))
        })?;
        Ok(CommandTool {
            name: name.clone(),
            label: definition.label.clone(),
            description: definition.description.clone(),
            prompt_snippet: definition.prompt_snippet.clone(),
            prompt_guidelines: definition.prompt_guidelines.clone(),
            parameters,
            templates,
            timeout_secs: timeout_secs.filter(|secs| *secs > 0),
            env,
        })
    }

    /// The command line the template gives for `args`, values shell-quoted.
    pub fn render(&self, args: &Value) -> Result<String, ToolError> {
        let render_err = |e: Error| {
            ToolError::new(format!("Failed to render the command of tool \"{}\": {}", self.name, describe(&e)))
        };
        let template = self.templates.get_template(&self.name).map_err(render_err)?;
        let context = match args {
            Value::Object(_) => minijinja::Value::from_serialize(args),
            _ => minijinja::context! {},
        };
        template.render(context).map_err(render_err)
    }
}

impl AgentTool for CommandTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn label(&self) -> &str {
        &self.label
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn parameters(&self) -> &Value {
        &self.parameters
    }
    fn prompt_snippet(&self) -> Option<&str> {
        self.prompt_snippet.as_deref()
    }
    fn prompt_guidelines(&self) -> &[String] {
        &self.prompt_guidelines
    }
    fn execute(&self, args: Value, ctx: ToolContext) -> ToolFuture<'_> {
        Box::pin(async move {
            let command = self.render(&args)?;
            let mut stdin = serde_json::to_vec(&args)
                .map_err(|e| ToolError::new(format!("Failed to encode the arguments as JSON: {e}")))?;
            stdin.push(b'\n');
            let mut env = argument_env(&args);
            env.push(("TOOL_CALL_ID".to_owned(), ctx.tool_call_id.clone()));
            let options = RunOptions { stdin: Some(stdin), env, argv: Vec::new() };
            let timeout_secs = self.timeout_secs.map(|secs| secs as f64);
            execute_in_shell(&self.env, command, &options, timeout_secs, &ctx).await
        })
    }
}

/// `TOOL_ARG_<NAME>` variables for the top-level arguments: strings raw, other values as JSON. Null values
/// are left out like absent ones, and so are values over [`MAX_ENV_VALUE`] bytes (the kernel refuses to start
/// a program with one huge variable; the command reads such values from stdin).
pub(crate) fn argument_env(args: &Value) -> Vec<(String, String)> {
    let Some(map) = args.as_object() else {
        return Vec::new();
    };
    map.iter()
        .filter(|(_, value)| !value.is_null())
        .map(|(key, value)| {
            let value = match value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (format!("TOOL_ARG_{}", env_name(key)), value)
        })
        .filter(|(_, value)| value.len() <= MAX_ENV_VALUE)
        .collect()
}

/// `name` uppercased, every character but ASCII letters and digits turned into `_`.
pub(crate) fn env_name(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }).collect()
}

/// A minijinja error with its cause chain.
fn describe(error: &Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let _ = write!(text, ": {cause}");
        source = cause.source();
    }
    text
}

/// An environment holding `source` as the template `name`, printing values shell-quoted.
fn template_environment(name: &str, source: &str) -> Result<Environment<'static>, Error> {
    let mut templates = Environment::new();
    templates.set_undefined_behavior(UndefinedBehavior::Chainable);
    templates.set_auto_escape_callback(|_| AutoEscape::Custom(SHELL_ESCAPE));
    templates.set_formatter(shell_formatter);
    templates.add_filter("safe", safe_filter);
    // The built-in `tojson` marks its output safe, which would bypass quoting.
    templates.add_filter("tojson", tojson_filter);
    templates.add_template_owned(name.to_owned(), source.to_owned())?;
    Ok(templates)
}

/// Prints a value: strings already marked safe (by `safe`, or text the template produced itself, such as a
/// macro's output) as they are; anything else shell-quoted unless auto-escaping is off.
fn shell_formatter(out: &mut Output<'_>, state: &State<'_, '_>, value: &minijinja::Value) -> Result<(), Error> {
    if value.is_safe()
        && let Some(text) = value.as_str()
    {
        return out.write_str(text).map_err(Error::from);
    }
    let text = match state.auto_escape() {
        AutoEscape::None => raw(value)?,
        _ => quoted(value)?,
    };
    out.write_str(&text).map_err(Error::from)
}

/// The `safe` filter: the value unquoted (arrays space-separated, objects as JSON, absent values empty).
fn safe_filter(value: &minijinja::Value) -> Result<minijinja::Value, Error> {
    Ok(minijinja::Value::from_safe_string(raw(value)?))
}

/// The `tojson` filter, its output left to quoting like any other string.
fn tojson_filter(
    value: &minijinja::Value,
    indent: Option<minijinja::Value>,
    args: Kwargs,
) -> Result<minijinja::Value, Error> {
    let json = minijinja::filters::tojson(value, indent, args)?;
    Ok(minijinja::Value::from(json.as_str().unwrap_or_default()))
}

/// A value as shell words: scalars quoted, sequences one quoted word per element, maps their quoted JSON,
/// none and undefined nothing.
pub(crate) fn quoted(value: &minijinja::Value) -> Result<String, Error> {
    words(value, quote)
}

/// A value as unquoted text: like [`quoted`] without the quoting.
fn raw(value: &minijinja::Value) -> Result<String, Error> {
    words(value, str::to_owned)
}

/// A value as words, each passed through `word`: sequences give one word per element (nested
/// collections as JSON), maps their JSON, none and undefined nothing.
fn words(value: &minijinja::Value, word: fn(&str) -> String) -> Result<String, Error> {
    let one = |item: &minijinja::Value| match item.kind() {
        ValueKind::Seq | ValueKind::Iterable | ValueKind::Map => json(item).map(|text| word(&text)),
        _ => scalar(item).map(|text| word(&text)),
    };
    match value.kind() {
        ValueKind::Undefined | ValueKind::None => Ok(String::new()),
        ValueKind::Seq | ValueKind::Iterable => {
            let items: Result<Vec<String>, Error> = value
                .try_iter()?
                .filter(|item| !(item.is_undefined() || item.is_none()))
                .map(|item| one(&item))
                .collect();
            Ok(items?.join(" "))
        }
        _ => one(value),
    }
}

/// The text of a scalar value: strings as they are, numbers as printed, booleans as `true`/`false`.
fn scalar(value: &minijinja::Value) -> Result<String, Error> {
    match value.kind() {
        ValueKind::Invalid => Err(Error::new(ErrorKind::InvalidOperation, format!("invalid value: {value}"))),
        ValueKind::Bool => Ok(if value.is_true() { "true" } else { "false" }.to_owned()),
        ValueKind::Bytes => Ok(value.as_bytes().map(String::from_utf8_lossy).unwrap_or_default().into_owned()),
        _ => Ok(value.as_str().map_or_else(|| value.to_string(), str::to_owned)),
    }
}

/// A value as compact JSON.
fn json(value: &minijinja::Value) -> Result<String, Error> {
    serde_json::to_string(value)
        .map_err(|e| Error::new(ErrorKind::BadSerialization, "cannot serialize to JSON").with_source(e))
}

/// `text` as one POSIX shell word: left bare when it only holds characters no shell treats specially,
/// otherwise single-quoted with each `'` written as `'\''`.
pub(crate) fn quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/' | b',' | b':' | b'@' | b'%' | b'+')
        });
    if plain {
        return text.to_owned();
    }
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('\'');
    for c in text.chars() {
        if c == '\'' {
            quoted.push_str("'\\''");
        } else {
            quoted.push(c);
        }
    }
    quoted.push('\'');
    quoted
}
