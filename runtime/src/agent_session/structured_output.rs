//! Structured output: the agent's final answer must be JSON valid against the YAML's `output.schema`. APIs
//! with native structured output are asked for it (see [`crate::ai::structured_output`]); every answer is
//! also checked here, and an answer that fails is sent back once with the validation errors.

use std::sync::Arc;

use serde_json::Value;

use super::AgentSession;
use super::link::{SessionLink, lock};
use crate::agent::AgentError;
use crate::extension::ExtensionMessage;
use crate::protocol::{AgentMessage, AssistantContent, AssistantMessage, MessageContent, StopReason};

/// The `customType` of the message that asks the model to correct its answer.
pub const OUTPUT_CORRECTION_TYPE: &str = "output_correction";

/// Errors listed in a correction (the rest are counted).
const LISTED_ERRORS: usize = 8;

/// A compiled output schema.
#[derive(Clone)]
pub struct OutputSchema {
    schema: Arc<Value>,
    validator: Arc<jsonschema::Validator>,
}

impl std::fmt::Debug for OutputSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputSchema").field("schema", &self.schema).finish_non_exhaustive()
    }
}

impl OutputSchema {
    /// Compiles `schema`; the error says why it is not a usable JSON Schema.
    pub fn new(schema: Value) -> Result<Self, String> {
        let validator = jsonschema::validator_for(&schema).map_err(|error| error.to_string())?;
        Ok(Self { schema: Arc::new(schema), validator: Arc::new(validator) })
    }

    /// The schema, for the request's native structured output.
    pub fn schema(&self) -> Arc<Value> {
        self.schema.clone()
    }

    /// The answer's JSON when `text` (optionally inside one Markdown code fence) is JSON valid against the
    /// schema; otherwise what is wrong, one line each.
    pub fn check(&self, text: &str) -> Result<Value, Vec<String>> {
        let value: Value = serde_json::from_str(strip_fence(text))
            .map_err(|error| vec![format!("the answer is not JSON ({error})")])?;
        let errors: Vec<String> = self
            .validator
            .iter_errors(&value)
            .map(|error| {
                let path = error.instance_path().to_string();
                let at = if path.is_empty() { "the answer".to_owned() } else { format!("at {path}") };
                format!("{at}: {error}")
            })
            .collect();
        if errors.is_empty() { Ok(value) } else { Err(errors) }
    }

    /// The answer's JSON when `message` is a finished answer that passes [`OutputSchema::check`].
    pub fn check_answer(&self, message: &AssistantMessage) -> Result<Value, Vec<String>> {
        self.check(&answer_text(message))
    }

    /// The system prompt's paragraph about the answer's form, for `schema`.
    pub fn prompt_section(schema: &Value) -> String {
        format!(
            "Your final answer (the message that ends your turn) must be a single JSON value and nothing else: no \
             prose, no code fence. It must be valid against this JSON Schema:\n{schema}"
        )
    }
}

/// The text parts of an answer, joined.
pub fn answer_text(message: &AssistantMessage) -> String {
    let parts: Vec<&str> = message
        .content
        .iter()
        .filter_map(|content| match content {
            AssistantContent::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect();
    parts.join("\n")
}

/// The inside of a single ```json (or bare ```) fence around the whole text; else the trimmed text.
fn strip_fence(text: &str) -> &str {
    let trimmed = text.trim();
    let Some(rest) = trimmed.strip_prefix("```") else { return trimmed };
    let Some(body) = rest.strip_suffix("```") else { return trimmed };
    let body = body.strip_prefix("json").unwrap_or(body);
    body.trim()
}

impl AgentSession {
    /// The answers must match `schema` from now on (`None`: any answer).
    pub fn set_output_schema(&self, schema: Option<OutputSchema>) {
        *lock(&self.output_schema) = schema;
    }

    /// The schema answers must match, if any.
    pub fn output_schema(&self) -> Option<OutputSchema> {
        lock(&self.output_schema).clone()
    }

    /// After a run: a finished answer that does not match the output schema is sent back once with what is
    /// wrong. Errors and aborts are left as they are.
    pub(super) async fn enforce_output_schema(&self) -> Result<(), AgentError> {
        let Some(correction) = self.output_correction() else { return Ok(()) };
        self.run_with_retry(self.agent.prompt(vec![correction])).await
    }

    /// The message that sends the run's last answer back, when it is a finished answer that does not match
    /// the output schema (none without a schema, after an error or an abort, or for a valid answer).
    pub fn output_correction(&self) -> Option<AgentMessage> {
        let schema = self.output_schema()?;
        let messages = self.agent.messages();
        let Some(AgentMessage::Assistant(answer)) = messages.last() else { return None };
        if answer.stop_reason != StopReason::Stop {
            return None;
        }
        let problems = schema.check_answer(answer).err()?;
        let mut text = String::from("Your final answer does not match the required output schema:\n");
        for problem in problems.iter().take(LISTED_ERRORS) {
            text.push_str(&format!("- {problem}\n"));
        }
        if problems.len() > LISTED_ERRORS {
            text.push_str(&format!("- and {} more\n", problems.len() - LISTED_ERRORS));
        }
        text.push_str("Answer again with only the corrected JSON.");
        Some(SessionLink::custom_message(ExtensionMessage {
            custom_type: OUTPUT_CORRECTION_TYPE.to_owned(),
            content: MessageContent::Text(text),
            display: true,
            details: None,
        }))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn answers_are_checked_against_the_schema_fences_allowed() {
        let schema = OutputSchema::new(json!({
            "type": "object",
            "properties": {"verdict": {"enum": ["pass", "fail"]}, "count": {"type": "integer"}},
            "required": ["verdict"]
        }))
        .expect("a schema");
        assert_eq!(schema.check(r#"{"verdict": "pass"}"#), Ok(json!({"verdict": "pass"})));
        assert_eq!(schema.check("```json\n{\"verdict\": \"fail\"}\n```"), Ok(json!({"verdict": "fail"})));
        let errors = schema.check(r#"{"verdict": "maybe", "count": "2"}"#).expect_err("invalid");
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors.iter().any(|error| error.starts_with("at /verdict: ")), "{errors:?}");
        assert!(errors.iter().any(|error| error.starts_with("at /count: ")), "{errors:?}");
        let errors = schema.check("Sure! Here it is.").expect_err("not JSON");
        assert!(errors[0].starts_with("the answer is not JSON"), "{errors:?}");
        assert!(schema.check("{}").expect_err("missing").iter().any(|e| e.starts_with("the answer: ")));
        assert!(OutputSchema::new(json!({"type": 12})).is_err());
    }
}
