//! The JSON Schema of YAML v1, generated from the spec types (`pi-gen schema`; committed as
//! `schema/agent.schema.json` for editors) and used to check every agent file.

use std::sync::OnceLock;

use schemars::generate::SchemaSettings;
use serde_json::Value;

use crate::spec::AgentSpec;

/// The schema as JSON: draft 2020-12, absent-or-typed fields (YAML `null` is not accepted for them).
pub fn agent_schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let generator = SchemaSettings::draft2020_12().into_generator();
        let mut schema = generator.into_root_schema_for::<AgentSpec>().to_value();
        strip_null(&mut schema);
        schema
    })
}

/// The schema as the committed file holds it: pretty JSON with a final newline.
pub fn agent_schema_text() -> String {
    let mut text = serde_json::to_string_pretty(agent_schema()).unwrap_or_default();
    text.push('\n');
    text
}

/// schemars lets every `Option` field be `null`; an agent file either gives a value or leaves the key out.
fn strip_null(value: &mut Value) {
    match value {
        Value::Object(object) => {
            if object.get("default").is_some_and(Value::is_null) {
                object.remove("default");
            }
            if let Some(Value::Array(types)) = object.get_mut("type") {
                types.retain(|kind| kind != "null");
                if types.len() == 1 {
                    let single = types.remove(0);
                    object.insert("type".to_owned(), single);
                }
            }
            let any_of = object.get("anyOf").and_then(Value::as_array).cloned();
            if let Some(branches) = any_of {
                let kept: Vec<Value> = branches
                    .into_iter()
                    .filter(|branch| branch.get("type").is_none_or(|kind| kind != "null"))
                    .collect();
                if kept.len() == 1
                    && let Some(Value::Object(branch)) = kept.into_iter().next()
                {
                    object.remove("anyOf");
                    for (key, value) in branch {
                        object.entry(key).or_insert(value);
                    }
                }
            }
            if object.get("enum").and_then(Value::as_array).is_some_and(|options| options.contains(&Value::Null))
                && let Some(Value::Array(options)) = object.get_mut("enum")
            {
                options.retain(|option| !option.is_null());
            }
            for child in object.values_mut() {
                strip_null(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_null),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_is_strict_and_typed() {
        let schema = agent_schema();
        assert_eq!(schema["additionalProperties"], Value::Bool(false));
        assert_eq!(schema["required"], serde_json::json!(["version", "name"]));
        let text = agent_schema_text();
        assert!(!text.contains("\"null\""), "{text}");
        assert!(text.contains("\"one-at-a-time\""), "{text}");
        assert!(jsonschema::meta::is_valid(schema));
    }

    #[test]
    fn the_committed_schema_file_matches_the_spec_types() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema/agent.schema.json");
        if std::env::var_os("PI_GEN_BLESS").is_some() {
            std::fs::write(&path, agent_schema_text()).expect("write the schema");
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == agent_schema_text(),
            "{} is out of date; regenerate it with `cargo run -p pi-codegen --bin pi-gen -- schema > schema/agent.schema.json` (or PI_GEN_BLESS=1 cargo test -p pi-codegen schema)",
            path.display()
        );
    }
}
