//! Checks of custom tools: names, handler choice, parameter schemas, and command templates that may only
//! use declared arguments.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::problem::{Problem, YamlPath, did_you_mean};
use crate::spec::{AgentSpec, BUILTIN_TOOLS, CustomToolSpec, HandlerSpec};

/// The type names JSON Schema knows.
const JSON_TYPES: [&str; 7] = ["string", "number", "integer", "boolean", "array", "object", "null"];

/// Problems of `tools.custom`.
pub fn custom_tool_problems(spec: &AgentSpec, out: &mut Vec<Problem>) {
    let base = YamlPath::root().key("tools").key("custom");
    let mut seen = BTreeMap::new();
    for (index, tool) in spec.custom_tools().iter().enumerate() {
        let path = base.index(index);
        check_name(tool, &path, &mut seen, out);
        check_handler(tool, &path, out);
        let parameters = check_parameters(tool, &path, out);
        if let Some(command) = &tool.command {
            check_command(command, parameters.as_ref(), &path.key("command"), out);
        }
    }
}

fn check_name(tool: &CustomToolSpec, path: &YamlPath, seen: &mut BTreeMap<String, YamlPath>, out: &mut Vec<Problem>) {
    let name = &tool.name;
    let valid =
        !name.is_empty() && name.len() <= 64 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !valid {
        out.push(Problem::value(
            path.key("name"),
            format!("tool name \"{name}\" is not usable by every provider; use 1 to 64 letters, digits, '_' or '-'"),
        ));
    }
    if BUILTIN_TOOLS.contains(&name.as_str()) {
        out.push(Problem::value(
            path.key("name"),
            format!("`{name}` is a built-in tool; give the custom tool another name"),
        ));
    } else if let Some(first) = seen.get(name) {
        let problem = Problem::value(path.key("name"), format!("duplicate tool name `{name}`"));
        out.push(problem.first_defined_at(first.clone()));
    } else {
        seen.insert(name.clone(), path.key("name"));
    }
}

fn check_handler(tool: &CustomToolSpec, path: &YamlPath, out: &mut Vec<Problem>) {
    match (&tool.command, tool.handler) {
        (Some(_), Some(HandlerSpec::Rust)) => {
            out.push(Problem::key(path.key("handler"), "a tool has either `command` or `handler: rust`, not both"))
        }
        (None, None) => out.push(Problem::value(
            path.clone(),
            format!("tool `{}` needs `command: <shell template>` or `handler: rust`", tool.name),
        )),
        (None, Some(HandlerSpec::Rust)) if tool.timeout.is_some() => out.push(Problem::key(
            path.key("timeout"),
            "`timeout` applies to command tools; a Rust handler enforces its own limits",
        )),
        _ => {}
    }
}

/// The parameter schema when it is a usable object schema.
fn check_parameters(tool: &CustomToolSpec, path: &YamlPath, out: &mut Vec<Problem>) -> Option<Value> {
    let Some(schema) = &tool.parameters else {
        return Some(tool.parameters_schema());
    };
    let at = path.key("parameters");
    if !check_json_schema(schema, &at, out) {
        return None;
    }
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        out.push(Problem::value(at, "tool parameters must be an object schema: `type: object` with `properties`"));
        return None;
    }
    Some(schema.clone())
}

/// Whether `schema` (written at `at`) is a valid JSON Schema that compiles; the problem is pointed at the
/// part of it that is wrong.
pub(super) fn check_json_schema(schema: &Value, at: &YamlPath, out: &mut Vec<Problem>) -> bool {
    if !super::schema_keywords::schema_keyword_problems(schema, at, out) {
        return false;
    }
    if let Err(error) = jsonschema::meta::validate(schema) {
        let inner = YamlPath::from_pointer(error.instance_path().as_str(), schema);
        let last_is_type = matches!(inner.0.last(), Some(crate::problem::Segment::Key(key)) if key == "type");
        let mut full = at.clone();
        full.0.extend(inner.0);
        let message = match &**error.instance() {
            serde_json::Value::String(kind) if last_is_type => {
                let options: Vec<Value> = JSON_TYPES.iter().map(|name| Value::from(*name)).collect();
                format!(
                    "not a JSON Schema type: {}",
                    crate::validate::not_one_of(Some(&Value::from(kind.as_str())), &options)
                )
            }
            _ => format!("not a valid JSON Schema: {error}"),
        };
        out.push(Problem::value(full, message));
        return false;
    }
    if let Err(error) = jsonschema::validator_for(schema) {
        out.push(Problem::value(at.clone(), format!("the JSON Schema does not compile: {error}")));
        return false;
    }
    true
}

fn check_command(command: &str, parameters: Option<&Value>, path: &YamlPath, out: &mut Vec<Problem>) {
    let squashed: String = command.chars().filter(|c| !c.is_whitespace()).collect();
    if ["'{{", "\"{{"].iter().any(|quote| squashed.contains(quote)) {
        out.push(Problem::value(
            path.clone(),
            "a `{{ value }}` is inside quotes: values are shell-quoted already, and the template's quotes would \
             undo that; remove the quotes around it",
        ));
    }
    if command.contains("{#") {
        out.push(Problem::value(
            path.clone(),
            "`{#` starts a template comment; write shell text like `${#var}` inside {% raw %}...{% endraw %}",
        ));
        return;
    }
    let env = minijinja::Environment::new();
    let template = match env.template_from_str(command) {
        Ok(template) => template,
        Err(error) => {
            let line = error.line().map(|line| format!(" (line {line} of the template)")).unwrap_or_default();
            out.push(Problem::value(
                path.clone(),
                format!("the command template does not parse{line}: {}", error.kind()),
            ));
            if let (Some(detail), Some(last)) = (error.detail(), out.last_mut()) {
                last.message.push_str(&format!(": {detail}"));
            }
            return;
        }
    };
    for message in super::template_names::unknown_names(command) {
        out.push(Problem::value(path.clone(), message));
    }
    let Some(parameters) = parameters else { return };
    let declared: Vec<String> = parameters
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| properties.keys().cloned().collect())
        .unwrap_or_default();
    let mut used: Vec<String> = template.undeclared_variables(false).into_iter().collect();
    used.sort();
    for variable in used {
        if declared.contains(&variable) || env.globals().any(|(global, _)| global == variable) {
            continue;
        }
        let hint = match did_you_mean(&variable, declared.iter().map(String::as_str)) {
            Some(suggestion) => format!("; did you mean `{suggestion}`?"),
            None if declared.is_empty() => "; the tool declares no parameters".to_owned(),
            None => format!("; declared parameters: {}", declared.join(", ")),
        };
        out.push(Problem::value(
            path.clone(),
            format!("the command uses `{variable}`, which is not a parameter of the tool{hint}"),
        ));
    }
}
