//! Checking the document against the JSON Schema, with jsonschema's errors reworded for people: what was
//! expected, what was found, and the likely key or value when a name is misspelt.

use std::sync::OnceLock;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::Value;

use crate::problem::{Problem, Segment, YamlPath, did_you_mean};
use crate::schema::agent_schema;

/// A schema problem and the node that would have to go for the rest of the file to be checkable.
#[derive(Debug, Clone)]
pub struct SchemaProblem {
    pub problem: Problem,
    /// The node to drop so the document can still be read (`None`: the document cannot be repaired).
    pub remove: Option<YamlPath>,
}

fn validator() -> Option<&'static jsonschema::Validator> {
    static VALIDATOR: OnceLock<Option<jsonschema::Validator>> = OnceLock::new();
    VALIDATOR.get_or_init(|| jsonschema::validator_for(agent_schema()).ok()).as_ref()
}

/// Every way `document` breaks the schema.
pub fn schema_problems(document: &Value) -> Vec<SchemaProblem> {
    let Some(validator) = validator() else {
        return vec![SchemaProblem {
            problem: Problem::value(YamlPath::root(), "internal error: the agent schema does not compile"),
            remove: None,
        }];
    };
    let mut found = Vec::new();
    for error in validator.iter_errors(document) {
        let path = YamlPath::from_pointer(error.instance_path().as_str(), document);
        let instance = value_at(document, &path);
        let removable = |path: &YamlPath| (!path.is_root()).then(|| path.clone());
        match error.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                let allowed = property_names(&path);
                for key in unexpected {
                    let key_path = path.key(key.clone());
                    let message = match did_you_mean(key, allowed.iter().map(String::as_str)) {
                        Some(suggestion) => format!("unknown key `{key}`; did you mean `{suggestion}`?"),
                        None if allowed.is_empty() => format!("unknown key `{key}`"),
                        None => format!("unknown key `{key}`; expected one of: {}", allowed.join(", ")),
                    };
                    found.push(SchemaProblem {
                        problem: Problem::key(key_path.clone(), message),
                        remove: Some(key_path),
                    });
                }
            }
            ValidationErrorKind::Required { property } => {
                let name = property.as_str().unwrap_or_default();
                found.push(SchemaProblem {
                    problem: Problem::value(path.clone(), format!("missing required key `{name}`")),
                    remove: removable(&path),
                });
            }
            ValidationErrorKind::Type { kind } => {
                let message = format!("expected {}, found {}", expected_types(kind), describe(instance));
                found.push(SchemaProblem { problem: Problem::value(path.clone(), message), remove: removable(&path) });
            }
            ValidationErrorKind::Enum { options } => {
                let options = options.as_array().cloned().unwrap_or_default();
                let message = not_one_of(instance, &options);
                found.push(SchemaProblem { problem: Problem::value(path.clone(), message), remove: removable(&path) });
            }
            ValidationErrorKind::OneOfNotValid { .. } | ValidationErrorKind::AnyOf { .. }
                if constant_choices(&path).is_some() =>
            {
                let options = constant_choices(&path).unwrap_or_default();
                let message = not_one_of(instance, &options);
                found.push(SchemaProblem { problem: Problem::value(path.clone(), message), remove: removable(&path) });
            }
            ValidationErrorKind::OneOfNotValid { .. } | ValidationErrorKind::AnyOf { .. }
                if alternatives(&path).is_some() =>
            {
                let (forms, keys) = alternatives(&path).unwrap_or_default();
                let mut message = format!("expected {}, found {}", join_or(&forms), describe(instance));
                if let Some(Value::Object(found)) = instance {
                    let unknown = found.keys().find(|key| !keys.contains(key));
                    if let Some(suggestion) = unknown.and_then(|key| did_you_mean(key, keys.iter().map(String::as_str)))
                    {
                        message.push_str(&format!("; did you mean `{suggestion}`?"));
                    }
                }
                found.push(SchemaProblem { problem: Problem::value(path.clone(), message), remove: removable(&path) });
            }
            _ => {
                let message = error.to_string();
                found.push(SchemaProblem { problem: Problem::value(path.clone(), message), remove: removable(&path) });
            }
        }
    }
    found
}

/// "`x` is not allowed here", with the closest option or the list of options.
pub fn not_one_of(instance: Option<&Value>, options: &[Value]) -> String {
    // An option allowed both as text and as a number (`"1.5"` and `1.5`) is named once.
    let mut options: Vec<String> =
        options.iter().map(|option| option.as_str().map_or(option.to_string(), str::to_owned)).collect();
    let mut seen = std::collections::HashSet::new();
    options.retain(|option| seen.insert(option.clone()));
    let shown = instance.map(|value| value.as_str().map_or(value.to_string(), str::to_owned)).unwrap_or_default();
    match did_you_mean(&shown, options.iter().map(String::as_str)) {
        Some(suggestion) => format!("`{shown}` is not allowed here; did you mean `{suggestion}`?"),
        None => format!("`{shown}` is not allowed here; expected one of: {}", options.join(", ")),
    }
}

/// The values a `oneOf`/`anyOf` of `const` branches (an enum with documented variants) allows at `path`.
fn constant_choices(path: &YamlPath) -> Option<Vec<Value>> {
    let root = agent_schema();
    let node = schema_at(path)?;
    let branches = node.get("oneOf").or_else(|| node.get("anyOf"))?.as_array()?;
    branches.iter().map(|branch| resolve(root, branch).get("const").cloned()).collect()
}

/// The forms a `oneOf`/`anyOf` (of text and mappings, possibly nested) allows at `path`, as words, and the
/// mapping keys any of them takes. `None` when a branch is something else.
fn alternatives(path: &YamlPath) -> Option<(Vec<String>, Vec<String>)> {
    fn collect(root: &Value, node: &Value, forms: &mut Vec<String>, keys: &mut Vec<String>) -> Option<()> {
        let node = resolve(root, node);
        if let Some(branches) = node.get("oneOf").or_else(|| node.get("anyOf")).and_then(Value::as_array) {
            return branches.iter().try_for_each(|branch| collect(root, branch, forms, keys));
        }
        match node.get("type").and_then(Value::as_str)? {
            "string" => forms.push("text".to_owned()),
            "object" => {
                let properties: Vec<String> = node.get("properties")?.as_object()?.keys().cloned().collect();
                let required = node.get("required").and_then(Value::as_array).map_or(0, Vec::len);
                match properties.as_slice() {
                    [only] if required == 1 => forms.push(format!("`{{ {only}: ... }}`")),
                    _ => forms.push(format!("a mapping of {}", properties.join(", "))),
                }
                keys.extend(properties);
            }
            _ => return None,
        }
        Some(())
    }
    let root = agent_schema();
    let node = schema_at(path)?;
    node.get("oneOf").or_else(|| node.get("anyOf"))?;
    let (mut forms, mut keys) = (Vec::new(), Vec::new());
    collect(root, node, &mut forms, &mut keys)?;
    Some((forms, keys))
}

/// `a`, `a or b`, `a, b or c`.
fn join_or(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [only] => only.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

fn expected_types(kind: &TypeKind) -> String {
    let names: Vec<String> = match kind {
        TypeKind::Single(kind) => vec![kind.to_string()],
        TypeKind::Multiple(kinds) => kinds.iter().map(|kind| kind.to_string()).collect(),
    };
    let worded: Vec<&str> = names
        .iter()
        .map(|name| match name.as_str() {
            "string" => "text",
            "integer" => "a whole number",
            "number" => "a number",
            "boolean" => "true or false",
            "array" => "a list",
            "object" => "a mapping",
            "null" => "nothing",
            _ => "a value",
        })
        .collect();
    worded.join(" or ")
}

/// How a found value is named in messages.
fn describe(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => "nothing (an empty value)".to_owned(),
        Some(Value::Bool(value)) => format!("`{value}`"),
        Some(Value::Number(number)) => format!("the number {number}"),
        Some(Value::String(text)) if text.chars().count() <= 40 => format!("the text \"{text}\""),
        Some(Value::String(_)) => "text".to_owned(),
        Some(Value::Array(_)) => "a list".to_owned(),
        Some(Value::Object(_)) => "a mapping".to_owned(),
    }
}

/// The value at `path`.
pub fn value_at<'a>(document: &'a Value, path: &YamlPath) -> Option<&'a Value> {
    path.0.iter().try_fold(document, |node, segment| match segment {
        Segment::Key(key) => node.get(key.as_str()),
        Segment::Index(index) => node.get(*index),
    })
}

/// The (resolved) schema of the node at `path`.
fn schema_at(path: &YamlPath) -> Option<&'static Value> {
    let root = agent_schema();
    let mut node = resolve(root, root);
    for segment in &path.0 {
        let next = match segment {
            Segment::Key(key) => node
                .get("properties")
                .and_then(|properties| properties.get(key.as_str()))
                .or_else(|| node.get("additionalProperties").filter(|schema| schema.is_object())),
            Segment::Index(_) => node.get("items"),
        };
        node = resolve(root, next?);
    }
    Some(node)
}

/// Keys the schema allows in the mapping at `path`.
fn property_names(path: &YamlPath) -> Vec<String> {
    schema_at(path)
        .and_then(|node| node.get("properties"))
        .and_then(Value::as_object)
        .map(|properties| properties.keys().cloned().collect())
        .unwrap_or_default()
}

/// Follows a local `$ref` (`#/$defs/Name`).
fn resolve<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str).and_then(|reference| reference.strip_prefix('#')) {
        Some(pointer) => root.pointer(pointer).unwrap_or(schema),
        None => schema,
    }
}
