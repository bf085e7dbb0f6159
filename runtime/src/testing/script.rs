//! The mock server's script: the responses it serves in order, read from JSON with strict keys and
//! errors that point at `line:column`.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

/// The responses a [`super::MockLlmServer`] serves, one per completion request, in order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MockScript {
    pub responses: Vec<MockResponse>,
}

/// One scripted answer.
// A script holds a handful of answers, read once: boxing the completion would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum MockResponse {
    /// A streamed chat completion.
    Completion(MockCompletion),
    /// An HTTP error status with a body (no stream).
    HttpError(MockHttpError),
    /// A 200 event stream whose body is exactly this text (for malformed or hand-made SSE).
    RawSse(String),
}

/// A streamed completion: optional thinking, text and tool calls, then a finish chunk and a usage chunk.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MockCompletion {
    /// Streamed as reasoning before the text (each API in its own form).
    pub thinking: Option<String>,
    /// The signature APIs that sign reasoning attach to it (Anthropic `signature`, Responses
    /// `encrypted_content`, Google `thoughtSignature`); a fixed mock value when absent.
    pub thinking_signature: Option<String>,
    /// Streamed as `content` deltas, split in a few chunks.
    pub text: Option<String>,
    pub tool_calls: Vec<MockToolCall>,
    /// Reported token usage; estimated from the request and output sizes when absent.
    pub usage: Option<MockUsage>,
    /// Defaults to `tool_calls` when there are tool calls, else `stop`.
    pub finish_reason: Option<String>,
    /// Pause between SSE chunks, in milliseconds.
    pub delay_ms: u64,
    /// Drop the connection (no final chunk, no `[DONE]`) after this many SSE chunks.
    pub disconnect_after: Option<usize>,
    /// After the content chunks, send the API's mid-stream error event and end the stream.
    pub stream_error: Option<String>,
    /// Send this many SSE chunks, then keep the connection open without sending anything more.
    pub stall_after: Option<usize>,
    /// Stream text and thinking in pieces of this many characters (default: about three pieces),
    /// e.g. 4 for token-sized deltas.
    pub delta_chars: Option<usize>,
    /// Cut the body at pseudo-random byte positions (seeded) instead of at event boundaries, so
    /// clients must reassemble events split anywhere, even inside a UTF-8 character.
    pub split_seed: Option<u64>,
    /// Answer only once the server has received this many requests in all (this one included): shows
    /// that requests run concurrently. After 30 s without them the answer is a 400 error saying so.
    pub wait_for_requests: Option<usize>,
}

/// A tool call the mock model makes.
#[derive(Debug, Clone, PartialEq)]
pub struct MockToolCall {
    /// `call_<n>` (n counting calls across the whole script) when absent.
    pub id: Option<String>,
    pub name: String,
    /// Sent as compact JSON; a JSON string is sent verbatim (it may be invalid JSON on purpose).
    pub arguments: Value,
}

impl MockToolCall {
    /// The `function.arguments` string the server streams.
    pub fn arguments_text(&self) -> String {
        match &self.arguments {
            Value::String(raw) => raw.clone(),
            other => other.to_string(),
        }
    }
}

/// Token counts as pi reports them; the server turns them into OpenAI's `usage` object.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MockUsage {
    #[serde(default)]
    pub input: u64,
    #[serde(default)]
    pub output: u64,
    #[serde(default)]
    pub cache_read: u64,
}

/// An HTTP error answer.
#[derive(Debug, Clone, PartialEq)]
pub struct MockHttpError {
    pub status: u16,
    pub body: String,
    /// Extra response headers, e.g. `x-should-retry: false` or `retry-after-ms`.
    pub headers: Vec<(String, String)>,
}

/// A script that could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MockScriptError {
    #[error("cannot read mock script {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    /// Bad JSON or an unknown key; `location` is `[file:]line:column`.
    #[error("{location}: {message}")]
    Json { location: String, message: String },
    /// Well-formed JSON that does not describe a response (`index` counts from 0; `location` is `file: ` or empty).
    #[error("{location}response {index}: {message}")]
    Invalid { location: String, index: usize, message: String },
}

impl MockScript {
    /// Parses `{"responses":[…]}` or a bare array of responses.
    pub fn from_json_str(text: &str) -> Result<Self, MockScriptError> {
        Self::parse(text, None)
    }

    pub fn from_file(path: &Path) -> Result<Self, MockScriptError> {
        let text =
            std::fs::read_to_string(path).map_err(|source| MockScriptError::Io { path: path.to_owned(), source })?;
        Self::parse(&text, Some(path))
    }

    fn parse(text: &str, path: Option<&Path>) -> Result<Self, MockScriptError> {
        let prefix = path.map(|p| format!("{}:", p.display())).unwrap_or_default();
        let json_error = |error: serde_json::Error| {
            let message = error.to_string();
            let message = message.rfind(" at line ").map_or(message.as_str(), |at| &message[..at]).to_owned();
            let location = format!("{prefix}{}:{}", error.line(), error.column());
            let location = if path.is_some() { location } else { format!("line {location}") };
            MockScriptError::Json { location, message }
        };
        let raw: Vec<RawResponse> = if text.trim_start().starts_with('[') {
            serde_json::from_str(text).map_err(json_error)?
        } else {
            serde_json::from_str::<RawScript>(text).map_err(json_error)?.responses
        };
        let mut next_call = 0;
        let responses = raw
            .into_iter()
            .enumerate()
            .map(|(index, raw)| {
                raw.into_response(&mut next_call).map_err(|message| MockScriptError::Invalid {
                    location: path.map(|p| format!("{}: ", p.display())).unwrap_or_default(),
                    index,
                    message,
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { responses })
    }
}

impl fmt::Display for MockResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Completion(c) => write!(f, "completion ({} tool calls)", c.tool_calls.len()),
            Self::HttpError(e) => write!(f, "HTTP {}", e.status),
            Self::RawSse(_) => f.write_str("raw SSE"),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScript {
    responses: Vec<RawResponse>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawResponse {
    thinking: Option<String>,
    thinking_signature: Option<String>,
    text: Option<String>,
    tool_calls: Option<Vec<RawToolCall>>,
    usage: Option<MockUsage>,
    finish_reason: Option<String>,
    #[serde(default)]
    delay_ms: u64,
    disconnect_after: Option<usize>,
    stream_error: Option<String>,
    stall_after: Option<usize>,
    split_seed: Option<u64>,
    delta_chars: Option<usize>,
    wait_for_requests: Option<usize>,
    error: Option<RawError>,
    raw: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawToolCall {
    id: Option<String>,
    name: String,
    #[serde(default = "empty_object")]
    arguments: Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawError {
    status: u16,
    #[serde(default)]
    body: Option<Value>,
    #[serde(default)]
    headers: serde_json::Map<String, Value>,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

impl RawResponse {
    /// Names of the streaming keys that are set (they cannot go with `error` or `raw`).
    fn completion_keys(&self) -> Vec<&'static str> {
        let set = [
            ("thinking", self.thinking.is_some()),
            ("thinkingSignature", self.thinking_signature.is_some()),
            ("text", self.text.is_some()),
            ("toolCalls", self.tool_calls.is_some()),
            ("usage", self.usage.is_some()),
            ("finishReason", self.finish_reason.is_some()),
            ("disconnectAfter", self.disconnect_after.is_some()),
            ("streamError", self.stream_error.is_some()),
            ("stallAfter", self.stall_after.is_some()),
            ("splitSeed", self.split_seed.is_some()),
            ("deltaChars", self.delta_chars.is_some()),
            ("waitForRequests", self.wait_for_requests.is_some()),
        ];
        set.into_iter().filter(|(_, present)| *present).map(|(key, _)| key).collect()
    }

    fn into_response(self, next_call: &mut usize) -> Result<MockResponse, String> {
        let keys = self.completion_keys();
        if self.error.is_some() && self.raw.is_some() {
            return Err("`error` and `raw` cannot be combined".to_owned());
        }
        if let Some(error) = self.error {
            if let Some(key) = keys.first() {
                return Err(format!("`error` cannot be combined with `{key}`"));
            }
            if !(100..=599).contains(&error.status) {
                return Err(format!("`error.status` {} is not an HTTP status", error.status));
            }
            let body = match error.body {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(text)) => text,
                Some(json) => json.to_string(),
            };
            let headers = error
                .headers
                .into_iter()
                .map(|(name, value)| match value {
                    Value::String(text) => Ok((name, text)),
                    other => Err(format!("header `{name}` must be a string, got {other}")),
                })
                .collect::<Result<_, _>>()?;
            return Ok(MockResponse::HttpError(MockHttpError { status: error.status, body, headers }));
        }
        if let Some(raw) = self.raw {
            if let Some(key) = keys.first() {
                return Err(format!("`raw` cannot be combined with `{key}`"));
            }
            return Ok(MockResponse::RawSse(raw));
        }
        let tool_calls = self
            .tool_calls
            .unwrap_or_default()
            .into_iter()
            .map(|call| {
                *next_call += 1;
                let id = Some(call.id.unwrap_or_else(|| format!("call_{next_call}")));
                MockToolCall { id, name: call.name, arguments: call.arguments }
            })
            .collect();
        Ok(MockResponse::Completion(MockCompletion {
            thinking: self.thinking,
            thinking_signature: self.thinking_signature,
            stall_after: self.stall_after,
            split_seed: self.split_seed,
            delta_chars: self.delta_chars.filter(|n| *n > 0),
            text: self.text,
            tool_calls,
            usage: self.usage,
            finish_reason: self.finish_reason,
            delay_ms: self.delay_ms,
            disconnect_after: self.disconnect_after,
            stream_error: self.stream_error,
            wait_for_requests: self.wait_for_requests,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_the_documented_shapes() {
        let text = r#"{"responses":[
            {"text":"Hello"},
            {"thinking":"hm","text":"t","toolCalls":[{"name":"read","arguments":{"path":"a.txt"}},{"id":"x","name":"ls"}],
             "usage":{"input":10,"output":5,"cacheRead":1},"finishReason":"stop","delayMs":5},
            {"error":{"status":500,"body":"boom","headers":{"x-should-retry":"false"}}},
            {"error":{"status":400,"body":{"error":{"message":"bad"}}}},
            {"raw":"data: nope\n\n"}
        ]}"#;
        let script = MockScript::from_json_str(text).map_err(|e| e.to_string());
        let Ok(script) = script else { panic!("{script:?}") };
        assert_eq!(script.responses.len(), 5);
        assert_eq!(
            script.responses[0],
            MockResponse::Completion(MockCompletion { text: Some("Hello".into()), ..MockCompletion::default() })
        );
        let MockResponse::Completion(second) = &script.responses[1] else { panic!("not a completion") };
        let ids: Vec<_> = second.tool_calls.iter().map(|c| c.id.as_deref()).collect();
        assert_eq!(ids, [Some("call_1"), Some("x")]);
        assert_eq!(second.tool_calls[0].arguments_text(), r#"{"path":"a.txt"}"#);
        assert_eq!(second.tool_calls[1].arguments, json!({}));
        assert_eq!(second.usage, Some(MockUsage { input: 10, output: 5, cache_read: 1 }));
        assert_eq!(second.delay_ms, 5);
        let MockResponse::HttpError(error) = &script.responses[2] else { panic!("not an error") };
        assert_eq!((error.status, error.body.as_str()), (500, "boom"));
        assert_eq!(error.headers, [("x-should-retry".to_owned(), "false".to_owned())]);
        let MockResponse::HttpError(json_body) = &script.responses[3] else { panic!("not an error") };
        assert_eq!(json_body.body, r#"{"error":{"message":"bad"}}"#);
        assert_eq!(script.responses[4], MockResponse::RawSse("data: nope\n\n".into()));
    }

    #[test]
    fn bare_arrays_work_and_ids_count_across_responses() {
        let script = MockScript::from_json_str(r#"[{"toolCalls":[{"name":"a"}]},{"toolCalls":[{"name":"b"}]}]"#);
        let Ok(script) = script else { panic!("{script:?}") };
        let ids: Vec<_> = script
            .responses
            .iter()
            .filter_map(|r| match r {
                MockResponse::Completion(c) => c.tool_calls[0].id.clone(),
                _ => None,
            })
            .collect();
        assert_eq!(ids, ["call_1", "call_2"]);
    }

    #[test]
    fn unknown_keys_and_syntax_errors_point_at_line_and_column() {
        let error =
            MockScript::from_json_str("{\"responses\":[\n  {\"txt\":\"Hello\"}\n]}").err().map(|e| e.to_string());
        let error = error.unwrap_or_default();
        assert!(error.starts_with("line 2:"), "{error}");
        assert!(error.contains("unknown field `txt`"), "{error}");

        let error = MockScript::from_json_str("[{\"text\": }]").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(error.starts_with("line 1:11: expected value"), "{error}");

        let error = MockScript::from_json_str(r#"{"responses":[],"extra":1}"#).err().map(|e| e.to_string());
        assert!(error.is_some_and(|e| e.contains("unknown field `extra`")));
    }

    #[test]
    fn contradictory_responses_are_rejected() {
        let error = MockScript::from_json_str(r#"[{"text":"a"},{"error":{"status":500},"text":"x"}]"#).err();
        assert_eq!(error.map(|e| e.to_string()).as_deref(), Some("response 1: `error` cannot be combined with `text`"));
        let error = MockScript::from_json_str(r#"[{"error":{"status":42}}]"#).err().map(|e| e.to_string());
        assert_eq!(error.as_deref(), Some("response 0: `error.status` 42 is not an HTTP status"));
    }

    #[test]
    fn files_are_read_and_named_in_errors() {
        let dir = tempfile::tempdir().map_err(|e| e.to_string());
        let Ok(dir) = dir else { panic!("{dir:?}") };
        let path = dir.path().join("script.json");
        let missing = MockScript::from_file(&path).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(missing.starts_with("cannot read mock script"), "{missing}");
        std::fs::write(&path, "[{\"text\":\"hi\",\n\"bogus\":1}]").ok();
        let error = MockScript::from_file(&path).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(error.starts_with(&format!("{}:2:", path.display())), "{error}");
        std::fs::write(&path, "[{\"text\":\"hi\"}]").ok();
        assert!(MockScript::from_file(&path).is_ok_and(|s| s.responses.len() == 1));
    }
}
