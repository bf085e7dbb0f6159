//! Chaining rules of the runner, one test per rule, with small extensions written as plain structs whose
//! handlers are `async fn` (which also shows the trait is usable that way). Session events, observers,
//! subscriptions and registration are in `tests_runner_session.rs`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::*;
use crate::protocol::{AgentMessage, AssistantContent, AssistantMessage, ImageContent, UserContent, UserMessage};

#[path = "tests_runner_session.rs"]
mod session;

/// What handlers saw, shared with the test.
type Seen<T> = Arc<Mutex<Vec<T>>>;

fn seen<T>() -> Seen<T> {
    Arc::new(Mutex::new(Vec::new()))
}

fn taken<T: Clone>(seen: &Seen<T>) -> Vec<T> {
    seen.lock().expect("lock").clone()
}

fn record<T>(seen: &Seen<T>, value: T) {
    seen.lock().expect("lock").push(value);
}

fn runner(extensions: Extensions) -> ExtensionRunner {
    ExtensionRunner::new(extensions, ExtensionContext::detached("/tmp"))
}

/// The runner and every error it reports.
fn runner_with_errors(extensions: Extensions) -> (ExtensionRunner, Seen<ExtensionErrorEvent>) {
    let runner = runner(extensions);
    let errors = seen();
    let sink = errors.clone();
    runner.on_error(Arc::new(move |error: &ExtensionErrorEvent| record(&sink, error.clone())));
    (runner, errors)
}

fn error(extension: &str, event: &str, message: &str) -> ExtensionErrorEvent {
    ExtensionErrorEvent { extension_path: extension.into(), event: event.into(), error: message.into() }
}

fn counter() -> Arc<AtomicUsize> {
    Arc::new(AtomicUsize::new(0))
}

fn count(calls: &AtomicUsize) -> usize {
    calls.load(Ordering::SeqCst)
}

fn image(data: &str) -> ImageContent {
    ImageContent { data: data.into(), mime_type: "image/png".into() }
}

/// Implements nothing: every handler is the trait's default.
struct Noop;

impl Extension for Noop {
    fn name(&self) -> &str {
        "noop"
    }
}

/// Fails on every event it handles.
struct Failing(&'static str);

impl Extension for Failing {
    fn name(&self) -> &str {
        self.0
    }

    async fn input(&self, _event: &InputEvent, _ctx: &ExtensionContext) -> HookResult<InputAction> {
        Err("boom".into())
    }

    async fn tool_call(&self, _event: &ToolCallEvent, _ctx: &ExtensionContext) -> HookResult<ToolCallDecision> {
        Err(ExtensionError::new("guard crashed"))
    }

    async fn turn_start(&self, _event: &TurnStartEvent, _ctx: &ExtensionContext) -> HookResult<()> {
        Err("observer crashed".into())
    }
}

/// `input`: appends `suffix` to the text and records the text it saw; `Handled` when `suffix` is `None`.
struct Append {
    suffix: Option<&'static str>,
    images: Option<Vec<ImageContent>>,
    seen: Seen<(String, Vec<ImageContent>)>,
}

impl Append {
    fn new(suffix: &'static str, seen: &Seen<(String, Vec<ImageContent>)>) -> Self {
        Self { suffix: Some(suffix), images: None, seen: seen.clone() }
    }
}

impl Extension for Append {
    fn name(&self) -> &str {
        "append"
    }

    async fn input(&self, event: &InputEvent, _ctx: &ExtensionContext) -> HookResult<InputAction> {
        record(&self.seen, (event.text.clone(), event.images.clone()));
        Ok(match self.suffix {
            Some(suffix) => {
                InputAction::Transform { text: format!("{}{suffix}", event.text), images: self.images.clone() }
            }
            None => InputAction::Handled,
        })
    }
}

async fn input(runner: &ExtensionRunner, text: &str, images: &[ImageContent]) -> InputAction {
    runner.emit_input(text, images, InputSource::Interactive).await
}

#[tokio::test]
async fn input_transforms_chain() {
    let log = seen();
    let runner = runner(Extensions::new().with(Append::new("+a", &log)).with(Append::new("+b", &log)));
    let action = input(&runner, "x", &[]).await;
    assert_eq!(action, InputAction::Transform { text: "x+a+b".into(), images: Some(Vec::new()) });
    let texts: Vec<String> = taken(&log).into_iter().map(|(text, _)| text).collect();
    assert_eq!(texts, ["x", "x+a"], "B sees A's text");
}

#[tokio::test]
async fn input_handled_stops_the_chain() {
    let log = seen();
    let handler = Append { suffix: None, images: None, seen: log.clone() };
    let runner = runner(Extensions::new().with(Append::new("+a", &log)).with(handler).with(Append::new("+c", &log)));
    assert_eq!(input(&runner, "x", &[]).await, InputAction::Handled);
    assert_eq!(taken(&log).len(), 2, "the handler after `Handled` is not called");
}

#[tokio::test]
async fn input_continues_when_unchanged() {
    assert_eq!(input(&runner(Extensions::new()), "x", &[]).await, InputAction::Continue);
    assert_eq!(input(&runner(Extensions::new().with(Noop)), "x", &[]).await, InputAction::Continue);
}

#[tokio::test]
async fn input_images_are_kept_unless_replaced() {
    let log = seen();
    let runner_a = runner(Extensions::new().with(Append::new("+a", &log)));
    let action = input(&runner_a, "x", &[image("one")]).await;
    assert_eq!(action, InputAction::Transform { text: "x+a".into(), images: Some(vec![image("one")]) });

    let replacing = Append { suffix: Some("+r"), images: Some(vec![image("two")]), seen: log.clone() };
    let runner_b = runner(Extensions::new().with(replacing).with(Append::new("+b", &log)));
    let action = input(&runner_b, "x", &[image("one")]).await;
    assert_eq!(action, InputAction::Transform { text: "x+r+b".into(), images: Some(vec![image("two")]) });
    assert_eq!(taken(&log).last().map(|(_, images)| images.clone()), Some(vec![image("two")]), "B sees the new images");
}

#[tokio::test]
async fn input_failure_is_reported_and_the_next_handler_runs() {
    let log = seen();
    let (runner, errors) = runner_with_errors(Extensions::new().with(Failing("bad")).with(Append::new("+a", &log)));
    assert_eq!(input(&runner, "x", &[]).await, InputAction::Transform { text: "x+a".into(), images: Some(Vec::new()) });
    assert_eq!(taken(&errors), [error("bad", "input", "boom")]);
}

/// `before_agent_start`: adds a message and/or appends to the system prompt; records the prompt it saw in
/// the event and in the context.
struct Prompt {
    message: Option<&'static str>,
    append: Option<&'static str>,
    seen: Seen<(String, String)>,
}

impl Extension for Prompt {
    fn name(&self) -> &str {
        "prompt"
    }

    async fn before_agent_start(
        &self,
        event: &BeforeAgentStartEvent,
        ctx: &ExtensionContext,
    ) -> HookResult<BeforeAgentStartResult> {
        record(&self.seen, (event.system_prompt.clone(), ctx.system_prompt()));
        Ok(BeforeAgentStartResult {
            message: self.message.map(|text| ExtensionMessage::text("note", text)),
            system_prompt: self.append.map(|text| format!("{}{text}", event.system_prompt)),
        })
    }
}

#[tokio::test]
async fn before_agent_start_messages_accumulate_in_order() {
    let log = seen();
    let first = Prompt { message: Some("one"), append: None, seen: log.clone() };
    let second = Prompt { message: Some("two"), append: None, seen: log.clone() };
    let runner = runner(Extensions::new().with(first).with(Noop).with(second));
    let outcome = runner.emit_before_agent_start("hi", &[], "Base.").await;
    assert_eq!(outcome.messages, [ExtensionMessage::text("note", "one"), ExtensionMessage::text("note", "two")]);
    assert_eq!(outcome.system_prompt, None, "nobody changed the system prompt");
}

#[tokio::test]
async fn before_agent_start_system_prompts_chain() {
    let log = seen();
    let first = Prompt { message: None, append: Some(" A"), seen: log.clone() };
    let second = Prompt { message: None, append: Some(" B"), seen: log.clone() };
    let runner = runner(Extensions::new().with(first).with(second));
    let outcome = runner.emit_before_agent_start("hi", &[], "Base.").await;
    assert_eq!(outcome.system_prompt.as_deref(), Some("Base. A B"));
    let expected = [("Base.".to_owned(), "Base.".to_owned()), ("Base. A".to_owned(), "Base. A".to_owned())];
    assert_eq!(taken(&log), expected, "B sees A's prompt in the event and in the context");
}

/// A user message with a fixed timestamp (`UserMessage::text` stamps "now", which would make two calls differ).
fn user(text: &str) -> AgentMessage {
    AgentMessage::User(UserMessage { timestamp: 1, ..UserMessage::text(text) })
}

/// `context`: drops the first message; records how many it got.
struct DropFirst(Seen<usize>);

impl Extension for DropFirst {
    fn name(&self) -> &str {
        "drop-first"
    }

    async fn context(&self, event: &ContextEvent, _ctx: &ExtensionContext) -> HookResult<Option<Vec<AgentMessage>>> {
        record(&self.0, event.messages.len());
        Ok(Some(event.messages.iter().skip(1).cloned().collect()))
    }
}

#[tokio::test]
async fn context_handlers_see_the_previous_output() {
    let log = seen();
    let runner = runner(Extensions::new().with(DropFirst(log.clone())).with(Noop).with(DropFirst(log.clone())));
    let messages = vec![user("a"), user("b"), user("c")];
    let result = runner.emit_context(messages.clone()).await;
    assert_eq!(result, [user("c")]);
    assert_eq!(taken(&log), [3, 2]);
    assert_eq!(messages.len(), 3, "the caller's messages are not changed");
    assert_eq!(runner_with_errors(Extensions::new().with(Noop)).0.emit_context(messages.clone()).await, messages);
}

/// `before_provider_request`: sets `key` in the payload; records the payload it got.
struct SetField {
    key: &'static str,
    seen: Seen<Value>,
}

impl Extension for SetField {
    fn name(&self) -> &str {
        "set-field"
    }

    async fn before_provider_request(
        &self,
        event: &BeforeProviderRequestEvent,
        _ctx: &ExtensionContext,
    ) -> HookResult<Option<Value>> {
        record(&self.seen, event.payload.clone());
        let mut payload = event.payload.clone();
        payload[self.key] = json!(true);
        Ok(Some(payload))
    }
}

#[tokio::test]
async fn before_provider_request_payload_chains() {
    let log = seen();
    let runner = runner(
        Extensions::new().with(SetField { key: "a", seen: log.clone() }).with(SetField { key: "b", seen: log.clone() }),
    );
    let payload = runner.emit_before_provider_request(json!({"model": "m"})).await;
    assert_eq!(payload, json!({"model": "m", "a": true, "b": true}));
    assert_eq!(taken(&log)[1], json!({"model": "m", "a": true}), "B sees A's payload");
}

/// `tool_call`: blocks (or allows) and counts its calls.
struct Guard {
    name: &'static str,
    block: bool,
    calls: Arc<AtomicUsize>,
}

impl Extension for Guard {
    fn name(&self) -> &str {
        self.name
    }

    async fn tool_call(&self, _event: &ToolCallEvent, _ctx: &ExtensionContext) -> HookResult<ToolCallDecision> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(if self.block {
            ToolCallDecision::block(format!("blocked by {}", self.name))
        } else {
            ToolCallDecision::Allow
        })
    }
}

fn tool_call_event() -> ToolCallEvent {
    ToolCallEvent { tool_name: "bash".into(), tool_call_id: "call-1".into(), input: json!({"command": "ls"}) }
}

#[tokio::test]
async fn tool_call_first_block_wins() {
    let (a, b, c) = (counter(), counter(), counter());
    let runner = runner(
        Extensions::new()
            .with(Guard { name: "a", block: false, calls: a.clone() })
            .with(Guard { name: "b", block: true, calls: b.clone() })
            .with(Guard { name: "c", block: true, calls: c.clone() }),
    );
    assert_eq!(runner.emit_tool_call(&tool_call_event()).await, ToolCallDecision::block("blocked by b"));
    assert_eq!((count(&a), count(&b), count(&c)), (1, 1, 0), "the handler after the block is not called");
    assert_eq!(
        runner_with_errors(Extensions::new().with(Noop)).0.emit_tool_call(&tool_call_event()).await,
        ToolCallDecision::Allow
    );
}

#[tokio::test]
async fn tool_call_error_blocks_and_is_reported() {
    let calls = counter();
    let guard = Guard { name: "later", block: false, calls: calls.clone() };
    let (runner, errors) = runner_with_errors(Extensions::new().with(Failing("crashy")).with(guard));
    assert_eq!(runner.emit_tool_call(&tool_call_event()).await, ToolCallDecision::block("guard crashed"));
    assert_eq!(taken(&errors), [error("crashy", "tool_call", "guard crashed")]);
    assert_eq!(count(&calls), 0);
}

/// `tool_result`: replaces the content (when `content` is set) or the error flag; records the content seen.
struct Patch {
    content: Option<&'static str>,
    is_error: Option<bool>,
    seen: Seen<Vec<UserContent>>,
}

impl Extension for Patch {
    fn name(&self) -> &str {
        "patch"
    }

    async fn tool_result(&self, event: &ToolResultEvent, _ctx: &ExtensionContext) -> HookResult<ToolResultPatch> {
        record(&self.seen, event.content.clone());
        Ok(ToolResultPatch {
            content: self.content.map(|text| vec![UserContent::text(text)]),
            details: None,
            is_error: self.is_error,
        })
    }
}

fn tool_result_event() -> ToolResultEvent {
    ToolResultEvent {
        tool_name: "bash".into(),
        tool_call_id: "call-1".into(),
        input: json!({"command": "ls"}),
        content: vec![UserContent::text("original")],
        details: Some(json!({"exit": 0})),
        is_error: false,
    }
}

#[tokio::test]
async fn tool_result_overrides_field_by_field() {
    let log = seen();
    let runner = runner(
        Extensions::new().with(Patch { content: Some("patched"), is_error: None, seen: log.clone() }).with(Patch {
            content: None,
            is_error: Some(true),
            seen: log.clone(),
        }),
    );
    let patch = runner.emit_tool_result(tool_result_event()).await;
    let expected = ToolResultPatch {
        content: Some(vec![UserContent::text("patched")]),
        details: Some(json!({"exit": 0})),
        is_error: Some(true),
    };
    assert_eq!(patch, Some(expected));
    assert_eq!(taken(&log)[1], [UserContent::text("patched")], "B sees A's content");
}

#[tokio::test]
async fn tool_result_is_none_when_unchanged() {
    let log = seen();
    let runner = runner(Extensions::new().with(Noop).with(Patch { content: None, is_error: None, seen: log.clone() }));
    assert_eq!(runner.emit_tool_result(tool_result_event()).await, None);
    assert_eq!(taken(&log).len(), 1);
}

/// `message_end`: answers with `replacement`.
struct Replace(AgentMessage);

impl Extension for Replace {
    fn name(&self) -> &str {
        "replace"
    }

    async fn message_end(&self, _event: &MessageEvent, _ctx: &ExtensionContext) -> HookResult<Option<AgentMessage>> {
        Ok(Some(self.0.clone()))
    }
}

fn assistant(text: &str) -> AgentMessage {
    AgentMessage::Assistant(AssistantMessage {
        content: vec![AssistantContent::text(text)],
        ..AssistantMessage::default()
    })
}

#[tokio::test]
async fn message_end_accepts_a_replacement_of_the_same_role() {
    let (runner, errors) = runner_with_errors(Extensions::new().with(Replace(assistant("better"))));
    assert_eq!(runner.emit_message_end(&assistant("draft")).await, Some(assistant("better")));
    assert!(taken(&errors).is_empty());
    assert_eq!(runner_with_errors(Extensions::new().with(Noop)).0.emit_message_end(&assistant("x")).await, None);
}

#[tokio::test]
async fn message_end_ignores_and_reports_a_different_role() {
    let (runner, errors) =
        runner_with_errors(Extensions::new().with(Replace(user("wrong"))).with(Replace(assistant("right"))));
    assert_eq!(runner.emit_message_end(&assistant("draft")).await, Some(assistant("right")));
    let errors = taken(&errors);
    assert_eq!(errors.len(), 1);
    assert_eq!((errors[0].extension_path.as_str(), errors[0].event.as_str()), ("replace", "message_end"));
    assert!(errors[0].error.contains("same role (assistant), not user"), "{}", errors[0].error);

    let (runner, _errors) = runner_with_errors(Extensions::new().with(Replace(user("wrong"))));
    assert_eq!(runner.emit_message_end(&assistant("draft")).await, None);
}
