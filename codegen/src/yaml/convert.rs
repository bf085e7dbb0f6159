//! YAML values to JSON values, so the document can be checked against the JSON Schema. What JSON cannot
//! hold (non-string keys, tags, non-finite numbers) is reported, not guessed at.

use serde_json::{Map, Number, Value};
use serde_yaml::Value as Yaml;

use crate::problem::{Problem, YamlPath};

/// The JSON form of `yaml`; problems are pushed and the offending node becomes `null`.
pub fn to_json(yaml: &Yaml, path: &YamlPath, problems: &mut Vec<Problem>) -> Value {
    match yaml {
        Yaml::Null => Value::Null,
        Yaml::Bool(value) => Value::Bool(*value),
        Yaml::Number(number) => number_to_json(number).unwrap_or_else(|| {
            problems.push(Problem::value(path.clone(), format!("{number} is not a finite number")));
            Value::Null
        }),
        Yaml::String(text) => Value::String(text.clone()),
        Yaml::Sequence(items) => Value::Array(
            items.iter().enumerate().map(|(index, item)| to_json(item, &path.index(index), problems)).collect(),
        ),
        Yaml::Mapping(mapping) => {
            let mut object = Map::new();
            for (key, value) in mapping {
                let Some(name) = key_text(key) else {
                    problems.push(Problem::value(
                        path.clone(),
                        "mapping keys must be plain text; quote this key or use a list",
                    ));
                    continue;
                };
                let child = to_json(value, &path.key(name.clone()), problems);
                object.insert(name, child);
            }
            Value::Object(object)
        }
        Yaml::Tagged(tagged) => {
            problems.push(Problem::value(
                path.clone(),
                format!("YAML tags like `{}` are not supported; remove the tag", tagged.tag),
            ));
            Value::Null
        }
    }
}

fn key_text(key: &Yaml) -> Option<String> {
    match key {
        Yaml::String(text) => Some(text.clone()),
        Yaml::Number(number) => Some(number.to_string()),
        Yaml::Bool(value) => Some(value.to_string()),
        _ => None,
    }
}

fn number_to_json(number: &serde_yaml::Number) -> Option<Value> {
    if let Some(value) = number.as_u64() {
        return Some(Value::Number(value.into()));
    }
    if let Some(value) = number.as_i64() {
        return Some(Value::Number(value.into()));
    }
    number.as_f64().and_then(Number::from_f64).map(Value::Number)
}
