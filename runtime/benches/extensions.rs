//! What extensions add to a turn: the runner's per-turn overhead with no extensions, ten that implement
//! nothing (the default subscribes to every event), and ten that each subscribe to one event. A turn emits
//! what the session emits for one LLM call with one tool call (turn_start, context over 40 messages,
//! before_provider_request over a ~20 KB body, message_start, 20 message_update, message_end, tool_call,
//! tool_execution_start/end, tool_result, turn_end), building each event only when some extension handles
//! it, as the session does.
//!
//! Run: `cargo bench -p pi-runtime --bench extensions`

use divan::Bencher;
use pi_runtime::extension::{
    EventKind, EventSet, Extension, ExtensionContext, ExtensionRunner, Extensions, MessageEvent, MessageUpdateEvent,
    ToolCallEvent, ToolExecutionEndEvent, ToolExecutionStartEvent, ToolResultEvent, TurnEndEvent, TurnStartEvent,
};
use pi_runtime::protocol::{
    AgentMessage, AgentToolResult, AssistantContent, AssistantMessage, AssistantMessageEvent, StopReason, TextContent,
    ToolCall, ToolResultMessage, Usage, UserContent, UserMessage,
};
use serde_json::{Value, json};

fn main() {
    divan::main();
}

/// Implements no handler and keeps the default subscriptions (every event).
struct Idle(String);

impl Extension for Idle {
    fn name(&self) -> &str {
        &self.0
    }
}

/// Implements no handler but subscribes to one event only.
struct Single(String, EventKind);

impl Extension for Single {
    fn name(&self) -> &str {
        &self.0
    }

    fn subscriptions(&self) -> EventSet {
        EventSet::of(&[self.1])
    }
}

/// The events of a turn, first to last (`turn_end` is the one the single-event extensions leave out).
const TURN_EVENTS: [EventKind; 11] = [
    EventKind::TurnStart,
    EventKind::Context,
    EventKind::BeforeProviderRequest,
    EventKind::MessageStart,
    EventKind::MessageUpdate,
    EventKind::MessageEnd,
    EventKind::ToolCall,
    EventKind::ToolExecutionStart,
    EventKind::ToolExecutionEnd,
    EventKind::ToolResult,
    EventKind::TurnEnd,
];

fn runner(extensions: Extensions) -> ExtensionRunner {
    ExtensionRunner::new(extensions, ExtensionContext::detached("/tmp"))
}

fn assistant(content: Vec<AssistantContent>, stop_reason: StopReason) -> AssistantMessage {
    AssistantMessage {
        content,
        api: "anthropic-messages".into(),
        provider: "anthropic".into(),
        model: "claude-sonnet-4-5".into(),
        usage: Usage { input: 12_000, output: 350, total_tokens: 12_350, ..Usage::default() },
        stop_reason,
        timestamp: 1_760_000_000_000,
        ..AssistantMessage::default()
    }
}

fn read_call(index: usize) -> ToolCall {
    ToolCall {
        id: format!("toolu_{index:04}"),
        name: "read".into(),
        arguments: json!({"path": format!("src/module_{index}.rs"), "limit": 200}),
        thought_signature: None,
    }
}

/// The agent's side of a turn: the transcript so far and what this turn streams and runs.
struct Turn {
    messages: Vec<AgentMessage>,
    payload: Value,
    updates: Vec<(AgentMessage, AssistantMessageEvent)>,
    answer: AgentMessage,
    call: ToolCall,
    result: AgentToolResult,
    tool_result: ToolResultMessage,
}

impl Turn {
    fn new() -> Self {
        let line = "fn handle(request: &Request) -> Result<Response, Error> { validate(request)?; route(request) }\n";
        let mut messages = Vec::with_capacity(40);
        for index in 0..13 {
            messages.push(AgentMessage::User(UserMessage::text(format!(
                "Step {index}: look at module {index} and tidy it."
            ))));
            let text = AssistantContent::text(format!("I'll read module {index} first."));
            let call = AssistantContent::ToolCall(read_call(index));
            messages.push(AgentMessage::Assistant(assistant(vec![text, call], StopReason::ToolUse)));
            messages.push(AgentMessage::ToolResult(ToolResultMessage {
                tool_call_id: format!("toolu_{index:04}"),
                tool_name: "read".into(),
                content: vec![UserContent::text(line.repeat(4))],
                details: None,
                is_error: false,
                timestamp: 1_760_000_000_000,
                duration_ms: None,
            }));
        }
        messages.push(AgentMessage::User(UserMessage::text("Now summarize what you changed.")));
        assert_eq!(messages.len(), 40);
        let payload = json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 8192,
            "stream": true,
            "system": [{"type": "text", "text": "You are an expert coding assistant. ".repeat(20)}],
            "messages": messages,
            "tools": [{"name": "read", "description": "Read a file", "input_schema": {"type": "object"}}],
        });
        let size = payload.to_string().len();
        assert!((15_000..30_000).contains(&size), "the request body is {size} bytes, not about 20 KB");

        let words: Vec<String> = (0..20).map(|index| format!("word{index} of the streamed summary ")).collect();
        let mut updates = Vec::with_capacity(words.len());
        let mut text = String::new();
        for delta in &words {
            text.push_str(delta);
            let partial = assistant(vec![AssistantContent::Text(TextContent::new(text.clone()))], StopReason::Stop);
            let event = AssistantMessageEvent::TextDelta {
                content_index: 0,
                delta: delta.as_str().into(),
                partial: partial.clone(),
            };
            updates.push((AgentMessage::Assistant(partial), event));
        }
        let call = read_call(99);
        let answer = AgentMessage::Assistant(assistant(
            vec![AssistantContent::text(text), AssistantContent::ToolCall(call.clone())],
            StopReason::ToolUse,
        ));
        let result = AgentToolResult::text(line.repeat(40));
        let tool_result = ToolResultMessage {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            content: result.content.clone(),
            details: None,
            is_error: false,
            timestamp: 1_760_000_000_000,
            duration_ms: None,
        };
        Self { messages, payload, updates, answer, call, result, tool_result }
    }

    /// Emits one turn the way the session does: an event is built only when some extension handles it. The
    /// loop hands over its own copy of the messages and the request body (cloned outside the measurement);
    /// they come back as the LLM call would use them.
    async fn run(
        &self,
        runner: &ExtensionRunner,
        messages: Vec<AgentMessage>,
        payload: Value,
    ) -> (Vec<AgentMessage>, Value) {
        if runner.has_handlers(EventKind::TurnStart) {
            runner.emit_turn_start(&TurnStartEvent { turn_index: 0, timestamp: 1_760_000_000_000 }).await;
        }
        let messages =
            if runner.has_handlers(EventKind::Context) { runner.emit_context(messages).await } else { messages };
        let payload = if runner.has_handlers(EventKind::BeforeProviderRequest) {
            runner.emit_before_provider_request(payload).await
        } else {
            payload
        };
        if runner.has_handlers(EventKind::MessageStart) {
            runner.emit_message_start(&MessageEvent { message: self.updates[0].0.clone() }).await;
        }
        for (message, event) in &self.updates {
            if runner.has_handlers(EventKind::MessageUpdate) {
                let event = MessageUpdateEvent { message: message.clone(), assistant_message_event: event.clone() };
                runner.emit_message_update(&event).await;
            }
        }
        if runner.has_handlers(EventKind::MessageEnd) {
            divan::black_box(runner.emit_message_end(&self.answer).await);
        }
        if runner.has_handlers(EventKind::ToolCall) {
            let event = ToolCallEvent {
                tool_name: self.call.name.clone(),
                tool_call_id: self.call.id.clone(),
                input: self.call.arguments.clone(),
            };
            divan::black_box(runner.emit_tool_call(&event).await);
        }
        if runner.has_handlers(EventKind::ToolExecutionStart) {
            let event = ToolExecutionStartEvent {
                tool_call_id: self.call.id.clone(),
                tool_name: self.call.name.clone(),
                args: self.call.arguments.clone(),
            };
            runner.emit_tool_execution_start(&event).await;
        }
        if runner.has_handlers(EventKind::ToolExecutionEnd) {
            let event = ToolExecutionEndEvent {
                tool_call_id: self.call.id.clone(),
                tool_name: self.call.name.clone(),
                result: self.result.clone(),
                is_error: false,
            };
            runner.emit_tool_execution_end(&event).await;
        }
        if runner.has_handlers(EventKind::ToolResult) {
            let event = ToolResultEvent {
                tool_name: self.call.name.clone(),
                tool_call_id: self.call.id.clone(),
                input: self.call.arguments.clone(),
                content: self.result.content.clone(),
                details: None,
                is_error: false,
            };
            divan::black_box(runner.emit_tool_result(event).await);
        }
        if runner.has_handlers(EventKind::TurnEnd) {
            let event = TurnEndEvent {
                turn_index: 0,
                message: self.answer.clone(),
                tool_results: vec![self.tool_result.clone()],
            };
            runner.emit_turn_end(&event).await;
        }
        (messages, payload)
    }
}

fn bench_turn(bencher: Bencher, extensions: Extensions) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let runner = runner(extensions);
    let turn = Turn::new();
    bencher
        .with_inputs(|| (turn.messages.clone(), turn.payload.clone()))
        .bench_local_values(|(messages, payload)| runtime.block_on(turn.run(&runner, messages, payload)));
}

#[divan::bench]
fn turn_without_extensions(bencher: Bencher) {
    bench_turn(bencher, Extensions::new());
}

/// Building every event once, plus one call per event: the part of the cost that does not grow with the
/// number of extensions.
#[divan::bench]
fn turn_with_one_noop_extension(bencher: Bencher) {
    bench_turn(bencher, Extensions::new().with(Idle("idle".into())));
}

#[divan::bench]
fn turn_with_ten_noop_extensions(bencher: Bencher) {
    let mut extensions = Extensions::new();
    for index in 0..10 {
        extensions.push(Idle(format!("idle-{index}")));
    }
    bench_turn(bencher, extensions);
}

#[divan::bench]
fn turn_with_ten_single_event_extensions(bencher: Bencher) {
    let mut extensions = Extensions::new();
    for (index, kind) in TURN_EVENTS.iter().take(10).enumerate() {
        extensions.push(Single(format!("single-{index}"), *kind));
    }
    bench_turn(bencher, extensions);
}
