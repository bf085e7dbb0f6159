//! Builders for compaction tests: messages of a given size, session entries chained by id, and a provider
//! that records the options of each call.

use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::ai::stream::AssistantMessageStream;
use crate::ai::{ApiProvider, LlmContext, Model, ProviderRegistry, ScriptedProvider, StreamOptions, ThinkingLevel};
use crate::protocol::{
    AgentMessage, AssistantContent, AssistantMessage, Message, ToolCall, ToolResultMessage, UserContent, UserMessage,
};
use crate::session::{EntryKind, SessionEntry};

/// `n` characters of text.
pub fn chars(n: usize) -> String {
    "x".repeat(n)
}

pub fn user(text: impl Into<crate::protocol::SharedText>) -> AgentMessage {
    AgentMessage::User(UserMessage::text(text))
}

pub fn assistant(text: impl Into<crate::protocol::SharedText>) -> AgentMessage {
    AgentMessage::Assistant(AssistantMessage { content: vec![AssistantContent::text(text)], ..Default::default() })
}

pub fn tool_call(name: &str, arguments: Value) -> AgentMessage {
    let call = ToolCall { id: format!("call_{name}"), name: name.to_owned(), arguments, thought_signature: None };
    AgentMessage::Assistant(AssistantMessage { content: vec![AssistantContent::ToolCall(call)], ..Default::default() })
}

pub fn tool_result(text: impl Into<crate::protocol::SharedText>) -> AgentMessage {
    AgentMessage::ToolResult(ToolResultMessage {
        tool_call_id: "call".to_owned(),
        tool_name: "read".to_owned(),
        content: vec![UserContent::text(text)],
        details: None,
        is_error: false,
        timestamp: 0,
        duration_ms: None,
    })
}

pub fn llm(messages: &[AgentMessage]) -> Vec<Message> {
    messages.iter().filter_map(AgentMessage::as_llm_message).collect()
}

pub fn message(message: AgentMessage) -> EntryKind {
    EntryKind::Message { message }
}

pub fn model_change() -> EntryKind {
    EntryKind::ModelChange { provider: "mock".to_owned(), model_id: "other".to_owned() }
}

/// Entries `e0, e1, …`, each the child of the one before.
pub fn chain(kinds: Vec<EntryKind>) -> Vec<SessionEntry> {
    kinds
        .into_iter()
        .enumerate()
        .map(|(i, kind)| SessionEntry {
            id: format!("e{i}"),
            parent_id: i.checked_sub(1).map(|p| format!("e{p}")),
            timestamp: "2026-03-15T22:40:18.123Z".to_owned(),
            kind,
        })
        .collect()
}

/// Case 16's path: `[U400, A400, U400, A(read a.txt), TR400, A400]`.
pub fn case_16_entries() -> Vec<SessionEntry> {
    chain(vec![
        message(user(chars(400))),
        message(assistant(chars(400))),
        message(user(chars(400))),
        message(tool_call("read", serde_json::json!({"path": "a.txt"}))),
        message(tool_result(chars(400))),
        message(assistant(chars(400))),
    ])
}

/// The options of one call, as a [`RecordingProvider`] saw them.
#[derive(Debug, Clone, PartialEq)]
pub struct SeenOptions {
    pub max_tokens: Option<u64>,
    pub reasoning: Option<ThinkingLevel>,
    pub api_key: Option<String>,
}

/// A [`ScriptedProvider`] that also records each call's options.
#[derive(Clone)]
pub struct RecordingProvider {
    pub scripted: ScriptedProvider,
    pub seen: Arc<Mutex<Vec<SeenOptions>>>,
}

impl ApiProvider for RecordingProvider {
    fn api(&self) -> &str {
        "scripted"
    }

    fn stream(&self, model: &Model, context: &LlmContext, options: StreamOptions) -> AssistantMessageStream {
        let seen = SeenOptions {
            max_tokens: options.max_tokens,
            reasoning: options.reasoning,
            api_key: options.api_key.clone(),
        };
        self.seen.lock().unwrap().push(seen);
        self.scripted.stream(model, context, options)
    }
}

/// A registry serving `scripted` through a [`RecordingProvider`], and that provider.
pub fn scripted_registry(scripted: ScriptedProvider) -> (ProviderRegistry, RecordingProvider) {
    let provider = RecordingProvider { scripted, seen: Arc::new(Mutex::new(Vec::new())) };
    let mut registry = ProviderRegistry::new();
    registry.register(Arc::new(provider.clone()));
    (registry, provider)
}

pub fn scripted_model(reasoning: bool) -> Model {
    let mut model = Model::new("mock", "mock-model", "scripted", "http://localhost");
    model.reasoning = reasoning;
    model
}

/// The text of the single user message of a recorded request.
pub fn request_text(context: &LlmContext) -> String {
    match context.messages.as_slice() {
        [Message::User(user)] => user.content.text(),
        other => panic!("expected one user message, got {other:?}"),
    }
}

/// pi-facts case 17: `[U400, A400, model_change, U400, A400]`.
pub fn case_17_entries() -> Vec<SessionEntry> {
    chain(vec![
        message(user(chars(400))),
        message(assistant(chars(400))),
        model_change(),
        message(user(chars(400))),
        message(assistant(chars(400))),
    ])
}
