//! Test helpers for the agent loop: configurable test tools, an event recorder with short labels,
//! and an agent wired to the in-process scripted provider.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use super::{Agent, AgentOptions};
use crate::ai::{Model, ScriptedProvider, ScriptedResponse};
use crate::definition::ToolExecutionMode;
use crate::protocol::{AgentEvent, AgentMessage, AgentToolResult, AssistantMessageEvent, UserMessage};
use crate::tools::{AgentTool, ToolContext, ToolError, ToolFuture};

/// What a [`TestTool`] does when it runs.
#[derive(Clone)]
pub enum Behaviour {
    /// Returns its arguments as JSON text, after an optional pause and one partial update.
    Echo { delay: Duration },
    /// Fails with this message.
    Fail(String),
    /// Waits until cancelled, then fails with "aborted".
    WaitForCancel,
}

/// A tool whose behaviour, side hook and call count tests control.
pub struct TestTool {
    pub name: String,
    pub schema: Value,
    pub behaviour: Behaviour,
    pub runs: Arc<AtomicUsize>,
    /// Called when execution starts (e.g. to steer the agent from inside a tool).
    pub on_start: Option<Arc<dyn Fn() + Send + Sync>>,
}

impl TestTool {
    pub fn echo(name: &str, delay_ms: u64) -> Self {
        Self {
            name: name.to_owned(),
            schema: json!({"type": "object", "properties": {"n": {"type": "integer"}, "text": {"type": "string"}}}),
            behaviour: Behaviour::Echo { delay: Duration::from_millis(delay_ms) },
            runs: Arc::new(AtomicUsize::new(0)),
            on_start: None,
        }
    }

    pub fn with(mut self, behaviour: Behaviour) -> Self {
        self.behaviour = behaviour;
        self
    }

    pub fn on_start(mut self, hook: impl Fn() + Send + Sync + 'static) -> Self {
        self.on_start = Some(Arc::new(hook));
        self
    }

    pub fn counter(&self) -> Arc<AtomicUsize> {
        self.runs.clone()
    }
}

impl AgentTool for TestTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn label(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        "A test tool"
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    fn execute(&self, args: Value, ctx: ToolContext) -> ToolFuture<'_> {
        Box::pin(async move {
            self.runs.fetch_add(1, Ordering::SeqCst);
            if let Some(hook) = &self.on_start {
                hook();
            }
            match &self.behaviour {
                Behaviour::Echo { delay } => {
                    ctx.update(AgentToolResult::text("working"));
                    tokio::time::sleep(*delay).await;
                    Ok(AgentToolResult {
                        content: AgentToolResult::text(args.to_string()).content,
                        details: Some(args),
                        ..AgentToolResult::default()
                    })
                }
                Behaviour::Fail(message) => Err(ToolError::new(message.clone())),
                Behaviour::WaitForCancel => {
                    ctx.cancel.cancelled().await;
                    Err(ToolError::new("aborted"))
                }
            }
        })
    }
}

/// A model served by the scripted provider.
pub fn test_model() -> Model {
    Model::new("test", "test-model", "scripted", "http://127.0.0.1:9")
}

/// An agent over `responses` with `tools`, in `mode`.
pub fn agent_with(
    responses: Vec<ScriptedResponse>,
    tools: Vec<TestTool>,
    mode: ToolExecutionMode,
) -> (Agent, ScriptedProvider) {
    let provider = ScriptedProvider::new(responses);
    let tools: Vec<Arc<dyn AgentTool>> = tools.into_iter().map(|t| Arc::new(t) as Arc<dyn AgentTool>).collect();
    let agent = Agent::new(AgentOptions {
        model: Some(test_model()),
        system_prompt: "You are a test.".into(),
        tools,
        tool_execution: mode,
        api_key: Some("test-key".into()),
        ..AgentOptions::new(Arc::new(provider.clone()))
    });
    (agent, provider)
}

/// A short label per event: `message_start user`, `tool_execution_end c1 error`, `turn_end 2`, ...
pub fn label(event: &AgentEvent) -> String {
    match event {
        AgentEvent::MessageStart { message } | AgentEvent::MessageEnd { message } => {
            format!("{} {}", event.kind(), message.role())
        }
        AgentEvent::MessageUpdate { assistant_message_event, .. } => {
            format!("message_update {}", update_kind(assistant_message_event))
        }
        AgentEvent::ToolExecutionStart { tool_call_id, .. } => format!("tool_execution_start {tool_call_id}"),
        AgentEvent::ToolExecutionUpdate { tool_call_id, .. } => format!("tool_execution_update {tool_call_id}"),
        AgentEvent::ToolExecutionEnd { tool_call_id, is_error, .. } => {
            format!("tool_execution_end {tool_call_id}{}", if *is_error { " error" } else { "" })
        }
        AgentEvent::TurnEnd { tool_results, .. } => format!("turn_end {}", tool_results.len()),
        other => other.kind().to_owned(),
    }
}

fn update_kind(event: &AssistantMessageEvent) -> &'static str {
    match event {
        AssistantMessageEvent::TextStart { .. } => "text_start",
        AssistantMessageEvent::TextDelta { .. } => "text_delta",
        AssistantMessageEvent::TextEnd { .. } => "text_end",
        AssistantMessageEvent::ThinkingStart { .. } => "thinking_start",
        AssistantMessageEvent::ThinkingDelta { .. } => "thinking_delta",
        AssistantMessageEvent::ThinkingEnd { .. } => "thinking_end",
        AssistantMessageEvent::ToolcallStart { .. } => "toolcall_start",
        AssistantMessageEvent::ToolcallDelta { .. } => "toolcall_delta",
        AssistantMessageEvent::ToolcallEnd { .. } => "toolcall_end",
        _ => "other",
    }
}

/// Records every event an agent emits.
#[derive(Clone, Default)]
pub struct Recorder {
    pub events: Arc<Mutex<Vec<AgentEvent>>>,
}

impl Recorder {
    pub fn attach(agent: &Agent) -> Self {
        let recorder = Self::default();
        let events = recorder.events.clone();
        agent.subscribe(move |event| events.lock().expect("lock").push(event.clone())).detach();
        recorder
    }

    pub fn events(&self) -> Vec<AgentEvent> {
        self.events.lock().expect("lock").clone()
    }

    /// Labels without streaming deltas and tool updates, which vary in number.
    pub fn labels(&self) -> Vec<String> {
        self.events()
            .iter()
            .map(label)
            .filter(|l| !l.contains("_delta") && !l.starts_with("tool_execution_update"))
            .collect()
    }
}

pub fn user(text: &str) -> AgentMessage {
    AgentMessage::User(UserMessage::text(text))
}

/// The text of every user-side message the provider saw on call `index`.
pub fn seen_texts(provider: &ScriptedProvider, index: usize) -> Vec<String> {
    let requests = provider.requests();
    let Some(request) = requests.get(index) else { return Vec::new() };
    request
        .context
        .messages
        .iter()
        .map(|message| match serde_json::to_value(message) {
            Ok(value) => match value["role"].as_str() {
                Some("user") => format!("user:{}", value["content"][0]["text"].as_str().unwrap_or("")),
                Some("toolResult") => format!("toolResult:{}", value["toolCallId"].as_str().unwrap_or("")),
                Some(role) => role.to_owned(),
                None => "?".to_owned(),
            },
            Err(_) => "?".to_owned(),
        })
        .collect()
}
