//! `--record FILE`: every model response of a run, saved in the scripted mock server's format
//! (`{"responses": [...]}`) so a real conversation can be replayed with `pi-gen mock-llm` or `pi-gen test`.
//!
//! Each provider is wrapped so that the final event of each stream (as the agent reads it) becomes one
//! scripted response: thinking, text, tool calls with their ids and arguments, and usage. A failed response
//! becomes a mid-stream error with the same message (`streamError`), so a replay fails the same way and the
//! agent's retry decision, made on the message, is the same. A response the reader abandoned (an abort) is
//! not recorded. The file is rewritten whole after each response (through a temporary file and a rename),
//! so it is a complete script at every moment, also after a crash.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};

use super::model::Model;
use super::provider::{ApiProvider, LlmContext, ProviderRegistry, StreamOptions};
use super::stream::AssistantMessageStream;
use crate::protocol::{AssistantContent, AssistantMessage, AssistantMessageEvent, StopReason};

/// The responses recorded so far and the file they go to.
#[derive(Debug)]
pub struct ResponseRecorder {
    path: PathBuf,
    responses: Mutex<Vec<Value>>,
}

/// The recording could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the recording {}: {source}", path.display())]
pub struct RecordError {
    pub path: PathBuf,
    pub source: std::io::Error,
}

impl ResponseRecorder {
    /// A recorder writing to `path`; the file is created (as an empty script) at once, so a path that
    /// cannot be written fails before the run starts.
    pub fn create(path: &Path) -> Result<Arc<Self>, RecordError> {
        let recorder = Arc::new(Self { path: path.to_path_buf(), responses: Mutex::new(Vec::new()) });
        recorder.write(&[])?;
        Ok(recorder)
    }

    /// The process's recorder: created for `path` on the first call, the same one afterwards (a sub-agent
    /// run in the same process records into its parent's file).
    pub fn shared(path: &Path) -> Result<Arc<Self>, RecordError> {
        static SHARED: Mutex<Option<Arc<ResponseRecorder>>> = Mutex::new(None);
        let mut shared = match SHARED.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(recorder) = shared.as_ref() {
            return Ok(recorder.clone());
        }
        let recorder = Self::create(path)?;
        *shared = Some(recorder.clone());
        Ok(recorder)
    }

    /// Adds the response a stream ended with and rewrites the file. A write error is reported on
    /// stderr once per response; the run goes on.
    pub fn record(&self, event: &AssistantMessageEvent) {
        let Some(response) = scripted_response(event) else { return };
        let mut responses = match self.responses.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        responses.push(response);
        if let Err(error) = self.write(&responses) {
            eprintln!("Warning: {error}");
        }
    }

    fn write(&self, responses: &[Value]) -> Result<(), RecordError> {
        let fail = |source| RecordError { path: self.path.clone(), source };
        let mut text = String::from("{\"responses\": [\n");
        for (index, response) in responses.iter().enumerate() {
            text.push_str("  ");
            text.push_str(&response.to_string());
            text.push_str(if index + 1 < responses.len() { ",\n" } else { "\n" });
        }
        text.push_str("]}\n");
        let name = self.path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
        let staging = self.path.with_file_name(format!(".{name}.{}.partial", std::process::id()));
        std::fs::write(&staging, text).map_err(fail)?;
        std::fs::rename(&staging, &self.path).map_err(fail)
    }

    /// `registry` with every provider wrapped so that its responses are recorded here.
    pub fn wrap(self: &Arc<Self>, registry: &ProviderRegistry) -> ProviderRegistry {
        let mut wrapped = ProviderRegistry::new();
        for provider in registry.providers() {
            wrapped.register(Arc::new(RecordingProvider { inner: provider.clone(), recorder: self.clone() }));
        }
        wrapped
    }
}

/// A provider whose streams report their last event to a [`ResponseRecorder`].
struct RecordingProvider {
    inner: Arc<dyn ApiProvider>,
    recorder: Arc<ResponseRecorder>,
}

impl ApiProvider for RecordingProvider {
    fn api(&self) -> &str {
        self.inner.api()
    }

    fn stream(&self, model: &Model, context: &LlmContext, options: StreamOptions) -> AssistantMessageStream {
        let recorder = self.recorder.clone();
        self.inner.stream(model, context, options).observed(Box::new(move |event| recorder.record(event)))
    }
}

/// The mock script's response for a stream's terminal event; `None` for an aborted one.
pub fn scripted_response(event: &AssistantMessageEvent) -> Option<Value> {
    let message = match event {
        AssistantMessageEvent::Done { message, .. } => message,
        AssistantMessageEvent::Error { error, .. } if error.stop_reason == StopReason::Aborted => return None,
        AssistantMessageEvent::Error { error, .. } => error,
        _ => return None,
    };
    let mut response = Map::new();
    let joined = |pick: fn(&AssistantContent) -> Option<&str>| {
        let parts: Vec<&str> = message.content.iter().filter_map(pick).collect();
        (!parts.is_empty()).then(|| parts.concat())
    };
    let thinking = joined(|content| match content {
        AssistantContent::Thinking(thinking) => Some(thinking.thinking.as_str()),
        _ => None,
    });
    if let Some(thinking) = thinking {
        response.insert("thinking".into(), Value::String(thinking));
    }
    if let Some(text) = joined(|content| match content {
        AssistantContent::Text(text) => Some(text.text.as_str()),
        _ => None,
    }) {
        response.insert("text".into(), Value::String(text));
    }
    let calls: Vec<Value> = message
        .content
        .iter()
        .filter_map(|content| match content {
            AssistantContent::ToolCall(call) => {
                Some(json!({"id": call.id, "name": call.name, "arguments": call.arguments}))
            }
            _ => None,
        })
        .collect();
    if !calls.is_empty() {
        response.insert("toolCalls".into(), Value::Array(calls));
    }
    response.insert("usage".into(), usage(message));
    match message.stop_reason {
        StopReason::Length => {
            response.insert("finishReason".into(), Value::String("length".into()));
        }
        StopReason::Error => {
            let text = message.error_message.clone().unwrap_or_else(|| "the request failed".to_owned());
            response.insert("streamError".into(), Value::String(text));
        }
        _ => {}
    }
    Some(Value::Object(response))
}

fn usage(message: &AssistantMessage) -> Value {
    let usage = &message.usage;
    json!({"input": usage.input, "output": usage.output, "cacheRead": usage.cache_read})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{DoneReason, ErrorReason, TextContent, ThinkingContent, ToolCall, Usage};

    fn message(content: Vec<AssistantContent>, stop_reason: StopReason) -> AssistantMessage {
        AssistantMessage {
            content,
            usage: Usage { input: 120, output: 9, cache_read: 30, ..Usage::default() },
            stop_reason,
            ..AssistantMessage::default()
        }
    }

    #[test]
    fn a_finished_answer_becomes_a_scripted_response() {
        let content = vec![
            AssistantContent::Thinking(ThinkingContent {
                thinking: "look first".into(),
                thinking_signature: None,
                redacted: None,
            }),
            AssistantContent::Text(TextContent::new("Reading ")),
            AssistantContent::Text(TextContent::new("it.")),
            AssistantContent::ToolCall(ToolCall {
                id: "toolu_1".into(),
                name: "read".into(),
                arguments: json!({"path": "a.txt"}),
                thought_signature: None,
            }),
        ];
        let event =
            AssistantMessageEvent::Done { reason: DoneReason::ToolUse, message: message(content, StopReason::ToolUse) };
        assert_eq!(
            scripted_response(&event),
            Some(json!({
                "thinking": "look first",
                "text": "Reading it.",
                "toolCalls": [{"id": "toolu_1", "name": "read", "arguments": {"path": "a.txt"}}],
                "usage": {"input": 120, "output": 9, "cacheRead": 30}
            }))
        );
    }

    #[test]
    fn failures_replay_as_stream_errors_and_aborts_are_left_out() {
        let mut failed = message(vec![], StopReason::Error);
        failed.error_message = Some("529 overloaded".into());
        let event = AssistantMessageEvent::Error { reason: ErrorReason::Error, error: failed };
        let response = scripted_response(&event).expect("recorded");
        assert_eq!(response["streamError"], "529 overloaded");
        let aborted =
            AssistantMessageEvent::Error { reason: ErrorReason::Aborted, error: message(vec![], StopReason::Aborted) };
        assert_eq!(scripted_response(&aborted), None);
    }

    #[tokio::test]
    async fn the_file_is_a_script_after_every_response() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("session.json");
        let recorder = ResponseRecorder::create(&path).expect("create");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "{\"responses\": [\n]}\n");
        let answer = |text: &str| AssistantMessageEvent::Done {
            reason: DoneReason::Stop,
            message: message(vec![AssistantContent::Text(TextContent::new(text))], StopReason::Stop),
        };
        let (sender, stream) = AssistantMessageStream::channel();
        let recording = recorder.clone();
        let mut stream = stream.observed(Box::new(move |event| recording.record(event)));
        sender.push(answer("one"));
        while stream.next().await.is_some() {}
        recorder.record(&answer("two"));
        let saved: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
        let texts: Vec<&str> =
            saved["responses"].as_array().expect("array").iter().map(|r| r["text"].as_str().expect("text")).collect();
        assert_eq!(texts, ["one", "two"]);
        assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 1, "no staging file is left");
    }
}
