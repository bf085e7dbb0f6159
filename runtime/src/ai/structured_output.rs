//! Native structured output: how each API that has it is asked for a final answer matching a JSON Schema.
//! APIs without it (Anthropic, Bedrock, Codex, Mistral's conversations here) rely on the system prompt and the
//! session's validation with one correction.

use serde_json::{Map, Value, json};

/// The name the schema is given where the API wants one.
const SCHEMA_NAME: &str = "final_answer";

/// OpenAI chat completions: `response_format` (not strict, so any JSON Schema is accepted).
pub fn insert_chat_completions_format(body: &mut Map<String, Value>, schema: Option<&Value>) {
    if let Some(schema) = schema {
        let format =
            json!({"type": "json_schema", "json_schema": {"name": SCHEMA_NAME, "schema": schema, "strict": false}});
        body.insert("response_format".into(), format);
    }
}

/// OpenAI and Azure responses: `text.format`.
pub fn insert_responses_format(body: &mut Map<String, Value>, schema: Option<&Value>) {
    if let Some(schema) = schema {
        let format = json!({"type": "json_schema", "name": SCHEMA_NAME, "schema": schema, "strict": false});
        match body.get_mut("text") {
            Some(Value::Object(text)) => {
                text.insert("format".into(), format);
            }
            _ => {
                body.insert("text".into(), json!({"format": format}));
            }
        }
    }
}

/// Gemini and Vertex: `responseMimeType` and `responseJsonSchema` in the generation config. Gemini refuses
/// JSON mode together with function calling, so a request that offers tools is left as it is.
pub fn insert_gemini_format(generation: &mut Map<String, Value>, schema: Option<&Value>, has_tools: bool) {
    if let Some(schema) = schema.filter(|_| !has_tools) {
        generation.insert("responseMimeType".into(), json!("application/json"));
        generation.insert("responseJsonSchema".into(), schema.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_api_gets_its_own_field_and_none_without_a_schema() {
        let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}});
        let mut chat = Map::new();
        insert_chat_completions_format(&mut chat, None);
        assert!(chat.is_empty());
        insert_chat_completions_format(&mut chat, Some(&schema));
        assert_eq!(chat["response_format"]["json_schema"]["schema"], schema);
        let mut responses = Map::new();
        responses.insert("text".into(), json!({"verbosity": "low"}));
        insert_responses_format(&mut responses, Some(&schema));
        assert_eq!(responses["text"]["verbosity"], "low");
        assert_eq!(responses["text"]["format"]["type"], "json_schema");
        let mut generation = Map::new();
        insert_gemini_format(&mut generation, Some(&schema), true);
        assert!(generation.is_empty(), "not with tools");
        insert_gemini_format(&mut generation, Some(&schema), false);
        assert_eq!(generation["responseMimeType"], "application/json");
    }
}
