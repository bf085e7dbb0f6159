//! Mistakes in a JSON Schema written in YAML that the JSON Schema meta-schema lets through: unknown
//! keywords (ignored by validators, so a typo silently loosens the schema), `required` names that no
//! property has, and `null` values, typically from a comma inside a YAML flow mapping.

use serde_json::{Map, Value};

use crate::problem::{Problem, YamlPath, did_you_mean};

/// Keywords of JSON Schema (2020-12 and draft 7) whose value is one schema.
const SCHEMA_KEYWORDS: [&str; 12] = [
    "items",
    "additionalItems",
    "additionalProperties",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
];
/// Keywords whose value maps names to schemas (the names are not keywords).
const SCHEMA_MAP_KEYWORDS: [&str; 5] = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
/// Keywords whose value is a list of schemas.
const SCHEMA_LIST_KEYWORDS: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];
/// Keywords whose value is data, where `null` is a legitimate value.
const DATA_KEYWORDS: [&str; 4] = ["enum", "const", "default", "examples"];
/// Every other keyword.
const OTHER_KEYWORDS: [&str; 37] = [
    "$schema",
    "$id",
    "$ref",
    "$comment",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$vocabulary",
    "type",
    "title",
    "description",
    "deprecated",
    "readOnly",
    "writeOnly",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "format",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxContains",
    "minContains",
    "required",
    "maxProperties",
    "minProperties",
    "dependentRequired",
    "contentEncoding",
    "contentMediaType",
    "$recursiveRef",
    "$recursiveAnchor",
    "dependencies",
];

fn all_keywords() -> impl Iterator<Item = &'static str> {
    SCHEMA_KEYWORDS
        .into_iter()
        .chain(SCHEMA_MAP_KEYWORDS)
        .chain(SCHEMA_LIST_KEYWORDS)
        .chain(DATA_KEYWORDS)
        .chain(OTHER_KEYWORDS)
}

/// Pushes the problems of the schema `node` (written at `at`); true when there were none.
pub(super) fn schema_keyword_problems(node: &Value, at: &YamlPath, out: &mut Vec<Problem>) -> bool {
    let before = out.len();
    check_schema(node, at, out);
    out.len() == before
}

fn check_schema(node: &Value, at: &YamlPath, out: &mut Vec<Problem>) {
    let Value::Object(object) = node else { return };
    for (key, value) in object {
        let path = at.key(key.clone());
        if value.is_null() && !DATA_KEYWORDS.contains(&key.as_str()) {
            out.push(null_problem(path, key, object));
            continue;
        }
        if !all_keywords().any(|keyword| keyword == key) {
            out.push(Problem::key(path, unknown_keyword(key)));
            continue;
        }
        match key.as_str() {
            keyword if SCHEMA_KEYWORDS.contains(&keyword) => match value {
                Value::Array(items) => check_list(items, &path, out),
                _ => check_schema(value, &path, out),
            },
            keyword if SCHEMA_MAP_KEYWORDS.contains(&keyword) => check_map(value, &path, out),
            keyword if SCHEMA_LIST_KEYWORDS.contains(&keyword) => {
                if let Value::Array(items) = value {
                    check_list(items, &path, out);
                }
            }
            "required" => check_required(value, object.get("properties"), &path, out),
            keyword if DATA_KEYWORDS.contains(&keyword) => {}
            _ => check_no_null(value, &path, out),
        }
    }
}

fn check_list(items: &[Value], at: &YamlPath, out: &mut Vec<Problem>) {
    for (index, item) in items.iter().enumerate() {
        if item.is_null() {
            out.push(Problem::value(
                at.index(index),
                "an empty (null) schema; write a schema such as `{ type: string }`",
            ));
        } else {
            check_schema(item, &at.index(index), out);
        }
    }
}

/// `properties` and the like: each entry's name is free, its value a schema.
fn check_map(value: &Value, at: &YamlPath, out: &mut Vec<Problem>) {
    let Value::Object(entries) = value else { return };
    for (name, schema) in entries {
        let path = at.key(name.clone());
        if schema.is_null() {
            out.push(Problem::key(
                path,
                format!(
                    "`{name}` has no schema (null); write `{name}: {{ type: string }}` or similar; if this came from \
                     a `{{ }}` mapping above, a comma inside it starts a new key: quote the text that has the comma"
                ),
            ));
        } else {
            check_schema(schema, &path, out);
        }
    }
}

fn check_required(value: &Value, properties: Option<&Value>, at: &YamlPath, out: &mut Vec<Problem>) {
    let Value::Array(names) = value else { return };
    let declared: Vec<&str> =
        properties.and_then(Value::as_object).map(|map| map.keys().map(String::as_str).collect()).unwrap_or_default();
    for (index, name) in names.iter().enumerate() {
        let Some(name) = name.as_str() else { continue };
        if declared.contains(&name) {
            continue;
        }
        let hint = match did_you_mean(name, declared.iter().copied()) {
            Some(suggestion) => format!("did you mean `{suggestion}`?"),
            None if declared.is_empty() => "there are no `properties`".to_owned(),
            None => format!("properties: {}", declared.join(", ")),
        };
        out.push(Problem::value(at.index(index), format!("`{name}` is required but not in `properties`; {hint}")));
    }
}

/// A `null` inside a keyword's value (e.g. a list of types).
fn check_no_null(value: &Value, at: &YamlPath, out: &mut Vec<Problem>) {
    match value {
        Value::Null => out.push(Problem::value(at.clone(), "an empty (null) value; write one or remove the key")),
        Value::Array(items) => {
            items.iter().enumerate().for_each(|(index, item)| check_no_null(item, &at.index(index), out))
        }
        Value::Object(map) => map.iter().for_each(|(key, item)| check_no_null(item, &at.key(key.clone()), out)),
        _ => {}
    }
}

/// The message for `key: null` in a schema: usually the tail of a text cut at a comma in `{ }`.
fn null_problem(path: YamlPath, key: &str, schema: &Map<String, Value>) -> Problem {
    let known = all_keywords().any(|keyword| keyword == key);
    let message = if !known && schema.contains_key("description") {
        format!(
            "`{key}` is a key without a value: quote the description: a comma inside {{ }} starts a new key, so \
             the text after it became this key"
        )
    } else if !known {
        format!(
            "`{key}` is a key without a value (null); if it is text cut off at a comma inside {{ }}, quote that text: a \
             comma inside {{ }} starts a new key"
        )
    } else {
        format!("`{key}` has no value (null); write one or remove the key")
    };
    Problem::key(path, message)
}

/// The message for a key JSON Schema does not know, with the nearest keyword.
fn unknown_keyword(key: &str) -> String {
    let base = format!("`{key}` is not a JSON Schema keyword (validators ignore it)");
    if let Some(suggestion) = did_you_mean(key, all_keywords()) {
        return format!("{base}; did you mean `{suggestion}`?");
    }
    let lower = key.to_lowercase();
    if ["optional", "nullable", "is_required", "mandatory"].contains(&lower.as_str()) {
        return format!("{base}; a property is optional unless its name is listed in `required`");
    }
    let prefix = all_keywords()
        .filter(|keyword| keyword.len() >= 4 && lower.starts_with(&keyword.to_lowercase()))
        .max_by_key(|keyword| keyword.len());
    match prefix {
        Some(keyword) => format!("{base}; did you mean `{keyword}`?"),
        None => format!("{base}; property names go under `properties`"),
    }
}
