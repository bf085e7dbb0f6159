//! Tool-argument validation against the tool's JSON Schema, with pi's type coercion: a value of the
//! wrong primitive type is converted where the conversion is lossless (`"3"` -> `3` for an integer,
//! `"true"` -> `true`, `5` -> `"5"` for a string) before the schema is checked.

use serde_json::{Map, Number, Value};

/// The arguments did not satisfy the schema (or the schema itself is unusable).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Validation failed for tool \"{tool}\":\n{problems}\n\nReceived arguments:\n{received}")]
pub struct ToolArgumentsError {
    pub tool: String,
    /// One `  - path: message` line per problem.
    pub problems: String,
    /// The arguments as received, pretty-printed with two spaces.
    pub received: String,
}

/// Coerces `args` towards `schema` and validates them; returns the arguments the tool should get.
pub fn validate_tool_arguments(schema: &Value, tool_name: &str, args: Value) -> Result<Value, ToolArgumentsError> {
    let received = serde_json::to_string_pretty(&args).unwrap_or_else(|_| args.to_string());
    let fail =
        |problems: String| ToolArgumentsError { tool: tool_name.to_owned(), problems, received: received.clone() };
    let validator = jsonschema::validator_for(schema)
        .map_err(|error| fail(format!("  - root: the tool's parameter schema is invalid: {error}")))?;
    let coerced = coerce(args.clone(), schema);
    if validator.is_valid(&coerced) {
        return Ok(coerced);
    }
    let problems: Vec<String> =
        validator.iter_errors(&coerced).map(|error| format!("  - {}: {}", error_path(&error), error)).collect();
    let problems =
        if problems.is_empty() { "  - root: unknown validation error".to_owned() } else { problems.join("\n") };
    Err(fail(problems))
}

/// The dotted path of the failing value; a missing property is named by its own path.
fn error_path(error: &jsonschema::ValidationError<'_>) -> String {
    let pointer = error.instance_path().as_str();
    let base: Vec<String> = pointer.split('/').skip(1).map(|part| part.replace("~1", "/").replace("~0", "~")).collect();
    let mut path = base.join(".");
    if let jsonschema::error::ValidationErrorKind::Required { property } = error.kind() {
        let name = property.as_str().map(str::to_owned).unwrap_or_else(|| property.to_string());
        path = if path.is_empty() { name } else { format!("{path}.{name}") };
    }
    if path.is_empty() { "root".to_owned() } else { path }
}

/// The JSON types a schema allows (`type` as a string or an array).
fn schema_types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(kind)) => vec![kind.as_str()],
        Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn has_type(value: &Value, kind: &str) -> bool {
    match kind {
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value.as_f64().is_some_and(|n| n.fract() == 0.0),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => false,
    }
}

/// Walks `value` along `schema`, converting primitives of the wrong type.
fn coerce(value: Value, schema: &Value) -> Value {
    let mut value = value;
    if let Some(parts) = schema.get("allOf").and_then(Value::as_array) {
        for part in parts {
            value = coerce(value, part);
        }
    }
    for union in ["anyOf", "oneOf"] {
        if let Some(options) = schema.get(union).and_then(Value::as_array) {
            value = coerce_to_first_match(value, options);
        }
    }
    let kinds = schema_types(schema);
    if !kinds.is_empty()
        && !kinds.iter().any(|kind| has_type(&value, kind))
        && let Some(converted) = kinds.iter().find_map(|kind| convert_primitive(&value, kind))
    {
        value = converted;
    }
    if kinds.contains(&"integer") && !kinds.contains(&"number") {
        value = integral_float_as_integer(value);
    }
    match value {
        Value::Object(map) if kinds.contains(&"object") || kinds.is_empty() => {
            Value::Object(coerce_object(map, schema))
        }
        Value::Array(items) if kinds.contains(&"array") || kinds.is_empty() => {
            Value::Array(coerce_array(items, schema))
        }
        other => other,
    }
}

/// For anyOf/oneOf: the first alternative the coerced value satisfies wins; else the value is kept.
fn coerce_to_first_match(value: Value, options: &[Value]) -> Value {
    for option in options {
        let candidate = coerce(value.clone(), option);
        if jsonschema::validator_for(option).is_ok_and(|validator| validator.is_valid(&candidate)) {
            return candidate;
        }
    }
    value
}

fn coerce_object(mut map: Map<String, Value>, schema: &Value) -> Map<String, Value> {
    let properties = schema.get("properties").and_then(Value::as_object);
    let additional = schema.get("additionalProperties").filter(|extra| extra.is_object());
    for (key, entry) in map.iter_mut() {
        let property_schema = properties.and_then(|props| props.get(key)).or(additional);
        if let Some(property_schema) = property_schema {
            *entry = coerce(std::mem::take(entry), property_schema);
        }
    }
    map
}

fn coerce_array(items: Vec<Value>, schema: &Value) -> Vec<Value> {
    match schema.get("items") {
        Some(Value::Array(tuple)) => items
            .into_iter()
            .enumerate()
            .map(|(index, item)| match tuple.get(index) {
                Some(item_schema) => coerce(item, item_schema),
                None => item,
            })
            .collect(),
        Some(item_schema @ Value::Object(_)) => items.into_iter().map(|item| coerce(item, item_schema)).collect(),
        _ => items,
    }
}

/// `3.0` as `3`: JSON Schema counts it as an integer, but a tool reading an integer type would refuse it.
fn integral_float_as_integer(value: Value) -> Value {
    match value.as_f64() {
        Some(float) if value.is_f64() && float.fract() == 0.0 && float.abs() < 9_007_199_254_740_992.0 => {
            Value::from(float as i64)
        }
        _ => value,
    }
}

/// The value converted to `kind`, when that conversion is lossless; `None` otherwise.
fn convert_primitive(value: &Value, kind: &str) -> Option<Value> {
    match (kind, value) {
        ("number", Value::String(text)) => parse_number(text).map(Value::Number),
        ("integer", Value::String(text)) => {
            parse_number(text).filter(|n| n.as_f64().is_some_and(|f| f.fract() == 0.0)).map(Value::Number)
        }
        ("number" | "integer", Value::Bool(flag)) => Some(Value::from(u8::from(*flag))),
        ("number" | "integer", Value::Null) => Some(Value::from(0)),
        ("string", Value::Number(n)) => Some(Value::String(n.to_string())),
        ("string", Value::Bool(flag)) => Some(Value::String(flag.to_string())),
        ("string", Value::Null) => Some(Value::String(String::new())),
        ("boolean", Value::String(text)) if text == "true" => Some(Value::Bool(true)),
        ("boolean", Value::String(text)) if text == "false" => Some(Value::Bool(false)),
        ("boolean", Value::Number(n)) if n.as_f64() == Some(1.0) => Some(Value::Bool(true)),
        ("boolean", Value::Number(n)) if n.as_f64() == Some(0.0) => Some(Value::Bool(false)),
        ("boolean", Value::Null) => Some(Value::Bool(false)),
        ("null", Value::String(text)) if text.is_empty() => Some(Value::Null),
        ("null", Value::Number(n)) if n.as_f64() == Some(0.0) => Some(Value::Null),
        ("null", Value::Bool(false)) => Some(Value::Null),
        _ => None,
    }
}

/// A finite number written as text (surrounding whitespace allowed), integral values as integers.
fn parse_number(text: &str) -> Option<Number> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return None;
    }
    if let Ok(integer) = trimmed.parse::<i64>() {
        return Some(Number::from(integer));
    }
    let float = trimmed.parse::<f64>().ok().filter(|f| f.is_finite())?;
    if float.fract() == 0.0 && float.abs() < 9_007_199_254_740_992.0 {
        return Some(Number::from(float as i64));
    }
    Number::from_f64(float)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> Value {
        json!({
            "type": "object",
            "required": ["path"],
            "properties": {
                "path": {"type": "string"},
                "offset": {"type": "integer"},
                "ratio": {"type": "number"},
                "force": {"type": "boolean"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "nested": {"type": "object", "required": ["depth"], "properties": {"depth": {"type": "integer"}}}
            },
            "additionalProperties": false
        })
    }

    #[test]
    fn numeric_strings_become_numbers_and_other_primitives_follow_the_schema() {
        let args = json!({"path": 7, "offset": "3", "ratio": " 0.5 ", "force": "true", "tags": [1, true],
            "nested": {"depth": "2"}});
        let coerced = validate_tool_arguments(&schema(), "t", args).expect("coerced");
        assert_eq!(
            coerced,
            json!({"path": "7", "offset": 3, "ratio": 0.5, "force": true, "tags": ["1", "true"], "nested": {"depth": 2}})
        );
    }

    #[test]
    fn lossy_conversions_are_refused_with_path_message_and_received_arguments() {
        let args = json!({"offset": "3.5", "force": "yes", "nested": {}, "extra": 1});
        let error = validate_tool_arguments(&schema(), "read", args).expect_err("invalid");
        let text = error.to_string();
        assert!(text.starts_with("Validation failed for tool \"read\":\n"), "{text}");
        for path in ["  - path: ", "  - offset: ", "  - force: ", "  - nested.depth: ", "  - root: "] {
            assert!(text.contains(path), "{path} missing in {text}");
        }
        assert!(text.ends_with("Received arguments:\n{\n  \"offset\": \"3.5\",\n  \"force\": \"yes\",\n  \"nested\": {},\n  \"extra\": 1\n}"), "{text}");
    }

    #[test]
    fn unions_take_the_first_alternative_that_fits() {
        let schema =
            json!({"type": "object", "properties": {"n": {"anyOf": [{"type": "integer"}, {"type": "string"}]}}});
        assert_eq!(validate_tool_arguments(&schema, "t", json!({"n": "12"})), Ok(json!({"n": 12})));
        assert_eq!(validate_tool_arguments(&schema, "t", json!({"n": "x"})), Ok(json!({"n": "x"})));
        let multi = json!({"type": "object", "properties": {"n": {"type": ["integer", "null"]}}});
        assert_eq!(validate_tool_arguments(&multi, "t", json!({"n": null})), Ok(json!({"n": null})));
        assert_eq!(validate_tool_arguments(&multi, "t", json!({"n": "4"})), Ok(json!({"n": 4})));
    }

    #[test]
    fn integral_floats_become_integers_where_the_schema_wants_an_integer() {
        let args = json!({"path": "a", "offset": 3.0, "ratio": 2.0, "nested": {"depth": -1.0}});
        let coerced = validate_tool_arguments(&schema(), "t", args).expect("coerced");
        assert!(coerced["offset"].is_i64(), "{coerced}");
        assert!(coerced["nested"]["depth"].is_i64(), "{coerced}");
        assert!(coerced["ratio"].is_f64(), "a number stays a float: {coerced}");
        let offset: i64 = serde_json::from_value(coerced["offset"].clone()).expect("an i64");
        assert_eq!(offset, 3);
        let huge = validate_tool_arguments(&schema(), "t", json!({"path": "a", "offset": 1e300})).expect("valid");
        assert!(huge["offset"].is_f64(), "beyond 2^53 the value is left alone: {huge}");
    }

    #[test]
    fn an_invalid_schema_is_reported_not_panicked_on() {
        let error = validate_tool_arguments(&json!({"type": 12}), "t", json!({})).expect_err("bad schema");
        assert!(error.problems.contains("schema is invalid"), "{}", error.problems);
    }
}
